//! A capture of a `%N` pane as one tmux invocation: what `capture` does for a server on
//! another host, where every call is an ssh round trip (plain tmux on the host).
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
//! falls back to the several-call path, which grows it.
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
        crate::sys::state::now_ms(),
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
    let (m1, m2) = (nonce(), nonce());
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
        Arg::ours(&m1),
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
    // A long history is read from its end, as `capture_tail` does: a window sized for the
    // budget asked (or the default one; the option is only read in this same call).
    let window = super::capture_tail::first_rows(a.max_bytes.unwrap_or(budget::DEFAULT_MAX_BYTES));
    let windowed = !(a.ansi && a.join)
        && match a.range {
            Range::Screen => false,
            Range::Lines(n) => n > window,
            Range::All => true,
        };
    let lines_arg;
    match a.range {
        _ if windowed => {
            lines_arg = format!("-{window}");
            args.extend(targs!["-S", Arg::ours(&lines_arg)]);
        }
        Range::Screen => {}
        Range::Lines(n) => {
            lines_arg = format!("-{n}");
            args.extend(targs!["-S", Arg::ours(&lines_arg)]);
        }
        Range::All => args.extend(targs!["-S", "-"]),
    }
    let out = tmux.run_bytes(&args, None).ok()?;
    let (max_opt, rest) = split_at(&out, format!("{m1}\n").as_bytes())?;
    let (snap_opt, rest) = split_at(rest, m2.as_bytes())?;
    let nl = rest.iter().position(|&b| b == b'\n')?;
    let (history, target) = String::from_utf8_lossy(&rest[..nl])
        .split_once(' ')
        .map(|(h, t)| (h.parse::<u64>().ok(), t.to_string()))?;
    let raw = &rest[nl + 1..];
    let max = budget::budget_from(a.max_bytes, &String::from_utf8_lossy(max_opt)).ok()?;
    let store = snapshot::storing(&String::from_utf8_lossy(snap_opt)).ok()?;
    let text = budget::trim_trailing_blank(raw);
    let wanted = match a.range {
        Range::Lines(n) => n.min(history?),
        _ => history?,
    };
    let b = if windowed && window < wanted {
        // Only a window that holds more than the budget gives the whole text's cut; a
        // smaller one needs a larger window: the several-call path grows it.
        if text.len() <= max {
            return None;
        }
        let mut b = budget::bound(text, max);
        b.dropped_at_least = true;
        b
    } else {
        budget::bound(text, max)
    };
    let snapshot = if store {
        match snapshot::record_always(&id, &target, &b.text, b.truncated) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("tmuxmate: warning: {e}");
                None
            }
        }
    } else {
        None
    };
    Some(Got {
        pane_id: id,
        target,
        text: b,
        snapshot,
    })
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
}
