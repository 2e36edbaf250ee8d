//! Stopping a managed agent: its tmux session and every process the agent started.
//!
//! Owns: collecting the agent's processes before the session goes (the pane's process,
//! every process in its kernel session, and their descendants), killing the session, and
//! ending by pid whatever survived the hangup (Gemini CLI's launcher ignores SIGHUP; a
//! CLI may leave a child running). Invariants: only pids collected before the kill are
//! ever signalled, each re-checked by its start time (a reused pid is left alone);
//! SIGTERM first, SIGKILL only for what ignored it.

use crate::targs;
use crate::tmux::Arg;
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::tmux::Tmux;

/// A process as seen once: pid and kernel start time (to recognise pid reuse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Proc {
    pid: i32,
    start: u64,
}

/// (ppid, session, start time, state) of a process, from /proc.
fn facts(pid: i32) -> Option<(i32, i32, u64, char)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let close = text.rfind(')')?;
    let f: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // After ')': state(0) ppid(1) pgrp(2) session(3) ... starttime(19)
    Some((
        f.get(1)?.parse().ok()?,
        f.get(3)?.parse().ok()?,
        f.get(19)?.parse().ok()?,
        f.first()?.chars().next()?,
    ))
}

fn all_pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The pane's process, the processes of its session, and all their descendants.
fn agent_processes(pane_pid: i32) -> Vec<Proc> {
    let Some((_, sid, _, _)) = facts(pane_pid) else {
        return vec![];
    };
    let table: Vec<(i32, i32, i32, u64)> = all_pids()
        .into_iter()
        .filter_map(|p| facts(p).map(|(pp, s, st, _)| (p, pp, s, st)))
        .collect();
    let mut mine: Vec<(i32, u64)> = table
        .iter()
        .filter(|(p, _, s, _)| *p == pane_pid || (sid > 1 && *s == sid))
        .map(|(p, _, _, st)| (*p, *st))
        .collect();
    loop {
        let more: Vec<(i32, u64)> = table
            .iter()
            .filter(|(p, pp, _, _)| {
                mine.iter().any(|(m, _)| m == pp) && !mine.iter().any(|(m, _)| m == p)
            })
            .map(|(p, _, _, st)| (*p, *st))
            .collect();
        if more.is_empty() {
            break;
        }
        mine.extend(more);
    }
    mine.into_iter()
        .map(|(pid, start)| Proc { pid, start })
        .collect()
}

/// Still the same process, and not a zombie waiting for its parent.
fn alive(p: &Proc) -> bool {
    facts(p.pid).is_some_and(|(_, _, st, state)| st == p.start && state != 'Z' && state != 'X')
}

fn wait_gone(procs: &[Proc], limit: Duration) -> Vec<Proc> {
    let start = Instant::now();
    loop {
        let left: Vec<Proc> = procs.iter().copied().filter(alive).collect();
        if left.is_empty() || start.elapsed() >= limit {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(procs: &[Proc], sig: nix::sys::signal::Signal) {
    for p in procs.iter().filter(|p| alive(p)) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(p.pid), sig);
    }
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stopped {
    pub name: String,
    pub stopped: bool,
    /// Processes of the agent that were running when the stop began.
    pub processes: usize,
    /// Those that outlived the hangup and were ended by pid.
    pub ended_by_pid: Vec<i32>,
}

impl Stopped {
    /// The line `agent stop NAME` prints (`asked`: the name as given).
    pub fn line(&self, asked: &str) -> String {
        if self.ended_by_pid.is_empty() {
            format!("stopped {asked}")
        } else {
            format!(
                "stopped {asked}; ended {} process(es) that outlived the session by pid: {:?}",
                self.ended_by_pid.len(),
                self.ended_by_pid
            )
        }
    }
}

/// Kill session `session_id` (whose agent runs in a pane with process `pane_pid`) and
/// make sure none of the agent's processes outlive it.
pub fn stop(
    tmux: &Tmux,
    name: &str,
    session_id: &str,
    pane_pid: Option<i32>,
) -> Result<Stopped, Error> {
    let procs = pane_pid.map(agent_processes).unwrap_or_default();
    tmux.run(&targs!["kill-session", "-t", Arg::id(session_id)])?;
    let mut left = wait_gone(&procs, Duration::from_secs(2));
    let ended: Vec<i32> = left.iter().map(|p| p.pid).collect();
    if !left.is_empty() {
        signal(&left, nix::sys::signal::Signal::SIGTERM);
        // Gemini CLI's graceful shutdown takes 7-10 s with a live tty.
        left = wait_gone(&left, Duration::from_secs(12));
    }
    if !left.is_empty() {
        signal(&left, nix::sys::signal::Signal::SIGKILL);
        left = wait_gone(&left, Duration::from_secs(2));
    }
    if !left.is_empty() {
        return Err(Error::new(format!(
            "stopped session {name}, but these processes of its agent are still running after SIGKILL: {:?}; look at them with `ps -o pid,stat,cmd -p {}`",
            left.iter().map(|p| p.pid).collect::<Vec<_>>(),
            left.iter()
                .map(|p| p.pid.to_string())
                .collect::<Vec<_>>()
                .join(",")
        )));
    }
    Ok(Stopped {
        name: name.to_string(),
        stopped: true,
        processes: procs.len(),
        ended_by_pid: ended,
    })
}

/// `agent stop NAME --confirm`: refuses the caller's own session, asks the approval
/// policy, then [`stop`]s the session and every process of its agent.
pub fn stop_agent(tmux: &Tmux, name: &str, confirm: bool) -> Result<Stopped, Error> {
    if !confirm {
        return Err(Error::usage(format!(
            "refused: stopping {name} kills its tmux session and the agent in it; add --confirm"
        )));
    }
    let (c, a) = super::session::resolve(tmux, name)?;
    let caller = crate::location::address::caller(tmux);
    if let Some(p) = &caller.pane_id
        && crate::tmux::panes::query(
            tmux,
            &targs!["list-panes", "-s", "-t", Arg::id(&c.session_id)],
        )?
        .iter()
        .any(|x| &x.pane_id == p)
    {
        return Err(Error::refused(format!(
            "refused: {name} is the session you are running in"
        )));
    }
    crate::control::approval::approve(
        tmux,
        "agent-stop",
        Some(&c.session_id),
        &format!("stop agent session {name}"),
    )?;
    // Only a pane that still runs the CLI is the agent's; a pane restarted by hand keeps
    // its processes out of this.
    let pid = super::session::check_pane(tmux, &c, &a).ok();
    stop(tmux, name, &c.session_id, pid)
}
