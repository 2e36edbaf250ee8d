//! The per-turn path as a harness hook runs it: one hook event in, at most one answer out.
//!
//! Owns: deciding what a hook event means for the agent (a turn, a reset, a start, or
//! nothing), the agent's address (session id, else the tty-verified pane), and handing
//! back the turn's answer (`super::turn`) for the handler to print in the harness's shape.
//! (A side chat's agent answers otherwise: `crate::side::turn`, chosen by the handler.)
//! Invariants: nothing is printed here (the handler prints, then confirms); every reason
//! for silence is an `Err` for the handler to log, never a panic or a partial answer.

use crate::harness::Harness;
use crate::harness::hook::{self, Event};
use crate::location;
use crate::location::ledger::Ledger;
use crate::tmux::Tmux;

use super::turn::{Steps, TurnAnswer, TurnRequest, compose};

/// The harness caps injected text at 10,000 characters; stay clearly below.
pub const HOOK_MAX_CHARS: usize = 9500;

/// The turn one hook event starts (its answer: `None` when the event is no turn, as a
/// session's start or a reset); the handler prints its items, confirms them, and runs
/// its after-work.
pub fn on_hook(
    tmux: &Tmux,
    harness: Harness,
    stdin: &[u8],
    interval_ms: Option<u64>,
    steps: &dyn Steps,
) -> Result<Option<TurnAnswer>, String> {
    let input = hook::parse(stdin)?;
    let event = hook::classify(harness, &input);
    if event == Event::Other {
        return Ok(None);
    }
    let agent = match input.session_id.as_deref().filter(|s| !s.is_empty()) {
        Some(s) => s.to_string(),
        None => {
            // No session id: the tty-verified pane is the address, or there is none.
            let r = location::read(tmux).map_err(|e| format!("no session_id and {e}"))?;
            super::address::pane_address(&r)
        }
    };
    crate::location::ledger::check_address("session_id", &agent)?;
    let is_session_start = input.hook_event_name.as_deref() == Some("SessionStart");
    if event == Event::Reset && !is_session_start {
        // Gemini's PreCompress (before every model request): no location read here.
        Ledger::for_agent(&agent)
            .forget()
            .map_err(|e| format!("ledger: {e}"))?;
        return Ok(None);
    }
    if event == Event::Reset || event == Event::Start {
        let r = location::read(tmux).ok();
        crate::location::address::session_started(
            tmux,
            &agent,
            input.source.as_deref(),
            r.as_ref(),
        )?;
        return Ok(None);
    }
    let transcript = input
        .transcript_path
        .as_deref()
        .filter(|p| !p.is_empty())
        .map(std::path::Path::new);
    let ans = compose(
        tmux,
        &TurnRequest {
            agent: &agent,
            turn: None,
            interval_ms,
            max_chars: HOOK_MAX_CHARS,
            transcript,
        },
        steps,
    )?;
    if let Some(why) = &ans.no_location {
        crate::sys::state::log(&format!(
            "hook {harness:?} agent {agent}: no location: {why}"
        ));
    }
    Ok(Some(ans))
}
