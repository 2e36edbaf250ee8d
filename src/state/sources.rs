//! What an agent's signals other than its hooks say about its state: Codex's OSC 7501
//! status sequences, Gemini CLI's pane title, Claude Code's session file.
//!
//! Owns: the table from (what the source shows, the record so far) to a [`Signal`]
//! (docs/harnesses.md#agent-state-signals). These sources say less than the hooks (a
//! stream's "blocked" does not say what for) but say it at once, and they see what no
//! hook fires for (a permission denied with Escape). Invariants: pure; a signal that is
//! ambiguous without the record ("ready" after a turn is done, after a prompt is a denial,
//! after an error is nothing) is decided from the record, and when the record cannot
//! decide it, nothing changes; the error a reason carries is one printable line.

use super::machine::Signal;
use super::machine::{ERROR, PERMISSION, Record, State};
use super::signal::{WHY_MAX, one_line};

fn sig(to: State, why: impl Into<String>, event: &str) -> Option<Signal> {
    Some(Signal {
        to,
        why: why.into(),
        event: event.into(),
    })
}

fn waiting_for_permission(prev: Option<&Record>) -> bool {
    prev.is_some_and(|p| p.state == State::NeedsYou && p.why.starts_with(PERMISSION))
}

/// The agent is back at its prompt, as a source that does not say how the turn ended
/// sees it: after a permission prompt it was denied (idle: the person answered it); at
/// start-up it is idle; after a working turn nothing (the turn's end is the hooks' to say:
/// Gemini's title and Claude's file look the same after a reply and after an API error);
/// after an error, or already done or idle, nothing new.
fn at_prompt(prev: Option<&Record>, event: &str) -> Option<Signal> {
    match prev.map(|p| p.state) {
        None | Some(State::Exited) | Some(State::Unknown) => sig(State::Idle, "", event),
        Some(State::NeedsYou) if waiting_for_permission(prev) => sig(State::Idle, "denied", event),
        _ => None,
    }
}

/// One OSC 7501 payload (what is between `ESC ] 7501 ;` and the terminator), as Codex
/// 0.171 sends it: `state=working:app=codex`, `state=blocked:app=codex:kind=permission`,
/// `state=done:app=codex`, `state=error:app=codex`, `state=idle:app=codex`,
/// `state=clear`; a `msg=` (base64) is read when present. Codex says `done` itself, so
/// `idle` is never a finished turn: after working it is an interrupted one (a denied
/// prompt goes blocked, working, idle), after done or an error the person typed again.
pub fn from_osc7501(prev: Option<&Record>, payload: &str) -> Option<Signal> {
    let fields: Vec<(&str, &str)> = payload
        .split([':', ';'])
        .filter_map(|f| f.split_once('=').or(Some((f, ""))))
        .collect();
    let get = |k: &str| fields.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    // A subagent's own record (`id=…`) is not the agent's state.
    if get("id").is_some() {
        return None;
    }
    let state = get("state").or_else(|| fields.first().map(|(k, _)| *k))?;
    let ev = "osc7501";
    match state {
        "working" => sig(State::Working, "", ev),
        "blocked" => {
            let why = match (get("kind"), get("msg").and_then(decode)) {
                (_, Some(m)) if !m.is_empty() => format!("{PERMISSION}: {m}"),
                (Some("permission") | None, _) => PERMISSION.to_string(),
                (Some(k), _) => one_line(&format!("blocked: {k}")),
            };
            sig(State::NeedsYou, why, ev)
        }
        "done" => sig(State::Done, "", ev),
        "error" => {
            let why = match get("msg").and_then(decode).filter(|m| !m.is_empty()) {
                Some(e) => format!("error: {e}"),
                None => ERROR.to_string(),
            };
            sig(State::NeedsYou, why, ev)
        }
        "idle" => match prev.map(|p| p.state) {
            Some(State::Working) => sig(State::Idle, "interrupted", ev),
            _ if waiting_for_permission(prev) => sig(State::Idle, "denied", ev),
            _ => sig(State::Idle, "", ev),
        },
        "clear" => sig(State::Exited, "", ev),
        _ => None,
    }
}

/// A generic error from the stream takes the words of the failed request the hook saw
/// in the same turn (`noted`: `<unix ms> <why>`, newer than the working turn's start), and
/// never those of an earlier turn's attempt that a retry made good.
pub fn with_noted_error(mut sig: Signal, noted: &str, prev: Option<&Record>) -> Signal {
    let turn_start = prev
        .filter(|p| p.state == State::Working)
        .map(|p| p.since_ms);
    if sig.to == State::NeedsYou
        && sig.why == ERROR
        && let Some(start) = turn_start
        && let Some((ms, why)) = noted.split_once(' ')
        && ms.parse::<u64>().is_ok_and(|ms| ms >= start)
        && why.starts_with("error: ")
    {
        sig.why = one_line(why).chars().take(WHY_MAX).collect();
    }
    sig
}

