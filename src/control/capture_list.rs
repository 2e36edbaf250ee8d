//! A capture of a `%N` pane as one tmux invocation: what `capture` does for a `%N`
//! target on any server (each call is a round trip; on another host an ssh one).
//!
//! Owns: the one command list that reads what a capture needs (the byte-budget and
//! snapshot options, the pane's `session:window.pane`) and the pane's text, and cutting
//! its answer apart at markers of ours. The answer and its snapshot are the same as the
//! several-call path's (`crate::control::capture`), whose errors it leaves to that path:
//! any failure here (no such pane, an option that does not parse) falls back to it, which
//! is harmless because a capture changes nothing.
//!
//! A long history is read from its end here too (a window sized for the budget asked, as
//! `crate::control::capture_tail` does); a window that holds no more than the budget
//! grows from there with `capture_tail::grow`.
//!
//! The text is stored as its snapshot while tmux sends it ([`Tee`]): for a long capture
//! the copy then overlaps the server's formatting rather than following it, and for a
//! long range on the direct socket the snapshot's file is made once the command is sent,
//! while the server works.
//!
//! Invariants: only a `%N` target takes this route and reaches tmux as the id rebuilt from
//! its number (tmux's own target matching never sees the person's text); the markers are
//! random per call, and everything before the pane's text is read up to them.

use super::budget::{self, Bounded, Range};
use super::snapshot;
use crate::targs;
use crate::tmux::target::Target;
use crate::tmux::{Arg, Tmux};

/// A marker no option value or pane name will hold by chance.
fn nonce() -> String {
    let seed = format!(
        "{}\0{}\0{:?}",
        std::process::id(),
        crate::sys::time::now_ms(),
        std::time::Instant::now()
    );
    format!(
        "tmuxmate-{}",
        &crate::sys::hash::sha256_hex(seed.as_bytes())[..20]
    )
}

/// What to capture (`crate::control::capture::Request`'s fields this route reads).
pub struct Ask<'a> {
    pub target: &'a str,
    pub range: Range,
    pub max_bytes: Option<usize>,
    pub ansi: bool,
    pub join: bool,
}

/// The pane, its `session:window.pane`, the bounded text and its snapshot id.
pub struct Got {
    pub pane_id: String,
    pub target: String,
    pub text: Bounded,
    pub snapshot: Option<String>,
}

/// The capture in one call, or None (then the caller takes the several-call path).
pub fn one_call(tmux: &Tmux, a: &Ask) -> Option<Got> {
    let Ok(Target::Pane(n)) = Target::parse(a.target) else {
        return None;
    };
    if a.max_bytes == Some(0) {
        return None; // the other path says why
    }
    let id = format!("%{n}");
    let markers = (nonce(), nonce());
    let (args, window) = request(a, n, &markers);
    let mut tee = Tee {
        markers: &markers,
        header: Vec::new(),
        past_header: false,
        snap: None,
        early: long_range(a.range),
    };
    let mut out = tmux.run_tapped(&args, &mut tee).ok()?;
    let answer = cut(&out, &markers)?;
    let max = budget::budget_from(a.max_bytes, &answer.max_bytes).ok()?;
    let store = snapshot::storing(&answer.snapshot).ok()?;
    let history = answer.history?;
    let target = answer.target;
    let fed_len = answer.raw.len();
    // The text is the answer's tail: moved to the front in place rather than copied, so a
    // long scrollback is held once (a copy is a fresh buffer of its size, page by page).
    out.drain(..out.len() - fed_len);
    let (b, prefix) = match bound_text(out, max, a.range, history, window) {
        Ok(b) => b,
        // The window held no more than the budget: larger ones, from here.
        Err(raw) => {
            let b = super::capture_tail::grow(
                tmux,
                &id,
                raw,
                window?,
                wanted_rows(a.range, history),
                (a.ansi, a.join),
                max,
            )
            .ok()?;
            (b, false)
        }
    };
    let snapshot = match (store, tee.snap.take()) {
        (false, _) => None,
        (true, None) => snapshot_of(&id, &target, &b),
        (true, Some(s)) => warned(s.finish(&id, &target, &b.text, b.truncated, (fed_len, prefix))),
    };
    Some(Got {
        pane_id: id,
        target,
        text: b,
        snapshot,
    })
}

