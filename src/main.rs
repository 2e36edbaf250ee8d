//! tmuxmate: the module tree and the entry point; `cmd::entry` parses, dispatches and
//! picks the exit code.

mod address;
mod agents;
mod bindings;
mod bridge;
#[cfg(test)]
mod cited;
mod cli;
mod cmd;
mod control;
mod delivered;
mod demo;
mod digest;
mod error;
mod harness;
mod install;
mod ledger;
mod location;
mod mcp;
mod remote;
mod side;
mod sys;
mod tmux;
mod turn;

fn main() {
    cmd::entry::main()
}
