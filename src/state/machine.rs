//! The agent state machine: one record per agent pane, moved by signals.
//!
//! Owns: the states, the record kept for a pane, and [`step`], which decides the next
//! record and whether the person is to be told. Invariants (each has a unit test):
//! - a signal that does not change the state changes nothing (same `since`, same `seq`,
//!   no alert): repeated events (two `SessionEnd`s, a tool after a tool) are free;
//! - `seq` grows by one on every change, so (pane, seq) names one transition forever;
//!   an alert is keyed by it and so can be sent at most once;
//! - only entering needs-you or done alerts, and never while the person looks at the
//!   pane; a turn that ends while they look is seen at once: idle, not done;
//! - a new needs-you reason (a second permission in the same turn) is a new transition.

/// What an event proves (`super::signal` reads it from a hook event): the agent is now in `to`, for `why` (needs-you, error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signal {
    pub to: State,
    pub why: String,
    /// The event's name, kept with the state (`doctor` and `agents --json` show it).
    pub event: String,
}

/// One agent's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum State {
    /// Waits for the person: a permission, a question, an error.
    NeedsYou,
    /// Working on a turn.
    Working,
    /// The turn is over and the person has not looked at the pane since.
    Done,
    /// Waiting for a prompt, seen.
    Idle,
    /// The CLI ended.
    Exited,
    /// The sources went silent or disagree: never a guess.
    Unknown,
}

impl State {
    pub const ALL: [State; 6] = [
        State::NeedsYou,
        State::Working,
        State::Done,
        State::Idle,
        State::Exited,
        State::Unknown,
    ];

    pub fn name(self) -> &'static str {
        match self {
            State::NeedsYou => "needs-you",
            State::Working => "working",
            State::Done => "done",
            State::Idle => "idle",
            State::Exited => "exited",
            State::Unknown => "unknown",
        }
    }

    pub fn parse(s: &str) -> Option<State> {
        State::ALL.into_iter().find(|st| st.name() == s)
    }
}

/// What is kept for one agent pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub state: State,
    /// Unix milliseconds of the last change.
    pub since_ms: u64,
    pub why: String,
    pub seq: u64,
    /// The harness that reported it (`claude`, `codex`, `gemini`).
    pub harness: String,
    /// The event that made the last change.
    pub event: String,
}

/// The reason a source gives that knows a permission is asked but not for what.
pub const PERMISSION: &str = "permission";

/// The reason a source gives that knows a turn failed but not why.
pub const ERROR: &str = "error: the turn failed";

/// `a` is the generic reason of which `b` gives the details (`permission` and
/// `permission: Bash: ls`; the generic error and the API's message).
fn vaguer(a: &str, b: &str) -> bool {
    (a == PERMISSION && b.starts_with("permission: "))
        || (a == ERROR && b.starts_with("error: ") && b != ERROR)
}

/// What [`step`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The record to keep; `None` when nothing changed (no write needed).
    pub record: Option<Record>,
    /// Tell the person about this transition.
    pub alert: bool,
}

/// The next record after `signal` at `now_ms`, for a pane the person `looking` at or not.
pub fn step(
    prev: Option<&Record>,
    harness: &str,
    signal: &Signal,
    looking: bool,
    now_ms: u64,
) -> Step {
    let mut to = signal.to;
    let mut why = signal.why.clone();
    if to == State::Done && looking {
        to = State::Idle;
        why = "seen".into();
    }
    if let Some(p) = prev
        && p.state == to
        && (to != State::NeedsYou || p.why == why || vaguer(&why, &p.why))
    {
        return Step {
            record: None,
            alert: false,
        };
    }
    // One permission prompt seen by two sources (a stream or file first, then the hook
    // with the details): the reason gets its details, and it stays one transition.
    if let Some(p) = prev
        && p.state == State::NeedsYou
        && to == State::NeedsYou
        && vaguer(&p.why, &why)
    {
        return Step {
            record: Some(Record {
                why,
                event: signal.event.clone(),
                ..p.clone()
            }),
            alert: false,
        };
    }
    let record = Record {
        state: to,
        since_ms: now_ms,
        why,
        seq: prev.map_or(0, |p| p.seq) + 1,
        harness: harness.to_string(),
        event: signal.event.clone(),
    };
    let alert = matches!(to, State::NeedsYou | State::Done) && !looking;
    Step {
        record: Some(record),
        alert,
    }
}

