//! What wakes the live view: the files that feed the status line, watched with inotify
//! (through `notify`), and the terminal's keys, mouse and size, on one channel.
//!
//! Owns: the directories watched and which of their events are news: the change marker
//! and the ledgers in `<state>/agents/` (a state, a queued or delivered note), the hosts'
//! snapshots, the digest glances, the watch jobs' records. Invariants: no timer here (the
//! loop decides when a shown age needs a redraw); a directory that does not exist yet is
//! created (private) so that its first file is seen; an event for any other file (locks,
//! caches, temp names) wakes nobody. Where the kernel has no inotify instance left for us
//! (one per digest follower, 128 per user by default), the same files are looked at every
//! [`POLL_EVERY`] instead, and the view says so.

use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;

use super::act::Outcome;
use crate::sys::state;

pub enum Msg {
    /// A file the board is built from changed.
    Files,
    Term(crossterm::event::Event),
    /// The terminal is gone (read failed).
    TermGone,
    Done(Outcome),
}

fn dirs() -> Vec<PathBuf> {
    let s = state::state_dir();
    vec![
        s.join("agents"),
        s.join("agents").join("hosts"),
        crate::side::digest::dir(),
        crate::watch::jobs_dir().join("active"),
        crate::watch::jobs_dir().join("done"),
    ]
}

/// Whether an event on `p` is news for the board.
pub fn news(p: &Path) -> bool {
    let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    if name.contains(".tmp") {
        return false;
    }
    let parent = p
        .parent()
        .and_then(|d| d.file_name())
        .and_then(|n| n.to_str());
    match parent {
        Some("agents") => name == "changed" || name.ends_with(".jsonl"),
        Some("hosts") => name.ends_with(".json"),
        Some("digest") => crate::side::digest::glance::is_glance(p),
        Some("active") | Some("done") => name.ends_with(".json"),
        _ => false,
    }
}

/// How often the files are looked at when the kernel gives no inotify instance (each
/// digest follower holds one, and `fs.inotify.max_user_instances` is 128 by default).
pub const POLL_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// The watcher (keep it: dropping it stops the events), and whether it had to poll.
pub fn watch(tx: Sender<Msg>) -> notify::Result<(Box<dyn notify::Watcher + Send>, bool)> {
    let handler = move |r: notify::Result<notify::Event>| {
        if let Ok(ev) = r
            && ev.paths.iter().any(|p| news(p))
        {
            let _ = tx.send(Msg::Files);
        }
    };
    let (mut w, polled): (Box<dyn notify::Watcher + Send>, bool) = match notify::recommended_watcher(
        handler.clone(),
    ) {
        Ok(w) => (Box::new(w), false),
        Err(e) => {
            state::log(&format!(
                "dashboard: no inotify ({e}; see fs.inotify.max_user_instances): looking at the files every {} ms",
                POLL_EVERY.as_millis()
            ));
            let c = notify::Config::default().with_poll_interval(POLL_EVERY);
            (Box::new(notify::PollWatcher::new(handler, c)?), true)
        }
    };
    for d in dirs() {
        if let Err(e) = state::private_dir(&d) {
            state::log(&format!("dashboard: {}: {e}", d.display()));
            continue;
        }
        if let Err(e) = w.watch(&d, notify::RecursiveMode::NonRecursive) {
            state::log(&format!("dashboard: cannot watch {}: {e}", d.display()));
        }
    }
    Ok((w, polled))
}

/// The terminal's events, read on their own thread.
pub fn terminal(tx: Sender<Msg>) {
    std::thread::spawn(move || {
        loop {
            match crossterm::event::read() {
                Ok(e) => {
                    if tx.send(Msg::Term(e)).is_err() {
                        return;
                    }
                }
                Err(_) => {
                    let _ = tx.send(Msg::TermGone);
                    return;
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_boards_files_are_news() {
        let yes = [
            "/s/agents/changed",
            "/s/agents/claude-abc.jsonl",
            "/s/agents/hosts/abc-def.json",
            "/s/digest/xyz.glance.json",
            "/s/jobs/active/w1.json",
            "/s/jobs/done/w1.json",
        ];
        let no = [
            "/s/agents/claude-abc.lock",
            "/s/agents/hosts/abc.lock",
            "/s/digest/xyz.cache.json",
            "/s/digest/xyz.glance.tmp.1",
            "/s/digest/xyz.lock",
            "/s/jobs/w1.done",
        ];
        for p in yes {
            assert!(news(Path::new(p)), "{p}");
        }
        for p in no {
            assert!(!news(Path::new(p)), "{p}");
        }
    }
}
