//! Proof that a CLI's paste guard is over before Enter: two cursor keys, each seen.
//!
//! Gemini CLI 0.61 (`InputPrompt`) turns Enter into a newline while its paste guard is
//! set: a 40 ms timer started when it takes a paste, whose expiry is a React state update;
//! the key handler that sees it is subscribed only in a passive effect, a later phase of
//! Node's event loop. An Enter read in the same wakeup as the expired timer is still a
//! newline. Rig, real Gemini stopped (SIGSTOP) for 100 ms right after it read a 2-line
//! paste, Enter sent meanwhile: 2 of 8 were newlines. So no fixed pause proves the guard
//! over on a machine that can deschedule Gemini; a key it has taken and drawn does.
//!
//! The proof: wait `GUARD_MS` after the paste was drawn (the guard started no later than
//! that), press Left and wait until the terminal cursor moves (Gemini puts it where its
//! composer's cursor is), press Right and wait until it is back. Left was read after the
//! timer was due; Right in a later wakeup than the one that ran the timer, so the
//! re-subscribed handler is in place before Enter (sent after Right was drawn) is read.
//! Rig, same stop before the Left: 8 of 8 submitted.
//!
//! Invariants: only Left and Right are typed, always as a pair (keys are taken in order,
//! so the cursor ends where it was even when a move was not seen); `false` means "not
//! proven" and the caller falls back to its settle pause; no Enter here.

use crate::targs;
use crate::tmux::{Arg, Tmux};
use std::time::{Duration, Instant};

/// Gemini CLI 0.61's paste guard is 40 ms; a little more for the clocks' granularity.
const GUARD_MS: u64 = 45;

/// Was the CLI's paste guard shown over? `drawn_at`: when the paste was first seen
/// drawn; `until`: the latest moment to wait for a key to be drawn.
pub fn guard_passed(tmux: &Tmux, pane: &str, drawn_at: Instant, until: Instant) -> bool {
    let due = drawn_at + Duration::from_millis(GUARD_MS);
    std::thread::sleep(due.saturating_duration_since(Instant::now()));
    let Some(home) = cursor(tmux, pane) else {
        return false;
    };
    if key(tmux, pane, "Left").is_err() {
        return false;
    }
    let left = wait_cursor(tmux, pane, until, |c| c != home);
    if key(tmux, pane, "Right").is_err() {
        return false;
    }
    left && wait_cursor(tmux, pane, until, |c| c == home)
}

fn key(tmux: &Tmux, pane: &str, name: &'static str) -> Result<String, crate::tmux::TmuxError> {
    tmux.run(&targs!["send-keys", "-t", Arg::id(pane), name])
}

/// The pane's cursor position, `x,y`.
fn cursor(tmux: &Tmux, pane: &str) -> Option<String> {
    tmux.run(&targs![
        "display-message",
        "-p",
        "-t",
        Arg::id(pane),
        "#{cursor_x},#{cursor_y}"
    ])
    .ok()
    .map(|s| s.trim().to_string())
    .filter(|s| !s.is_empty())
}

fn wait_cursor(tmux: &Tmux, pane: &str, until: Instant, ok: impl Fn(&str) -> bool) -> bool {
    loop {
        if cursor(tmux, pane).is_some_and(|c| ok(&c)) {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(3));
    }
}
