//! Placeholder: being written.
use crate::cli::SnapshotsArgs;
use crate::error::{CliError, CliResult};
use crate::tmux::Tmux;

pub fn run(_tmux: &Tmux, _a: SnapshotsArgs) -> CliResult {
    Err(CliError::new("not available in this build"))
}
