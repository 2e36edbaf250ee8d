//! tmuxmate: parse, dispatch, exit code. Everything else lives in the modules.

mod approval;
mod bindings;
mod bridge;
mod capture;
mod cli;
mod cmd;
mod create;
mod digest;
mod error;
mod hook;
mod input;
mod ledger;
mod location;
mod policy;
mod procfs;
mod side;
mod snapshot;
mod state;
mod tmux;
mod turn;
mod watch;

use clap::Parser;

fn main() {
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) if cmd::hook::is_hook_invocation() => {
            // A harness must never break because of us: log, print nothing, exit 0.
            state::log(&format!("hook: bad arguments: {e}"));
            std::process::exit(0);
        }
        Err(e) => e.exit(),
    };
    // A state directory left readable by others is closed before anything is read or written.
    state::secure_existing();
    if let Err(e) = cmd::dispatch(cli) {
        eprintln!("tmuxmate: {}", e.msg);
        std::process::exit(e.code);
    }
}
