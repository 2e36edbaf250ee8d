//! Starting a watch job (`tmuxmate watch start`, the MCP `tmux_watch` tool).
//!
//! Invariants: every bad input (empty command, regex that does not compile, negative or
//! absurd timeout) is refused before anything starts; a launched command is held at a
//! gate until its job state exists, so even a 5 ms command finds its job when it reports
//! its exit; a start that fails half-way leaves nothing behind.

use serde::Serialize;

use crate::create;
use crate::error::CliError;
use crate::input;
use crate::policy;
use crate::state;
use crate::targs;
use crate::tmux::Arg;
use crate::tmux::{Text, Tmux, version};
use crate::watch::job::{self, Job};
use crate::watch::poller;

const DEFAULT_TIMEOUT_MIN: u64 = 120;
const MAX_TIMEOUT_MIN: u64 = 7 * 24 * 60;

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
}

/// Minutes (fractions allowed, e.g. 0.5) to milliseconds; refuses <= 0, NaN and > 7 days.
pub fn parse_timeout(s: &str) -> Result<u64, CliError> {
    match s.trim().parse::<f64>() {
        Ok(m) if m.is_finite() && m > 0.0 && m <= MAX_TIMEOUT_MIN as f64 => {
            Ok((m * 60_000.0).ceil() as u64)
        }
        _ => Err(CliError::usage(format!(
            "--timeout-min {s:?} is not a number of minutes greater than 0 and at most {MAX_TIMEOUT_MIN} (7 days)"
        ))),
    }
}

/// The timeout in milliseconds.
fn timeout_min(tmux: &Tmux, flag: Option<&str>) -> Result<u64, CliError> {
    if let Some(f) = flag {
        return parse_timeout(f);
    }
    let opt = tmux
        .run(&["show-options", "-gqv", "@tmuxmate-watch-timeout-min"])
        .unwrap_or_default();
    let opt = opt.trim();
    if opt.is_empty() {
        return Ok(DEFAULT_TIMEOUT_MIN * 60_000);
    }
    parse_timeout(opt).map_err(|e| {
        CliError::new(format!(
            "tmux option @tmuxmate-watch-timeout-min: {}",
            e.msg
        ))
    })
}

fn command_line(cmd: &[String]) -> String {
    if cmd.len() == 1 {
        cmd[0].clone()
    } else {
        create::sh_join(cmd)
    }
}

pub fn start(tmux: &Tmux, a: &Request) -> Result<Started, CliError> {
    // Everything that can be wrong with the request is checked before anything starts.
    if a.cmd.is_empty() || a.cmd.iter().all(|w| w.trim().is_empty()) {
        return Err(CliError::usage(
            "refused: no command given; usage: tmuxmate watch start [-t PANE] -- CMD...",
        ));
    }
    let regex = match a.done_regex {
        Some("") => {
            return Err(CliError::usage(
                "--done-regex is empty; give a pattern or leave it out",
            ));
        }
        Some(r) => Some(
            regex::RegexBuilder::new(r)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| CliError::usage(format!("--done-regex does not compile: {e}")))?,
        ),
        None => None,
    };
    for n in a
        .notify
        .into_iter()
        .chain(a.forward.iter().map(String::as_str))
    {
        if n.is_empty() || n.chars().any(|c| c.is_control()) {
            return Err(CliError::usage(
                "--notify/--forward need a non-empty agent address without control characters",
            ));
        }
    }
    let line = command_line(a.cmd);
    if a.target.is_some() {
        input::validate_line(&line).map_err(|e| {
            CliError::usage(format!(
                "{} (a command typed into a shell pane must be one line)",
                e.msg
            ))
        })?;
    }
    version::check(tmux)?;
    let timeout_ms = timeout_min(tmux, a.timeout_min)?;
    let caller = policy::caller(tmux);
    let notify = vec![
        a.notify
            .map_or_else(|| caller.agent.clone(), str::to_string),
    ];
    let id = job::new_id();
    let now = state::now_ms();
    let pipe = regex.as_ref().map(|_| {
        job::jobs_dir()
            .join("pipes")
            .join(format!("{id}.out"))
            .to_string_lossy()
            .into_owned()
    });
    if let Some(p) = &pipe
        && let Some(d) = std::path::Path::new(p).parent()
    {
        std::fs::create_dir_all(d)
            .map_err(|e| crate::error::state_io("create the directory", d, e))?;
    }
    // The job's state must be writable before a window waits on its gate: a window that
    // was created and then never released would block on `tmux wait-for` forever.
    probe_writable(&job::active_path(&id))?;
    let gate = format!("tmuxmate-go-{id}");
    // For a typed job, `shell` is the pid of the shell in the foreground at the start.
    let (pane_id, launched, shell) = match a.target {
        None => {
            let bin = std::env::current_exe()?.to_string_lossy().into_owned();
            let q = create::sh_quote;
            let wrapper = format!(
                "tmux wait-for {gate}\n/bin/sh -c {}\ntmuxmate_status=$?\nTMUXMATE_STATE_DIR={} {} watch record-exit {id} \"$tmuxmate_status\" >/dev/null 2>&1\nexec \"${{SHELL:-/bin/sh}}\"\n",
                q(&line),
                q(&state::state_dir().to_string_lossy()),
                q(&bin),
            );
            let c = create::new_work_window(
                tmux,
                &caller,
                Some(&Text::lossy(&format!("watch {id}"))),
                None,
                &["sh".into(), "-c".into(), wrapper],
            )?;
            (c.pane_id, true, 0)
        }
        Some(t) => {
            let p = policy::resolve(tmux, Some(t), &caller.agent)?;
            if p.dead {
                return Err(CliError::new(format!(
                    "refused: pane {} is dead; watch -t types into a live shell",
                    p.pane_id
                )));
            }
            if serde_json::from_str::<Job>(&p.job).is_ok_and(|j| j.status == "running") {
                return Err(CliError::new(format!(
                    "refused: pane {} is already watched by a running job; wait for it, or `tmuxmate watch stop` it first",
                    p.pane_id
                )));
            }
            if p.in_mode {
                return Err(CliError::new(format!(
                    "refused: pane {} is in {}; leave the mode (or `tmuxmate keys -t {} q`) first",
                    p.pane_id, p.mode, p.pane_id
                )));
            }
            let pid: i32 = p.pane_pid.parse().unwrap_or(0);
            let shells = poller::shells(tmux);
            match poller::foreground(pid, &shells) {
                Some((fg, true)) => (p.pane_id.clone(), false, fg),
                _ => {
                    return Err(CliError::new(format!(
                        "refused: pane {} is not at a shell prompt (its foreground program is {}); \
                         watch -t types the command into an idle shell. Use `watch start` without -t for a new window",
                        p.pane_id,
                        crate::control::list::foreground_exe(&p.pane_pid)
                            .unwrap_or_else(|| "unknown".into())
                    )));
                }
            }
        }
    };
    let r = launch(
        tmux,
        a,
        &id,
        &line,
        &pipe,
        &gate,
        now,
        timeout_ms,
        notify,
        (&pane_id, launched, shell),
    );
    if let Err(e) = r {
        undo(tmux, &id, &pane_id, launched);
        return Err(e);
    }
    Ok(Started {
        job_id: id,
        pane_id,
    })
}

