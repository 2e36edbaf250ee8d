//! The board: the agents' listing (`state::list::listing`: every server, the hosts'
//! snapshots, sorted needs-you first) joined with what else tmuxmate knows of each agent.
//!
//! Owns: one `list-panes` per local server for the names, directories, agent addresses
//! and digest lines; the digest glance of each pane (`side::digest::glance`); the pending
//! items of each agent's ledger; the git branch of each directory; the watch counts and
//! running jobs. Invariants: a server that does not answer loses only its extras (its
//! rows stay, as the listing has them); every file read is bounded; the caches are keyed
//! by size and mtime, so a refresh after one change re-reads only what changed (a live
//! dashboard refreshes on every event).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::row::{Board, Counts, JOBS_SHOWN, Job, Pending, Row, Todos, Unreached, Watch};
use crate::error::Error;
use crate::location::ledger::Ledger;
use crate::side::digest::glance;
use crate::sys::printable::visible;
use crate::targs;
use crate::tmux::format::{parse_records, record_format};
use crate::tmux::{Arg, Socket, Tmux, options};

type Stamp = Option<(u64, SystemTime)>;

fn stamp(p: &Path) -> Stamp {
    std::fs::metadata(p)
        .ok()
        .and_then(|m| Some((m.len(), m.modified().ok()?)))
}

/// A `HEAD` file is a line; anything longer is not git's.
const HEAD_MAX: u64 = 4096;
/// How far up from a directory its repository is looked for.
const UP_MAX: usize = 64;

/// What one pane's `list-panes` line says beyond the listing.
#[derive(Default, Clone)]
struct Facts {
    window: String,
    session: String,
    cwd: String,
    agent: String,
    status: String,
    managed: bool,
    project: String,
}

const FIELDS: &[&str] = &[
    "pane_id",
    "window_name",
    "session_name",
    "pane_current_path",
    options::AGENT.name,
    options::STATUS.name,
    options::MANAGED.name,
    options::PANE.name,
    options::PROJECT.name,
];

/// Caches kept across refreshes of one dashboard.
#[derive(Default)]
pub struct Gatherer {
    ledgers: HashMap<String, (Stamp, Pending)>,
    heads: HashMap<PathBuf, (Stamp, Option<String>)>,
    counters: HashMap<String, crate::watch::status::Counter>,
}

impl Gatherer {
    /// The board of `tmux`'s server (`chosen`: `-L`/`-S` named it), else of every server
    /// agents were seen on, with the hosts they follow.
    pub fn board(&mut self, tmux: &Tmux, chosen: bool) -> Result<Board, Error> {
        let listing = crate::state::list::listing(tmux, chosen)?;
        let here = crate::state::socket_of(tmux).ok();
        let mut facts: HashMap<String, HashMap<String, Facts>> = HashMap::new();
        let mut rows = Vec::with_capacity(listing.rows.len());
        for r in listing.rows {
            let far = !r.host.is_empty();
            let socket = if r.socket.is_empty() {
                here.clone().unwrap_or_default()
            } else {
                r.socket.clone()
            };
            let f = if far {
                Facts::default()
            } else {
                facts
                    .entry(socket.clone())
                    .or_insert_with(|| server_facts(tmux, &socket, here.as_deref()))
                    .get(&r.pane_id)
                    .cloned()
                    .unwrap_or_default()
            };
            let g = (!far).then(|| glance::read(&socket, &r.pane_id)).flatten();
            let project = (!f.project.is_empty())
                .then(|| f.project.clone())
                .or_else(|| (!f.cwd.is_empty()).then(|| f.cwd.clone()));
            let branch = project.as_deref().and_then(|p| self.branch(Path::new(p)));
            let pending = if f.agent.is_empty() {
                Pending::default()
            } else {
                self.pending(&f.agent)
            };
            let doing = if f.status.is_empty() {
                g.as_ref().map(|g| g.status.clone()).unwrap_or_default()
            } else {
                f.status.replace("##", "#")
            };
            rows.push(Row {
                socket: (!r.socket.is_empty() && Some(&r.socket) != here.as_ref())
                    .then(|| r.socket.clone()),
                host: far.then(|| r.host.clone()),
                harness: r.harness,
                name: visible(if f.managed { &f.session } else { &f.window }).0,
                managed: f.managed,
                state: r.state,
                since: r.since_ms,
                why: r.why,
                project: project.map(|p| visible(&p).0),
                branch: branch.map(|b| visible(&b).0),
                doing: visible(&doing).0,
                todos: g.as_ref().filter(|g| g.todos_total > 0).map(|g| Todos {
                    done: g.todos_done,
                    total: g.todos_total,
                    now: g.todo_now.as_deref().map(|t| visible(t).0),
                }),
                pending,
                usage: g.and_then(|g| g.usage),
                pane_id: r.pane_id,
                target: r.target,
            });
        }
        let mut sockets: Vec<String> = facts.into_keys().collect();
        sockets.extend(here);
        sockets.sort();
        sockets.dedup();
        Ok(Board {
            counts: Counts::of(&rows),
            agents: rows,
            watch: self.watch(&sockets),
            unreached_hosts: listing
                .unreached
                .into_iter()
                .map(|u| Unreached {
                    host: u.host,
                    why: u.why,
                })
                .collect(),
        })
    }

