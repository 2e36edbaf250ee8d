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
//! composer's cursor is), press Right and wait until it is back in its column. Left was
//! read after the timer was due (libuv 1.46 runs due timers after the poll phase that read
//! it); Right in a later wakeup than the one that ran the timer, and Enter, sent once
//! Right was drawn, later still: after the passive effect that subscribed the new handler.
//! Rig, same stop before the Left: 8 of 8 submitted.
//!
//! Invariants: only Left and Right are typed, Left once and Right at least once (keys
//! are taken in order, and a Right at the composer's end moves nothing, so the cursor
//! ends where it was even when a move was not seen); no Enter here. A CLI
//! whose Left was not seen moving the cursor is `Unseen` (the caller's settle pause
//! follows, as before the probe); one that drew the Left but not the Right by a long
//! deadline is `Stuck` (real Gemini, under load, drew the Right after a 100 KB or 1 MiB
//! paste seconds late) and gets no Enter at all, as does one whose cursor moved once and
//! then for no key by that deadline. A step left counts from any place the cursor was
//! seen at, not from where it was first: a frame can show half drawn.

use crate::targs;
use crate::tmux::{Arg, Tmux};
use std::time::{Duration, Instant};

/// How many times Right is sent again while its move is not seen.
const RIGHT_TRIES: usize = 4;

/// Gemini CLI 0.61's paste guard is 40 ms; a little more for the clocks' granularity.
const GUARD_MS: u64 = 45;

/// How long a first cursor move that is no step left is watched for one ([`wait_left`]).
const HALF_FRAME: Duration = Duration::from_millis(600);

/// What the probe showed.
#[derive(Debug, PartialEq, Eq)]
pub enum Probe {
    /// Both keys were drawn: Enter may follow.
    Proven,
    /// Left was not seen to move the cursor (why): no visible cursor, or a CLI slow to
    /// take it; the settle pause instead.
    Unseen(String),
    /// Left was drawn (the cursor follows the composer) but Right not by the deadline (why):
    /// the CLI is not taking input, so no Enter (it could land in the same wakeup as a
    /// key still queued, with the guard's stale handler).
    Stuck(String),
}

/// Show the CLI's paste guard over. `drawn_at`: when the paste was first seen drawn;
/// `short`: how long to wait for Left's move (a CLI without a visible cursor costs this);
/// `until`: how long, once Left was seen (the cursor does follow the composer), to wait
/// for Right's.
pub fn guard_passed(
    tmux: &Tmux,
    pane: &str,
    drawn_at: Instant,
    short: Instant,
    until: Instant,
) -> Probe {
    let due = drawn_at + Duration::from_millis(GUARD_MS);
    std::thread::sleep(due.saturating_duration_since(Instant::now()));
    let Some(home) = cursor(tmux, pane) else {
        return Probe::Unseen("no cursor position".into());
    };
    if let Err(e) = key(tmux, pane, "Left") {
        return Probe::Unseen(e.to_string());
    }
    let left = wait_left(tmux, pane, home, short);
    if let Err(e) = key(tmux, pane, "Right") {
        return Probe::Unseen(e.to_string());
    }
    let Some(Left {
        from,
        to: left,
        stepped,
    }) = left
    else {
        return Probe::Unseen(format!("Left did not move the cursor from {home:?}"));
    };
    // Back in its column: the composer's rows may have moved meanwhile (Gemini draws a
    // hint under a large paste a moment after the paste itself).
    // (Not a step: what was seen may not be ours, so no long wait for what may never come,
    // once the cursor showed it still moves; while it moves no more, the long deadline.)
    let quick = short.max(Instant::now() + Duration::from_secs(2));
    // Back in `from`'s column, or, after a step, any step right on Left's row: where Left
    // started may have been misread from a frame passing by, and a Right drawn proves it.
    let back =
        |c: (u32, u32)| c != left && (c.0 == from.0 || (stepped && c.1 == left.1 && c.0 > left.0));
    // Real Gemini, heavily loaded, once took the Left and lost the Right (the cursor stayed
    // a column left; a Right sent later moved it at once): Right again every 1.5 s. At
    // the end of the composer an extra Right moves nothing, so the text stays as it was.
    let mut moved = false;
    let mut rights = 1;
    let mut next_right = Instant::now() + Duration::from_millis(1500);
    let seen = loop {
        if let Some(c) = cursor(tmux, pane) {
            moved |= c != left;
            if back(c) {
                break true;
            }
        }
        let now = Instant::now();
        if now >= if stepped || !moved { until } else { quick } {
            break false;
        }
        if now >= next_right && rights <= RIGHT_TRIES {
            rights = if key(tmux, pane, "Right").is_ok() {
                rights + 1
            } else {
                RIGHT_TRIES + 1
            };
            next_right = now + Duration::from_millis(1500);
        }
        std::thread::sleep(Duration::from_millis(3));
    };
    if seen {
        return Probe::Proven;
    }
    let now = cursor(tmux, pane).unwrap_or_default();
    let what = format!(
        "Right did not bring the cursor back from {left:?} to column {}; now {now:?} on {:?}",
        from.0,
        row(tmux, pane, now.1)
    );
    // A cursor that moved once and then for no key at all (not even a step seen: a frame
    // half drawn when the probe began hides where it started) is a CLI that stopped
    // taking keys as much as one whose Left was a step. Refused rather than guessed: a
    // CLI whose cursor does not follow its composer but moved once for another reason is
    // refused too (its text stays in the composer, the error says so), where a stalled
    // one given Enter could take it as a newline.
    if stepped || !moved {
        Probe::Stuck(what)
    } else {
        Probe::Unseen(what)
    }
}

