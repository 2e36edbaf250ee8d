//! `tmuxmate swap SRC DST`: calls `control::swap::swap` and prints the two pane ids.

use crate::cli::SwapArgs;
use crate::control::swap;
use crate::error::CliResult;
use crate::tmux::Tmux;

pub fn run(tmux: &Tmux, a: SwapArgs) -> CliResult {
    let s = swap::swap(tmux, &a.src, &a.dst)?;
    if a.json {
        super::out_json(&s);
    } else {
        super::out_line(&format!("swapped {} and {}", s.src, s.dst));
    }
    Ok(())
}
