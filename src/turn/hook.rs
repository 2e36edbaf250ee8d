//! The per-turn path as a harness hook runs it: one hook event in, at most one answer out.
//!
//! Owns: deciding what a hook event means for the agent (a turn, a reset, a start, or
//! nothing), the side agent's turn (the main agent's digest instead of a location), the
//! agent's address (session id, else the tty-verified pane), keeping the live digest's
//! follower running, and handing back the answer with what confirms its delivery.
//! Invariants: nothing is printed here (the handler prints, then confirms); every reason
//! for silence is an `Err` for the handler to log, never a panic or a partial answer.

use crate::harness::Harness;
use crate::harness::hook::{self, Event};
use crate::ledger::Ledger;
use crate::location;
use crate::targs;
use crate::tmux::{Arg, Tmux};

use super::{TurnAnswer, TurnRequest, compose};

/// The harness caps injected text at 10,000 characters; stay clearly below.
pub const HOOK_MAX_CHARS: usize = 9500;

/// What the handler prints, and what it confirms once printed.
pub struct HookAnswer {
    pub json: String,
    /// Items of this answer are delivered only when this is confirmed after printing.
    pub pending: Option<TurnAnswer>,
}

/// Answer one hook event read from `stdin`; `None` when there is nothing to say.
pub fn on_hook(
    tmux: &Tmux,
    harness: Harness,
    stdin: &[u8],
    interval_ms: Option<u64>,
) -> Result<Option<HookAnswer>, String> {
    let input = hook::parse(stdin)?;
    let event = hook::classify(harness, &input);
    if event == Event::Other {
        return Ok(None);
    }
    if let Ok(main) = std::env::var(crate::side::ENV_MAIN) {
        return side_turn(tmux, harness, &input, event, &main);
    }
    let agent = match input.session_id.as_deref().filter(|s| !s.is_empty()) {
        Some(s) => s.to_string(),
        None => {
            // No session id: the tty-verified pane is the address, or there is none.
            let r = location::read(tmux).map_err(|e| format!("no session_id and {e}"))?;
            crate::control::policy::pane_address(&r)
        }
    };
    crate::ledger::check_address("session_id", &agent)?;
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
        crate::address::session_started(tmux, &agent, input.source.as_deref(), r.as_ref())?;
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
    )?;
    if let (Some(r), Some(tp), Some(fmt)) = (&ans.location, transcript, harness.digest_format()) {
        // By socket path: when the follower already runs, this costs no tmux call.
        let t = Tmux::new(crate::tmux::Socket::Path(r.socket_path.clone().into()));
        if let Err(e) = crate::digest::ensure_follower(&t, &r.pane_id, tp, Some(fmt)) {
            crate::sys::state::log(&format!("hook {harness:?}: digest follower: {e}"));
        }
    }
    if let Some(why) = &ans.no_location {
        crate::sys::state::log(&format!(
            "hook {harness:?} agent {agent}: no location: {why}"
        ));
    }
    if ans.items.is_empty() {
        return Ok(None);
    }
    Ok(Some(HookAnswer {
        json: hook::answer(harness, &ans.text()),
        pending: Some(ans),
    }))
}

/// A side agent's own turn: it is given the main agent's digest, not a location.
fn side_turn(
    tmux: &Tmux,
    harness: Harness,
    input: &hook::HookInput,
    event: Event,
    main: &str,
) -> Result<Option<HookAnswer>, String> {
    if event != Event::Turn {
        return Ok(None);
    }
    let pane = crate::side::main_pane(tmux, Some(main)).map_err(|e| e.msg)?;
    // Remember the side session's own transcript, so closing deletes exactly it.
    if let Some(t) = input.transcript_path.as_deref().filter(|t| !t.is_empty()) {
        let _ = tmux.run(&targs![
            "set-option",
            "-p",
            "-t",
            Arg::id(&pane),
            "--",
            crate::side::OPT_SIDE_TRANSCRIPT,
            Arg::literal(t),
        ]);
    }
    Ok(Some(HookAnswer {
        json: hook::answer(harness, &crate::side::turn_context(tmux, &pane)),
        pending: None,
    }))
}
