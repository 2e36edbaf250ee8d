//! One agent in a listing: the row `tmuxmate agents`, the status line's followers of other
//! hosts and the long-poll all pass around (its JSON: `super::list::json`).

use serde::Serialize;

/// One agent pane: where it is, its harness and its effective state.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Row {
    pub pane_id: String,
    /// `session:window.pane`.
    pub target: String,
    pub harness: String,
    pub state: &'static str,
    /// Unix milliseconds of the last change.
    pub since_ms: u64,
    pub why: String,
    /// The server's socket, when several servers are listed.
    pub socket: String,
    /// The ssh host the agent runs on (`@tmuxmate-hosts`); empty: this machine.
    pub host: String,
}
