//! `tmuxmate hook claude|codex|gemini`: the unattended per-turn entry point.
//!
//! Invariant: fail soft. Whatever happens, exit 0; print either nothing or exactly one
//! JSON answer; log every reason for silence to the state-dir log.

use std::io::Read;

use crate::harness::Harness;
use crate::location::hook::on_hook;
use crate::tmux::Tmux;

pub fn run(tmux: &Tmux, harness: Harness, interval_ms: Option<u64>) {
    if let Err(e) = run_inner(tmux, harness, interval_ms) {
        crate::sys::state::log(&format!("hook {harness:?}: {e}"));
    }
}

fn run_inner(tmux: &Tmux, harness: Harness, interval_ms: Option<u64>) -> Result<(), String> {
    let mut buf = Vec::new();
    std::io::stdin()
        .read_to_end(&mut buf)
        .map_err(|e| format!("reading stdin: {e}"))?;
    // The agent's state first: it must not wait for (or be lost with) the turn's answer.
    if let Err(e) = crate::state::on_hook(tmux, harness, &buf) {
        crate::sys::state::log(&format!("hook {harness:?}: {e}"));
    }
    // A side chat's agent is given the main agent's digest, not a location.
    if let Ok(main) = std::env::var(crate::harness::SIDE_MAIN_ENV) {
        if let Some(json) = crate::side::turn::on_hook(tmux, harness, &buf, &main)? {
            super::try_out_line(&json).map_err(|e| format!("stdout: {e}"))?;
        }
        return Ok(());
    }
    let steps = super::steps::PerTurn {
        harness: Some(harness),
    };
    let Some(mut ans) = on_hook(tmux, harness, &buf, interval_ms, &steps)? else {
        return Ok(());
    };
    // Delivered only once printed; if this process dies before `confirm`, the next turn
    // looks for the text in the transcript before offering it again.
    let printed = if ans.items.is_empty() {
        Ok(())
    } else {
        super::try_out_line(&crate::harness::hook::answer(harness, &ans.text()))
            .map_err(|e| format!("stdout: {e}; the items stay queued"))
            .and_then(|()| ans.confirm())
    };
    ans.after(&steps);
    printed
}