/// The one command list for pane `%n` (markers `m1`, `m2`): the byte-budget option, `m1`,
/// the snapshot option, `m2` with the history size and the pane's address, then the
/// text. With the window of rows its capture reads from the history's end, when it does.
fn request(a: &Ask, n: u32, (m1, m2): &(String, String)) -> (Vec<Arg<'static>>, Option<u64>) {
    let id = format!("%{n}");
    let head = format!("{m2}#{{history_size}} #{{session_name}}:#{{window_index}}.#{{pane_index}}");
    // The markers come from `list-panes` of the pane's own row: `display-message -p`
    // costs about 3 ms more per call in tmux 3.3a (measured), which is the whole margin.
    let only = format!("#{{==:#{{pane_id}},%{n}}}");
    let mut args: Vec<Arg> = targs![
        "show-options",
        "-gqv",
        budget::MAX_BYTES_OPTION,
        ";",
        "list-panes",
        "-t",
        Arg::id(&id),
        "-f",
        Arg::ours(&only),
        "-F",
        Arg::ours(m1),
        ";",
        "show-options",
        "-gqv",
        snapshot::OPTION,
        ";",
        "list-panes",
        "-t",
        Arg::id(&id),
        "-f",
        Arg::ours(&only),
        "-F",
        Arg::ours(&head),
        ";",
        "capture-pane",
        "-p",
        "-t",
        Arg::id(&id),
    ]
    .into();
    if a.ansi {
        args.push("-e".into());
    }
    if a.join {
        args.push("-J".into());
    }
    let (start, window) = start_row(a);
    if let Some(s) = start {
        args.extend(targs!["-S", Arg::ours(s)]);
    }
    let args = args.into_iter().map(Arg::into_owned).collect();
    (args, window)
}

/// capture-pane's `-S` for what `a` asks, and the window of rows when it reads a long
/// history from its end, as `capture_tail` does: a window sized for the budget asked (or
/// the default one; the option is only read in this same call).
fn start_row(a: &Ask) -> (Option<String>, Option<u64>) {
    let rows = super::capture_tail::first_rows(a.max_bytes.unwrap_or(budget::DEFAULT_MAX_BYTES));
    let windowed = !(a.ansi && a.join)
        && match a.range {
            Range::Screen => false,
            Range::Lines(n) => n > rows,
            Range::All => true,
        };
    let start = match a.range {
        _ if windowed => Some(format!("-{rows}")),
        Range::Screen => None,
        Range::Lines(n) => Some(format!("-{n}")),
        Range::All => Some("-".to_string()),
    };
    (start, windowed.then_some(rows))
}

/// The answer cut apart at its markers.
#[derive(Debug, PartialEq)]
struct Answer<'a> {
    max_bytes: String,
    snapshot: String,
    /// The history size (None: not a number).
    history: Option<u64>,
    target: String,
    raw: &'a [u8],
}

/// The answer to [`request`] cut apart; None when it is not what the list prints.
fn cut<'a>(out: &'a [u8], (m1, m2): &(String, String)) -> Option<Answer<'a>> {
    let (max_opt, rest) = split_at(out, format!("{m1}\n").as_bytes())?;
    let (snap_opt, rest) = split_at(rest, m2.as_bytes())?;
    let nl = rest.iter().position(|&b| b == b'\n')?;
    let (history, target) = String::from_utf8_lossy(&rest[..nl])
        .split_once(' ')
        .map(|(h, t)| (h.parse::<u64>().ok(), t.to_string()))?;
    Some(Answer {
        max_bytes: String::from_utf8_lossy(max_opt).into_owned(),
        snapshot: String::from_utf8_lossy(snap_opt).into_owned(),
        history,
        target,
        raw: &rest[nl + 1..],
    })
}

