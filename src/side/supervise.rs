//! `side run` (hidden): the side agent's life inside its popup or split — launch it,
//! supervise it, then delete its session files.
//!
//! Owns the side agent child process. Invariants: while it lives the main pane's
//! `@tmuxmate-side` holds its record (`handoff::SideRecord`); closing the popup (HUP) or
//! `side close` (TERM) is passed on to the agent as TERM and this process stays to clean
//! up; it ends by deleting the side agent's session files and saying honestly whether that
//! worked (in the result file for `close`, in the log, and to the caller); any failure is
//! also written to the start file, where `open` waits for it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
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

/// What the side agent is started with, all read before anything is started.
struct Launch {
    /// The main pane.
    pane: String,
    adapter: String,
    cli: PathBuf,
    /// The side agent's own session id.
    session: String,
    /// Known to the side agent's commands and hooks only: what a relayed report must carry.
    nonce: String,
    argv: Vec<String>,
    started: u64,
    cwd: String,
    main_transcript: Option<String>,
    /// `PATH` with this binary's directory first.
    path: OsString,
}

/// How the supervised child ended.
struct Exit {
    status: ExitStatus,
    /// `open` was told the side agent is running (it outlived `START_GRACE`).
    reported: bool,
    /// We passed a TERM on to it.
    signalled: bool,
}

fn run_inner(tmux: &Tmux, target: &str) -> Result<Ended, Error> {
    let l = prepare(tmux, target)?;
    let rec = SideRecord {
        pid: std::process::id(),
        adapter: l.adapter.clone(),
        session: l.session.clone(),
        started: l.started,
    };
    let rec = serde_json::to_string(&rec).unwrap_or_default();
    tmux.run(&targs![
        "set-option",
        "-p",
        "-t",
        Arg::id(&l.pane),
        "--",
        super::OPT_SIDE,
        Arg::literal(&rec),
    ])?;
    let _ = std::fs::remove_file(result_path(&l.pane));
    // Closing the popup hangs up on us: stay to clean up; pass TERM on to the agent.
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGINT,
    ] {
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    let mut child = spawn(tmux, &l)?;
    let errors = tee_stderr(child.stderr.take());
    let exit = supervise(&mut child, &l.pane, &stop);
    let tail = errors.and_then(|h| h.join().ok()).unwrap_or_default();
    // Ended on its own with a failure (not closed by us): the side chat failed.
    let failed = (!exit.signalled && !stop.load(Ordering::Relaxed) && !exit.status.success())
        .then(|| exit_line(&l.adapter, &exit.status.to_string(), &tail));
    let (ok, line) = clean_up(tmux, &l);
    if let Some(msg) = failed {
        return Err(Error::new(if ok { msg } else { format!("{msg}; {line}") }));
    }
    // Before the grace `open` may still be waiting for a word; after it nobody is.
    if exit.reported {
        let _ = std::fs::remove_file(start_path(&l.pane));
    } else {
        write_start(&l.pane, "ended", "");
    }
    let said = (!stop.load(Ordering::Relaxed)).then(|| line.clone());
    Ok(Ended {
        said,
        result: if ok { Ok(()) } else { Err(Error::new(line)) },
    })
}

/// Read the main pane and choose the side agent's CLI, session id, nonce and arguments.
fn prepare(tmux: &Tmux, target: &str) -> Result<Launch, Error> {
    let pane = super::main_pane(tmux, Some(target))?;
    let m = super::main_facts(tmux, &pane)?;
    let adapter = agent::adapter(tmux);
    let cli =
        which(&adapter).ok_or_else(|| Error::new(format!("the {adapter} CLI is not on PATH")))?;
    let bin = std::env::current_exe()?;
    let session = uuid_v4()?;
    let role = agent::role(&adapter, &pane, &bin.to_string_lossy());
    let nonce = uuid_v4()?.replace('-', "");
    let argv = agent::argv(&adapter, &session, &role, &bin.to_string_lossy())?;
    let main_transcript = pane_option(tmux, &pane, crate::tmux::options::TRANSCRIPT.name);
    Ok(Launch {
        path: search_path(bin.parent(), std::env::var_os("PATH")),
        cwd: if m.cwd.is_empty() {
            ".".to_string()
        } else {
            m.cwd
        },
        started: crate::sys::time::now_ms(),
        pane,
        adapter,
        cli,
        session,
        nonce,
        argv,
        main_transcript,
    })
}

