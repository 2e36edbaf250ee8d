//! Placeholder: being written.
use crate::cli::CaptureArgs;
use crate::error::{CliError, CliResult};
use crate::tmux::Tmux;

pub fn run(_tmux: &Tmux, _a: CaptureArgs) -> CliResult {
    Err(CliError::new("not available in this build"))
}
