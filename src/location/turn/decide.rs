//! The per-turn decision: what this turn tells the agent, taken from its locked ledger.
//!
//! Owns: the order of an answer (the location when its state changed, then queued notes
//! in the order they were queued), the character budget, and the exactly-once choice for
//! each queued note ([`settle`]): a note an earlier turn offered is *delivered* when the
//! harness transcript shows it, *held* when it was printed twice and no transcript
//! involved ever showed a context of ours (see [`hold`]), else offered again. Invariants:
//! every note offered is recorded as *offered* in `before` (committed before anything is
//! printed) and as *delivered* or *printed* in `after` (written only once the answer was
//! printed); a note that does not fit waits for the next turn, and notes after it wait
//! too (their order is kept); a note that could never fit is sent truncated visibly
//! ([`fit`]) rather than blocking the queue. Nothing here talks to tmux or prints.

use std::path::Path;

use crate::location::Reading;
use crate::location::ledger::{LedgerState, Pending, Record};
use crate::sys::state;

/// Held items kept at most (see `hold`); past it the oldest count as delivered, so a
/// harness that records no context cannot grow the ledger without bound.
const MAX_HELD: usize = 16;

/// The smallest `--max-chars` that leaves room for a truncation marker and some text.
pub const MIN_MAX_CHARS: usize = 200;

/// What one turn's decision is made from, besides the ledger.
pub struct Input<'a> {
    pub agent: &'a str,
    /// The turn number this answer is for.
    pub turn: u64,
    pub now: u64,
    pub budget: usize,
    /// Where the agent is, when it was read this turn.
    pub reading: Option<&'a Reading>,
    /// The refresh interval in force, recorded with an injected location.
    pub interval_ms: u64,
    /// The harness transcript this answer will be recorded in, if it keeps one.
    pub transcript: Option<&'a Path>,
}

/// What the turn says, and what the ledger records before and after it is printed.
#[derive(Default)]
pub struct Decision {
    pub items: Vec<String>,
    /// Committed before printing: the turn, notes found delivered, notes offered now.
    pub before: Vec<Record>,
    /// Written once the answer was printed: what it delivered.
    pub after: Vec<Record>,
    /// The keys of the notes this answer carries.
    pub carried: Vec<String>,
}

/// The decision for one turn on the locked ledger's `ledger`.
pub fn decide(ledger: &LedgerState, input: &Input) -> Decision {
    let mut d = Decision {
        before: vec![Record::Turn {
            n: input.turn,
            at: input.now,
        }],
        ..Decision::default()
    };
    let mut used = 0usize;
    if let Some(text) = location_item(ledger, input, &mut d) {
        used += text.chars().count();
        d.items.push(text);
    }
    let sizes = input
        .transcript
        .and_then(|t| std::fs::metadata(t).ok().map(|m| (t, m.len())));
    // Confirm from the transcript only one we can read: JSONL (Claude, Codex, Gemini),
    // present now; otherwise (no transcript, dsh's .zstd) the print itself confirms.
    let by_transcript = sizes.is_some_and(|(t, _)| t.extension().is_some_and(|e| e == "jsonl"));
    let tpos = sizes.map(|(_, n)| n).unwrap_or(0);
    let current = input.transcript.map(|t| t.to_string_lossy().into_owned());
    let pending = &ledger.pending;
    // Offered by a turn that ended without confirming (we hold the lock, so it is not
    // running): delivered if the harness recorded it, else offered again.
    let shown: Vec<bool> = pending
        .iter()
        .map(|p| {
            p.offer
                .as_ref()
                .is_some_and(crate::location::delivered::in_transcript)
        })
        .collect();
    let mut records = Records::default();
    let held_total = pending
        .iter()
        .zip(&shown)
        .filter(|(p, s)| !**s && hold(p, &mut records, current.as_deref()))
        .count();
    // Beyond `MAX_HELD` the oldest held items count as delivered (see `MAX_HELD`).
    let mut release = held_total.saturating_sub(MAX_HELD);
    for (p, shown) in pending.iter().zip(shown) {
        match settle(
            p,
            shown,
            &mut release,
            &mut records,
            current.as_deref(),
            input,
        ) {
            Settled::Delivered => {
                d.before.push(Record::Deliver {
                    key: p.key.clone(),
                    at: crate::sys::time::now_ms(),
                });
                continue;
            }
            Settled::Held => continue,
            Settled::Offer => {}
        }
        let Some(item) = pack(&p.text, d.items.is_empty(), &mut used, input.budget) else {
            break;
        };
        d.before.push(Record::Offer {
            key: p.key.clone(),
            at: crate::sys::time::now_ms(),
            transcript: current.clone(),
            tpos,
            head: crate::location::delivered::head(&item),
        });
        let at = crate::sys::time::now_ms();
        d.after.push(if by_transcript {
            Record::Printed {
                key: p.key.clone(),
                at,
            }
        } else {
            Record::Deliver {
                key: p.key.clone(),
                at,
            }
        });
        d.carried.push(p.key.clone());
        d.items.push(item);
    }
    d
}

