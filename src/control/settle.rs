//! Waiting on a command in a pane: what it printed so far, and when its screen settles.
//!
//! Owns: the outcome a run reports (local or over ssh), the pane history after the typed
//! line, and polling a screen until it stays unchanged. Invariants: a cut text is always
//! marked (`Bounded`); a poll never outlives its deadline.

use std::time::{Duration, Instant};

use crate::control::budget::{self, Bounded, Range};
use crate::error::Error;
use crate::tmux::Tmux;

/// Called while waiting (about every 20 ms) with the time waited so far; it answers
/// whether to go on. `false`: the caller cancelled, the wait ends with [`cancelled`] and
/// the operation ends what it started.
pub type Progress<'a> = Option<&'a (dyn Fn(Duration) -> bool + Sync)>;

/// The error of a wait its caller cancelled.
pub fn cancelled() -> Error {
    Error::of(
        crate::error::Kind::Cancelled,
        "cancelled by the caller; what the call started was ended",
    )
}

pub(super) struct Outcome {
    pub(super) pane_id: String,
    pub(super) target: String,
    pub(super) exit_status: Option<i32>,
    pub(super) text: Bounded,
    pub(super) timed_out: bool,
    pub(super) stabilized: bool,
}

/// The pane's history after the line we typed (`marker` = the run id in it), or all of
/// it for a pane of our own.
pub(super) fn so_far(
    tmux: &Tmux,
    pane_id: &str,
    marker: Option<&str>,
    budget: usize,
) -> Result<Bounded, Error> {
    let raw = budget::capture_pane(tmux, pane_id, Range::All, false, true)?;
    let start = marker
        .and_then(|m| {
            let m = m.as_bytes();
            raw.windows(m.len()).rposition(|w| w == m)
        })
        .and_then(|i| raw[i..].iter().position(|&c| c == b'\n').map(|j| i + j + 1))
        .unwrap_or(0);
    // `-J` keeps the blank cells at a line's end, and tmux 3.2 writes them for lines that
    // 3.3 and later leave short: screen padding, not output.
    let text: Vec<u8> = raw[start..]
        .split(|&c| c == b'\n')
        .map(|l| &l[..l.iter().rposition(|&c| c != b' ').map_or(0, |i| i + 1)])
        .collect::<Vec<_>>()
        .join(&b'\n');
    Ok(budget::bound(budget::trim_trailing_blank(&text), budget))
}

/// Poll the screen until it is unchanged for `stable_ms` (→ stabilized), `finished()`
/// says the command ended, or the deadline passes (→ timed out).
pub(super) fn wait_stable(
    tmux: &Tmux,
    pane_id: &str,
    stable_ms: u64,
    deadline: Instant,
    mut last: Vec<u8>,
    finished: impl Fn() -> bool,
    progress: Progress,
) -> Result<(bool, bool), Error> {
    let began = Instant::now();
    let stable = Duration::from_millis(stable_ms);
    let poll = Duration::from_millis((stable_ms / 5).clamp(20, 200));
    let mut since = Instant::now();
    loop {
        if finished() {
            return Ok((false, false));
        }
        let now = Instant::now();
        if now.duration_since(since) >= stable {
            return Ok((true, false));
        }
        if now >= deadline {
            return Ok((false, true));
        }
        if let Some(p) = progress
            && !p(now.duration_since(began))
        {
            return Err(cancelled());
        }
        std::thread::sleep(poll.min(deadline - now));
        let cur = budget::capture_pane(tmux, pane_id, Range::Screen, false, false)?;
        if cur != last {
            last = cur;
            since = Instant::now();
        }
    }
}
