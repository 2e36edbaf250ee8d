//! Placeholder: being written.
use crate::cli::KillArgs;
use crate::error::{CliError, CliResult};
use crate::tmux::Tmux;

pub fn run(_tmux: &Tmux, _a: KillArgs) -> CliResult {
    Err(CliError::new("not available in this build"))
}
