//! `side run` (hidden): the side agent's life inside its popup or split — launch it,
//! supervise it, then delete its session files.
//!
//! Owns the side agent child process. Invariants: while it lives the main pane's
//! `@tmuxmate-side` holds its record (`handoff::SideRecord`); closing the popup (HUP) or
//! `side close` (TERM) is passed on to the agent as TERM and this process stays to clean
//! up; it ends by deleting the side agent's session files and saying honestly whether that
//! worked (in the result file for `close`, in the log, and to the caller); any failure is
//! also written to the start file, where `open` waits for it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::bridge::launch::{uuid_v4, which};
use crate::error::Error;
use crate::sys::state;
use crate::targs;
use crate::tmux::{Arg, Tmux};

use super::handoff::{SideRecord, result_path, start_path, write_start};
use super::{agent, relay};

/// How long a side agent must stay up before `open` calls it started (a CLI that is not
/// logged in, or rejects its arguments, exits well within this).
const START_GRACE: Duration = Duration::from_secs(3);

/// How a side chat ended: the line to print (none when it was closed by a signal), then
/// the outcome (an error carries the same line when files remain).
pub struct Ended {
    pub said: Option<String>,
    pub result: Result<(), Error>,
}

/// The side agent, inside its popup: launch, wait, then delete its session files. Any
/// failure is also written where `open` waits for it.
pub fn run(tmux: &Tmux, target: &str) -> Ended {
    let ended = match run_inner(tmux, target) {
        Ok(e) => e,
        Err(e) => Ended {
            said: None,
            result: Err(e),
        },
    };
    if let Err(e) = &ended.result {
        write_start(target, "failed", &e.human());
    }
    ended
}

/// Copy the child's stderr to ours (the popup's terminal) and keep its tail, so the
/// reason a side agent died can be reported by `open` too.
fn tee_stderr(err: Option<std::process::ChildStderr>) -> Option<std::thread::JoinHandle<Vec<u8>>> {
    use std::io::{Read, Write};
    let mut err = err?;
    Some(std::thread::spawn(move || {
        let mut tail: Vec<u8> = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = err.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut o = std::io::stderr().lock();
            let _ = o.write_all(&buf[..n]);
            let _ = o.flush();
            tail.extend_from_slice(&buf[..n]);
            if tail.len() > 8192 {
                tail.drain(..tail.len() - 4096);
            }
        }
        tail
    }))
}