/// The location item, when the agent's location state changed since the last one the
/// ledger records (its injection is recorded in `d.after`).
fn location_item(ledger: &LedgerState, input: &Input, d: &mut Decision) -> Option<String> {
    let r = input.reading?;
    let st = r.state();
    if ledger
        .location
        .as_ref()
        .is_some_and(|(prev, _, _)| *prev == st)
    {
        return None;
    }
    // A 12,000-character window name must not blow the budget either.
    let text = fit(&r.render(input.turn), input.budget);
    d.after.push(Record::Inject {
        state: st,
        at: input.now,
        interval_ms: input.interval_ms,
    });
    Some(text)
}

/// What becomes of a queued note this turn.
#[derive(Debug, PartialEq, Eq)]
enum Settled {
    /// An earlier offer reached the agent: recorded as delivered, not offered again.
    Delivered,
    /// Printed twice, never shown: neither offered nor delivered (see `hold`).
    Held,
    /// Offered in this answer (if it fits).
    Offer,
}

/// The exactly-once choice for one queued note; `release` counts down the held notes
/// that are past `MAX_HELD` (the oldest ones), which count as delivered.
fn settle(
    p: &Pending,
    shown: bool,
    release: &mut usize,
    records: &mut Records,
    current: Option<&str>,
    input: &Input,
) -> Settled {
    let Some(o) = &p.offer else {
        return Settled::Offer;
    };
    if shown {
        return Settled::Delivered;
    }
    if hold(p, records, current) {
        if *release == 0 {
            return Settled::Held;
        }
        *release -= 1;
        state::log(&format!(
            "turn {}: {} printed twice, never in a transcript that has never shown a context of ours, and more than {MAX_HELD} such items are held: counted as delivered",
            input.agent, p.key
        ));
        return Settled::Delivered;
    }
    state::log(&format!(
        "turn {}: offering {} again: {}",
        input.agent,
        p.key,
        match p.printed {
            0 => "the turn that offered it ended before confirming",
            1 if !records.any(o.transcript.as_deref(), current) =>
                "printed, but the transcript does not show it arrived (if this print does not show either, it is held until the transcript shows a context of ours)",
            _ => "printed, but the transcript does not show it arrived",
        }
    ));
    Settled::Offer
}

/// A note's text as this answer carries it, counted into `used`; `None`: it does not fit
/// after what is already there, so it (and every note after it) waits. The first item
/// of an answer always goes, truncated visibly if it could never fit.
fn pack(text: &str, first: bool, used: &mut usize, budget: usize) -> Option<String> {
    let sep = if first { 0 } else { 2 };
    let len = text.chars().count();
    let item = if len + sep + *used <= budget {
        text.to_string()
    } else if first {
        fit(text, budget)
    } else {
        return None;
    };
    *used += item.chars().count() + sep;
    Some(item)
}

/// Whether a transcript has ever shown a context of ours, asked once per path per turn.
#[derive(Default)]
struct Records(Vec<(String, bool)>);

impl Records {
    fn ask(&mut self, path: Option<&str>) -> bool {
        let Some(path) = path else {
            return false;
        };
        if let Some((_, r)) = self.0.iter().find(|(p, _)| p == path) {
            return *r;
        }
        let r = crate::location::delivered::records_our_context(Some(path));
        self.0.push((path.to_string(), r));
        r
    }

    /// The offer's transcript or the current turn's shows that the harness records ours.
    fn any(&mut self, offered: Option<&str>, current: Option<&str>) -> bool {
        self.ask(offered) || self.ask(current)
    }
}

/// An item printed twice that the transcript does not show, by a harness not (yet) known
/// to record our contexts: it is neither printed a third time nor counted as delivered.
/// Two readings fit: the harness records no context (then it was shown, twice), or both
/// prints were dropped (hooks killed) before the harness ever recorded one of ours, as in
/// a fresh conversation. Counting it delivered lost it in the second case; so it waits,
/// and is offered again as soon as any transcript involved shows a context of ours.
fn hold(p: &Pending, records: &mut Records, current: Option<&str>) -> bool {
    p.offer
        .as_ref()
        .is_some_and(|o| p.printed >= 2 && !records.any(o.transcript.as_deref(), current))
}

