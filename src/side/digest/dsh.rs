//! DeepSeek Harness session log (`~/.dsh/sessions/--<cwd>--/<id>/session.jsonl`).
//!
//! Owns: mapping one logical session-log line onto digest operations. Wire facts
//! (docs/harnesses.md#deepseek-harness-dsh; `session-persistence-jsonl` README): a header `{"type":"session"}`,
//! then events `{type, seq, time (epoch ms), data}`: `turn/start`, `step/start`,
//! `user/message`, `assistant/message` (`data.message.content` blocks, `text` blocks are
//! the reply), `tool/call` (`callId`, `name`, `arguments` as a JSON string),
//! `tool/result` (an error when `data.error` is set or a result block has `isError`),
//! `turn/end` (`reason.kind`), `compaction/end`, `todo/write` (`todos`), `goal/change`
//! (`goal.objective`), `session/title`; packed chunk rows (`text-chunks`, ...) repeat what
//! `assistant/message` says and are skipped. The `.zstd` container is decoded by the
//! reader (`fold.rs`), so this module sees plain lines either way.
//! Invariants: unknown event types and fields are ignored; user messages that the
//! harness wrote itself (`source.kind` other than a user's) are not prompts.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::json::{LBool, LList, LNum, LStr, Lenient, Snippet};
use super::model::Digest;
use super::tools::summarize_str;
use crate::sys::time::{from_number, parse_rfc3339};

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct State {}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LStr<'a>,
    #[serde(default)]
    time: Option<Value>,
    #[serde(borrow, default)]
    data: Lenient<Data<'a>>,
}

#[derive(Deserialize)]
struct Data<'a> {
    #[serde(default)]
    content: Snippet,
    #[serde(borrow, default)]
    source: Lenient<Source<'a>>,
    #[serde(borrow, default)]
    message: Lenient<Msg<'a>>,
    #[serde(borrow, default, rename = "callId")]
    call_id: LStr<'a>,
    #[serde(borrow, default)]
    name: LStr<'a>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default, rename = "isError")]
    is_error: LBool,
    #[serde(default)]
    error: Snippet,
    #[serde(default)]
    has_error: Option<Value>,
    #[serde(borrow, default)]
    reason: Lenient<Reason<'a>>,
    #[serde(borrow, default)]
    todos: LList<TodoItem<'a>>,
    #[serde(borrow, default)]
    items: LList<TodoItem<'a>>,
    #[serde(borrow, default)]
    goal: Lenient<Goal<'a>>,
    #[serde(borrow, default)]
    operation: LStr<'a>,
    #[serde(borrow, default)]
    title: LStr<'a>,
    #[serde(borrow, default)]
    model: LStr<'a>,
    #[serde(default)]
    turn: LNum,
}

#[derive(Deserialize)]
struct Source<'a> {
    #[serde(borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default, rename = "callId")]
    call_id: LStr<'a>,
    #[serde(borrow, default)]
    model: LStr<'a>,
}

#[derive(Deserialize)]
struct Msg<'a> {
    #[serde(borrow, default)]
    content: LList<Block<'a>>,
    #[serde(borrow, default)]
    source: Lenient<Source<'a>>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LStr<'a>,
    #[serde(borrow, default)]
    text: LStr<'a>,
    #[serde(default, rename = "isError")]
    is_error: LBool,
    #[serde(default)]
    content: Snippet,
}

#[derive(Deserialize)]
struct Reason<'a> {
    #[serde(borrow, default)]
    kind: LStr<'a>,
}

#[derive(Deserialize)]
struct TodoItem<'a> {
    #[serde(borrow, default)]
    content: LStr<'a>,
    #[serde(borrow, default)]
    text: LStr<'a>,
    #[serde(borrow, default)]
    status: LStr<'a>,
}

#[derive(Deserialize)]
struct Goal<'a> {
    #[serde(borrow, default)]
    objective: LStr<'a>,
    #[serde(borrow, default)]
    text: LStr<'a>,
}

fn time_of(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => from_number(n.as_f64()?),
        Value::String(s) => parse_rfc3339(s),
        _ => None,
    }
}

/// Fold one session-log line: one function per event type; unknown types are ignored.
pub fn fold_line(_st: &mut State, d: &mut Digest, line: &[u8]) -> Result<(), serde_json::Error> {
    let l: Line = serde_json::from_slice(line)?;
    let t = time_of(l.time.as_ref());
    let ty = l.ty.as_deref().unwrap_or("");
    let Some(data) = l.data.0 else {
        if ty == "turn/start" {
            d.begin_turn(None, t);
        }
        return Ok(());
    };
    match ty {
        "turn/start" => d.begin_turn(None, t),
        "step/start" => d.step(t),
        "user/message" => user_message(d, &data, t),
        "assistant/message" => assistant_message(d, &data, t),
        "tool/call" => tool_call(d, &data, t),
        "tool/result" => match result_error(&data) {
            Some(text) => d.tool_error(result_call(&data), data.name.as_deref(), &text, t),
            None => d.touch(t),
        },
        "turn/end" => d.end_turn(end_kind(&data), t),
        "compaction/end" if data.error.0.is_empty() => d.compaction(t),
        "todo/write" => d.set_todos(todos(&data)),
        "goal/change" => {
            if let Some(g) = goal(&data) {
                d.set_goal(&g, "goal");
            }
        }
        "session/title" => {
            if let Some(s) = data.title.as_deref() {
                d.set_goal(s, "title");
            }
        }
        "request/context" | "model/selection" => {
            if let Some(m) = data.model.as_deref() {
                d.set_model(m);
            }
        }
        _ => {}
    }
    let _ = data.turn;
    Ok(())
}

