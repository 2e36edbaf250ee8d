//! Starting a watch job (`tmuxmate watch start`, the MCP `tmux_watch` tool).
//!
//! Invariants: every bad input (empty command, regex that does not compile, negative or
//! absurd timeout, an address nobody reads) is refused before anything starts; a launched
//! command is held at a gate (`watch::gate`) until its job state exists, so even a 5 ms
//! command finds its job when it reports its exit; a start that fails half-way leaves
//! nothing behind.

use crate::control::watch::job::JobStatus;
use serde::Serialize;

use crate::control::create;
use crate::control::pane_input;
use crate::control::policy;
use crate::control::watch::job::{self, Job};
use crate::control::watch::{gate, poller, prompt};
use crate::error::Error;
use crate::sys::state;
use crate::targs;
use crate::tmux::{Arg, Text, Tmux};

const DEFAULT_TIMEOUT_MIN: u64 = crate::tmux::options::WATCH_TIMEOUT_MIN.default_number();
const MAX_TIMEOUT_MIN: u64 = 7 * 24 * 60;

/// Minutes (fractions allowed, e.g. 0.5) to milliseconds; refuses <= 0, NaN and > 7 days.
pub fn parse_timeout(s: &str) -> Result<u64, Error> {
    match s.trim().parse::<f64>() {
        Ok(m) if m.is_finite() && m > 0.0 && m <= MAX_TIMEOUT_MIN as f64 => {
            Ok((m * 60_000.0).ceil() as u64)
        }
        _ => Err(Error::usage(format!(
            "--timeout-min {s:?} is not a number of minutes greater than 0 and at most {MAX_TIMEOUT_MIN} (7 days)"
        ))),
    }
}

/// The timeout in milliseconds.
fn timeout_min(tmux: &Tmux, flag: Option<&str>) -> Result<u64, Error> {
    if let Some(f) = flag {
        return parse_timeout(f);
    }
    let opt = tmux
        .run(&[
            "show-options",
            "-gqv",
            crate::tmux::options::WATCH_TIMEOUT_MIN.name,
        ])
        .unwrap_or_default();
    let opt = opt.trim();
    if opt.is_empty() {
        return Ok(DEFAULT_TIMEOUT_MIN * 60_000);
    }
    parse_timeout(opt).map_err(|e| {
        Error::new(format!(
            "tmux option @tmuxmate-watch-timeout-min: {}",
            e.msg
        ))
    })
}

/// The command as a job shows it (one argument: a shell line; several: quoted words).
pub fn command_line(cmd: &[String]) -> String {
    if cmd.len() == 1 {
        cmd[0].clone()
    } else {
        create::sh_join(cmd)
    }
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Started {
    pub job_id: String,
    pub pane_id: String,
}

/// What to watch (the CLI's `watch start` flags, the MCP `tmux_watch` arguments).
#[derive(Debug, Default)]
pub struct Request<'a> {
    pub target: Option<&'a str>,
    pub cmd: &'a [String],
    pub done_regex: Option<&'a str>,
    pub timeout_min: Option<&'a str>,
    pub notify: Option<&'a str>,
    pub forward: &'a [String],
    /// With a target: leave copy or view mode first (else a pane in a mode is refused).
    pub cancel_mode: bool,
}

