//! `agent wait NAME --until STATE`: block until one agent pane is in one of the states
//! asked for, or a deadline passes.
//!
//! Owns: reading one pane's effective state (the same rules as the status line:
//! [`super::summary::effective`]) and the wait loop. Invariants: the pane is named
//! exactly (a pane target, or a managed session's pinned pane), never guessed; each look
//! is one bounded tmux call, a few times a second, only while someone waits; a pane that
//! is gone or an agent that exited ends the wait with an error (unless exited was asked
//! for), never a hang to the deadline.

use std::time::{Duration, Instant};

use super::machine::State;
use super::summary;
use crate::error::Error;
use crate::targs;
use crate::tmux::options;
use crate::tmux::{Arg, Tmux};

/// How often the pane's state is looked at while waiting.
const EVERY: Duration = Duration::from_millis(100);

impl Reached {
    /// One line for a person or a model: `%3 is needs-you: permission: Bash: ls`.
    pub fn text(&self) -> String {
        if self.why.is_empty() {
            format!("{} is {}", self.pane_id, self.state)
        } else {
            format!("{} is {}: {}", self.pane_id, self.state, self.why)
        }
    }
}

/// What a finished wait reports.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reached {
    pub pane_id: String,
    pub state: String,
    pub why: String,
    /// Unix milliseconds of the state's start.
    pub since: u64,
    /// How long the wait took, in milliseconds.
    pub waited_ms: u64,
}

/// The states `--until` names: a comma list of state names.
pub fn parse_until(s: &str) -> Result<Vec<State>, Error> {
    let mut v = Vec::new();
    for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match State::parse(w) {
            Some(st) => v.push(st),
            None => {
                return Err(Error::usage(format!(
                    "--until {w:?} is not a state; use one or more of needs-you, done, idle, working, exited, unknown (comma-separated)"
                )));
            }
        }
    }
    if v.is_empty() {
        return Err(Error::usage(
            "--until needs a state: needs-you, done, idle, working, exited or unknown",
        ));
    }
    Ok(v)
}

/// One look at `pane`: its effective state, why, and since (ms); `None` when the pane
/// has no agent record.
fn look(tmux: &Tmux, pane: &str, shells: &[&str]) -> Result<Option<(State, String, u64)>, Error> {
    let out = tmux
        .run(&targs![
            "display-message",
            "-p",
            "-t",
            Arg::id(pane),
            Arg::ours(summary::format())
        ])
        .map_err(|e| {
            Error::new(format!(
                "pane {pane} is gone or unreadable ({e}); see `tmuxmate agents`"
            ))
        })?;
    let Some((_, _, Some(p))) = summary::parse(out.trim_end_matches('\n'), shells).pop() else {
        return Ok(None);
    };
    Ok(Some((p.state, p.why, p.since_s.saturating_mul(1000))))
}

/// The pane whose state a wait follows: a pane target names it exactly; any other name
/// is a managed session's, whose pinned pane it is.
pub fn pane_of(tmux: &Tmux, name: &str) -> Result<String, Error> {
    if name.starts_with('%') || name.contains(':') {
        return Ok(crate::control::policy::resolve(tmux, Some(name), "")?.pane_id);
    }
    let (c, _) = crate::bridge::session::resolve(tmux, name)?;
    Ok(c.pane)
}

/// Wait until the agent in `pane` is in one of `until`, for at most `timeout`; `go` is
/// asked between looks with the time so far (false: the caller gave up, e.g. an MCP
/// cancel).
pub fn wait(
    tmux: &Tmux,
    pane: &str,
    until: &[State],
    timeout: Duration,
    go: &dyn Fn(Duration) -> bool,
) -> Result<Reached, Error> {
    let shells_opt = options::SHELLS.global(tmux);
    let shells: Vec<&str> = options::SHELLS
        .text(&shells_opt)
        .split_whitespace()
        .collect();
    let start = Instant::now();
    let names: Vec<&str> = until.iter().map(|s| s.name()).collect();
    loop {
        let seen = look(tmux, pane, &shells)?;
        let Some((state, why, since)) = seen else {
            return Err(Error::new(format!(
                "pane {pane} has no agent state: no agent hook has reported from it (install the hooks: `tmuxmate install claude|codex|gemini`; see `tmuxmate agents`)"
            )));
        };
        if until.contains(&state) {
            return Ok(Reached {
                pane_id: pane.to_string(),
                state: state.name().to_string(),
                why,
                since,
                waited_ms: start.elapsed().as_millis() as u64,
            });
        }
        if state == State::Exited {
            return Err(Error::new(format!(
                "the agent in pane {pane} exited before it was {}",
                names.join(" or ")
            )));
        }
        if start.elapsed() >= timeout {
            let why = if why.is_empty() {
                String::new()
            } else {
                format!(" ({why})")
            };
            return Err(Error::new(format!(
                "the agent in pane {pane} is still {}{why} after {} s, not {}; wait longer with --timeout, or look: `tmuxmate agents`",
                state.name(),
                timeout.as_secs(),
                names.join(" or ")
            )));
        }
        if !go(start.elapsed()) {
            return Err(Error::new(format!(
                "the wait for pane {pane} was cancelled"
            )));
        }
        std::thread::sleep(EVERY.min(timeout.saturating_sub(start.elapsed())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn until_takes_a_comma_list_of_states_and_refuses_others() {
        assert_eq!(
            parse_until("done, needs-you").unwrap(),
            vec![State::Done, State::NeedsYou]
        );
        let e = parse_until("finished").unwrap_err();
        assert!(e.msg.contains("not a state"), "{}", e.msg);
        assert!(parse_until(" , ").is_err());
    }
}
