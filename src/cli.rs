//! Command-line definitions only (clap derive). Handlers live in `cmd/`.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "tmuxmate",
    version,
    about = "tmux as the reliable bus between AI coding agents and their terminals"
)]
pub struct Cli {
    /// tmux server socket name (as `tmux -L`).
    #[arg(short = 'L', long = "socket", global = true, value_name = "NAME")]
    pub socket: Option<String>,
    /// tmux server socket path (as `tmux -S`).
    #[arg(short = 'S', long = "socket-path", global = true, value_name = "PATH")]
    pub socket_path: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

fn interval(s: &str) -> Result<u64, String> {
    crate::turn::parse_interval(s)
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the tmux location of the calling process (tty-verified).
    Where {
        #[arg(long)]
        json: bool,
    },
    /// What the agent should be told at the start of this turn (empty when nothing).
    Turn {
        /// Agent address: the harness session id, or any stable id.
        #[arg(long)]
        agent: String,
        /// Turn number to print (default: the agent's own turn count).
        #[arg(long)]
        turn: Option<u64>,
        /// Suppress the tmux query and injection within MS of the last injection.
        #[arg(long, value_name = "MS", value_parser = interval, allow_hyphen_values = true)]
        refresh_interval_ms: Option<u64>,
        /// Character budget for the answer.
        #[arg(long, default_value_t = 9500)]
        max_chars: usize,
        #[arg(long)]
        json: bool,
    },
    /// Harness hook entry point: reads the hook JSON on stdin, answers in the harness's shape.
    Hook {
        harness: Harness,
        #[arg(long, value_name = "MS", value_parser = interval, allow_hyphen_values = true)]
        refresh_interval_ms: Option<u64>,
    },
    /// Sessions, windows (with layout) and panes, from one tmux call.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Run the demo on a private tmux server.
    Demo {
        /// Leave the demo server running and print how to attach.
        #[arg(long)]
        keep: bool,
    },
    /// Print integration snippets.
    Init {
        #[command(subcommand)]
        what: InitWhat,
    },
}

#[derive(Subcommand, Debug)]
pub enum InitWhat {
    /// The tmux.conf snippet with this binary's path filled in.
    Tmux,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Harness {
    Claude,
    Codex,
    Gemini,
}
