//! tmuxmate: parse, dispatch, exit code. Everything else lives in the modules.

mod approval;
mod bridge;
mod capture;
mod cli;
mod cmd;
mod create;
mod digest;
mod error;
mod hook;
mod input;
mod install;
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
    cmd::install::intercept_version();
    cmd::demo_standin::intercept();
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) if cmd::hook::is_hook_invocation() => {
            // A harness must never break because of us: log, print nothing, exit 0.
            state::log(&cmd::hook::bad_arguments(&e));
            std::process::exit(0);
        }
        Err(e) => e.exit(),
    };
    if let Err(e) = cmd::dispatch(cli) {
        eprintln!("tmuxmate: {}", e.msg);
        std::process::exit(e.code);
    }
}
