//! What one harness hook event says about its agent's state.
//!
//! Owns: the table from (harness, hook event and its fields) to a [`Signal`]: the state
//! the event proves and, for needs-you, why. The event names and fields are the ones each
//! CLI sends (docs/harnesses.md#agent-state-signals). Invariants: pure (no tmux, no
//! files); an event that proves nothing is `None`, never a guess; a reason is one short
//! printable line, whatever the hook input holds.

use serde_json::Value;

use super::machine::{Signal, State};
use crate::harness::Harness;

/// Longest reason kept, in characters: it is shown in a status line and a message.
pub const WHY_MAX: usize = 80;

/// The hook events each harness must send us for the state (besides the turn event).
pub fn events(h: Harness) -> &'static [&'static str] {
    match h {
        Harness::Claude => &[
            "PermissionRequest",
            "PostToolUse",
            "Stop",
            "StopFailure",
            "SessionEnd",
        ],
        Harness::Codex => &[
            "PermissionRequest",
            "PostToolUse",
            "PostModelRequest",
            "Stop",
            "SessionEnd",
        ],
        Harness::Gemini => &["Notification", "AfterTool", "AfterAgent", "SessionEnd"],
    }
}

/// The state `input` (one hook's stdin, parsed) proves for an agent of harness `h`.
pub fn from_hook(h: Harness, input: &Value) -> Option<Signal> {
    let ev = input["hook_event_name"].as_str()?;
    let (to, why) = match (h, ev) {
        (_, "UserPromptSubmit" | "BeforeAgent") => (State::Working, String::new()),
        (_, "PostToolUse" | "AfterTool") => (State::Working, String::new()),
        (_, "PermissionRequest") => (State::NeedsYou, permission_why(input)),
        (Harness::Gemini, "Notification") => {
            if input["notification_type"].as_str() != Some("ToolPermission") {
                return None;
            }
            (State::NeedsYou, gemini_permission_why(input))
        }
        (_, "Stop") => (State::Done, String::new()),
        (Harness::Claude, "StopFailure") => {
            // `error` is a kind (`server_error`, `rate_limit`, `unknown`); the message
            // Claude showed says what happened.
            let kind = text_of(&input["error"]).filter(|k| k != "unknown");
            let e = match (kind, text_of(&input["last_assistant_message"])) {
                (Some(k), Some(m)) => format!("{k}: {m}"),
                (k, m) => m.or(k).unwrap_or_else(|| "the turn failed".into()),
            };
            (State::NeedsYou, format!("error: {e}"))
        }
        (Harness::Codex, "PostModelRequest") => {
            let e = text_of(&input["error"])?;
            (State::NeedsYou, format!("error: {e}"))
        }
        (Harness::Gemini, "AfterAgent") => {
            // An error turn ends with this placeholder instead of a reply.
            if input["prompt_response"].as_str() == Some("[no response text]") {
                (State::NeedsYou, "error: the turn failed".into())
            } else {
                (State::Done, String::new())
            }
        }
        (_, "SessionEnd") => (State::Exited, String::new()),
        (_, "SessionStart") => match input["source"].as_str() {
            // compact/clear happen inside a running session: they prove nothing new.
            Some("compact" | "clear") => return None,
            _ => (State::Idle, String::new()),
        },
        _ => return None,
    };
    Some(Signal {
        to,
        why: one_line(&why),
        event: ev.to_string(),
    })
}

/// "permission: Bash: rm -rf build" from a PermissionRequest's tool name and input.
fn permission_why(input: &Value) -> String {
    let tool = input["tool_name"].as_str().unwrap_or("a tool");
    let ti = &input["tool_input"];
    let what = [
        "command",
        "file_path",
        "path",
        "url",
        "pattern",
        "description",
    ]
    .iter()
    .find_map(|k| text_of(&ti[*k]))
    .or_else(|| text_of(ti));
    if tool == "AskUserQuestion" {
        return "a question".into();
    }
    match what {
        Some(w) => format!("permission: {tool}: {w}"),
        None => format!("permission: {tool}"),
    }
}

fn gemini_permission_why(input: &Value) -> String {
    let d = &input["details"];
    let what = text_of(&d["command"])
        .or_else(|| text_of(&d["rootCommand"]))
        .or_else(|| text_of(&d["title"]))
        .or_else(|| text_of(&input["message"]));
    match what {
        Some(w) => format!("permission: {w}"),
        None => "permission".into(),
    }
}