pub fn start(tmux: &Tmux, a: &Request) -> Result<Started, Error> {
    // Everything that can be wrong with the request is checked before anything starts.
    if a.cmd.is_empty() || a.cmd.iter().all(|w| w.trim().is_empty()) {
        return Err(Error::usage(
            "refused: no command given; usage: tmuxmate watch start [-t PANE] -- CMD...",
        ));
    }
    let regex = match a.done_regex {
        Some("") => {
            return Err(Error::usage(
                "--done-regex is empty; give a pattern or leave it out",
            ));
        }
        Some(r) => Some(
            job::done_regex(r)
                .map_err(|e| Error::usage(format!("--done-regex does not compile: {e}")))?,
        ),
        None => None,
    };
    for n in a
        .notify
        .into_iter()
        .chain(a.forward.iter().map(String::as_str))
    {
        crate::ledger::check_address("--notify/--forward", n).map_err(Error::usage)?;
    }
    let line = command_line(a.cmd);
    if a.target.is_some() {
        pane_input::validate_line(&line).map_err(|e| {
            Error::usage(format!(
                "{} (a command typed into a shell pane must be one line)",
                e.msg
            ))
        })?;
    }
    let timeout_ms = timeout_min(tmux, a.timeout_min)?;
    let caller = policy::caller(tmux);
    // Only addresses someone reads (see address.rs); by default the agent of this pane.
    let notify = vec![match a.notify {
        Some(n) => crate::address::resolve(tmux, "--notify", n)?,
        None => {
            if let Some(w) = crate::address::default_notify_warning(&caller.agent) {
                eprintln!("tmuxmate: {w}");
            }
            caller.agent.clone()
        }
    }];
    let forward = a
        .forward
        .iter()
        .map(|f| crate::address::resolve(tmux, "--forward", f))
        .collect::<Result<Vec<_>, _>>()?;
    let id = job::new_id();
    let now = state::now_ms();
    let pipe = regex.as_ref().map(|_| {
        super::jobs_dir()
            .join("pipes")
            .join(format!("{id}.out"))
            .to_string_lossy()
            .into_owned()
    });
    if let Some(p) = &pipe
        && let Some(d) = std::path::Path::new(p).parent()
    {
        state::private_dir(d).map_err(|e| crate::error::state_io("create the directory", d, e))?;
        // pipe-pane's `cat >>` runs with the server's umask: the file exists first, 0600.
        state::write_private(std::path::Path::new(p), b"")
            .map_err(|e| crate::error::state_io("write", std::path::Path::new(p), e))?;
    }
    // The job's state must be writable before a window waits on its gate: a window that
    // was created and then never released would block forever.
    probe_writable(&job::active_path(&id))?;
    // For a typed job, `shell` is the pid of the shell in the foreground at the start.
    let (pane_id, launched, shell, in_mode) = match a.target {
        None => {
            // A new window of ours: close old finished ones first (they would pile up).
            super::tidy::tidy(tmux);
            let bin = std::env::current_exe()?.to_string_lossy().into_owned();
            let q = create::sh_quote;
            let state_dir = q(&state::state_dir().to_string_lossy());
            // The gate holds the command until this process said go, and closes the
            // window if this process dies first (killed at any moment).
            let (me, started) = gate::me();
            let wrapper = format!(
                "TMUXMATE_STATE_DIR={state_dir} {bin} watch gate {id} {me} {started} || exit 1\n/bin/sh -c {}\ntmuxmate_status=$?\nTMUXMATE_STATE_DIR={state_dir} {bin} watch record-exit {id} \"$tmuxmate_status\" >/dev/null 2>&1\nexec \"${{SHELL:-/bin/sh}}\"\n",
                q(&line),
                bin = q(&bin),
            );
            let c = create::new_work_window(
                tmux,
                &caller,
                Some(&Text::lossy(&format!("watch {id}"))),
                None,
                &["sh".into(), "-c".into(), wrapper],
            )?;
            (c.pane_id, true, 0, false)
        }
        Some(t) => {
            let p = policy::resolve(tmux, Some(t), &caller.agent)?;
            if p.dead {
                return Err(Error::refused(format!(
                    "refused: pane {} is dead; watch -t types into a live shell",
                    p.pane_id
                )));
            }
            if let Ok(j) = serde_json::from_str::<Job>(&p.job)
                && j.status == JobStatus::Running
            {
                if !is_ghost(&j, state::now_ms()) {
                    return Err(Error::refused(format!(
                        "refused: pane {} is already watched by a running job ({}); wait for it, or `tmuxmate watch stop {}` it first",
                        p.pane_id, j.id, j.id
                    )));
                }
                state::log(&format!(
                    "watch: pane {} named job {} as running, which has no record (a start killed half-way); taking the pane",
                    p.pane_id, j.id
                ));
            }
            if p.in_mode && !a.cancel_mode {
                return Err(Error::refused(format!(
                    "refused: pane {} is in {} (the typed command would be eaten by the mode); \
                     pass --cancel-mode to leave the mode first",
                    p.pane_id,
                    if p.mode.is_empty() { "a mode" } else { &p.mode }
                )));
            }
            let pid: i32 = p.pane_pid.parse().unwrap_or(0);
            let shells = poller::shells(tmux);
            match crate::sys::foreground::shell_at(pid, &shells) {
                Some((fg, true)) => (p.pane_id.clone(), false, fg, p.in_mode),
                _ => {
                    return Err(Error::refused(format!(
                        "refused: pane {} is not at a shell prompt (its foreground program is {}); \
                         watch -t types the command into an idle shell. Use `watch start` without -t for a new window",
                        p.pane_id,
                        crate::sys::foreground::exe(pid).unwrap_or_else(|| "unknown".into())
                    )));
                }
            }
        }
    };
    // From here a failure must leave nothing behind: the new window goes, the typed
    // pane's option is cleared, the mirror and the pipe are removed.
    let undo = |pane_id: &str| {
        if launched {
            let _ = tmux.run(&targs!["kill-pane", "-t", Arg::id(pane_id)]);
        } else {
            let _ = tmux.run(&targs![
                "set-option",
                "-pu",
                "-t",
                Arg::id(pane_id),
                crate::tmux::options::JOB.name
            ]);
            let _ = tmux.run(&targs!["pipe-pane", "-t", Arg::id(pane_id)]);
        }
        let _ = std::fs::remove_file(job::active_path(&id));
        if let Some(p) = &pipe {
            let _ = std::fs::remove_file(p);
        }
        gate::remove(&id);
    };
    let recorded = record(
        tmux,
        a,
        &id,
        &line,
        &pane_id,
        launched,
        shell,
        in_mode,
        now,
        timeout_ms,
        (notify, forward),
        pipe.as_deref(),
    );
    let j = match recorded {
        Ok(j) => j,
        Err(e) => {
            undo(&pane_id);
            return Err(e);
        }
    };
    let go = if launched {
        gate::open(&id).map_err(Error::from)
    } else {
        // The line and its Enter (CR, as the Enter key sends) in one write: the shell
        // never sits at its prompt holding the typed line while the Enter is still on its
        // way, which would look like "the command ran and the prompt is back".
        let mut typed = line.as_bytes().to_vec();
        typed.push(b'\r');
        pane_input::paste_bytes(tmux, &pane_id, &typed, false)
    };
    if let Err(e) = go {
        undo(&pane_id);
        return Err(e);
    }
    if let Err(e) = poller::ensure(&j.socket) {
        state::log(&format!("watch {id}: could not start the poller: {e}"));
    }
    Ok(Started {
        job_id: id,
        pane_id,
    })
}