/// A user message the harness wrote itself (a `source.kind` other than a user's) is not a
/// prompt; a message without a source is.
fn from_user(data: &Data) -> bool {
    let kind = data.source.0.as_ref().and_then(|s| s.kind.as_deref());
    kind.is_none_or(|k| matches!(k, "user" | "human" | "prompt" | "input"))
}

/// A user message's text: `data.content`, else the text of `data.message`'s blocks.
fn user_text(data: &Data) -> String {
    if !data.content.0.is_empty() {
        return data.content.0.clone();
    }
    data.message
        .0
        .as_ref()
        .map(|m| {
            m.content
                .0
                .iter()
                .filter_map(|b| b.text.as_deref())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// A prompt opens the turn's prompt once; later user input in an open turn only counts
/// as activity.
fn user_message(d: &mut Digest, data: &Data, t: Option<u64>) {
    if !from_user(data) || (d.is_open() && d.has_prompt()) {
        d.touch(t);
    } else {
        d.prompt(&user_text(data), t);
    }
}

/// The reply is the message's `text` blocks (reasoning blocks are not); its source names
/// the model.
fn assistant_message(d: &mut Digest, data: &Data, t: Option<u64>) {
    if let Some(m) = data.message.0.as_ref() {
        let text: Vec<&str> = m
            .content
            .0
            .iter()
            .filter(|b| b.ty.is("text"))
            .filter_map(|b| b.text.as_deref())
            .collect();
        d.assistant_text(&text.join("\n"), t);
        if let Some(model) = m.source.0.as_ref().and_then(|s| s.model.as_deref()) {
            d.set_model(model);
        }
    }
    d.touch(t);
}

/// `arguments` is a JSON string (summarized from it), or, leniently, a JSON value.
fn tool_call(d: &mut Digest, data: &Data, t: Option<u64>) {
    let name = data.name.as_deref().unwrap_or("tool");
    let summary = match &data.arguments {
        Some(Value::String(s)) => summarize_str(name, s).0,
        Some(v) => super::tools::summarize(name, v),
        None => String::new(),
    };
    d.tool_call(name, &summary, data.call_id.as_deref(), t);
}

/// The call a result answers: `data.callId`, else its message's source.
fn result_call<'d>(data: &'d Data) -> Option<&'d str> {
    data.call_id.as_deref().or_else(|| {
        data.message
            .0
            .as_ref()
            .and_then(|m| m.source.0.as_ref())
            .and_then(|s| s.call_id.as_deref())
    })
}

/// A failed tool result's text, `None` for a success. It failed when `isError`, an
/// `isError` result block, `data.error` or `has_error: true` says so; the text is
/// `data.error`, else the failed block's content (or text), else `data.content`.
fn result_error(data: &Data) -> Option<String> {
    let block_error = data
        .message
        .0
        .as_ref()
        .and_then(|m| m.content.0.iter().find(|b| b.is_error.0));
    let error = data.is_error.0
        || block_error.is_some()
        || !data.error.0.is_empty()
        || data
            .has_error
            .as_ref()
            .is_some_and(|v| v.as_bool() == Some(true));
    if !error {
        return None;
    }
    Some(if !data.error.0.is_empty() {
        data.error.0.clone()
    } else if let Some(b) = block_error {
        if b.content.0.is_empty() {
            b.text.as_deref().unwrap_or("").to_string()
        } else {
            b.content.0.clone()
        }
    } else {
        data.content.0.clone()
    })
}

/// How a turn ended (`reason.kind`), `completed` when it does not say.
fn end_kind<'d>(data: &'d Data) -> &'d str {
    data.reason
        .0
        .as_ref()
        .and_then(|r| r.kind.as_deref())
        .unwrap_or("completed")
}

/// The whole checklist (`todos`, else `items`): (text, status), `pending` by default.
fn todos<'d>(data: &'d Data) -> impl Iterator<Item = (&'d str, &'d str)> {
    let list = if data.todos.0.is_empty() {
        &data.items.0
    } else {
        &data.todos.0
    };
    list.iter().filter_map(|i| {
        Some((
            i.content.as_deref().or(i.text.as_deref())?,
            i.status.as_deref().unwrap_or("pending"),
        ))
    })
}

