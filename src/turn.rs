//! What an agent is told at the start of a turn.
//!
//! Owns: composing the per-turn answer as a list of items (the location when its state
//! changed, then queued notes in order), each delivered exactly once, within a character
//! budget. Invariants: at most one tmux invocation when nothing changed (none inside the
//! refresh interval); the delivery decision is made under the ledger lock, so concurrent
//! calls for one agent never inject the same item twice; an item that does not fit waits
//! for the next turn (one that could never fit is truncated visibly).

use crate::ledger::{Ledger, Record};
use crate::location::{self, NoLocation, Reading};
use crate::state;
use crate::tmux::Tmux;

pub struct TurnRequest<'a> {
    pub agent: &'a str,
    pub turn: Option<u64>,
    /// From the command line; `None` means "use the tmux option".
    pub interval_ms: Option<u64>,
    pub max_chars: usize,
}

#[derive(Debug, Default)]
pub struct TurnAnswer {
    pub turn: u64,
    pub items: Vec<String>,
    /// Why no location was read this turn, if none was (for logs and --json).
    pub no_location: Option<String>,
    pub location: Option<Reading>,
}

impl TurnAnswer {
    pub fn text(&self) -> String {
        self.items.join("\n\n")
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
    crate::watch::poller::reattach_all(false);
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
    let budget = req.max_chars;
    let mut delivered_watches: Vec<String> = Vec::new();
    let result = ledger.transact(|t| {
        let n = req.turn.unwrap_or(t.state.turns + 1);
        t.push(Record::Turn { n, at: now });
        answer.turn = n;
        let mut used = 0usize;
        if let Some(r) = &reading {
            let st = r.state();
            let changed = t
                .state
                .location
                .as_ref()
                .is_none_or(|(prev, _, _)| *prev != st);
            if changed {
                let text = r.render(n);
                used += text.chars().count();
                answer.items.push(text);
                t.push(Record::Inject {
                    state: st,
                    at: now,
                    interval_ms: interval,
                });
            }
        }
        let pending = t.state.pending.clone();
        for (key, text, _) in pending {
            let sep = if answer.items.is_empty() { 0 } else { 2 };
            let len = text.chars().count();
            let item = if len + sep + used <= budget {
                text
            } else if answer.items.is_empty() {
                // Could never fit: deliver a visibly truncated head rather than block forever.
                let keep = budget.saturating_sub(80);
                let head: String = text.chars().take(keep).collect();
                format!(
                    "{head}\n[... truncated: {} more characters not shown]",
                    len - keep
                )
            } else {
                break;
            };
            used += item.chars().count() + sep;
            answer.items.push(item);
            if let Some(id) = key.strip_prefix("watch:") {
                delivered_watches.push(id.to_string());
            }
            t.push(Record::Deliver {
                key,
                at: state::now_ms(),
            });
        }
    });
    result.map_err(|e| format!("ledger {}: {e}", ledger.path().display()))?;
    // The agent was just told: the status line's "done" count drops now, not whenever a
    // poller next looks (it may have exited).
    let mut sockets: Vec<String> = delivered_watches
        .iter()
        .filter_map(|id| crate::watch::job::load(id))
        .map(|j| j.socket)
        .collect();
    sockets.sort();
    sockets.dedup();
    for s in sockets {
        crate::watch::status::refresh(&s);
    }
    // Let commands the agent runs through its shell tool find this agent's ledger.
    if let Some(r) = &reading
        && r.agent_option != req.agent
        && !req.agent.starts_with("pane:")
    {
        let _ = tmux.run(&[
            "set-option",
            "-p",
            "-t",
            &r.pane_id,
            "--",
            "@tmuxmate-agent",
            req.agent,
        ]);
    }
    answer.location = reading;
    Ok(answer)
}

fn no_location_reason(e: &NoLocation) -> String {
    e.to_string()
}
