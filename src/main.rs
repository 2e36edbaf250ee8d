//! tmuxmate: the module tree and the entry point; `cmd::entry` parses, dispatches and
//! picks the exit code.

mod bridge;
#[cfg(test)]
mod cited;
mod cli;
mod cmd;
mod control;
mod demo;
mod error;
mod harness;
mod install;
#[cfg(test)]
mod layers;
mod location;
mod mcp;
mod op;
mod remote;
mod side;
mod state;
mod sys;
mod tmux;
mod watch;

fn main() {
    cmd::entry::main()
}