/// How long a start may take between writing the pane's option and the job's record.
const GHOST_GRACE_MS: u64 = 10_000;

/// A job a killed start left in a pane's option: running there, with no record (the
/// record is written right after the option and kept for as long as the job runs), and
/// older than any start still in progress.
fn is_ghost(j: &Job, now: u64) -> bool {
    now.saturating_sub(j.start) > GHOST_GRACE_MS && job::load(&j.id).is_none()
}

/// Write and remove a probe file beside `path`: the state directory takes our files.
fn probe_writable(path: &std::path::Path) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(path);
    // One file, created exclusively and removed at once; a start killed in between
    // leaves a `.probe-*` that `job::sweep` removes once it is a minute old.
    let made = crate::sys::unique::create_with(|t| {
        let probe = dir.join(format!(".probe-{t}"));
        state::open_private(
            &probe,
            std::fs::OpenOptions::new().write(true).create_new(true),
        )
        .map(|_| probe)
    });
    match made {
        Ok((_, probe)) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(crate::error::state_io("write the job state in", dir, e)),
    }
}

/// Write the job's state: the pane option first, then the mirror (a poller finds jobs
/// through the mirror, so it never meets one whose option is not there yet), then the
/// pipe for `--done-regex`.
#[allow(clippy::too_many_arguments)]
fn record(
    tmux: &Tmux,
    a: &Request,
    id: &str,
    line: &str,
    pane_id: &str,
    launched: bool,
    shell: i32,
    in_mode: bool,
    now: u64,
    timeout_ms: u64,
    (notify, forward): (Vec<String>, Vec<String>),
    pipe: Option<&str>,
) -> Result<Job, Error> {
    let info = tmux.run(&targs![
        "display-message",
        "-p",
        "-t",
        Arg::id(pane_id),
        "#{socket_path}\t#{pane_pid}\t#{pane_tty}",
    ])?;
    let mut f = info.trim_end().split('\t');
    let (socket, pane_pid, tty) = (
        f.next().unwrap_or(""),
        f.next().unwrap_or(""),
        f.next().unwrap_or(""),
    );
    if in_mode {
        tmux.run(&targs!["send-keys", "-t", Arg::id(pane_id), "-X", "cancel"])?;
    }
    // Typed jobs: read before the job becomes visible to a poller; typing forks nothing
    // and the shell reads nothing until the line arrives, so both counts only grow once
    // the command is typed. The typed bytes are the line and its Enter.
    let prompt = if launched {
        None
    } else {
        prompt::baseline(shell, tty, line.len() + 1)
    };
    let j = Job {
        v: job::VERSION,
        id: id.to_string(),
        command: line.to_string(),
        regex: a.done_regex.map(str::to_string),
        deadline: now + timeout_ms,
        notify,
        forward,
        start: now,
        status: JobStatus::Running,
        exit_status: None,
        end: None,
        detail: None,
        pane_id: pane_id.to_string(),
        socket: socket.to_string(),
        launched,
        pane_pid: if launched {
            pane_pid.parse().unwrap_or(0)
        } else {
            shell
        },
        baseline: if launched {
            0
        } else {
            crate::sys::procfs::children_faults(shell).unwrap_or(0)
        },
        pipe: pipe.map(str::to_string),
        poller: None,
        heartbeat: None,
        queued: false,
        tail: None,
        tty: (!launched && !tty.is_empty()).then(|| tty.to_string()),
        prompt_mode: prompt.map(|p| p.0),
        read_target: prompt.map(|p| p.1),
    };
    j.save_option()?;
    j.save_mirror()
        .map_err(|e| crate::error::state_io("write the job state", &job::active_path(id), e))?;
    if let Some(p) = pipe {
        let cmd = format!("exec cat >> {}", create::sh_quote(p));
        // pipe-pane expands formats in its command, then runs a shell.
        tmux.run(&targs![
            "pipe-pane",
            "-t",
            Arg::id(pane_id),
            Arg::expanded(&cmd)
        ])?;
    }
    Ok(j)
}