/// The record once the person has looked at the pane: a done turn becomes idle.
pub fn seen(prev: &Record, now_ms: u64) -> Option<Record> {
    (prev.state == State::Done).then(|| Record {
        state: State::Idle,
        since_ms: now_ms,
        why: "seen".into(),
        seq: prev.seq + 1,
        harness: prev.harness.clone(),
        event: "seen".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(to: State, why: &str) -> Signal {
        Signal {
            to,
            why: why.into(),
            event: "E".into(),
        }
    }

    fn run(seq: &[(State, &str, bool)]) -> Vec<(State, u64, bool)> {
        let mut rec: Option<Record> = None;
        let mut out = Vec::new();
        for (i, (to, why, looking)) in seq.iter().enumerate() {
            let s = step(rec.as_ref(), "claude", &sig(*to, why), *looking, i as u64);
            if let Some(r) = s.record {
                rec = Some(r);
            }
            let r = rec.as_ref().unwrap();
            out.push((r.state, r.seq, s.alert));
        }
        out
    }

    #[test]
    fn a_permission_approved_then_the_turn_ends_unseen() {
        use State::*;
        assert_eq!(
            run(&[
                (Working, "", false),
                (NeedsYou, "permission: Bash: ls", false),
                (Working, "", false),
                (Working, "", false),
                (Done, "", false),
            ]),
            vec![
                (Working, 1, false),
                (NeedsYou, 2, true),
                (Working, 3, false),
                (Working, 3, false),
                (Done, 4, true),
            ]
        );
    }

    #[test]
    fn repeats_change_nothing_and_a_new_reason_is_a_new_transition() {
        use State::*;
        assert_eq!(
            run(&[
                (NeedsYou, "permission: a", false),
                (NeedsYou, "permission: a", false),
                (NeedsYou, "permission: b", false),
                (Exited, "", false),
                (Exited, "", false),
            ]),
            vec![
                (NeedsYou, 1, true),
                (NeedsYou, 1, false),
                (NeedsYou, 2, true),
                (Exited, 3, false),
                (Exited, 3, false),
            ]
        );
    }

    #[test]
    fn nothing_alerts_while_the_person_looks_and_a_seen_turn_is_idle() {
        use State::*;
        assert_eq!(
            run(&[
                (Working, "", true),
                (NeedsYou, "permission: a", true),
                (Done, "", true),
            ]),
            vec![(Working, 1, false), (NeedsYou, 2, false), (Idle, 3, false)]
        );
    }

    #[test]
    fn looking_at_a_done_pane_makes_it_idle_once() {
        let r = Record {
            state: State::Done,
            since_ms: 1,
            why: String::new(),
            seq: 4,
            harness: "codex".into(),
            event: "Stop".into(),
        };
        let s = seen(&r, 9).unwrap();
        assert_eq!((s.state, s.seq, s.since_ms), (State::Idle, 5, 9));
        assert_eq!(seen(&s, 10), None);
    }

    #[test]
    fn a_prompt_two_sources_report_is_one_transition_with_the_details() {
        use State::*;
        let mut rec: Option<Record> = None;
        let mut alerts = 0;
        for (to, why) in [
            (Working, ""),
            (NeedsYou, PERMISSION),
            (NeedsYou, "permission: Bash: ls"),
            (NeedsYou, PERMISSION),
        ] {
            let s = step(rec.as_ref(), "codex", &sig(to, why), false, 1);
            alerts += usize::from(s.alert);
            if let Some(r) = s.record {
                rec = Some(r);
            }
        }
        let r = rec.unwrap();
        assert_eq!(
            (r.state, r.why.as_str(), r.seq),
            (NeedsYou, "permission: Bash: ls", 2)
        );
        assert_eq!(alerts, 1);
        // The hook first, then the stream: nothing changes.
        let s = step(Some(&r), "codex", &sig(NeedsYou, PERMISSION), false, 2);
        assert_eq!(s.record, None);
    }

    #[test]
    fn names_round_trip() {
        for s in State::ALL {
            assert_eq!(State::parse(s.name()), Some(s));
        }
        assert_eq!(State::parse("busy"), None);
    }
}