/// `text` within `budget` characters: whole, or its head and a visible marker saying how
/// much is missing (the marker counts against the budget).
pub fn fit(text: &str, budget: usize) -> String {
    let len = text.chars().count();
    if len <= budget {
        return text.to_string();
    }
    let marker = |n: usize| format!("\n[... truncated: {n} more characters not shown]");
    // The marker's length depends on the count it shows; two rounds settle it.
    let mut keep = budget.saturating_sub(marker(len).chars().count());
    keep = budget.saturating_sub(marker(len - keep).chars().count());
    let head: String = text.chars().take(keep).collect();
    let out = format!("{head}{}", marker(len - keep));
    if out.chars().count() <= budget {
        out
    } else {
        text.chars().take(budget).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::location::delivered::Offered;

    #[test]
    fn fit_bounds_every_length() {
        for budget in [0, 5, 60, 200, 9500] {
            for len in [0, 1, budget, budget + 1, budget * 2 + 7, 12_000] {
                let t: String = "é".repeat(len);
                let f = fit(&t, budget);
                assert!(f.chars().count() <= budget, "{budget} {len}");
                if len <= budget {
                    assert_eq!(f, t);
                } else if budget >= MIN_MAX_CHARS {
                    assert!(f.contains("more characters not shown"), "{f}");
                }
            }
        }
    }

    fn note(key: &str, text: &str) -> Pending {
        Pending {
            key: key.into(),
            text: text.into(),
            at: 0,
            offer: None,
            printed: 0,
        }
    }

    fn input(budget: usize) -> Input<'static> {
        Input {
            agent: "a",
            turn: 3,
            now: 1,
            budget,
            reading: None,
            interval_ms: 0,
            transcript: None,
        }
    }

    #[test]
    fn notes_keep_their_order_and_one_that_does_not_fit_holds_back_the_rest() {
        let l = LedgerState {
            pending: vec![
                note("n1", "aaaa"),
                note("n2", &"b".repeat(50)),
                note("n3", "c"),
            ],
            ..LedgerState::default()
        };
        let d = decide(&l, &input(30));
        assert_eq!(d.items, vec!["aaaa".to_string()]);
        assert_eq!(d.carried, vec!["n1".to_string()]);
        // n3 would fit, but goes after n2.
        assert!(matches!(d.before[0], Record::Turn { n: 3, .. }));
        assert_eq!(d.before.len(), 2);
        assert!(matches!(&d.after[..], [Record::Deliver { key, .. }] if key == "n1"));
    }

    #[test]
    fn a_first_note_that_could_never_fit_goes_truncated_visibly() {
        let l = LedgerState {
            pending: vec![note("big", &"x".repeat(5000))],
            ..LedgerState::default()
        };
        let d = decide(&l, &input(MIN_MAX_CHARS));
        assert_eq!(d.items.len(), 1);
        assert!(d.items[0].chars().count() <= MIN_MAX_CHARS);
        assert!(d.items[0].contains("more characters not shown"));
    }

    #[test]
    fn an_offer_never_printed_is_offered_again_and_one_printed_twice_unseen_is_held() {
        let offered = |printed| Pending {
            offer: Some(Offered {
                at: 0,
                transcript: None,
                tpos: 0,
                head: "h".into(),
            }),
            printed,
            ..note("k", "text")
        };
        let (mut release, mut records) = (0, Records::default());
        let i = input(100);
        assert_eq!(
            settle(&offered(0), false, &mut release, &mut records, None, &i),
            Settled::Offer
        );
        assert_eq!(
            settle(&offered(0), true, &mut release, &mut records, None, &i),
            Settled::Delivered
        );
        assert_eq!(
            settle(&offered(2), false, &mut release, &mut records, None, &i),
            Settled::Held
        );
        // Past the bound, the oldest held notes count as delivered.
        release = 1;
        assert_eq!(
            settle(&offered(2), false, &mut release, &mut records, None, &i),
            Settled::Delivered
        );
        assert_eq!(release, 0);
    }

    #[test]
    fn pack_counts_the_separator_between_items() {
        let mut used = 0;
        assert_eq!(pack("abc", true, &mut used, 8).as_deref(), Some("abc"));
        assert_eq!(used, 3);
        // 3 + 2 + 3 = 8 fits exactly; one more character does not.
        assert_eq!(pack("def", false, &mut used, 8).as_deref(), Some("def"));
        assert_eq!(pack("g", false, &mut used, 8), None);
    }
}