    /// Unprinted items queued for `agent`: watch results and notes.
    fn pending(&mut self, agent: &str) -> Pending {
        let l = Ledger::for_agent(agent);
        let st = stamp(l.path());
        if let Some((s, p)) = self.ledgers.get(agent)
            && *s == st
        {
            return p.clone();
        }
        let mut p = Pending::default();
        if st.is_some() {
            for item in l.peek().pending.iter().filter(|i| i.printed == 0) {
                if item.key.starts_with("watch:") {
                    p.watch += 1;
                } else {
                    p.notes += 1;
                }
            }
        }
        self.ledgers.insert(agent.to_string(), (st, p.clone()));
        p
    }

    /// The branch checked out in the repository holding `dir` (a detached head: its
    /// first 7 hex digits).
    fn branch(&mut self, dir: &Path) -> Option<String> {
        let head = head_file(dir)?;
        let st = stamp(&head);
        if let Some((s, b)) = self.heads.get(&head)
            && *s == st
        {
            return b.clone();
        }
        let b = crate::sys::files::read_tail(&head, HEAD_MAX)
            .ok()
            .filter(|(_, cut)| !cut)
            .and_then(|(bytes, _)| head_name(&String::from_utf8_lossy(&bytes)));
        self.heads.insert(head, (st, b.clone()));
        b
    }

    fn watch(&mut self, sockets: &[String]) -> Watch {
        let mut w = Watch::default();
        for s in sockets {
            let (r, d) = self.counters.entry(s.clone()).or_default().counts(s);
            w.running += r;
            w.done += d;
        }
        let mut jobs: Vec<_> = crate::watch::job::active_jobs()
            .into_iter()
            .filter(|j| {
                j.status == crate::watch::job::JobStatus::Running && sockets.contains(&j.socket)
            })
            .collect();
        jobs.sort_by_key(|j| std::cmp::Reverse(j.start));
        w.jobs = jobs
            .into_iter()
            .take(JOBS_SHOWN)
            .map(|j| Job {
                job_id: j.id,
                command: visible(&j.command).0,
                status: j.status.as_str().to_string(),
                start: j.start,
            })
            .collect();
        w
    }
}

