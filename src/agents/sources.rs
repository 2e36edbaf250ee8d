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

use super::machine::{PERMISSION, Record, State};
use super::signal::{Signal, WHY_MAX, one_line};

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

/// The agent is back at its prompt: after a turn that was working it is done; after a
/// permission prompt it was denied (idle: the person answered it); at start-up it is
/// idle; after an error, or already done or idle, it says nothing new.
fn at_prompt(prev: Option<&Record>, event: &str) -> Option<Signal> {
    match prev.map(|p| p.state) {
        None | Some(State::Exited) | Some(State::Unknown) => sig(State::Idle, "", event),
        Some(State::Working) => sig(State::Done, "", event),
        Some(State::NeedsYou) if waiting_for_permission(prev) => sig(State::Idle, "denied", event),
        _ => None,
    }
}

/// One OSC 7501 payload (what is between `ESC ] 7501 ;` and the terminator), as Codex
/// sends it: `state=working`, `state=blocked:kind=permission`, `state=done`,
/// `state=error[:msg=BASE64]`, `state=idle`, `clear`.
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
            let e = get("msg")
                .and_then(decode)
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "the turn failed".into());
            sig(State::NeedsYou, format!("error: {e}"), ev)
        }
        "idle" => at_prompt(prev, ev),
        "clear" => sig(State::Exited, "", ev),
        _ => None,
    }
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
#[allow(dead_code)] // wired into the digest follower next
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
    fn back_at_the_prompt_means_what_came_before_says() {
        let ev = |p: &Record| to(from_osc7501(Some(p), "state=idle"));
        assert_eq!(ev(&rec(State::Working, "")), Some((State::Done, "".into())));
        assert_eq!(
            ev(&rec(State::NeedsYou, "permission: Bash: rm")),
            Some((State::Idle, "denied".into()))
        );
        // An error stays until something new happens; done stays done (unseen).
        assert_eq!(ev(&rec(State::NeedsYou, "error: 500")), None);
        assert_eq!(ev(&rec(State::Done, "")), None);
        assert_eq!(
            to(from_osc7501(None, "state=idle")),
            Some((State::Idle, "".into()))
        );
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
        assert_eq!(
            to(from_gemini_title(Some(&w), &pad("◇  Ready (proj)"))),
            Some((State::Done, "".into()))
        );
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