/// Write and remove a probe file beside `path`: the state directory takes our files.
fn probe_writable(path: &std::path::Path) -> Result<(), CliError> {
    let dir = path.parent().unwrap_or(path);
    let probe = dir.join(format!(".probe-{}", std::process::id()));
    state::write_atomic(&probe, b"")
        .map_err(|e| crate::error::state_io("write the job state in", dir, e))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// A start that failed half-way leaves nothing: our window goes (its wrapper is still
/// at the gate, so the command never ran), a typed-into pane loses our option and pipe.
fn undo(tmux: &Tmux, id: &str, pane_id: &str, launched: bool) {
    if launched {
        let _ = tmux.run(&targs!["kill-pane", "-t", Arg::id(pane_id)]);
    } else {
        let _ = tmux.run(&targs!["pipe-pane", "-t", Arg::id(pane_id)]);
        let _ = tmux.run(&targs![
            "set-option",
            "-p",
            "-u",
            "-t",
            Arg::id(pane_id),
            "@tmuxmate-job"
        ]);
    }
    let _ = std::fs::remove_file(job::active_path(id));
    state::log(&format!(
        "watch {id}: start failed; removed what it had created"
    ));
}

#[allow(clippy::too_many_arguments)]
fn launch(
    tmux: &Tmux,
    a: &Request,
    id: &str,
    line: &str,
    pipe: &Option<String>,
    gate: &str,
    now: u64,
    timeout_ms: u64,
    notify: Vec<String>,
    (pane_id, launched, shell): (&str, bool, i32),
) -> Result<(), CliError> {
    let (id, pane_id) = (id.to_string(), pane_id.to_string());
    let info = tmux.run(&targs![
        "display-message",
        "-p",
        "-t",
        Arg::id(&pane_id),
        "#{socket_path}\t#{pane_pid}",
    ])?;
    let (socket, pane_pid) = info.trim_end().split_once('\t').unwrap_or(("", ""));
    let j = Job {
        v: job::VERSION,
        id: id.clone(),
        command: line.to_string(),
        regex: a.done_regex.map(str::to_string),
        deadline: now + timeout_ms,
        notify,
        forward: a.forward.to_vec(),
        start: now,
        status: "running".into(),
        exit_status: None,
        end: None,
        detail: None,
        pane_id: pane_id.clone(),
        socket: socket.to_string(),
        launched,
        pane_pid: if launched {
            pane_pid.parse().unwrap_or(0)
        } else {
            shell
        },
        // Read before the job becomes visible to a poller; typing forks nothing, so the
        // count can only grow once the command runs.
        baseline: if launched {
            0
        } else {
            crate::procfs::children_faults(shell).unwrap_or(0)
        },
        pipe: pipe.clone(),
        poller: None,
        heartbeat: None,
        queued: false,
        tail: None,
    };
    j.save_mirror()
        .map_err(|e| crate::error::state_io("write the job state", &job::active_path(&id), e))?;
    j.save_option(tmux)?;
    if let Some(p) = &pipe {
        let cmd = format!("exec cat >> {}", create::sh_quote(p));
        // pipe-pane expands formats in its command, then runs a shell.
        tmux.run(&targs![
            "pipe-pane",
            "-t",
            Arg::id(&pane_id),
            Arg::expanded(&cmd)
        ])?;
    }
    if launched {
        tmux.run(&targs!["wait-for", "-S", Arg::id(gate)])?;
    } else {
        input::paste_bytes(tmux, &pane_id, line.as_bytes(), false)?;
        tmux.run(&targs!["send-keys", "-t", Arg::id(&pane_id), "Enter"])?;
    }
    if let Err(e) = poller::ensure(&j.socket) {
        state::log(&format!("watch {id}: could not start the poller: {e}"));
    }
    Ok(())
}
