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

impl Row {
    /// A row as `super::list::json` writes it, read back (a host's answer); `None` for a
    /// state this tmuxmate does not know. Its words are made printable: they came from
    /// another machine.
    pub fn from_json(v: &serde_json::Value) -> Option<Row> {
        use serde_json::Value;
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let state = super::machine::State::parse(v.get("state")?.as_str()?)?.name();
        Some(Row {
            pane_id: s("paneId"),
            target: s("target"),
            harness: s("harness"),
            state,
            since_ms: v.get("since").and_then(Value::as_u64).unwrap_or(0),
            why: crate::sys::printable::visible(&s("why")).0,
            socket: s("socket"),
            host: s("host"),
        })
    }
}
