//! `tmuxmate run`: the flags to a `control::run::Request`; prints JSON, or the output
//! then `[exit N]` (exit 0 whatever the command's status: a non-zero exit of tmuxmate
//! means tmuxmate itself failed).

use crate::cli::RunArgs;
use crate::control::run;
use crate::error::CliResult;
use crate::tmux::Tmux;

pub fn run(tmux: &Tmux, a: RunArgs) -> CliResult {
    let r = run::execute(
        tmux,
        &run::Request {
            target: a.target.as_deref(),
            cmd: &a.cmd,
            timeout_ms: a.timeout_ms,
            until_stable: a.until_stable,
            max_bytes: a.max_bytes,
            keep: a.keep,
            progress: None,
        },
    )?;
    if a.json {
        super::out_json(&r);
    } else {
        super::out_line(&r.render());
    }
    Ok(())
}
