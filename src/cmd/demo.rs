//! `tmuxmate demo [--keep]`: runs the demo (`crate::demo`) on its private tmux server.

use crate::error::CliResult;

pub fn run(keep: bool) -> CliResult {
    crate::demo::run(keep)
}
