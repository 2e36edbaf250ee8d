//! Placeholder: being written.
use crate::cli::RunArgs;
use crate::error::{CliError, CliResult};
use crate::tmux::Tmux;

pub fn run(_tmux: &Tmux, _a: RunArgs) -> CliResult {
    Err(CliError::new("not available in this build"))
}
