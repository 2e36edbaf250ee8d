//! The moment an agent's record changes: the change marker `<state>/agents/changed`
//! (touched by every record write, so a waiter wakes on an inotify event instead of asking
//! tmux again and again: [`super::longpoll`]), the poke of the live views (`sys::wake`)
//! and the listing's token (a hash of its rows).
//!
//! Invariants: the marker's content means nothing, only its events; touching it is best
//! effort (a lost touch delays the news to the waiter's deadline).

use std::path::PathBuf;

use serde_json::Value;

use crate::sys::state;

pub fn marker() -> PathBuf {
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
    .and_then(|mut f| {
        std::io::Write::write_all(&mut f, crate::sys::time::now_ms().to_string().as_bytes())
    });
    if let Err(e) = r {
        state::log(&format!("agents: cannot touch the change marker: {e}"));
    }
    // The record (in tmux) changed even when the marker could not be touched: the live
    // views look again (`sys::wake`).
    crate::sys::wake::poke();
}

/// The token of a listing: equal rows, equal token.
pub fn token(rows: &[Value]) -> String {
    let text = serde_json::to_string(rows).unwrap_or_default();
    crate::sys::hash::sha256_hex(text.as_bytes())[..16].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