/// The pane's text bounded to `max`, and whether it is `raw`'s start unchanged
/// ([`budget::bound_owned`]). Read through a `window` of rows that is smaller than what was
/// asked (`range`, of a `history`): the text's end, its front dropped, when it holds more
/// than the budget; else `raw` back, since only a larger window gives the cut
/// (`capture_tail::grow`).
fn bound_text(
    raw: Vec<u8>,
    max: usize,
    range: Range,
    history: u64,
    window: Option<u64>,
) -> Result<(Bounded, bool), Vec<u8>> {
    let wanted = wanted_rows(range, history);
    match window {
        Some(w) if w < wanted => {
            if budget::trim_trailing_blank(&raw).len() <= max {
                return Err(raw);
            }
            let (mut b, _) = budget::bound_owned(raw, max);
            b.dropped_at_least = true;
            Ok((b, false))
        }
        _ => Ok(budget::bound_owned(raw, max)),
    }
}

/// How many history rows `range` asks for, of a `history` that long.
fn wanted_rows(range: Range, history: u64) -> u64 {
    match range {
        Range::Lines(n) => n.min(history),
        _ => history,
    }
}

/// The snapshot of what was read, or None with a warning when it cannot be stored.
fn snapshot_of(id: &str, target: &str, b: &Bounded) -> Option<String> {
    warned(snapshot::record_always(id, target, &b.text, b.truncated))
}

/// A stored snapshot's id, or None with a warning (the capture itself still stands).
fn warned(r: Result<String, String>) -> Option<String> {
    match r {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("tmuxmate: warning: {e}");
            None
        }
    }
}

/// Whether `range` likely asks for more than a snapshot keeps in its log line (its file
/// is then made while the server works: see [`Tee::sent`]). A guess: a wrong one costs a
/// file made and removed, or the overlap.
fn long_range(range: Range) -> bool {
    match range {
        Range::All => true,
        Range::Lines(n) => n as usize >= super::snapshot_file::LAZY / 64,
        Range::Screen => false,
    }
}

/// The most header (options, markers, the pane's name) read before the text; past it
/// the answer is not ours and nothing is streamed.
const HEADER_MAX: usize = 64 << 10;

/// Streams the pane's text, as it arrives, into its snapshot's file: the header is
/// cut off at the markers exactly as [`cut`] does, and nothing is streamed when the
/// snapshot option says off (or the header is not what [`request`] prints).
struct Tee<'a> {
    markers: &'a (String, String),
    header: Vec<u8>,
    past_header: bool,
    snap: Option<snapshot::Streamed>,
    /// Make the snapshot's file once the command is sent ([`long_range`]).
    early: bool,
}

impl crate::tmux::tap::Tap for Tee<'_> {
    /// A long capture's file is made now, while the server formats the text: making a
    /// file costs 80-160 us on ext4 (measured), which otherwise follows the answer's
    /// first bytes. Dropped (and the file removed) when the snapshot option says off.
    fn sent(&mut self) {
        if self.early && self.snap.is_none() {
            let mut s = snapshot::streamed();
            s.open_early();
            self.snap = Some(s);
        }
    }
    fn chunk(&mut self, b: &[u8]) {
        if self.past_header {
            if let Some(s) = &mut self.snap {
                s.feed(b);
            }
            return;
        }
        self.header.extend_from_slice(b);
        let Some(answer) = cut(&self.header, self.markers) else {
            if self.header.len() > HEADER_MAX {
                self.past_header = true;
                self.snap = None;
            }
            return;
        };
        self.past_header = true;
        if !snapshot::storing(&answer.snapshot).unwrap_or(false) {
            self.snap = None;
            return;
        }
        let text = answer.raw;
        let s = self.snap.get_or_insert_with(snapshot::streamed);
        s.feed(text);
        self.header = Vec::new();
    }
    fn restart(&mut self) {
        self.header.clear();
        self.past_header = false;
        if let Some(s) = &mut self.snap {
            s.reset();
        }
    }
}

