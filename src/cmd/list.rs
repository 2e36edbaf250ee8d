//! `tmuxmate list`: prints the listing of `control::list` as JSON or as its text.

use crate::control::list;
use crate::error::CliResult;
use crate::tmux::Tmux;

pub fn run(tmux: &Tmux, json: bool) -> CliResult {
    let l = list::list(tmux, json, crate::watch::view::for_listing)?;
    if json {
        super::out_json(&l);
        return Ok(());
    }
    super::out(&l.text());
    Ok(())
}
