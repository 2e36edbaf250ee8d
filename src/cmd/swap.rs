//! `tmuxmate swap SRC DST` (or `--src SRC --dst DST`): calls `control::swap::swap` and prints the two pane ids.

use crate::cli::Json;
use crate::control::swap;
use crate::error::CliResult;
use crate::tmux::Tmux;

pub fn run(tmux: &Tmux, a: Json<swap::SwapAsk>) -> CliResult {
    let s = swap::swap(tmux, &a)?;
    super::out_json_or_line(a.json, &s, |s| format!("swapped {} and {}", s.src, s.dst));
    Ok(())
}
