//! `tmuxmate hook claude|codex|gemini`: the unattended per-turn entry point.
//!
//! Invariant: fail soft. Whatever happens, exit 0; print either nothing or exactly one
//! JSON answer; log every reason for silence to the state-dir log.

use std::io::Read;

use crate::cli::Harness;
use crate::hook::{self, Event};
use crate::ledger::Ledger;
use crate::location;
use crate::tmux::{Tmux, version};
use crate::turn::{TurnRequest, compose};

/// The harness caps injected text at 10,000 characters; stay clearly below.
const HOOK_MAX_CHARS: usize = 9500;

/// True when argv names the `hook` subcommand (so a parse error must stay silent).
pub fn is_hook_invocation() -> bool {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "-L" | "-S" | "--socket" | "--socket-path" => i += 2,
            a if a.starts_with('-') => i += 1,
            a => return a == "hook",
        }
    }
    false
}

pub fn run(tmux: &Tmux, harness: Harness, interval_ms: Option<u64>) {
    if let Err(e) = run_inner(tmux, harness, interval_ms) {
        crate::state::log(&format!("hook {harness:?}: {e}"));
    }
}

fn run_inner(tmux: &Tmux, harness: Harness, interval_ms: Option<u64>) -> Result<(), String> {
    let mut buf = Vec::new();
    std::io::stdin()
        .read_to_end(&mut buf)
        .map_err(|e| format!("reading stdin: {e}"))?;
    let input = hook::parse(&buf)?;
    let event = hook::classify(harness, &input);
    if event == Event::Other {
        return Ok(());
    }
    version::check(tmux).map_err(|e| e.to_string())?;
    let agent = match input.session_id.as_deref().filter(|s| !s.is_empty()) {
        Some(s) => s.to_string(),
        None => {
            // No session id: the tty-verified pane is the address, or there is none.
            let r = location::read(tmux).map_err(|e| format!("no session_id and {e}"))?;
            crate::policy::pane_address(&r)
        }
    };
    let ledger = Ledger::for_agent(&agent);
    if event == Event::Reset {
        ledger.forget().map_err(|e| format!("ledger: {e}"))?;
        return Ok(());
    }
    let ans = compose(
        tmux,
        &TurnRequest {
            agent: &agent,
            turn: None,
            interval_ms,
            max_chars: HOOK_MAX_CHARS,
        },
    )?;
    if let Some(why) = &ans.no_location {
        crate::state::log(&format!(
            "hook {harness:?} agent {agent}: no location: {why}"
        ));
    }
    if !ans.items.is_empty() {
        super::out_line(&hook::answer(harness, &ans.text()));
    }
    Ok(())
}
