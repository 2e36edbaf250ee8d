//! placeholder
use crate::cli::KeysArgs;
use crate::error::{CliError, CliResult};
use crate::tmux::Tmux;
pub fn run(_tmux: &Tmux, _a: KeysArgs) -> CliResult {
    Err(CliError::new("not available in this build"))
}
