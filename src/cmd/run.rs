//! `tmuxmate run`: the flags (`control::run::RunAsk`) to a `control::run::Request`; prints JSON, or the output
//! then `[exit N]` (exit 0 whatever the command's status: a non-zero exit of tmuxmate
//! means tmuxmate itself failed).

use crate::cli::Json;
use crate::control::run;
use crate::error::CliResult;
use crate::tmux::Tmux;

/// `--timeout`'s default: two minutes.
const DEFAULT_TIMEOUT_MS: u64 = 120_000;

pub fn run(tmux: &Tmux, a: Json<run::RunAsk>) -> CliResult {
    let argv = a.argv();
    let r = run::execute(tmux, &a.request(&argv, DEFAULT_TIMEOUT_MS, None))?;
    super::out_json_or_line(a.json, &r, run::RunJson::render);
    Ok(())
}
