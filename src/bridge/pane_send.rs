//! One line typed into an agent CLI the bridge did not start (a person's own Claude,
//! Codex or Gemini in its pane, as the dashboard's `a` key does), under the bridge's
//! delivery rules.
//!
//! Owns: the checks for such a pane, in order (a CLI the bridge knows; the agent's state
//! from its own events is idle or done, which also says the CLI is the pane's foreground
//! program; no dialog, not busy, at its prompt), the sanitized bracketed paste, the wait
//! until it is drawn, the adapter's settle pause, exactly one Enter, and the proof that
//! the prompt was taken (the agent's state turns working, or its busy line shows).
//! Invariants: every refusal names the check that failed and nothing is typed after it;
//! no Enter while a dialog is up; never a second Enter.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::deliver::{Blocked, Delivery, Failed, blocked, plan, record_limit, settle};
use crate::error::Error;
use crate::targs;
use crate::tmux::{Arg, Tmux, options};

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PaneSent {
    pub pane_id: String,
    pub bytes: usize,
    /// How the submission was seen: `state` (the CLI's own event) or `screen`.
    pub verified_by: String,
}

/// The pane's state option (its CLI's own word) and whether its process has ended.
fn state_of(tmux: &Tmux, pane: &str) -> Result<(String, bool), Error> {
    let out = tmux.run(&targs![
        "display-message",
        "-p",
        "-t",
        Arg::id(pane),
        Arg::ours(format!("#{{pane_dead}}\t#{{{}}}", options::STATE.name)),
    ])?;
    let line = out.trim_end_matches('\n');
    let (dead, state) = line.split_once('\t').unwrap_or((line, ""));
    Ok((state.to_string(), dead == "1"))
}

/// Type `message` as one prompt into the agent of `pane` (whose CLI is `harness`), whose
/// effective state the caller read as `state`.
pub fn send(
    tmux: &Tmux,
    pane: &str,
    harness: &str,
    state: &str,
    message: &str,
) -> Result<PaneSent, Failed> {
    let not = |error| Failed {
        delivery: Delivery::NotDelivered,
        error,
    };
    let p = plan(message).map_err(not)?;
    let a = super::adapters::by_name(harness)
        .filter(|_| !harness.is_empty())
        .ok_or_else(|| {
            not(Error::refused(format!(
                "refused: pane {pane} runs {harness:?}, not a CLI whose screen the bridge knows (claude, codex, gemini); nothing was typed"
            )))
        })?;
    match state {
        "idle" | "done" => {}
        "needs-you" => {
            return Err(not(Error::refused(format!(
                "refused: {harness} in {pane} waits for you (a dialog or an error); answer it in its pane; nothing was typed"
            ))));
        }
        "working" => {
            return Err(not(Error::refused(format!(
                "refused: {harness} in {pane} is working on a turn; ask when it is done; nothing was typed"
            ))));
        }
        s => {
            return Err(not(Error::refused(format!(
                "refused: {harness} in {pane} is {s} (not at its prompt as far as its events say); nothing was typed"
            ))));
        }
    }
    let (_, dead) = state_of(tmux, pane).map_err(not)?;
    if dead {
        return Err(not(Error::refused(format!(
            "refused: the process of pane {pane} has ended; nothing was typed"
        ))));
    }
    let before = super::screen(tmux, pane);
    match blocked(&a, &before) {
        Some(Blocked::Dialog(d)) => {
            return Err(not(Error::refused(format!(
                "refused: {harness} in {pane} shows a dialog ({d:?}); tmuxmate never types into dialogs; nothing was typed"
            ))));
        }
        Some(Blocked::Busy(b)) => {
            return Err(not(Error::refused(format!(
                "refused: {harness} in {pane} is busy ({b:?}); nothing was typed"
            ))));
        }
        Some(Blocked::NotReady) => {
            return Err(not(Error::refused(format!(
                "refused: {harness} in {pane} is not at its prompt; nothing was typed"
            ))));
        }
        None => {}
    }
    let at = Instant::now();
    crate::control::pane_input::paste_bytes(tmux, pane, p.clean.as_bytes(), true).map_err(not)?;
    // Enter only once the CLI drew the paste.
    loop {
        if super::screen(tmux, pane) != before {
            break;
        }
        if at.elapsed() > p.draw_limit {
            return Err(not(Error::new(format!(
                "the line was pasted into {pane}, but its screen did not change within {} s; Enter was NOT pressed (the text may sit in its input)",
                p.draw_limit.as_secs()
            ))));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(settle(&a, at.elapsed()));
    if let Some(d) = super::any(&a.dialogs, &super::screen(tmux, pane)) {
        return Err(not(Error::new(format!(
            "a dialog appeared after the line was pasted into {pane} ({d:?}); Enter was NOT pressed, the text sits in its input"
        ))));
    }
    tmux.run(&targs!["send-keys", "-t", Arg::id(pane), "Enter"])
        .map_err(|e| not(e.into()))?;
    let verified_by = verify(tmux, pane, &a, p.clean.len() as u64).map_err(|error| Failed {
        delivery: Delivery::Unconfirmed,
        error,
    })?;
    Ok(PaneSent {
        pane_id: pane.to_string(),
        bytes: p.clean.len(),
        verified_by,
    })
}

/// After Enter: the CLI's own event (its state turns working) or its busy line.
fn verify(
    tmux: &Tmux,
    pane: &str,
    a: &super::adapters::Adapter,
    bytes: u64,
) -> Result<String, Error> {
    let limit = record_limit(bytes);
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Ok((s, _)) = state_of(tmux, pane)
            && (s == "working" || s == "needs-you")
        {
            return Ok("state".into());
        }
        if super::any(&a.busy, &super::screen(tmux, pane)).is_some() {
            return Ok("screen".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(Error::new(format!(
        "Enter was pressed once in {pane}, but neither its state nor its screen showed the turn start within {} s; look at the pane before asking again",
        limit.as_secs()
    )))
}
