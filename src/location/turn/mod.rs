//! What an agent is told at the start of a turn: the per-turn pipeline.
//!
//! Owns: the steps of a per-turn call, in this order. *Gather*: the capabilities above
//! this one bring in what arrived (finished watch jobs, results from other hosts) as notes
//! in the ledgers ([`Steps::gather`]). *Read*: where the agent is, unless inside the
//! refresh interval. *Decide*: under the agent's ledger lock, what this turn says
//! ([`decide`]). *After*, once the answer was printed: its delivery recorded
//! ([`TurnAnswer::confirm`]), then the work that does not change it ([`TurnAnswer::after`]:
//! the agent's address on its pane, [`Steps::after`]).
//!
//! Invariants: at most one tmux invocation when nothing changed (none inside the refresh
//! interval) and no write before the answer but the ledger's; the ledger lock is held from
//! the decision until the printed answer is confirmed, so concurrent calls for one agent
//! never inject the same item twice; an item is recorded as *offered* before it is
//! printed and *delivered* (no transcript) or *printed* (a JSONL transcript, which the
//! next turn reads) only after, so a turn that dies in between loses nothing: the next
//! turn confirms it from the harness transcript or offers it again (or holds it); an item
//! that does not fit waits for the next turn (one that could never fit is truncated
//! visibly). This capability imports none of those above it: `cmd` hands it their steps.

pub mod decide;

use std::path::{Path, PathBuf};

use crate::location::ledger::{Ledger, LedgerState, Locked, Prepared};
use crate::location::{self, NoLocation, Reading};
use crate::targs;
use crate::tmux::{Arg, Socket, Tmux};

pub struct TurnRequest<'a> {
    pub agent: &'a str,
    pub turn: Option<u64>,
    /// From the command line; `None` means "use the tmux option".
    pub interval_ms: Option<u64>,
    pub max_chars: usize,
    /// The harness transcript the answer will be recorded in, if the harness keeps one.
    pub transcript: Option<&'a Path>,
}

/// What the capabilities above this one do around a turn (supplied by `cmd`).
pub trait Steps {
    /// Before the decision: bring what arrived into the ledgers, where it is decided on.
    fn gather(&self, tmux: &Tmux);
    /// After the answer (printed or not): see [`Done`].
    fn after(&self, done: &Done);
}

/// What a finished turn hands to [`Steps::after`].
pub struct Done<'a> {
    /// The agent's server, by the socket path of its reading (one handle for all the
    /// after-work), or the caller's when there was no reading.
    pub tmux: &'a Tmux,
    pub reading: Option<&'a Reading>,
    pub transcript: Option<&'a Path>,
    /// The keys of the notes the answer carried, once its delivery was recorded (empty
    /// when it was not: those notes are still queued).
    pub delivered: &'a [String],
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
    /// The keys of the notes this answer carries, and whether their delivery is recorded.
    carried: Vec<String>,
    confirmed: bool,
    agent: String,
    transcript: Option<PathBuf>,
    /// The caller's handle, for the after-work when there is no reading.
    tmux: Option<Tmux>,
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
        self.confirmed = true;
        Ok(())
    }

    /// The work after the answer, printed or not: the agent's address on its pane (so
    /// commands it runs through its shell tool find its ledger), then the steps'.
    pub fn after(mut self, steps: &dyn Steps) {
        // An unconfirmed answer's lock goes now: its items stay offered.
        self.held = None;
        let by_path = self
            .location
            .as_ref()
            .map(|r| Tmux::new(Socket::Path(r.socket_path.clone().into())));
        let Some(tmux) = by_path.as_ref().or(self.tmux.as_ref()) else {
            return;
        };
        if let Some(r) = &self.location
            && r.agent_option != self.agent
            && !self.agent.starts_with("pane:")
        {
            let _ = tmux.run(&targs![
                "set-option",
                "-p",
                "-t",
                Arg::id(&r.pane_id),
                "--",
                crate::tmux::options::AGENT.name,
                Arg::literal(&self.agent),
            ]);
        }
        let delivered: &[String] = if self.confirmed { &self.carried } else { &[] };
        steps.after(&Done {
            tmux,
            reading: self.location.as_ref(),
            transcript: self.transcript.as_deref(),
            delivered,
        });
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

/// The per-turn answer for `req`: gather, read, decide (see the module's invariants).
pub fn compose(tmux: &Tmux, req: &TurnRequest, steps: &dyn Steps) -> Result<TurnAnswer, String> {
    let ledger = Ledger::for_agent(req.agent);
    let now = crate::sys::time::now_ms();
    steps.gather(tmux);
    let read = read(tmux, req, &ledger.peek(), now)?;
    let mut l = ledger
        .lock()
        .map_err(|e| format!("ledger {}: {e}", ledger.path().display()))?;
    let turn = req.turn.unwrap_or(l.state.turns + 1);
    let d = decide::decide(
        &l.state,
        &decide::Input {
            agent: req.agent,
            turn,
            now,
            budget: req.max_chars,
            reading: read.reading.as_ref(),
            interval_ms: read.interval_ms,
            transcript: req.transcript,
        },
    );
    l.commit(&d.before)
        .map_err(|e| format!("ledger {}: {e}", ledger.path().display()))?;
    let held = (!d.after.is_empty()).then(|| {
        let p = l.prepare(&d.after);
        (l, p)
    });
    Ok(TurnAnswer {
        turn,
        items: d.items,
        no_location: read.no_location,
        location: read.reading,
        held,
        carried: d.carried,
        confirmed: false,
        agent: req.agent.to_string(),
        transcript: req.transcript.map(Path::to_path_buf),
        tmux: Some(tmux.clone()),
    })
}

/// Where the agent is this turn, and the refresh interval in force.
struct Read {
    reading: Option<Reading>,
    /// Why there is no reading, if there is none.
    no_location: Option<String>,
    interval_ms: u64,
}

/// The location reading, unless inside the refresh interval: the interval in force is the
/// flag, else the one recorded with the last injection (it came from the tmux option,
/// which cannot be read without a query). A clock gone backwards disables it.
fn read(tmux: &Tmux, req: &TurnRequest, peek: &LedgerState, now: u64) -> Result<Read, String> {
    let within_interval = peek.location.as_ref().is_some_and(|(_, at, stored)| {
        let iv = req.interval_ms.unwrap_or(*stored);
        iv > 0 && now >= *at && now - at < iv
    });
    let mut out = Read {
        reading: None,
        no_location: None,
        interval_ms: req.interval_ms.unwrap_or(0),
    };
    if within_interval {
        out.no_location = Some("inside the refresh interval".into());
        return Ok(out);
    }
    match location::read(tmux) {
        Ok(r) => {
            if req.interval_ms.is_none() && !r.refresh_option.is_empty() {
                out.interval_ms = parse_interval(&r.refresh_option)
                    .map_err(|e| format!("tmux option @tmuxmate-refresh-interval-ms: {e}"))?;
            }
            out.reading = Some(r);
        }
        Err(e) => out.no_location = Some(no_location_reason(&e)),
    }
    Ok(out)
}

fn no_location_reason(e: &NoLocation) -> String {
    e.to_string()
}
