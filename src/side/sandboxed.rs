//! The two ends of a relayed side report (see `relay.rs` for why): `side report` inside a
//! sandbox that blocks tmux and the state dir, and `side relay`, Codex's `PostToolUse` hook,
//! which queues what the sandboxed command printed.
//!
//! Owns the checks and the log lines of both ends. Invariants: a sandboxed report is
//! refused exactly as a direct one would be (empty, or longer than `REPORT_MAX`); the hook
//! is unattended: it logs, prints nothing and never fails; its input is read bounded
//! (4 MiB), and only when this process runs in a side chat that relays.

use std::io::Read;

use crate::error::Error;
use crate::sys::state;
use crate::tmux::Tmux;

use super::relay;

/// What a sandboxed `side report` says besides its relay line.
pub const RELAYED_NOTE: &str = "handed to the side chat, which queues it for the main agent's next turn (this sandbox blocks tmux and the state dir)";

/// `side report` inside a sandbox: the same checks, then the relay line to print, which
/// the side chat's PostToolUse hook picks up (outside the sandbox). `why` is the error a
/// direct report met.
pub fn report(nonce: &str, text: &str, why: &Error) -> Result<String, Error> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Error::usage("refused: the report is empty"));
    }
    if t.chars().count() > super::REPORT_MAX {
        return Err(Error::usage(format!(
            "refused: the report is longer than {} characters; summarise it",
            super::REPORT_MAX
        )));
    }
    state::log(&format!(
        "side report relayed through the side chat's hook ({})",
        why.msg
    ));
    Ok(relay::line(nonce, t))
}

/// Codex's PostToolUse hook in a side chat: unattended, so it logs and prints nothing.
pub fn hook(tmux: &Tmux, input: impl Read) {
    let Some(nonce) = relay::nonce() else {
        return;
    };
    let mut raw = Vec::new();
    if input.take(4 << 20).read_to_end(&mut raw).is_err() {
        return;
    }
    let Ok(input) = serde_json::from_slice::<serde_json::Value>(&raw) else {
        state::log("side relay: the hook input is not JSON; nothing relayed");
        return;
    };
    let Some((id, text)) = relay::from_hook(&input, &nonce) else {
        return;
    };
    let key = format!("side:relay:{id}");
    match super::main_pane(tmux, None).and_then(|p| super::report_keyed(tmux, &p, &text, &key)) {
        Ok((agent, _)) => state::log(&format!(
            "side relay: queued the side chat's note for {agent}"
        )),
        Err(e) => state::log(&format!("side relay: could not queue the note: {}", e.msg)),
    }
}