/// The extras of every pane of the server at `socket` (empty when it does not answer).
fn server_facts(tmux: &Tmux, socket: &str, here: Option<&str>) -> HashMap<String, Facts> {
    let other;
    let t = if Some(socket) == here {
        tmux
    } else {
        other = Tmux::new(Socket::Path(socket.into()));
        &other
    };
    let fmt = record_format(FIELDS);
    let out = match t.run_bytes(&targs!["list-panes", "-a", "-F", Arg::ours(&fmt)], None) {
        Ok(o) => o,
        Err(e) => {
            crate::sys::state::log(&format!("dashboard: server {socket}: {e}"));
            return HashMap::new();
        }
    };
    let recs = parse_records(&out, FIELDS.len()).unwrap_or_default();
    recs.into_iter()
        .map(|r| {
            let mut it = r.into_iter();
            let mut n = || it.next().unwrap_or_default();
            let pane = n();
            let (window, session, cwd, agent, status) = (n(), n(), n(), n(), n());
            let managed = n() == "1";
            let pinned = n();
            let project = n();
            // A managed session's own pane only: others in it are the person's.
            let managed = managed && pinned == pane;
            let f = Facts {
                window,
                session,
                cwd,
                agent,
                status,
                managed,
                project: if managed { project } else { String::new() },
            };
            (pane, f)
        })
        .collect()
}

/// The `HEAD` of the repository holding `dir`: `.git/HEAD`, or for a worktree or
/// submodule (`.git` a file saying `gitdir: PATH`) that directory's `HEAD`.
fn head_file(dir: &Path) -> Option<PathBuf> {
    let mut d = Some(dir);
    for _ in 0..UP_MAX {
        let cur = d?;
        let git = cur.join(".git");
        match std::fs::symlink_metadata(&git) {
            Ok(m) if m.is_dir() => return Some(git.join("HEAD")),
            Ok(m) if m.is_file() => {
                let (b, cut) = crate::sys::files::read_tail(&git, HEAD_MAX).ok()?;
                let text = String::from_utf8_lossy(&b);
                let to = text.strip_prefix("gitdir:").filter(|_| !cut)?.trim();
                let to = Path::new(to);
                let to = if to.is_absolute() {
                    to.to_path_buf()
                } else {
                    cur.join(to)
                };
                return Some(to.join("HEAD"));
            }
            _ => d = cur.parent(),
        }
    }
    None
}

/// `ref: refs/heads/NAME` -> NAME; a detached head -> its first 7 hex digits.
fn head_name(text: &str) -> Option<String> {
    let t = text.trim();
    if let Some(r) = t.strip_prefix("ref:") {
        let r = r.trim();
        return Some(r.strip_prefix("refs/heads/").unwrap_or(r).to_string());
    }
    (t.len() >= 7 && t.bytes().all(|b| b.is_ascii_hexdigit())).then(|| t[..7].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_name_branches_and_detached_commits() {
        assert_eq!(
            head_name("ref: refs/heads/fix/login\n").as_deref(),
            Some("fix/login")
        );
        assert_eq!(
            head_name("0123456789abcdef0123456789abcdef01234567\n").as_deref(),
            Some("0123456")
        );
        assert_eq!(head_name("garbage"), None);
    }

    #[test]
    fn a_worktree_is_followed_to_its_gitdir() {
        let d = std::env::temp_dir().join(format!("tm-dash-{}", std::process::id()));
        let wt = d.join("wt/sub");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::create_dir_all(d.join("main/.git/worktrees/wt")).unwrap();
        std::fs::write(d.join("wt/.git"), "gitdir: ../main/.git/worktrees/wt\n").unwrap();
        std::fs::write(
            d.join("main/.git/worktrees/wt/HEAD"),
            "ref: refs/heads/dashboard\n",
        )
        .unwrap();
        let mut g = Gatherer::default();
        assert_eq!(g.branch(&wt).as_deref(), Some("dashboard"));
        std::fs::write(
            d.join("main/.git/worktrees/wt/HEAD"),
            "ref: refs/heads/other-b\n",
        )
        .unwrap();
        assert_eq!(g.branch(&wt).as_deref(), Some("other-b"));
        let _ = std::fs::remove_dir_all(&d);
    }
}
