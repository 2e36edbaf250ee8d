//! Starting a watch job (`tmuxmate watch start`, the MCP `tmux_watch` tool).
//!
//! Invariants: every bad input (empty command, regex that does not compile, negative or
//! absurd timeout, an address nobody reads) is refused before anything starts; a launched
//! command is held at a gate (`watch::gate`) until its job state exists, so even a 5 ms
//! command finds its job when it reports its exit; a start that fails half-way leaves
//! nothing behind.

use crate::watch::job::JobStatus;
use serde::{Deserialize, Serialize};

use crate::control::create;
use crate::control::pane_input;
use crate::control::policy;
use crate::error::Error;
use crate::sys::state;
use crate::targs;
use crate::tmux::panes::PaneInfo;
use crate::tmux::{Arg, Text, Tmux};
use crate::watch::job::{self, Job};
use crate::watch::{gate, poller, prompt};

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

#[derive(Serialize, Deserialize, Debug)]
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
    let line = check(a)?;
    let timeout_ms = timeout_min(tmux, a.timeout_min)?;
    let caller = crate::location::address::caller(tmux);
    let (notify, forward) = recipients(tmux, a, &caller)?;
    let id = job::new_id();
    let now = crate::sys::time::now_ms();
    let pipe = a.done_regex.map(|_| pipe_path(&id));
    if let Some(p) = &pipe {
        make_pipe(std::path::Path::new(p))?;
    }
    // The job's state must be writable before a window waits on its gate: a window that
    // was created and then never released would block forever.
    probe_writable(&job::active_path(&id))?;
    let placed = match a.target {
        None => launch(tmux, &caller, &id, &line)?,
        Some(t) => take_pane(tmux, t, &caller, a.cancel_mode)?,
    };
    // From here a failure must leave nothing behind: the new window goes, the typed
    // pane's option is cleared, the mirror and the pipe are removed.
    let undo = || undo(tmux, &placed, &id, pipe.as_deref());
    let draft = Draft {
        id: &id,
        line: &line,
        regex: a.done_regex,
        placed: &placed,
        now,
        timeout_ms,
        notify,
        forward,
        pipe: pipe.as_deref(),
    };
    let j = record(tmux, draft).inspect_err(|_| undo())?;
    go(tmux, &placed, &id, &line).inspect_err(|_| undo())?;
    if let Err(e) = poller::ensure(&j.socket) {
        state::log(&format!("watch {id}: could not start the poller: {e}"));
    }
    Ok(Started {
        job_id: id,
        pane_id: placed.pane_id,
    })
}

