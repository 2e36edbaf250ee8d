//! `tmuxmate dashboard`: every agent on every server and host tmuxmate knows, on one
//! screen, live, with the keys to act on them; and the same rows once (`--once`, MCP).
//!
//! Sits above state, side, bridge and watch (nothing below imports it). One job per file:
//! - `request`: the request (one type for the CLI's flags and the MCP tool's arguments)
//!   and the rows once;
//! - `row`: a row and the board, their JSON (docs/json.md#dashboard) and the filter;
//! - `gather`: the board from the agents' listing, one `list-panes` per server, the
//!   digest glances, the ledgers and the watch jobs (caches kept across refreshes);
//! - `text`: the compact text a model or a script reads;
//! - `tui/`: the live view (terminal, events, drawing, keys, actions).
//!
//! Invariants: reading the board writes nothing but the status line's changed counts (as
//! `tmuxmate agents` does); every value shown comes from a person's or an agent's files
//! and is drawn as text, never as a format or escape sequence.

pub mod gather;
pub mod request;
pub mod row;
pub mod text;
pub mod tui;
