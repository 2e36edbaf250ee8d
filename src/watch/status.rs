//! The status-line counts of one tmux server's watches (`@tmuxmate-watch-status`).
//!
//! Owns: what the counts mean and computing them from durable state, never from a
//! counter a process keeps (a counter missed jobs another process ended and never went
//! down). Invariants:
//! - "running" is the number of this server's jobs whose mirror says `running`
//!   (a stopped or finished job is never running, whoever ended it);
//! - "done" is the number of this server's ended jobs (not stopped ones) whose result
//!   some addressee has not been told yet: not queued yet, or pending in that agent's
//!   ledger and never printed in full; a delivery at a turn makes it drop;
//! - "remote" is the number of jobs started from this server on other hosts
//!   (`watch start --host`) whose results have not reached this machine yet: counted from
//!   the local records (`crate::watch::remote::pending`), never by asking a host (this path
//!   runs unattended every few seconds and must not make an ssh call); their state there
//!   is not known here, so they are not split into running and done;
//! - reading is cheap enough for the poller's rescan: the `done` directory is read again
//!   only when its mtime changes, a ledger only when its size or mtime does.

use crate::targs;
use crate::tmux::Arg;
use crate::watch::job::JobStatus;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::SystemTime;

use super::job::{self, Job};
use crate::location::ledger::Ledger;
use crate::tmux::Tmux;

/// The text for the counts: "watch 2 running · 1 done · 1 remote" (empty when nothing
/// to show).
pub fn text(running: usize, done: usize, remote: usize) -> String {
    let mut parts = Vec::new();
    if running > 0 {
        parts.push(format!("{running} running"));
    }
    if done > 0 {
        parts.push(format!("{done} done"));
    }
    if remote > 0 {
        parts.push(format!("{remote} remote"));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("watch {}", parts.join(" · "))
}

/// The status text of the server at `socket`: its counts and its remote jobs.
pub fn line(counter: &mut Counter, socket: &str) -> String {
    let (r, d) = counter.counts(socket);
    text(r, d, crate::watch::remote::pending::count_for(socket))
}

type Stamp = Option<(u64, SystemTime)>;

fn stamp(p: &PathBuf) -> Stamp {
    std::fs::metadata(p)
        .ok()
        .and_then(|m| Some((m.len(), m.modified().ok()?)))
}

/// Caches across calls (the poller keeps one; a one-off refresh uses a fresh one).
#[derive(Default)]
pub struct Counter {
    done_dir: Option<SystemTime>,
    done_jobs: Vec<Job>,
    ledgers: HashMap<String, (Stamp, Vec<String>)>,
}

impl Counter {
    /// Re-read `agent`'s pending keys if its ledger changed since the last look.
    fn refresh_ledger(&mut self, agent: &str) {
        let l = Ledger::for_agent(agent);
        let st = stamp(&l.path().to_path_buf());
        let fresh = self.ledgers.get(agent).is_some_and(|(s, _)| *s == st);
        if !fresh {
            // A printed item was told (with a transcript it stays pending until the next
            // turn confirms it, or held: see `crate::location::turn`); only unprinted ones count.
            let keys = l
                .peek()
                .pending
                .into_iter()
                .filter(|p| p.printed == 0)
                .map(|p| p.key)
                .collect();
            self.ledgers.insert(agent.to_string(), (st, keys));
        }
    }

    fn addressees(j: &Job) -> impl Iterator<Item = &String> {
        j.notify.iter().chain(j.forward.iter())
    }

    /// Ended, not stopped, and some addressee has not been told (ledgers refreshed).
    fn untold(&self, j: &Job) -> bool {
        if j.status == JobStatus::Stopped || j.status == JobStatus::Running {
            return false;
        }
        if !j.queued {
            return true;
        }
        let key = format!("watch:{}", j.id);
        Self::addressees(j).any(|a| self.ledgers.get(a).is_some_and(|(_, p)| p.contains(&key)))
    }

    /// Every addressee of the ended job `j` has been told its result (ledgers refreshed).
    pub fn told(&mut self, j: &Job) -> bool {
        let who: Vec<String> = Self::addressees(j).cloned().collect();
        for a in &who {
            self.refresh_ledger(a);
        }
        j.queued && j.status != JobStatus::Running && !self.untold(j)
    }

    /// `(running, done)` for the server at `socket`.
    pub fn counts(&mut self, socket: &str) -> (usize, usize) {
        let dir = super::jobs_dir().join("done");
        let m = std::fs::metadata(&dir).and_then(|m| m.modified()).ok();
        if m.is_none() || m != self.done_dir {
            self.done_dir = m;
            self.done_jobs = job::done_jobs()
                .into_iter()
                .filter(|j| j.socket == socket)
                .collect();
        }
        let active: Vec<Job> = job::active_jobs()
            .into_iter()
            .filter(|j| j.socket == socket)
            .collect();
        let running = active
            .iter()
            .filter(|j| j.status == JobStatus::Running)
            .count();
        let ended: Vec<Job> = active
            .into_iter()
            .chain(self.done_jobs.iter().cloned())
            .collect();
        // Each ledger is looked at once per count (a stat; parsed only when it changed).
        let mut agents: Vec<&String> = ended
            .iter()
            .filter(|j| {
                j.queued && j.status != JobStatus::Stopped && j.status != JobStatus::Running
            })
            .flat_map(Self::addressees)
            .collect();
        agents.sort();
        agents.dedup();
        for a in agents {
            self.refresh_ledger(a);
        }
        let done = ended.iter().filter(|j| self.untold(j)).count();
        (running, done)
    }
}

/// Recompute and push the counts of the server at `socket` if they changed (for callers
/// other than the poller: a turn that delivered watch results).
pub fn refresh(socket: &str) {
    let tmux = Tmux::new(crate::tmux::Socket::Path(PathBuf::from(socket)));
    let want = line(&mut Counter::default(), socket);
    let have = tmux
        .run(&[
            "show-options",
            "-gqv",
            crate::tmux::options::WATCH_STATUS.name,
        ])
        .map(|s| s.trim_end_matches('\n').to_string());
    if let Ok(have) = have
        && have != want
    {
        let _ = tmux.run(&targs![
            "set-option",
            "-g",
            crate::tmux::options::WATCH_STATUS.name,
            Arg::literal(&want)
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts() {
        assert_eq!(text(2, 1, 0), "watch 2 running · 1 done");
        assert_eq!(text(0, 3, 0), "watch 3 done");
        assert_eq!(text(0, 0, 0), "");
        assert_eq!(text(1, 0, 2), "watch 1 running · 2 remote");
        assert_eq!(text(0, 0, 1), "watch 1 remote");
    }
}
