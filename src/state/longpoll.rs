//! A host's agents and the moment they change, for the machines that follow them: the
//! host side of `@tmuxmate-hosts` (the following side is [`super::hosts`]).
//!
//! Owns: the long-poll `agents changes`: answer at once when the rows differ from the
//! caller's token, else as soon as they change (the marker of [`super::changes`]), else at
//! the deadline with the same token (which tells the caller the host is alive).
//!
//! Invariants: a change that is no record write (an agent's pane dies without a word) is
//! seen at the deadline at the latest; the wait never outlasts the caller's deadline; a
//! host with no tmux server has no agents (an empty listing, not an error).

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::changes::{marker, token};
use super::list;
use super::row::Row;
use crate::sys::state;
use crate::tmux::{Tmux, TmuxError};

/// Changes that come together (a hook, then its status-line write) are one answer.
const SETTLE: Duration = Duration::from_millis(20);

/// The rows of every server here; none when no server runs.
fn rows(tmux: &Tmux) -> Result<Vec<Row>, TmuxError> {
    match list::every_server(tmux) {
        Err(e) if e.is_no_server() => Ok(Vec::new()),
        r => r,
    }
}

/// `{"token", "agents"}` as soon as the rows differ from `after`, or at `limit`.
pub fn wait(tmux: &Tmux, after: &str, limit: Duration) -> Result<Value, TmuxError> {
    let deadline = Instant::now() + limit;
    let (tx, rx) = mpsc::channel::<()>();
    let mark = marker();
    let dir = mark.parent().map(PathBuf::from).unwrap_or_default();
    if let Err(e) = state::private_dir(&dir) {
        state::log(&format!("agents changes: {}: {e}", dir.display()));
    }
    // Watching before the first look: a change between the look and the wait still wakes.
    // The directory also holds the agents' ledgers: only the marker's events count.
    let wtx = tx.clone();
    let watcher = notify::recommended_watcher(move |r: notify::Result<notify::Event>| {
        if r.is_ok_and(|ev| ev.paths.iter().any(|p| p == &mark)) {
            let _ = tx.send(());
        }
    })
    .and_then(|mut w| {
        if crate::sys::wake::no_inotify() {
            return Err(notify::Error::generic("TMUXMATE_NO_INOTIFY"));
        }
        notify::Watcher::watch(&mut w, &dir, notify::RecursiveMode::NonRecursive).map(|()| w)
    });
    // Without inotify (each digest follower holds one of the user's 128): the wake socket
    // every writer pokes. It wakes for more than state (notes, digests): each such wake is
    // one more look at the rows, which is why it is only the second choice.
    let _listener = match &watcher {
        Ok(_) => None,
        Err(e) => {
            state::log(&format!(
                "agents changes: cannot watch {} ({e}): woken by the wake socket",
                dir.display()
            ));
            match crate::sys::wake::listen(move || wtx.send(()).is_ok()) {
                Ok(l) => Some(l),
                Err(e) => {
                    // Then only the deadline answers: slower news, still right.
                    state::log(&format!("agents changes: no wake socket either: {e}"));
                    None
                }
            }
        }
    };
    loop {
        let v = list::json(&rows(tmux)?);
        let t = token(&v);
        let now = Instant::now();
        if t != after || now >= deadline {
            return Ok(json!({ "token": t, "agents": v }));
        }
        match rx.recv_timeout(deadline - now) {
            Ok(()) => while rx.recv_timeout(SETTLE).is_ok() {},
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                std::thread::sleep(deadline.saturating_duration_since(Instant::now()))
            }
        }
    }
}