/// The request's own checks (no tmux asked): a command, a pattern that compiles, addresses
/// that can be written, and, for a typed job, one line. Returns the command line.
fn check(a: &Request) -> Result<String, Error> {
    if a.cmd.is_empty() || a.cmd.iter().all(|w| w.trim().is_empty()) {
        return Err(Error::usage(
            "refused: no command given; usage: tmuxmate watch start [-t PANE] -- CMD...",
        ));
    }
    match a.done_regex {
        Some("") => {
            return Err(Error::usage(
                "--done-regex is empty; give a pattern or leave it out",
            ));
        }
        Some(r) => {
            job::done_regex(r)
                .map_err(|e| Error::usage(format!("--done-regex does not compile: {e}")))?;
        }
        None => {}
    }
    for n in a
        .notify
        .into_iter()
        .chain(a.forward.iter().map(String::as_str))
    {
        crate::location::ledger::check_address("--notify/--forward", n).map_err(Error::usage)?;
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
    Ok(line)
}

/// Who hears of the job: `--notify`, else the caller's agent, and the `--forward`s.
/// Only addresses someone reads (see address.rs).
fn recipients(
    tmux: &Tmux,
    a: &Request,
    caller: &crate::location::address::Caller,
) -> Result<(Vec<String>, Vec<String>), Error> {
    // By default the agent of this pane.
    let notify = vec![match a.notify {
        Some(n) => crate::location::address::resolve(tmux, "--notify", n)?,
        None => {
            if let Some(w) = crate::location::address::default_notify_warning(&caller.agent) {
                eprintln!("tmuxmate: {w}");
            }
            caller.agent.clone()
        }
    }];
    let forward = a
        .forward
        .iter()
        .map(|f| crate::location::address::resolve(tmux, "--forward", f))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((notify, forward))
}

/// Where `--done-regex` reads the pane's output.
fn pipe_path(id: &str) -> String {
    super::jobs_dir()
        .join("pipes")
        .join(format!("{id}.out"))
        .to_string_lossy()
        .into_owned()
}

/// The pipe file, empty and private, before pipe-pane appends to it.
fn make_pipe(p: &std::path::Path) -> Result<(), Error> {
    if let Some(d) = p.parent() {
        state::private_dir(d).map_err(|e| crate::error::state_io("create the directory", d, e))?;
        // pipe-pane's `cat >>` runs with the server's umask: the file exists first, 0600.
        state::write_private(p, b"").map_err(|e| crate::error::state_io("write", p, e))?;
    }
    Ok(())
}

/// Where the job runs.
struct Placed {
    pane_id: String,
    /// A new window of ours (else a command typed into a shell pane).
    launched: bool,
    /// For a typed job, the pid of the shell in the foreground at the start.
    shell: i32,
    /// The typed pane is in a mode, to be left first (`--cancel-mode`).
    in_mode: bool,
}

/// The shell line of a new window: the gate holds the command until this process
/// (`me`, started at `started`) said go, then the command runs and its status is recorded,
/// and a shell stays.
fn window_script(id: &str, line: &str, bin: &str, state_dir: &str, me: (i32, u64)) -> String {
    let q = create::sh_quote;
    let (me, started) = me;
    let state_dir = q(state_dir);
    format!(
        "TMUXMATE_STATE_DIR={state_dir} {bin} watch gate {id} {me} {started} || exit 1\n/bin/sh -c {}\ntmuxmate_status=$?\nTMUXMATE_STATE_DIR={state_dir} {bin} watch record-exit {id} \"$tmuxmate_status\" >/dev/null 2>&1\nexec \"${{SHELL:-/bin/sh}}\"\n",
        q(line),
        bin = q(bin),
    )
}

/// A new window of ours, its command held at the gate.
fn launch(
    tmux: &Tmux,
    caller: &crate::location::address::Caller,
    id: &str,
    line: &str,
) -> Result<Placed, Error> {
    // A new window of ours: close old finished ones first (they would pile up).
    super::tidy::tidy(tmux);
    let bin = std::env::current_exe()?.to_string_lossy().into_owned();
    let state_dir = state::state_dir().to_string_lossy().into_owned();
    // The gate holds the command until this process said go, and closes the window if
    // this process dies first (killed at any moment).
    let wrapper = window_script(id, line, &bin, &state_dir, gate::me());
    let c = create::new_work_window(
        tmux,
        caller,
        Some(&Text::lossy(&format!("watch {id}"))),
        None,
        &["sh".into(), "-c".into(), wrapper],
    )?;
    Ok(Placed {
        pane_id: c.pane_id,
        launched: true,
        shell: 0,
        in_mode: false,
    })
}

/// Why a command cannot be typed into pane `p`, if it cannot: dead, watched by a running
/// job (unless `ghost` says that job is a killed start's leftover), or in a mode without
/// `cancel_mode`.
fn refuse_pane(
    p: &PaneInfo,
    cancel_mode: bool,
    ghost: impl FnOnce(&Job) -> bool,
) -> Result<(), Error> {
    if p.dead {
        return Err(Error::refused(format!(
            "refused: pane {} is dead; watch -t types into a live shell",
            p.pane_id
        )));
    }
    if let Ok(j) = serde_json::from_str::<Job>(&p.job)
        && j.status == JobStatus::Running
        && !ghost(&j)
    {
        return Err(Error::refused(format!(
            "refused: pane {} is already watched by a running job ({}); wait for it, or `tmuxmate watch stop {}` it first",
            p.pane_id, j.id, j.id
        )));
    }
    if p.in_mode && !cancel_mode {
        return Err(Error::refused(format!(
            "refused: pane {} is in {} (the typed command would be eaten by the mode); \
             pass --cancel-mode to leave the mode first",
            p.pane_id,
            if p.mode.is_empty() { "a mode" } else { &p.mode }
        )));
    }
    Ok(())
}

/// The pane `t` names, for a typed job: one [`refuse_pane`] allows, with an idle shell
/// in its foreground.
fn take_pane(
    tmux: &Tmux,
    t: &str,
    caller: &crate::location::address::Caller,
    cancel_mode: bool,
) -> Result<Placed, Error> {
    let p = policy::resolve(tmux, Some(t), &caller.agent)?;
    refuse_pane(&p, cancel_mode, |j| {
        let ghost = is_ghost(j, crate::sys::time::now_ms());
        if ghost {
            state::log(&format!(
                "watch: pane {} named job {} as running, which has no record (a start killed half-way); taking the pane",
                p.pane_id, j.id
            ));
        }
        ghost
    })?;
    let pid: i32 = p.pane_pid.parse().unwrap_or(0);
    let shells = super::prompt::shells(tmux);
    match crate::sys::foreground::shell_at(pid, &shells) {
        Some((fg, true)) => Ok(Placed {
            pane_id: p.pane_id.clone(),
            launched: false,
            shell: fg,
            in_mode: p.in_mode,
        }),
        _ => Err(Error::refused(format!(
            "refused: pane {} is not at a shell prompt (its foreground program is {}); \
             watch -t types the command into an idle shell. Use `watch start` without -t for a new window",
            p.pane_id,
            crate::sys::foreground::exe(pid).unwrap_or_else(|| "unknown".into())
        ))),
    }
}

/// Take back what a failed start made: the new window, or the typed pane's option and
/// pipe; the mirror, the pipe file and the gate.
fn undo(tmux: &Tmux, placed: &Placed, id: &str, pipe: Option<&str>) {
    let pane_id = placed.pane_id.as_str();
    if placed.launched {
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
    if std::fs::remove_file(job::active_path(id)).is_ok() {
        crate::sys::wake::poke();
    }
    if let Some(p) = pipe {
        let _ = std::fs::remove_file(p);
    }
    gate::remove(id);
}

/// Let the command run: open the gate of a new window, or type the line into the shell.
fn go(tmux: &Tmux, placed: &Placed, id: &str, line: &str) -> Result<(), Error> {
    if placed.launched {
        return gate::open(id).map_err(Error::from);
    }
    // The line and its Enter (CR, as the Enter key sends) in one write: the shell never
    // sits at its prompt holding the typed line while the Enter is still on its way,
    // which would look like "the command ran and the prompt is back".
    let mut typed = line.as_bytes().to_vec();
    typed.push(b'\r');
    pane_input::paste_bytes(tmux, &placed.pane_id, &typed, false)
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

/// A job about to be recorded: what `start` decided.
struct Draft<'a> {
    id: &'a str,
    line: &'a str,
    regex: Option<&'a str>,
    placed: &'a Placed,
    now: u64,
    timeout_ms: u64,
    notify: Vec<String>,
    forward: Vec<String>,
    pipe: Option<&'a str>,
}

/// What is read of the pane and its shell just before the job is recorded.
struct Seen<'a> {
    socket: &'a str,
    pane_pid: &'a str,
    tty: &'a str,
    /// A typed job's prompt: the line mode of its idle prompt and the `rchar` it reaches
    /// once it read the typed line (see `prompt`).
    prompt: Option<(u32, u64)>,
    /// A typed job's shell's reaped-children fault count before Enter.
    baseline: u64,
}

impl Draft<'_> {
    /// The job's record, running from now.
    fn job(self, seen: &Seen) -> Job {
        let launched = self.placed.launched;
        Job {
            v: job::VERSION,
            id: self.id.to_string(),
            command: self.line.to_string(),
            regex: self.regex.map(str::to_string),
            deadline: self.now + self.timeout_ms,
            notify: self.notify,
            forward: self.forward,
            start: self.now,
            status: JobStatus::Running,
            exit_status: None,
            end: None,
            detail: None,
            pane_id: self.placed.pane_id.clone(),
            socket: seen.socket.to_string(),
            launched,
            pane_pid: if launched {
                seen.pane_pid.parse().unwrap_or(0)
            } else {
                self.placed.shell
            },
            baseline: if launched { 0 } else { seen.baseline },
            pipe: self.pipe.map(str::to_string),
            poller: None,
            heartbeat: None,
            queued: false,
            tail: None,
            tty: (!launched && !seen.tty.is_empty()).then(|| seen.tty.to_string()),
            prompt_mode: seen.prompt.map(|p| p.0),
            read_target: seen.prompt.map(|p| p.1),
        }
    }
}

