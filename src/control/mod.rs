//! Control: acting on tmux panes for the CLI (`cmd/`) and the MCP server (`mcp/`).
//!
//! Owns: each control operation as one function taking a typed request and returning a
//! serde-serializable result or a `CliError` refusal. Invariant: no printing and no exit
//! codes here; the same function serves both front ends, so both refuse alike.

pub mod capture;
pub mod input;
pub mod kill;
pub mod list;
pub mod run;
pub mod run_remote;
pub mod split;
pub mod swap;
