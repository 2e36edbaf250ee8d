//! `tmuxmate hook claude|codex|gemini`: the unattended per-turn entry point.
//!
//! Invariant: fail soft. Whatever happens, exit 0; print either nothing or exactly one
//! JSON answer; log every reason for silence to the state-dir log.

use std::io::Read;

use crate::harness::Harness;
use crate::tmux::Tmux;
use crate::turn::hook::on_hook;

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
    if let Err(e) = crate::agents::on_hook(tmux, harness, &buf) {
        crate::sys::state::log(&format!("hook {harness:?}: {e}"));
    }
    let Some(answer) = on_hook(tmux, harness, &buf, interval_ms)? else {
        return Ok(());
    };
    // Delivered only once printed; if this process dies before `confirm`, the next turn
    // looks for the text in the transcript before offering it again.
    super::try_out_line(&answer.json).map_err(|e| format!("stdout: {e}; the items stay queued"))?;
    if let Some(mut pending) = answer.pending {
        pending.confirm()?;
    }
    Ok(())
}
