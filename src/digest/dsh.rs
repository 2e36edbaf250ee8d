//! DeepSeek Harness session log (`~/.dsh/sessions/--<cwd>--/<id>/session.jsonl`).
//!
//! Owns: mapping one logical session-log line onto digest operations. Wire facts
//! (harnesses.md 4; `session-persistence-jsonl` README): a header `{"type":"session"}`,
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
use super::time::{from_number, parse_rfc3339};
use super::tools::summarize_str;

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
        "user/message" => {
            let kind = data.source.0.as_ref().and_then(|s| s.kind.as_deref());
            if kind.is_none_or(|k| matches!(k, "user" | "human" | "prompt" | "input")) {
                let text = if data.content.0.is_empty() {
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
                } else {
                    data.content.0.clone()
                };
                if d.is_open() && d.has_prompt() {
                    d.touch(t);
                } else {
                    d.prompt(&text, t);
                }
            } else {
                d.touch(t);
            }
        }
        "assistant/message" => {
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
        "tool/call" => {
            let name = data.name.as_deref().unwrap_or("tool");
            let summary = match &data.arguments {
                Some(Value::String(s)) => summarize_str(name, s).0,
                Some(v) => super::tools::summarize(name, v),
                None => String::new(),
            };
            d.tool_call(name, &summary, data.call_id.as_deref(), t);
        }
        "tool/result" => {
            let msg = data.message.0.as_ref();
            let call = data.call_id.as_deref().or_else(|| {
                msg.and_then(|m| m.source.0.as_ref())
                    .and_then(|s| s.call_id.as_deref())
            });
            let block_error = msg.and_then(|m| m.content.0.iter().find(|b| b.is_error.0));
            let error = data.is_error.0
                || block_error.is_some()
                || !data.error.0.is_empty()
                || data
                    .has_error
                    .as_ref()
                    .is_some_and(|v| v.as_bool() == Some(true));
            if error {
                let text = if !data.error.0.is_empty() {
                    data.error.0.clone()
                } else if let Some(b) = block_error {
                    if b.content.0.is_empty() {
                        b.text.as_deref().unwrap_or("").to_string()
                    } else {
                        b.content.0.clone()
                    }
                } else {
                    data.content.0.clone()
                };
                d.tool_error(call, data.name.as_deref(), &text, t);
            } else {
                d.touch(t);
            }
        }
        "turn/end" => {
            let kind = data
                .reason
                .0
                .as_ref()
                .and_then(|r| r.kind.as_deref())
                .unwrap_or("completed");
            d.end_turn(kind, t);
        }
        "compaction/end" if data.error.0.is_empty() => d.compaction(t),
        "todo/write" => {
            let list = if data.todos.0.is_empty() {
                &data.items.0
            } else {
                &data.todos.0
            };
            d.set_todos(list.iter().filter_map(|i| {
                Some((
                    i.content.as_deref().or(i.text.as_deref())?,
                    i.status.as_deref().unwrap_or("pending"),
                ))
            }));
        }
        "goal/change" => {
            let g = data
                .goal
                .0
                .as_ref()
                .and_then(|g| g.objective.as_deref().or(g.text.as_deref()));
            if let Some(g) = g {
                let done = matches!(data.operation.as_deref(), Some("complete" | "completed"));
                let text = if done {
                    format!("(completed) {g}")
                } else {
                    g.to_string()
                };
                d.set_goal(&text, "goal");
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
}
