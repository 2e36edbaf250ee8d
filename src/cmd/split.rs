//! `tmuxmate split` and `tmuxmate new-window`: call `control::split` and print the new pane.

use crate::cli::Json;
use crate::control::create::Created;
use crate::control::split;
use crate::error::CliResult;
use crate::tmux::Tmux;

fn line(c: &Created) -> String {
    format!("{} {}", c.pane_id, c.target)
}

pub fn run_split(tmux: &Tmux, a: Json<split::SplitAsk>) -> CliResult {
    super::out_json_or_line(a.json, &split::split(tmux, &a)?, line);
    Ok(())
}

pub fn run_new_window(tmux: &Tmux, a: Json<split::NewWindowAsk>) -> CliResult {
    super::out_json_or_line(a.json, &split::new_window(tmux, &a)?, line);
    Ok(())
}
