//! `tmuxmate turn`: the per-turn answer for one agent, as text (or JSON).

use serde::Serialize;

use crate::error::CliResult;
use crate::location::turn::{TurnRequest, compose};
use crate::tmux::Tmux;

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
        return Err(crate::error::Error::usage(
            "--agent must not be empty: pass the harness session id or another stable id",
        ));
    }
    if max_chars < crate::location::turn::decide::MIN_MAX_CHARS {
        return Err(crate::error::Error::usage(format!(
            "--max-chars {max_chars} is too small: give at least {} (the answer must hold a truncation marker)",
            crate::location::turn::decide::MIN_MAX_CHARS
        )));
    }
    crate::location::ledger::check_address("--agent", agent).map_err(crate::error::Error::usage)?;
    let steps = super::steps::PerTurn { harness: None };
    let mut ans = compose(
        tmux,
        &TurnRequest {
            agent,
            turn,
            interval_ms,
            max_chars,
            transcript: None,
        },
        &steps,
    )?;
    let printed = if json {
        super::try_out_line(
            &serde_json::to_string_pretty(&TurnJson {
                agent,
                turn: ans.turn,
                items: &ans.items,
                text: ans.text(),
                no_location: ans.no_location.as_deref(),
            })
            .unwrap_or_else(|_| "null".into()),
        )
    } else if !ans.items.is_empty() {
        super::try_out_line(&ans.text())
    } else {
        Ok(())
    };
    // Delivered only when printed: a closed stdout leaves the items for the next turn.
    match printed {
        Ok(()) => {
            if let Err(e) = ans.confirm() {
                // The text is out; failing now would make the caller distrust it.
                crate::sys::state::log(&format!("turn {agent}: {e}"));
                eprintln!("tmuxmate: warning: {e}");
            }
        }
        Err(e) => crate::sys::state::log(&format!(
            "turn {agent}: stdout failed ({e}); the items stay queued for the next turn"
        )),
    }
    ans.after(&steps);
    Ok(())
}
