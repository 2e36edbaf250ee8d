//! What an agent is told at the start of a turn.
//!
//! Owns: composing the per-turn answer as a list of items (the location when its state
//! changed, then queued notes in order), each delivered exactly once, within a character
//! budget. Invariants: at most one tmux invocation when nothing changed (none inside the
//! refresh interval); the ledger lock is held from the decision until the printed answer
//! is confirmed, so concurrent calls for one agent never inject the same item twice; an
//! item is recorded as *offered* before it is printed and *delivered* (no transcript) or
//! *printed* (a JSONL transcript, which the next turn reads) only after (see `confirm`),
//! so a turn that dies in between loses nothing: the next turn confirms it from the
//! harness transcript or offers it again (or holds it: see `hold`); an item that does not fit waits for the next
//! turn (one that could never fit is truncated visibly).

pub mod hook;

use crate::ledger::{Ledger, Locked, Prepared, Record};
use crate::location::{self, NoLocation, Reading};
use crate::sys::state;
use crate::targs;
use crate::tmux::Arg;
use crate::tmux::Tmux;

pub struct TurnRequest<'a> {
    pub agent: &'a str,
    pub turn: Option<u64>,
    /// From the command line; `None` means "use the tmux option".
    pub interval_ms: Option<u64>,
    pub max_chars: usize,
    /// The harness transcript the answer will be recorded in, if the harness keeps one.
    pub transcript: Option<&'a std::path::Path>,
}

#[derive(Default)]
pub struct TurnAnswer {
    pub turn: u64,
    pub items: Vec<String>,
    /// Why no location was read this turn, if none was (for logs and --json).
    pub no_location: Option<String>,
    pub location: Option<Reading>,
    /// The locked ledger and what to record once the answer was printed.
    held: Option<(Locked, Prepared)>,
    /// Watch jobs whose results this answer carries (their status-line count drops).
    watches: Vec<String>,
}

impl TurnAnswer {
    pub fn text(&self) -> String {
        self.items.join("\n\n")
    }

    /// Call after the answer was printed in full: records its items as delivered and
    /// releases the ledger. Not calling it (a failed print, a crash) leaves them offered.
    pub fn confirm(&mut self) -> Result<(), String> {
        if let Some((mut l, p)) = self.held.take() {
            // No fsync (see `Locked::commit_with`): one write is all that is left here.
            l.write(p, false).map_err(|e| {
                format!("the answer was printed but recording its delivery failed ({e}); its items may be shown once more")
            })?;
        }
        // The agent was just told: the status line's "done" count drops now, not whenever
        // a poller next looks (it may have exited).
        let mut sockets: Vec<String> = std::mem::take(&mut self.watches)
            .iter()
            .filter_map(|id| crate::control::watch::job::load(id))
            .map(|j| j.socket)
            .collect();
        sockets.sort();
        sockets.dedup();
        for s in sockets {
            crate::control::watch::status::refresh(&s);
        }
        Ok(())
    }
}

/// Parse a refresh interval: a non-negative integer of milliseconds.
pub fn parse_interval(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        t.parse::<u64>()
            .map_err(|_| format!("refresh interval {s:?} is too large"))
    } else {
        Err(format!(
            "refresh interval {s:?} is not a non-negative integer of milliseconds (use e.g. 0 or 30000)"
        ))
    }
}

