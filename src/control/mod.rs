//! Control: acting on tmux panes, for the CLI (`cmd/`) and the MCP server (`mcp/`) alike.
//!
//! Owns: the operations (list, send/paste/keys, capture, split/new-window, swap, run,
//! kill, snapshots) as functions taking typed requests and returning serde results or a
//! refusal; each operation's request type (`list::Ask`, `input::SendAsk`, ...: serde with
//! `deny_unknown_fields` and clap `Args`), the one the CLI command flattens and the MCP
//! tool reads (`request`: what they share); and what they rest on: target resolution
//! and the safety policy (`policy`), approval (`approval`), creating panes (`create`),
//! the text-into-pane mechanics (`pane_input`), the capture byte budget (`budget`) and
//! the snapshot log (`snapshot`). Invariant: no printing and no exit codes here; the same
//! function serves both front ends, so both refuse alike.

pub mod approval;
pub mod budget;
pub mod capture;
pub mod capture_list;
pub mod capture_tail;
pub mod create;
pub mod input;
pub mod kill;
pub mod kill_scope;
pub mod list;
pub mod pane_input;
pub mod policy;
pub mod preflight;
pub mod request;
pub mod run;
pub mod run_results;
pub mod settle;
pub mod snapshot;
pub mod snapshot_file;
pub mod split;
pub mod swap;
