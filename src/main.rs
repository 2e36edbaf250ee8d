//! tmuxmate: parse, dispatch, exit code. Everything else lives in the modules.

mod address;
mod approval;
mod bridge;
mod capture;
mod cli;
mod cmd;
mod create;
mod delivered;
mod digest;
mod error;
mod hash;
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
    // A file-size limit (RLIMIT_FSIZE) must fail a write with EFBIG, which the ledger cuts
    // back, rather than kill us with SIGXFSZ halfway through a record.
    // SAFETY: setting a signal to SIG_IGN runs no handler code.
    let _ = unsafe {
        nix::sys::signal::signal(
            nix::sys::signal::Signal::SIGXFSZ,
            nix::sys::signal::SigHandler::SigIgn,
        )
    };
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) if cmd::hook::is_hook_invocation() => {
            // A harness must never break because of us: log, print nothing, exit 0.
            state::log(&format!("hook: bad arguments: {e}"));
            std::process::exit(0);
        }
        Err(e) => e.exit(),
    };
    if let Err(e) = cmd::dispatch(cli) {
        eprintln!("tmuxmate: {}", e.msg);
        std::process::exit(e.code);
    }
}