/// What Left did to the cursor: it moved `from` one place `to` another, `stepped` when
/// that was a step left on one row (our Left, and a cursor that follows the composer).
struct Left {
    from: (u32, u32),
    to: (u32, u32),
    stepped: bool,
}

/// Where Left took the cursor, looked at until `short`. A step left counts from any place
/// the cursor was seen at since `home` (the latest first), not from `home` alone: a frame
/// can show half drawn (its lines, the cursor below them) while the CLI is descheduled
/// mid-write, before or after it draws the Left, and the composer's rows can move (Gemini
/// draws a hint under a large paste a moment after it). Taking a half frame's cursor for
/// the move made a stalled CLI's Left look like no step, so its Enter fell to the settle
/// pause. The cursor is watched for a step until `short`, and at least `HALF_FRAME` after
/// its first move (a half frame can be held for as long as the CLI is descheduled); with
/// none, the last place it reached is the move, not a step.
fn wait_left(tmux: &Tmux, pane: &str, home: (u32, u32), short: Instant) -> Option<Left> {
    let mut seen = vec![home];
    let mut until = short;
    loop {
        if let Some(c) = cursor(tmux, pane)
            && seen.last() != Some(&c)
        {
            // The nearest place right of it on its row: a frame passing by further right
            // (CI saw 25 where the cursor rested at 23) is not where Left started.
            if let Some(&from) = seen
                .iter()
                .filter(|p| p.1 == c.1 && p.0 > c.0)
                .min_by_key(|p| p.0)
            {
                return Some(Left {
                    from,
                    to: c,
                    stepped: true,
                });
            }
            if seen.len() == 1 {
                until = until.max(Instant::now() + HALF_FRAME);
            }
            // Bounded, the newest kept (`last` is what a change is told by), `home` too.
            if seen.len() >= 64 {
                seen.remove(1);
            }
            seen.push(c);
        }
        if Instant::now() >= until {
            let to = *seen.last()?;
            return (seen.len() > 1).then_some(Left {
                from: home,
                to,
                stepped: false,
            });
        }
        std::thread::sleep(Duration::from_millis(3));
    }
}

/// One screen row, for the log when the proof fails.
fn row(tmux: &Tmux, pane: &str, y: u32) -> String {
    let y = y.to_string();
    tmux.run(&targs![
        "capture-pane",
        "-p",
        "-t",
        Arg::id(pane),
        "-S",
        Arg::literal(&y),
        "-E",
        Arg::literal(&y)
    ])
    .unwrap_or_default()
    .trim_end()
    .to_string()
}

fn key(tmux: &Tmux, pane: &str, name: &'static str) -> Result<String, crate::tmux::TmuxError> {
    tmux.run(&targs!["send-keys", "-t", Arg::id(pane), name])
}

/// The pane's cursor position (column, row).
pub fn cursor(tmux: &Tmux, pane: &str) -> Option<(u32, u32)> {
    tmux.run(&targs![
        "display-message",
        "-p",
        "-t",
        Arg::id(pane),
        "#{cursor_x},#{cursor_y}"
    ])
    .ok()
    .and_then(|s| {
        let (x, y) = s.trim().split_once(',')?;
        Some((x.parse().ok()?, y.parse().ok()?))
    })
}
