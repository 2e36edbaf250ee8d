//! A host's agents and the moment they change, for the machines that follow them: the
//! host side of `@tmuxmate-hosts` (the following side is [`super::hosts`]).
//!
//! Owns: the change marker `<state>/agents/changed` (touched by every record write, so a
//! waiter wakes on an inotify event instead of asking tmux again and again), the
//! listing's token (a hash of its rows) and the long-poll `agents changes`: answer at once
//! when the rows differ from the caller's token, else as soon as they change, else at the
//! deadline with the same token (which tells the caller the host is alive).
//!
//! Invariants: the marker's content means nothing, only its events; a change that is no
//! record write (an agent's pane dies without a word) is seen at the deadline at the
//! latest; the wait never outlasts the caller's deadline; a host with no tmux server has
//! no agents (an empty listing, not an error).

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::list::{self, Row};
use crate::sys::state;
use crate::tmux::{Tmux, TmuxError};

/// Changes that come together (a hook, then its status-line write) are one answer.
const SETTLE: Duration = Duration::from_millis(20);

fn marker() -> PathBuf {
    state::state_dir().join("agents").join("changed")
}

/// Tell waiters that an agent's record changed (best effort: a lost touch delays the
/// news to the waiter's deadline).
pub fn mark() {
    let r = state::open_private(
        &marker(),
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true),
    )
    .and_then(|mut f| std::io::Write::write_all(&mut f, state::now_ms().to_string().as_bytes()));
    if let Err(e) = r {
        state::log(&format!("agents: cannot touch the change marker: {e}"));
    }
}

/// The token of a listing: equal rows, equal token.
pub fn token(rows: &[Value]) -> String {
    let text = serde_json::to_string(rows).unwrap_or_default();
    crate::sys::hash::sha256_hex(text.as_bytes())[..16].to_string()
}

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
    let watcher = notify::recommended_watcher(move |r: notify::Result<notify::Event>| {
        if r.is_ok_and(|ev| ev.paths.iter().any(|p| p == &mark)) {
            let _ = tx.send(());
        }
    })
    .and_then(|mut w| {
        notify::Watcher::watch(&mut w, &dir, notify::RecursiveMode::NonRecursive).map(|()| w)
    });
    if let Err(e) = &watcher {
        // Then only the deadline answers: slower news, still right.
        state::log(&format!(
            "agents changes: cannot watch {}: {e}",
            dir.display()
        ));
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_rows_have_equal_tokens() {
        let a = vec![json!({"paneId": "%1", "state": "done"})];
        let b = vec![json!({"paneId": "%1", "state": "working"})];
        assert_eq!(token(&a), token(&a.clone()));
        assert_ne!(token(&a), token(&b));
        assert_ne!(token(&[]), token(&a));
        assert_eq!(token(&a).len(), 16);
    }
}