pub fn compose(tmux: &Tmux, req: &TurnRequest) -> Result<TurnAnswer, String> {
    let ledger = Ledger::for_agent(req.agent);
    let peek = ledger.peek();
    let now = state::now_ms();
    // Inside the refresh interval neither the query nor the injection happens. The interval
    // in force is the flag, else the one recorded with the last injection (it came from the
    // tmux option, which we cannot read without a query). A clock gone backwards disables it.
    let within_interval = peek.location.as_ref().is_some_and(|(_, at, stored)| {
        let iv = req.interval_ms.unwrap_or(*stored);
        iv > 0 && now >= *at && now - at < iv
    });
    // Watches: repair and re-attach pollers (free when no job is running: one readdir).
    crate::control::watch::poller::reattach_all(false);
    // Results of watch jobs on other hosts (nothing at all unless there are some).
    // Their results arrived: the status line's remote count drops now (no poller
    // watches remote jobs).
    for socket in crate::remote::pending::pull() {
        crate::control::watch::status::refresh(&socket);
    }
    let mut answer = TurnAnswer::default();
    let mut reading: Option<Reading> = None;
    let mut interval = req.interval_ms.unwrap_or(0);
    if !within_interval {
        match location::read(tmux) {
            Ok(r) => {
                if req.interval_ms.is_none() && !r.refresh_option.is_empty() {
                    interval = parse_interval(&r.refresh_option)
                        .map_err(|e| format!("tmux option @tmuxmate-refresh-interval-ms: {e}"))?;
                }
                reading = Some(r);
            }
            Err(e) => answer.no_location = Some(no_location_reason(&e)),
        }
    } else {
        answer.no_location = Some("inside the refresh interval".into());
    }
    // Let commands the agent runs through its shell tool find this agent's ledger.
    if let Some(r) = &reading
        && r.agent_option != req.agent
        && !req.agent.starts_with("pane:")
    {
        let _ = tmux.run(&targs![
            "set-option",
            "-p",
            "-t",
            Arg::id(&r.pane_id),
            "--",
            crate::tmux::options::AGENT.name,
            Arg::literal(req.agent),
        ]);
    }
    let budget = req.max_chars;
    let mut l = ledger
        .lock()
        .map_err(|e| format!("ledger {}: {e}", ledger.path().display()))?;
    let n = req.turn.unwrap_or(l.state.turns + 1);
    answer.turn = n;
    // Phase one (before printing): the turn, items the transcript shows were delivered by
    // a turn that died before confirming, and what is offered now.
    let mut before = vec![Record::Turn { n, at: now }];
    // Phase two (after printing): what this answer delivered.
    let mut after = Vec::new();
    let mut used = 0usize;
    if let Some(r) = &reading {
        let st = r.state();
        let changed = l
            .state
            .location
            .as_ref()
            .is_none_or(|(prev, _, _)| *prev != st);
        if changed {
            // A 12,000-character window name must not blow the budget either.
            let text = fit(&r.render(n), budget);
            used += text.chars().count();
            answer.items.push(text);
            after.push(Record::Inject {
                state: st,
                at: now,
                interval_ms: interval,
            });
        }
    }
    let tfile = req
        .transcript
        .and_then(|t| std::fs::metadata(t).ok().map(|m| (t, m.len())));
    // Confirm from the transcript only one we can read: JSONL (Claude, Codex, Gemini),
    // present now; otherwise (no transcript, dsh's .zstd) the print itself confirms.
    let by_transcript = tfile.filter(|(t, _)| t.extension().is_some_and(|e| e == "jsonl"));
    let tpos = tfile.map(|(_, n)| n).unwrap_or(0);
    let pending = l.state.pending.clone();
    // Offered by a turn that ended without confirming (we hold the lock, so it is not
    // running): delivered if the harness recorded it, else offered again.
    let shown: Vec<bool> = pending
        .iter()
        .map(|p| {
            p.offer
                .as_ref()
                .is_some_and(crate::delivered::in_transcript)
        })
        .collect();
    // Whether the harness is known to record our contexts (see `hold`), asked of the
    // transcripts involved at most once each.
    let mut records = Records::default();
    let current = req.transcript.map(|t| t.to_string_lossy().into_owned());
    let held_total = pending
        .iter()
        .zip(&shown)
        .filter(|(p, s)| !**s && hold(p, &mut records, current.as_deref()))
        .count();
    // Beyond `MAX_HELD` the oldest held items count as delivered (see `MAX_HELD`).
    let mut release = held_total.saturating_sub(MAX_HELD);
    for (p, shown) in pending.into_iter().zip(shown) {
        if let Some(o) = &p.offer {
            if shown {
                before.push(Record::Deliver {
                    key: p.key.clone(),
                    at: state::now_ms(),
                });
                continue;
            }
            if hold(&p, &mut records, current.as_deref()) {
                if release == 0 {
                    continue;
                }
                release -= 1;
                state::log(&format!(
                    "turn {}: {} printed twice, never in a transcript that has never shown a context of ours, and more than {MAX_HELD} such items are held: counted as delivered",
                    req.agent, p.key
                ));
                before.push(Record::Deliver {
                    key: p.key.clone(),
                    at: state::now_ms(),
                });
                continue;
            }
            state::log(&format!(
                "turn {}: offering {} again: {}",
                req.agent,
                p.key,
                match p.printed {
                    0 => "the turn that offered it ended before confirming",
                    1 if !records.any(o.transcript.as_deref(), current.as_deref()) =>
                        "printed, but the transcript does not show it arrived (if this print does not show either, it is held until the transcript shows a context of ours)",
                    _ => "printed, but the transcript does not show it arrived",
                }
            ));
        }
        let sep = if answer.items.is_empty() { 0 } else { 2 };
        let len = p.text.chars().count();
        let item = if len + sep + used <= budget {
            p.text
        } else if answer.items.is_empty() {
            // Could never fit: deliver a visibly truncated head rather than block forever.
            fit(&p.text, budget)
        } else {
            break;
        };
        used += item.chars().count() + sep;
        before.push(Record::Offer {
            key: p.key.clone(),
            at: state::now_ms(),
            transcript: req.transcript.map(|t| t.to_string_lossy().into_owned()),
            tpos,
            head: crate::delivered::head(&item),
        });
        if let Some(id) = p.key.strip_prefix("watch:") {
            answer.watches.push(id.to_string());
        }
        let at = state::now_ms();
        after.push(if by_transcript.is_some() {
            Record::Printed { key: p.key, at }
        } else {
            Record::Deliver { key: p.key, at }
        });
        answer.items.push(item);
    }
    l.commit(&before)
        .map_err(|e| format!("ledger {}: {e}", ledger.path().display()))?;
    if !after.is_empty() {
        let p = l.prepare(&after);
        answer.held = Some((l, p));
    }
    answer.location = reading;
    Ok(answer)
}

/// Held items kept at most (see `hold`); past it the oldest count as delivered, so a
/// harness that records no context cannot grow the ledger without bound.
const MAX_HELD: usize = 16;

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
        let r = crate::delivered::records_our_context(Some(path));
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
fn hold(p: &crate::ledger::Pending, records: &mut Records, current: Option<&str>) -> bool {
    p.offer
        .as_ref()
        .is_some_and(|o| p.printed >= 2 && !records.any(o.transcript.as_deref(), current))
}

/// The smallest `--max-chars` that leaves room for a truncation marker and some text.
pub const MIN_MAX_CHARS: usize = 200;

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

fn no_location_reason(e: &NoLocation) -> String {
    e.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