fn run_inner(tmux: &Tmux, target: &str) -> Result<Ended, Error> {
    let pane = super::main_pane(tmux, Some(target))?;
    let m = super::main_facts(tmux, &pane)?;
    let adapter = agent::adapter(tmux);
    let cli =
        which(&adapter).ok_or_else(|| Error::new(format!("the {adapter} CLI is not on PATH")))?;
    let bin = std::env::current_exe()?;
    let session = uuid_v4()?;
    let role = agent::role(&adapter, &pane, &bin.to_string_lossy());
    // Known to the side agent's commands and hooks only: what a relayed report must carry.
    let nonce = uuid_v4()?.replace('-', "");
    let argv = agent::argv(&adapter, &session, &role, &bin.to_string_lossy())?;
    let started = state::now_ms();
    let rec = SideRecord {
        pid: std::process::id(),
        adapter: adapter.clone(),
        session: session.clone(),
        started,
    };
    let rec = serde_json::to_string(&rec).unwrap_or_default();
    tmux.run(&targs![
        "set-option",
        "-p",
        "-t",
        Arg::id(&pane),
        "--",
        super::OPT_SIDE,
        Arg::literal(&rec),
    ])?;
    let _ = std::fs::remove_file(result_path(&pane));
    // Closing the popup hangs up on us: stay to clean up; pass TERM on to the agent.
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGINT,
    ] {
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    let path = match (bin.parent(), std::env::var_os("PATH")) {
        (Some(d), Some(p)) => {
            let mut v = vec![d.to_path_buf()];
            v.extend(std::env::split_paths(&p));
            std::env::join_paths(v).unwrap_or(p)
        }
        (_, p) => p.unwrap_or_default(),
    };
    let main_transcript = pane_option(tmux, &pane, crate::tmux::options::TRANSCRIPT.name);
    let cwd = if m.cwd.is_empty() {
        ".".to_string()
    } else {
        m.cwd.clone()
    };
    // The side agent CLI runs in this popup's terminal, supervised by the loop below.
    let mut child = crate::sys::process::command(&cli);
    child
        .args(&argv)
        .env(super::ENV_MAIN, &pane)
        .env(relay::ENV_NONCE, &nonce)
        .env(
            super::ENV_TRANSCRIPT,
            main_transcript.as_deref().unwrap_or(""),
        )
        .env("PATH", path)
        .env_remove("NO_COLOR")
        .current_dir(&cwd)
        .stderr(std::process::Stdio::piped());
    let mut child = match crate::sys::process::spawn_supervised(child) {
        Ok(c) => c,
        Err(e) => {
            unset(tmux, &pane, super::OPT_SIDE);
            return Err(Error::new(format!(
                "could not start {}: {e}",
                cli.display()
            )));
        }
    };
    let errors = tee_stderr(child.stderr.take());
    let spawned = Instant::now();
    let mut reported = false;
    let mut signalled = false;
    let status = loop {
        if let Ok(Some(st)) = child.try_wait() {
            break st;
        }
        if !reported && spawned.elapsed() >= START_GRACE {
            reported = true;
            write_start(&pane, "running", "");
        }
        if stop.load(Ordering::Relaxed) && !signalled {
            signalled = true;
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let tail = errors.and_then(|h| h.join().ok()).unwrap_or_default();
    // Ended on its own with a failure (not closed by us): the side chat failed.
    let failed = (!signalled && !stop.load(Ordering::Relaxed) && !status.success()).then(|| {
        let said = String::from_utf8_lossy(&tail);
        let said: Vec<&str> = said
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.trim().is_empty())
            .collect();
        let said = said[said.len().saturating_sub(6)..].join("\n");
        format!(
            "the {adapter} side agent exited with {status}{}",
            if said.is_empty() {
                " and printed nothing on stderr".to_string()
            } else {
                format!(": {said}")
            }
        )
    });
    let own = pane_option(tmux, &pane, super::OPT_SIDE_TRANSCRIPT);
    let files = super::side_files(
        &adapter,
        &cwd,
        &session,
        started,
        main_transcript.as_deref(),
        own.as_deref(),
    );
    let (mut ok, mut line) = super::delete_and_verify(&files);
    if adapter == "claude" {
        // Its prompts are also in Claude's prompt history, by session id.
        let (hist_ok, said) = super::forget_prompts(&session, own.as_deref());
        ok &= hist_ok;
        line = format!("{line}; {said}");
    }
    state::log(&format!("side chat of {pane}: {line}"));
    let _ = state::write_atomic(&result_path(&pane), line.as_bytes());
    unset(tmux, &pane, super::OPT_SIDE);
    unset(tmux, &pane, super::OPT_SIDE_TRANSCRIPT);
    if let Some(msg) = failed {
        return Err(Error::new(if ok { msg } else { format!("{msg}; {line}") }));
    }
    // Before the grace `open` may still be waiting for a word; after it nobody is.
    if reported {
        let _ = std::fs::remove_file(start_path(&pane));
    } else {
        write_start(&pane, "ended", "");
    }
    let said = (!stop.load(Ordering::Relaxed)).then(|| line.clone());
    Ok(Ended {
        said,
        result: if ok { Ok(()) } else { Err(Error::new(line)) },
    })
}

/// A pane option of ours on the main pane, when set and not empty.
fn pane_option(tmux: &Tmux, pane: &str, name: &'static str) -> Option<String> {
    tmux.run(&targs!["show-options", "-pqv", "-t", Arg::id(pane), name])
        .ok()
        .map(|s| s.trim_end().to_string())
        .filter(|s| !s.is_empty())
}

fn unset(tmux: &Tmux, pane: &str, name: &'static str) {
    let _ = tmux.run(&targs!["set-option", "-p", "-u", "-t", Arg::id(pane), name]);
}