/// The bytes before the first `marker` and those after it.
fn split_at<'a>(b: &'a [u8], marker: &[u8]) -> Option<(&'a [u8], &'a [u8])> {
    let i = b.windows(marker.len()).position(|w| w == marker)?;
    Some((&b[..i], &b[i + marker.len()..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_cut_at_the_first_marker() {
        let (a, b) = split_at(b"1000\nM\nrest M\n", b"M\n").unwrap();
        assert_eq!((a, b), (&b"1000\n"[..], &b"rest M\n"[..]));
        assert!(split_at(b"none", b"M").is_none());
        assert_ne!(nonce(), nonce());
    }

    fn ask(range: Range, max_bytes: Option<usize>, ansi: bool, join: bool) -> Ask<'static> {
        Ask {
            target: "%3",
            range,
            max_bytes,
            ansi,
            join,
        }
    }

    fn tail(args: &[Arg]) -> Vec<String> {
        let at = args
            .iter()
            .position(|a| a.as_str() == "capture-pane")
            .unwrap();
        args[at..].iter().map(|a| a.as_str().to_string()).collect()
    }

    #[test]
    fn a_long_history_is_read_through_a_window_at_its_end() {
        let m = ("M1".to_string(), "M2".to_string());
        let rows = super::super::capture_tail::first_rows(1000);
        let (args, window) = request(&ask(Range::All, Some(1000), false, false), 3, &m);
        assert_eq!(window, Some(rows));
        let start = format!("-{rows}");
        assert_eq!(
            tail(&args),
            ["capture-pane", "-p", "-t", "%3", "-S", &start]
        );
        // A few lines, the screen, or ANSI with joined lines: as asked.
        let (args, window) = request(&ask(Range::Lines(5), Some(1000), false, false), 3, &m);
        assert_eq!((tail(&args).last().unwrap().as_str(), window), ("-5", None));
        let (args, window) = request(&ask(Range::Screen, None, false, false), 3, &m);
        assert_eq!((tail(&args).len(), window), (4, None));
        let (args, window) = request(&ask(Range::All, None, true, true), 3, &m);
        assert_eq!(
            tail(&args),
            ["capture-pane", "-p", "-t", "%3", "-e", "-J", "-S", "-"]
        );
        assert_eq!(window, None);
        // The markers come back from the pane's own row only.
        assert!(args.iter().any(|a| a.as_str() == "#{==:#{pane_id},%3}"));
    }

    #[test]
    fn the_answer_is_cut_at_its_markers() {
        let m = ("M1".to_string(), "M2".to_string());
        let out = b"4096\nM1\nonM2120 s:1.0\nline M1\n";
        let a = cut(out, &m).unwrap();
        assert_eq!(
            a,
            Answer {
                max_bytes: "4096\n".into(),
                snapshot: "on".into(),
                history: Some(120),
                target: "s:1.0".into(),
                raw: b"line M1\n",
            }
        );
        assert!(cut(b"4096\nM1\non", &m).is_none());
    }

    #[test]
    fn a_window_smaller_than_asked_gives_only_a_text_over_the_budget() {
        let text = || b"aaaa\nbbbb\ncccc\n".to_vec();
        // Whole history in the window: bounded as usual, and the text is the answer's
        // start (its snapshot file is what was streamed).
        let (b, prefix) = bound_text(text(), 100, Range::All, 10, Some(50)).unwrap();
        assert_eq!(b.text, "aaaa\nbbbb\ncccc");
        assert!(!b.dropped_at_least && prefix);
        // More history than the window, but the window's text fits: a larger one is
        // needed, and the text comes back whole for it.
        assert_eq!(
            bound_text(text(), 100, Range::All, 500, Some(50)).unwrap_err(),
            text()
        );
        // Over the budget: the end, with an unknown amount dropped before it, which is
        // not the start of what was streamed.
        let (b, prefix) = bound_text(text(), 6, Range::Lines(400), 500, Some(50)).unwrap();
        assert!(b.truncated && b.dropped_at_least && !prefix);
        // Not read through a window: no larger one to ask for.
        assert!(bound_text(text(), 100, Range::All, 500, None).is_ok());
        // Bytes that are not UTF-8 are replaced: not the streamed bytes either.
        let (b, prefix) = bound_text(b"a\xffb\n".to_vec(), 100, Range::All, 1, None).unwrap();
        assert_eq!((b.text.as_str(), prefix), ("a\u{fffd}b", false));
    }
}
