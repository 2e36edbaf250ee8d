//! `tmuxmate turn`: the per-turn answer for one agent, as text (or JSON).

use serde::Serialize;

use crate::error::CliResult;
use crate::tmux::{Tmux, version};
use crate::turn::{TurnRequest, compose};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TurnJson<'a> {
    agent: &'a str,
    turn: u64,
    items: &'a [String],
    text: String,
    no_location: Option<&'a str>,
}

pub fn run(
    tmux: &Tmux,
    agent: &str,
    turn: Option<u64>,
    interval_ms: Option<u64>,
    max_chars: usize,
    json: bool,
) -> CliResult {
    if agent.is_empty() {
        return Err(crate::error::CliError::usage(
            "--agent must not be empty: pass the harness session id or another stable id",
        ));
    }
    if max_chars < crate::turn::MIN_MAX_CHARS {
        return Err(crate::error::CliError::usage(format!(
            "--max-chars {max_chars} is too small: give at least {} (the answer must hold a truncation marker)",
            crate::turn::MIN_MAX_CHARS
        )));
    }
    version::check(tmux)?;
    let ans = compose(
        tmux,
        &TurnRequest {
            agent,
            turn,
            interval_ms,
            max_chars,
        },
    )?;
    if json {
        super::out_json(&TurnJson {
            agent,
            turn: ans.turn,
            items: &ans.items,
            text: ans.text(),
            no_location: ans.no_location.as_deref(),
        });
    } else if !ans.items.is_empty() {
        super::out_line(&ans.text());
    }
    Ok(())
}