/// `PATH` with `first` (this binary's directory) in front, so the side agent's hooks and
/// commands run this tmuxmate.
fn search_path(first: Option<&Path>, path: Option<OsString>) -> OsString {
    match (first, path) {
        (Some(d), Some(p)) => {
            let mut v = vec![d.to_path_buf()];
            v.extend(std::env::split_paths(&p));
            std::env::join_paths(v).unwrap_or(p)
        }
        (_, p) => p.unwrap_or_default(),
    }
}

/// Start the side agent CLI in this popup's terminal; on failure its record goes.
fn spawn(tmux: &Tmux, l: &Launch) -> Result<std::process::Child, Error> {
    let mut child = crate::sys::process::command(&l.cli);
    child
        .args(&l.argv)
        .env(crate::harness::SIDE_MAIN_ENV, &l.pane)
        .env(relay::ENV_NONCE, &l.nonce)
        .env(
            super::ENV_TRANSCRIPT,
            l.main_transcript.as_deref().unwrap_or(""),
        )
        .env("PATH", &l.path)
        .env_remove("NO_COLOR")
        .current_dir(&l.cwd)
        .stderr(std::process::Stdio::piped());
    crate::sys::process::spawn_supervised(child).map_err(|e| {
        unset(tmux, &l.pane, super::OPT_SIDE);
        Error::new(format!("could not start {}: {e}", l.cli.display()))
    })
}

/// Wait for the child: tell `open` it runs once it outlived the grace, and pass a stop
/// (HUP, TERM, INT) on to it as TERM, once.
fn supervise(child: &mut std::process::Child, pane: &str, stop: &AtomicBool) -> Exit {
    let spawned = Instant::now();
    let mut reported = false;
    let mut signalled = false;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Exit {
                status,
                reported,
                signalled,
            };
        }
        if !reported && spawned.elapsed() >= START_GRACE {
            reported = true;
            write_start(pane, "running", "");
        }
        if stop.load(Ordering::Relaxed) && !signalled {
            signalled = true;
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Why a side agent that ended on its own failed: its status and the last 6 non-blank
/// lines it wrote on stderr.
fn exit_line(adapter: &str, status: &str, stderr_tail: &[u8]) -> String {
    let said = String::from_utf8_lossy(stderr_tail);
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
}

/// Delete the side agent's session files (and, for Claude, its prompts in the prompt
/// history), say how that went in the log and the result file, and drop its records.
/// True when nothing is left.
fn clean_up(tmux: &Tmux, l: &Launch) -> (bool, String) {
    let own = pane_option(tmux, &l.pane, super::OPT_SIDE_TRANSCRIPT);
    let files = super::side_files(
        &l.adapter,
        &l.cwd,
        &l.session,
        l.started,
        l.main_transcript.as_deref(),
        own.as_deref(),
    );
    let (mut ok, mut line) = super::delete_and_verify(&files);
    if l.adapter == "claude" {
        // Its prompts are also in Claude's prompt history, by session id.
        let (hist_ok, said) = super::forget_prompts(&l.session, own.as_deref());
        ok &= hist_ok;
        line = format!("{line}; {said}");
    }
    state::log(&format!("side chat of {}: {line}", l.pane));
    let _ = state::write_atomic(&result_path(&l.pane), line.as_bytes());
    unset(tmux, &l.pane, super::OPT_SIDE);
    unset(tmux, &l.pane, super::OPT_SIDE_TRANSCRIPT);
    (ok, line)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_binary_comes_first_on_the_side_agents_path() {
        let p = search_path(Some(Path::new("/opt/tm")), Some("/usr/bin:/bin".into()));
        assert_eq!(p, OsString::from("/opt/tm:/usr/bin:/bin"));
        assert_eq!(
            search_path(None, Some("/usr/bin".into())),
            OsString::from("/usr/bin")
        );
        assert_eq!(
            search_path(Some(Path::new("/opt/tm")), None),
            OsString::new()
        );
    }

    #[test]
    fn a_failed_exit_says_its_status_and_last_stderr_lines() {
        assert_eq!(
            exit_line("codex", "exit status: 1", b"\n  \n"),
            "the codex side agent exited with exit status: 1 and printed nothing on stderr"
        );
        let tail = b"1\n2\n\n3\n4\n5\n6\n7  \n";
        assert_eq!(
            exit_line("claude", "exit status: 2", tail),
            "the claude side agent exited with exit status: 2: 2\n3\n4\n5\n6\n7"
        );
    }
}
