//! A side chat's agent at the start of its turn: its hook is given the main agent's
//! digest, not a location (the side conversation asks about that agent, and is not one
//! at work).
//!
//! Owns: the side agent's hook answer, and remembering the side session's own transcript
//! on the main pane (so closing the side chat deletes exactly it). Invariant: only a turn
//! event is answered; nothing is printed here and nothing is queued or delivered.

use crate::harness::Harness;
use crate::harness::hook::{self, Event};
use crate::targs;
use crate::tmux::{Arg, Tmux};

/// The hook answer (the harness's JSON) for the side agent of the main pane `main`, for
/// the hook event on `stdin`; `None` when the event is not a turn.
pub fn on_hook(
    tmux: &Tmux,
    harness: Harness,
    stdin: &[u8],
    main: &str,
) -> Result<Option<String>, String> {
    let input = hook::parse(stdin)?;
    if hook::classify(harness, &input) != Event::Turn {
        return Ok(None);
    }
    let pane = super::main_pane(tmux, Some(main)).map_err(|e| e.msg)?;
    if let Some(t) = input.transcript_path.as_deref().filter(|t| !t.is_empty()) {
        let _ = tmux.run(&targs![
            "set-option",
            "-p",
            "-t",
            Arg::id(&pane),
            "--",
            super::OPT_SIDE_TRANSCRIPT,
            Arg::literal(t),
        ]);
    }
    Ok(Some(hook::answer(
        harness,
        &super::turn_context(tmux, &pane),
    )))
}
