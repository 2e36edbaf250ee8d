//! `tmuxmate run`: the flags to a `control::run::Request`; prints JSON, or the output
//! then `[exit N]` (exit 0 whatever the command's status: a non-zero exit of tmuxmate
//! means tmuxmate itself failed).

use crate::cli::RunArgs;
use crate::control::run;
use crate::error::CliResult;
use crate::tmux::Tmux;

/// `--timeout`'s default: two minutes.
const DEFAULT_TIMEOUT_MS: u64 = 120_000;

pub fn run(tmux: &Tmux, a: RunArgs) -> CliResult {
    let r = run::execute(
        tmux,
        &run::Request {
            target: a.target.as_deref(),
            cmd: &a.cmd,
            timeout_ms: crate::cli::timeout_or(a.timeout, a.timeout_ms, 1, DEFAULT_TIMEOUT_MS),
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