/// Codex ended for good (`state=clear`): the reader's work is over.
pub fn is_clear(payload: &str) -> bool {
    payload.split(':').next() == Some("state=clear") || payload.trim() == "clear"
}

/// A `msg=` value: base64 of UTF-8 text, made one short printable line.
fn decode(b64: &str) -> Option<String> {
    let bytes = crate::sys::base64::decode(b64)?;
    let text = String::from_utf8_lossy(&bytes);
    let line = one_line(&text);
    Some(line.chars().take(WHY_MAX).collect())
}

/// Gemini CLI's pane title: `◇  Ready (proj)`, `✦  Working… (proj)`,
/// `✋  Action Required (proj)`, padded with spaces.
pub fn from_gemini_title(prev: Option<&Record>, title: &str) -> Option<Signal> {
    let words = title
        .trim()
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim_start();
    let ev = "title";
    if words.starts_with("Action Required") {
        sig(State::NeedsYou, PERMISSION, ev)
    } else if words.starts_with("Working") {
        sig(State::Working, "", ev)
    } else if words.starts_with("Ready") {
        at_prompt(prev, ev)
    } else {
        None
    }
}

/// Claude Code's session file (`~/.claude/sessions/<pid>.json`): `status` busy, idle or
/// waiting (with `waitingFor`).
pub fn from_claude_session(prev: Option<&Record>, file: &serde_json::Value) -> Option<Signal> {
    let ev = "session-file";
    match file["status"].as_str()? {
        "busy" => sig(State::Working, "", ev),
        "waiting" => {
            let what = file["waitingFor"].as_str().unwrap_or("");
            if what.contains("permission") || what.is_empty() {
                sig(State::NeedsYou, PERMISSION, ev)
            } else {
                sig(State::NeedsYou, one_line(what), ev)
            }
        }
        "idle" => at_prompt(prev, ev),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(state: State, why: &str) -> Record {
        Record {
            state,
            since_ms: 1,
            why: why.into(),
            seq: 1,
            harness: "codex".into(),
            event: "E".into(),
        }
    }

    fn to(s: Option<Signal>) -> Option<(State, String)> {
        s.map(|s| (s.to, s.why))
    }

    #[test]
    fn codex_osc_states() {
        let w = rec(State::Working, "");
        assert_eq!(
            to(from_osc7501(Some(&w), "state=working")),
            Some((State::Working, "".into()))
        );
        assert_eq!(
            to(from_osc7501(Some(&w), "state=blocked:kind=permission")),
            Some((State::NeedsYou, "permission".into()))
        );
        assert_eq!(
            to(from_osc7501(Some(&w), "state=done")),
            Some((State::Done, "".into()))
        );
        // "aGk=" is "hi".
        assert_eq!(
            to(from_osc7501(Some(&w), "state=error:msg=aGk=")),
            Some((State::NeedsYou, "error: hi".into()))
        );
        assert_eq!(
            to(from_osc7501(Some(&w), "state=error")),
            Some((State::NeedsYou, "error: the turn failed".into()))
        );
        assert_eq!(
            to(from_osc7501(Some(&w), "clear")),
            Some((State::Exited, "".into()))
        );
        // A subagent's record and an unknown state say nothing about the agent.
        assert_eq!(to(from_osc7501(Some(&w), "id=a1:title=x")), None);
        assert_eq!(to(from_osc7501(Some(&w), "state=dancing")), None);
    }

    #[test]
    fn a_streamed_error_takes_the_words_of_this_turns_failed_request_only() {
        let err = || from_osc7501(None, "state=error:app=codex").unwrap();
        let mut w = rec(State::Working, "");
        w.since_ms = 1000;
        let why = |noted: &str, prev: &Record| with_noted_error(err(), noted, Some(prev)).why;
        assert_eq!(why("1500 error: high demand", &w), "error: high demand");
        // An attempt of an earlier turn, a note that is not an error, none at all.
        assert_eq!(why("999 error: high demand", &w), ERROR);
        assert_eq!(why("1500 something", &w), ERROR);
        assert_eq!(why("", &w), ERROR);
        assert_eq!(why("x error: y", &w), ERROR);
        // Only a working turn has a start to compare with.
        assert_eq!(why("1500 error: high demand", &rec(State::Idle, "")), ERROR);
        // A specific error from the stream keeps its own words.
        let own = from_osc7501(None, "state=error:msg=aGk=").unwrap();
        assert_eq!(
            with_noted_error(own, "1500 error: x", Some(&w)).why,
            "error: hi"
        );
    }

    #[test]
    fn codex_idle_is_never_a_finished_turn() {
        let ev = |p: &Record| to(from_osc7501(Some(p), "state=idle:app=codex"));
        assert_eq!(
            ev(&rec(State::Working, "")),
            Some((State::Idle, "interrupted".into()))
        );
        assert_eq!(
            ev(&rec(State::NeedsYou, "permission: Bash: rm")),
            Some((State::Idle, "denied".into()))
        );
        assert_eq!(ev(&rec(State::Done, "")), Some((State::Idle, "".into())));
        assert!(is_clear("state=clear") && !is_clear("state=done:app=codex"));
    }

    /// The real Codex 0.171's output streams (pipe-pane -O, rig-recorded), replayed.
    #[test]
    fn real_codex_streams_end_in_the_right_state() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex-osc");
        for (file, want, seen) in [
            (
                "a-approve.bin",
                (State::Done, ""),
                "working blocked working done",
            ),
            (
                "b-deny.bin",
                (State::Idle, "interrupted"),
                "idle working blocked working idle",
            ),
            (
                "c-apierror.bin",
                (State::NeedsYou, "error: the turn failed"),
                "working error",
            ),
            ("e-plain.bin", (State::Done, ""), "working done"),
            ("f-ctrlc.bin", (State::Exited, ""), "idle clear"),
        ] {
            let bytes = std::fs::read(dir.join(file)).unwrap();
            let mut scan = super::super::osc::Scanner::default();
            let mut rec: Option<Record> = None;
            let mut states = Vec::new();
            // In chunks, as a pipe delivers them.
            for chunk in bytes.chunks(97) {
                for p in scan.feed(chunk) {
                    states.push(
                        p.split(':')
                            .next()
                            .unwrap()
                            .trim_start_matches("state=")
                            .to_string(),
                    );
                    if let Some(s) = from_osc7501(rec.as_ref(), &p) {
                        let st = super::super::machine::step(rec.as_ref(), "codex", &s, false, 1);
                        if let Some(r) = st.record {
                            rec = Some(r);
                        }
                    }
                }
            }
            assert_eq!(states.join(" "), seen, "{file}");
            let r = rec.unwrap();
            assert_eq!((r.state, r.why.as_str()), want, "{file}");
        }
    }

    #[test]
    fn gemini_titles() {
        let w = rec(State::Working, "");
        let pad = |t: &str| format!("{t}{}", " ".repeat(60));
        assert_eq!(
            to(from_gemini_title(
                Some(&w),
                &pad("✋  Action Required (proj)")
            )),
            Some((State::NeedsYou, "permission".into()))
        );
        assert_eq!(
            to(from_gemini_title(None, &pad("✦  Working… (proj)"))),
            Some((State::Working, "".into()))
        );
        // Ready after working: a reply or an API error look the same; AfterAgent says.
        assert_eq!(
            to(from_gemini_title(Some(&w), &pad("◇  Ready (proj)"))),
            None
        );
        // Ready right after Action Required: denied with Escape (no hook fires).
        let p = rec(State::NeedsYou, "permission");
        assert_eq!(
            to(from_gemini_title(Some(&p), &pad("◇  Ready (proj)"))),
            Some((State::Idle, "denied".into()))
        );
        // At exit the title is emptied: nothing.
        assert_eq!(to(from_gemini_title(Some(&p), "")), None);
        assert_eq!(to(from_gemini_title(Some(&w), "bash")), None);
    }

    #[test]
    fn claude_session_file() {
        let j = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
        let w = rec(State::Working, "");
        assert_eq!(
            to(from_claude_session(
                Some(&w),
                &j(r#"{"status":"waiting","waitingFor":"permission prompt"}"#)
            )),
            Some((State::NeedsYou, "permission".into()))
        );
        // Denied with Escape: no hook fires, the file goes back to idle.
        let p = rec(State::NeedsYou, "permission: Bash: make deploy");
        assert_eq!(
            to(from_claude_session(Some(&p), &j(r#"{"status":"idle"}"#))),
            Some((State::Idle, "denied".into()))
        );
        assert_eq!(
            to(from_claude_session(Some(&p), &j(r#"{"status":"busy"}"#))),
            Some((State::Working, "".into()))
        );
        assert_eq!(to(from_claude_session(Some(&p), &j(r#"{}"#))), None);
    }
}
