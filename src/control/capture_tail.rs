//! A bounded capture of a long scrollback read from its end: `capture --all` (or
//! `--lines N`) of a pane whose history is far larger than the byte budget asks tmux for
//! the last rows only, in growing windows, instead of the whole history.
//!
//! Why: the budget keeps only the newest text anyway (100 KB by default), and a capture
//! of 100 000 rows is about 8 MB that tmux formats and we copy, to keep 1% of it
//! (measured: 156 ms for the whole history against a few ms for the window).
//!
//! Invariants: the text is byte for byte what bounding the whole capture gives
//! (`budget::bound` of its trimmed end): a window is used only once it holds more than
//! the budget after trimming, so the cut falls where it would in the whole text (the
//! window starts on a row, and the cut is never at its first byte); otherwise the window
//! grows until it holds the whole range asked. When the window did not reach the start of
//! the range, the dropped count is a lower bound (`dropped_at_least`). `-e` with `-J`
//! (escape state carried across a joined line) always captures the whole range. Only the
//! pane's `%N` id reaches tmux.

use crate::control::budget::{self, Bounded, Range};
use crate::targs;
use crate::tmux::{Arg, Tmux, TmuxError};

/// The first window: the budget at 32 bytes a row, and never under this many rows (a
/// pane with up to this much history is captured whole in one call, as before).
const FIRST_ROWS_MIN: u64 = 2000;
/// How much each further window grows.
const GROWTH: u64 = 8;

/// The rows of history the first window holds for a budget of `max` bytes.
pub fn first_rows(max: usize) -> u64 {
    (max as u64 / 32).max(FIRST_ROWS_MIN)
}

/// The pane's text in `range`, bounded to `max` bytes (see the module docs).
pub fn capture(
    tmux: &Tmux,
    pane_id: &str,
    range: Range,
    ansi: bool,
    join: bool,
    max: usize,
) -> Result<Bounded, TmuxError> {
    let first = first_rows(max);
    let whole = || -> Result<Bounded, TmuxError> {
        let raw = budget::capture_pane(tmux, pane_id, range, ansi, join)?;
        Ok(budget::bound_trimmed(raw, max))
    };
    let asked = match range {
        Range::Screen => return whole(),
        Range::Lines(n) if n <= first => return whole(),
        Range::Lines(n) => Some(n),
        Range::All => None,
    };
    if ansi && join {
        return whole();
    }
    // The history's size and the first window in one call.
    let mut args: Vec<Arg> = targs![
        "display-message",
        "-p",
        "-t",
        Arg::id(pane_id),
        "#{history_size}",
        ";"
    ]
    .into();
    args.extend(window_args(pane_id, first, ansi, join));
    let out = tmux.run_bytes(&args, None)?;
    let Some(nl) = out.iter().position(|&c| c == b'\n') else {
        return whole();
    };
    let Ok(history) = String::from_utf8_lossy(&out[..nl]).trim().parse::<u64>() else {
        return whole();
    };
    // How many history rows the range asks for (the screen always comes too).
    let wanted = asked.map_or(history, |n| n.min(history));
    grow(
        tmux,
        pane_id,
        out[nl + 1..].to_vec(),
        first,
        wanted,
        (ansi, join),
        max,
    )
}

/// Go on from a window of `rows` rows that read `raw`, of the `wanted` rows of history:
/// the bounded text once the window holds more than the budget or all that is wanted,
/// larger windows until then. `(ansi, join)`: capture-pane's `-e` and `-J`.
pub fn grow(
    tmux: &Tmux,
    pane_id: &str,
    mut raw: Vec<u8>,
    mut rows: u64,
    wanted: u64,
    (ansi, join): (bool, bool),
    max: usize,
) -> Result<Bounded, TmuxError> {
    loop {
        let text = budget::trim_trailing_blank(&raw);
        if rows >= wanted {
            return Ok(budget::bound(text, max));
        }
        if text.len() > max {
            let mut b = budget::bound(text, max);
            b.dropped_at_least = true;
            return Ok(b);
        }
        rows = (rows * GROWTH).min(wanted);
        let args = window_args(pane_id, rows, ansi, join);
        raw = tmux.run_bytes(&args, None)?;
    }
}

/// `capture-pane` of the screen and the last `rows` rows of history.
fn window_args(pane_id: &str, rows: u64, ansi: bool, join: bool) -> Vec<Arg<'_>> {
    let mut args: Vec<Arg> = targs!["capture-pane", "-p", "-t", Arg::id(pane_id)].into();
    if ansi {
        args.push("-e".into());
    }
    if join {
        args.push("-J".into());
    }
    args.extend(targs!["-S", Arg::ours(format!("-{rows}"))]);
    args
}
