//! placeholder
use crate::cli::SwapArgs;
use crate::error::{CliError, CliResult};
use crate::tmux::Tmux;
pub fn run(_tmux: &Tmux, _a: SwapArgs) -> CliResult {
    Err(CliError::new("not available in this build"))
}
