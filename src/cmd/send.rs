//! placeholder
use crate::cli::SendArgs;
use crate::error::{CliError, CliResult};
use crate::tmux::Tmux;
pub fn run(_tmux: &Tmux, _a: SendArgs) -> CliResult {
    Err(CliError::new("not available in this build"))
}
