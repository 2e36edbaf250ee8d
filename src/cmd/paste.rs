//! placeholder
use crate::cli::PasteArgs;
use crate::error::{CliError, CliResult};
use crate::tmux::Tmux;
pub fn run(_tmux: &Tmux, _a: PasteArgs) -> CliResult {
    Err(CliError::new("not available in this build"))
}
