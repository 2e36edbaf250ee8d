//! `tmuxmate kill`: calls `control::kill::kill` and prints what was killed.

use crate::cli::Json;
use crate::control::kill;
use crate::error::CliResult;
use crate::tmux::Tmux;

pub fn run(tmux: &Tmux, a: Json<kill::KillAsk>) -> CliResult {
    let k = kill::kill(tmux, &a)?;
    super::out_json_or_line(a.json, &k, kill::KillJson::render);
    Ok(())
}
