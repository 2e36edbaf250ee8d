#![allow(clippy::disallowed_methods)] // tests spawn tmux and tmuxmate on their private socket
//! The one integration-test binary: every test drives a real tmux server.

#[path = "../util/mod.rs"]
pub mod util;

mod agents;
mod bindings;
pub mod bridge;
mod capture;
mod cli;
mod contract;
mod control;
mod dashboard;
mod digest;
mod hooks;
pub mod hostile;
mod install;
mod ledger;
mod location;
pub mod mcp;
mod privacy;
mod remote;
mod remote_mux;
mod run;
mod safety;
mod side;
mod status_line;
mod tmux_layer;
mod watch;
mod watch_faults;
mod window_size;