/// Write the job's state: the pane option first, then the mirror (a poller finds jobs
/// through the mirror, so it never meets one whose option is not there yet), then the
/// pipe for `--done-regex`.
fn record(tmux: &Tmux, d: Draft) -> Result<Job, Error> {
    let (pane_id, placed) = (d.placed.pane_id.as_str(), d.placed);
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
    if placed.in_mode {
        tmux.run(&targs!["send-keys", "-t", Arg::id(pane_id), "-X", "cancel"])?;
    }
    // Typed jobs: read before the job becomes visible to a poller; typing forks nothing
    // and the shell reads nothing until the line arrives, so both counts only grow once
    // the command is typed. The typed bytes are the line and its Enter.
    let (prompt, baseline) = if placed.launched {
        (None, 0)
    } else {
        let prompt = prompt::baseline(placed.shell, tty, d.line.len() + 1);
        let faults = crate::sys::procfs::children_faults(placed.shell).unwrap_or(0);
        (prompt, faults)
    };
    let (id, pipe) = (d.id, d.pipe);
    let seen = Seen {
        socket,
        pane_pid,
        tty,
        prompt,
        baseline,
    };
    let j = d.job(&seen);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_bad_request_is_refused_before_anything_starts() {
        let make = words(&["make", "test"]);
        let ok = Request {
            cmd: &make,
            ..Request::default()
        };
        assert_eq!(check(&ok).unwrap(), "make test");
        let blank = words(&["", " "]);
        let forward = words(&["a\u{7}b"]);
        let two_lines = words(&["a\nb"]);
        let refused = [
            Request {
                cmd: &blank,
                ..Request::default()
            },
            Request {
                done_regex: Some(""),
                ..ok
            },
            Request {
                done_regex: Some("("),
                ..ok
            },
            Request {
                notify: Some(""),
                ..ok
            },
            Request {
                forward: &forward,
                ..ok
            },
            Request {
                target: Some("%1"),
                cmd: &two_lines,
                ..ok
            },
        ];
        for r in refused {
            let e = check(&r).unwrap_err();
            assert_eq!(e.kind, crate::error::Kind::Usage, "{r:?}: {}", e.msg);
        }
        // A new window runs a shell line: more than one line is fine there.
        let r = Request {
            cmd: &two_lines,
            ..ok
        };
        assert_eq!(check(&r).unwrap(), "a\nb");
    }

    fn pane(job: &str) -> PaneInfo {
        PaneInfo {
            pane_id: "%5".into(),
            job: job.into(),
            ..PaneInfo::default()
        }
    }

    #[test]
    fn a_typed_job_takes_only_a_free_live_pane_out_of_modes() {
        assert!(refuse_pane(&pane(""), false, |_| false).is_ok());
        let dead = PaneInfo {
            dead: true,
            ..pane("")
        };
        assert!(
            refuse_pane(&dead, false, |_| false)
                .unwrap_err()
                .msg
                .contains("is dead")
        );
        let moded = PaneInfo {
            in_mode: true,
            mode: "copy-mode".into(),
            ..pane("")
        };
        let e = refuse_pane(&moded, false, |_| false).unwrap_err();
        assert!(e.msg.contains("is in copy-mode"), "{}", e.msg);
        assert!(refuse_pane(&moded, true, |_| false).is_ok());
        // A running job's option: refused, unless that job is a killed start's ghost.
        let running = r#"{"v":1,"id":"w1","command":"x","deadline":1,"notify":[],"start":0,
            "status":"running","paneId":"%5","socket":"/s","launched":false}"#;
        let e = refuse_pane(&pane(running), false, |_| false).unwrap_err();
        assert!(
            e.msg.contains("already watched by a running job (w1)"),
            "{}",
            e.msg
        );
        assert!(refuse_pane(&pane(running), false, |j| j.id == "w1").is_ok());
        let finished = running.replace("running", "finished");
        assert!(refuse_pane(&pane(&finished), false, |_| false).is_ok());
    }

    #[test]
    fn the_window_waits_at_the_gate_then_records_the_status() {
        let s = window_script("w1", "echo 'hi'", "/b in/tm", "/st", (42, 7));
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines[0],
            "TMUXMATE_STATE_DIR=/st '/b in/tm' watch gate w1 42 7 || exit 1"
        );
        assert_eq!(lines[1], r#"/bin/sh -c 'echo '\''hi'\'''"#);
        assert!(lines[3].contains("watch record-exit w1 \"$tmuxmate_status\""));
        assert_eq!(lines[4], "exec \"${SHELL:-/bin/sh}\"");
    }

    #[test]
    fn a_job_records_its_pane_or_its_shell() {
        let draft = |placed| Draft {
            id: "w1",
            line: "make",
            regex: Some("ok"),
            placed,
            now: 1000,
            timeout_ms: 500,
            notify: words(&["agent"]),
            forward: Vec::new(),
            pipe: Some("/p/w1.out"),
        };
        let seen = Seen {
            socket: "/s",
            pane_pid: "77",
            tty: "/dev/pts/3",
            prompt: Some((5, 900)),
            baseline: 12,
        };
        let launched = Placed {
            pane_id: "%1".into(),
            launched: true,
            shell: 0,
            in_mode: false,
        };
        let j = draft(&launched).job(&seen);
        assert_eq!(
            (j.deadline, j.start, j.status),
            (1500, 1000, JobStatus::Running)
        );
        assert_eq!((j.pane_pid, j.baseline, j.tty.as_deref()), (77, 0, None));
        assert_eq!(
            (j.regex.as_deref(), j.pipe.as_deref()),
            (Some("ok"), Some("/p/w1.out"))
        );
        let typed = Placed {
            pane_id: "%2".into(),
            launched: false,
            shell: 33,
            in_mode: true,
        };
        let j = draft(&typed).job(&seen);
        assert_eq!((j.pane_pid, j.baseline), (33, 12));
        assert_eq!(j.tty.as_deref(), Some("/dev/pts/3"));
        assert_eq!((j.prompt_mode, j.read_target), (Some(5), Some(900)));
        assert_eq!((j.pane_id.as_str(), j.socket.as_str()), ("%2", "/s"));
    }
}
