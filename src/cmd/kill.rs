//! `tmuxmate kill`: calls `control::kill::kill` and prints what was killed.

use crate::cli::KillArgs;
use crate::control::kill;
use crate::error::CliResult;
use crate::tmux::Tmux;

pub fn run(tmux: &Tmux, a: KillArgs) -> CliResult {
    let k = kill::kill(tmux, a.scope, a.target.as_deref(), a.confirm)?;
    if a.json {
        super::out_json(&k);
    } else {
        super::out_line(&k.render());
    }
    Ok(())
}
