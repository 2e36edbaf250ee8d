//! `tmuxmate swap SRC DST` (or `--src SRC --dst DST`): calls `control::swap::swap` and prints the two pane ids.

use crate::cli::SwapArgs;
use crate::control::swap;
use crate::error::CliResult;
use crate::tmux::Tmux;

pub fn run(tmux: &Tmux, a: SwapArgs) -> CliResult {
    let (src, dst) = a.pair().map_err(crate::error::Error::usage)?;
    let s = swap::swap(tmux, &src, &dst)?;
    if a.json {
        super::out_json(&s);
    } else {
        super::out_line(&format!("swapped {} and {}", s.src, s.dst));
    }
    Ok(())
}
