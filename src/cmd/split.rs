//! placeholder
use crate::cli::{NewWindowArgs, SplitArgs};
use crate::error::{CliError, CliResult};
use crate::tmux::Tmux;
pub fn run_split(_tmux: &Tmux, _a: SplitArgs) -> CliResult {
    Err(CliError::new("not available in this build"))
}
pub fn run_new_window(_tmux: &Tmux, _a: NewWindowArgs) -> CliResult {
    Err(CliError::new("not available in this build"))
}
