#![allow(clippy::disallowed_methods)] // tests spawn tmux and tmuxmate on their private socket
//! The one integration-test binary: every test drives a real tmux server.

#[path = "../util/mod.rs"]
pub mod util;

mod bridge;
mod capture;
mod cli;
mod control;
mod digest;
mod hooks;
mod hostile;
mod location;
mod mcp;
mod run;
mod safety;
mod side;
mod tmux_layer;
mod watch;
mod window_size;