/// A value as short text: a string as it is, an object or array as compact JSON, `None`
/// for null, absent or empty.
fn text_of(v: &Value) -> Option<String> {
    let s = match v {
        Value::Null => return None,
        Value::String(s) => s.clone(),
        Value::Object(m) if m.is_empty() => return None,
        other => other.to_string(),
    };
    let s = s.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// One printable line of at most [`WHY_MAX`] characters (controls and newlines become
/// spaces, runs of spaces one).
pub fn one_line(s: &str) -> String {
    let mut out = String::new();
    let mut space = false;
    for c in s.chars() {
        let c = if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
            ' '
        } else {
            c
        };
        if c == ' ' {
            if space || out.is_empty() {
                continue;
            }
            space = true;
        } else {
            space = false;
        }
        out.push(c);
    }
    let out = out.trim_end();
    if out.chars().count() <= WHY_MAX {
        return out.to_string();
    }
    let mut cut: String = out.chars().take(WHY_MAX - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sig(h: Harness, v: Value) -> Option<(State, String)> {
        from_hook(h, &v).map(|s| (s.to, s.why))
    }

    #[test]
    fn claude_events() {
        let c = Harness::Claude;
        assert_eq!(
            sig(
                c,
                json!({"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"rm -rf build\nand more","description":"x"}})
            ),
            Some((
                State::NeedsYou,
                "permission: Bash: rm -rf build and more".into()
            ))
        );
        assert_eq!(
            sig(
                c,
                json!({"hook_event_name":"StopFailure","error":"rate_limit","last_assistant_message":"API Error: 400"})
            ),
            Some((State::NeedsYou, "error: rate_limit: API Error: 400".into()))
        );
        // The real one (rig-recorded): a kind of `unknown` says nothing.
        assert_eq!(
            sig(
                c,
                serde_json::from_str(include_str!(
                    "../../tests/fixtures/hook-claude-StopFailure.json"
                ))
                .unwrap()
            ),
            Some((
                State::NeedsYou,
                "error: API Error: 400 rig forced failure".into()
            ))
        );
        assert_eq!(
            sig(
                c,
                json!({"hook_event_name":"StopFailure","last_assistant_message":"API Error: 400 bad"})
            ),
            Some((State::NeedsYou, "error: API Error: 400 bad".into()))
        );
        assert_eq!(
            sig(c, json!({"hook_event_name":"Stop"})).map(|s| s.0),
            Some(State::Done)
        );
        assert_eq!(
            sig(
                c,
                json!({"hook_event_name":"SessionEnd","reason":"prompt_input_exit"})
            )
            .map(|s| s.0),
            Some(State::Exited)
        );
        assert_eq!(
            sig(
                c,
                json!({"hook_event_name":"SessionStart","source":"clear"})
            ),
            None
        );
        // The late permission notification is no state signal.
        assert_eq!(
            sig(
                c,
                json!({"hook_event_name":"Notification","notification_type":"permission_prompt"})
            ),
            None
        );
        assert_eq!(sig(c, json!({"no":"event"})), None);
    }

    #[test]
    fn codex_events() {
        let x = Harness::Codex;
        assert_eq!(
            sig(
                x,
                json!({"hook_event_name":"PostModelRequest","error":null})
            ),
            None,
            "a model request without error proves nothing"
        );
        assert_eq!(
            sig(x, json!({"hook_event_name":"PostModelRequest","error":{"status":500,"message":"boom"}}))
                .map(|s| s.0),
            Some(State::NeedsYou)
        );
        assert_eq!(
            sig(
                x,
                json!({"hook_event_name":"PermissionRequest","tool_name":"shell","tool_input":{"command":["bash","-lc","ls"]}})
            ),
            Some((
                State::NeedsYou,
                "permission: shell: [\"bash\",\"-lc\",\"ls\"]".into()
            ))
        );
    }

    #[test]
    fn gemini_events() {
        let g = Harness::Gemini;
        assert_eq!(
            sig(
                g,
                json!({"hook_event_name":"Notification","notification_type":"ToolPermission","message":"Tool wants to run","details":{"command":"echo hi"}})
            ),
            Some((State::NeedsYou, "permission: echo hi".into()))
        );
        assert_eq!(
            sig(
                g,
                json!({"hook_event_name":"AfterAgent","prompt_response":"[no response text]"})
            )
            .map(|s| s.0),
            Some(State::NeedsYou)
        );
        assert_eq!(
            sig(
                g,
                json!({"hook_event_name":"AfterAgent","prompt_response":"done it"})
            )
            .map(|s| s.0),
            Some(State::Done)
        );
        assert_eq!(
            sig(
                g,
                json!({"hook_event_name":"Notification","notification_type":"Other"})
            ),
            None
        );
    }

    #[test]
    fn reasons_are_one_short_printable_line() {
        let long = format!("a\x1b[31m\tb\n{}", "x".repeat(200));
        let w = one_line(&long);
        assert!(w.chars().count() <= WHY_MAX);
        assert!(!w.chars().any(|c| c.is_control()), "{w:?}");
        assert!(w.ends_with('…'));
        assert_eq!(one_line("  a   b  "), "a b");
    }
}