/// The goal's objective, marked `(completed)` when the change completes it.
fn goal(data: &Data) -> Option<String> {
    let g = data
        .goal
        .0
        .as_ref()
        .and_then(|g| g.objective.as_deref().or(g.text.as_deref()))?;
    let done = matches!(data.operation.as_deref(), Some("complete" | "completed"));
    Some(if done {
        format!("(completed) {g}")
    } else {
        g.to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_a_dsh_turn() {
        let mut st = State::default();
        let mut d = Digest::default();
        for l in [
            r#"{"type":"session","version":0,"id":"s1","cwd":"/w","createdAt":1}"#,
            r#"{"type":"turn/start","seq":0,"time":1795986154000,"data":{"turn":1}}"#,
            r#"{"type":"user/message","seq":1,"time":1795986154001,"data":{"role":"user","content":[{"type":"text","text":"fix the login bug"}]}}"#,
            r#"{"type":"step/start","seq":2,"time":1795986154002,"data":{"turn":1,"step":0}}"#,
            r#"{"type":"text-chunks","seq0":3,"time0":1,"dt":[0,1,2],"text":["a","b","c"]}"#,
            r#"{"type":"assistant/message","seq":6,"time":1795986154003,"data":{"message":{"content":[{"type":"reasoning","text":"hmm"},{"type":"text","text":"Looking."}],"source":{"kind":"model","model":"deepseek-v4"}}}}"#,
            r#"{"type":"tool/call","seq":7,"time":1795986154004,"data":{"callId":"c1","name":"bash","arguments":"{\"command\":\"npm test\"}"}}"#,
            r#"{"type":"tool/result","seq":8,"time":1795986154005,"data":{"message":{"source":{"callId":"c1"},"content":[{"type":"tool-result","isError":true,"content":"3 failing"}]}}}"#,
            r#"{"type":"todo/write","seq":9,"time":1795986154006,"data":{"todos":[{"content":"a","status":"completed"},{"content":"b","status":"in_progress"}]}}"#,
            r#"{"type":"goal/change","seq":10,"time":1795986154007,"data":{"operation":"set","goal":{"objective":"Login works"}}}"#,
            r#"{"type":"turn/end","seq":11,"time":1795986154008,"data":{"turn":1,"reason":{"kind":"aborted"}}}"#,
        ] {
            fold_line(&mut st, &mut d, l.as_bytes()).unwrap();
        }
        assert_eq!(d.turns.len(), 1);
        assert_eq!(d.turns[0].outcome, "aborted");
        assert_eq!(d.turns[0].prompt.as_deref(), Some("fix the login bug"));
        assert_eq!(d.turns[0].result.as_deref(), Some("Looking."));
        assert_eq!(
            d.last_error.as_ref().unwrap().tool.as_deref(),
            Some("bash(npm test)")
        );
        assert_eq!(d.goal.as_deref(), Some("Login works"));
        assert_eq!(d.model.as_deref(), Some("deepseek-v4"));
        assert_eq!(d.todo_progress(), (1, 2));
    }

    fn data(json: &str) -> Data<'_> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn harness_written_user_messages_are_not_prompts() {
        assert!(from_user(&data(r#"{"content":"hi"}"#)));
        assert!(from_user(&data(r#"{"source":{"kind":"human"}}"#)));
        assert!(!from_user(&data(r#"{"source":{"kind":"system"}}"#)));
        assert_eq!(user_text(&data(r#"{"content":"hi"}"#)), "hi");
        assert_eq!(
            user_text(&data(
                r#"{"message":{"content":[{"type":"text","text":"a"},{"text":"b"}]}}"#
            )),
            "a\nb"
        );
    }

    #[test]
    fn a_tool_result_fails_by_any_of_its_marks() {
        assert_eq!(result_error(&data(r#"{"content":"ok"}"#)), None);
        assert_eq!(
            result_error(&data(r#"{"isError":true,"content":"c"}"#)).as_deref(),
            Some("c")
        );
        assert_eq!(
            result_error(&data(r#"{"error":"e","content":"c"}"#)).as_deref(),
            Some("e")
        );
        assert_eq!(
            result_error(&data(r#"{"has_error":true}"#)).as_deref(),
            Some("")
        );
        let block =
            r#"{"message":{"source":{"callId":"c9"},"content":[{"isError":true,"text":"t"}]}}"#;
        assert_eq!(result_error(&data(block)).as_deref(), Some("t"));
        assert_eq!(result_call(&data(block)), Some("c9"));
        assert_eq!(result_call(&data(r#"{"callId":"c1"}"#)), Some("c1"));
    }

    #[test]
    fn goals_todos_and_turn_ends_have_their_defaults() {
        assert_eq!(end_kind(&data("{}")), "completed");
        assert_eq!(
            end_kind(&data(r#"{"reason":{"kind":"aborted"}}"#)),
            "aborted"
        );
        let g = r#"{"operation":"complete","goal":{"text":"ship"}}"#;
        assert_eq!(goal(&data(g)).as_deref(), Some("(completed) ship"));
        assert_eq!(goal(&data(r#"{"goal":{}}"#)), None);
        let d = data(
            r#"{"items":[{"text":"a"},{"status":"done"},{"content":"b","status":"completed"}]}"#,
        );
        assert_eq!(
            todos(&d).collect::<Vec<_>>(),
            [("a", "pending"), ("b", "completed")]
        );
    }
}
