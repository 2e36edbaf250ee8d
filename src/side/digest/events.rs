//! The generic "events" JSONL: a small format any other harness can write.
//!
//! One JSON object per line; `type` says what happened; `time` is optional everywhere
//! (RFC 3339 string, or epoch milliseconds, or epoch seconds). Unknown types and fields
//! are ignored, so a writer may add its own.
//!
//! | `type`           | fields                                            | meaning                              |
//! |------------------|---------------------------------------------------|--------------------------------------|
//! | `turn_start`     | `prompt`?                                         | a turn begins (ends any open turn)   |
//! | `prompt`         | `text`                                            | a user prompt (opens a turn if none) |
//! | `step`           |                                                   | one model response began             |
//! | `assistant_text` | `text`                                            | the model's latest words             |
//! | `tool_call`      | `name`, `summary`?, `id`?                         | a tool was called                    |
//! | `tool_error`     | `text`, `id`? (the call's), `name`?               | a tool call failed                   |
//! | `error`          | `text`                                            | any other failure                    |
//! | `todos`          | `items: [{text, status}]` (`pending`/`in_progress`/`completed`) | the whole checklist |
//! | `goal`           | `text`                                            | the session's goal                   |
//! | `title`          | `text`                                            | the session's title                  |
//! | `model`          | `name`                                            | the model in use                     |
//! | `compaction`     |                                                   | the context was compacted            |
//! | `turn_end`       | `outcome`? (`completed` default, `aborted`, `interrupted`) | the open turn ended         |
//!
//! Example: `{"type":"tool_call","name":"bash","summary":"cargo test","time":"2026-11-29T14:02:00Z"}`

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::json::{LList, LStr};
use super::model::Digest;
use crate::sys::time::from_value;

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct State {}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LStr<'a>,
    #[serde(default)]
    time: Option<Value>,
    #[serde(borrow, default)]
    prompt: LStr<'a>,
    #[serde(borrow, default)]
    text: LStr<'a>,
    #[serde(borrow, default)]
    name: LStr<'a>,
    #[serde(borrow, default)]
    summary: LStr<'a>,
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(borrow, default)]
    outcome: LStr<'a>,
    #[serde(borrow, default)]
    items: LList<Item<'a>>,
}

#[derive(Deserialize)]
struct Item<'a> {
    #[serde(borrow, default)]
    text: LStr<'a>,
    #[serde(borrow, default)]
    status: LStr<'a>,
}

/// The `type` values this format defines (format detection uses them).
pub const TYPES: &[&str] = &[
    "turn_start",
    "prompt",
    "step",
    "assistant_text",
    "tool_call",
    "tool_error",
    "error",
    "todos",
    "goal",
    "title",
    "model",
    "compaction",
    "turn_end",
];

pub fn fold_line(_st: &mut State, d: &mut Digest, line: &[u8]) -> Result<(), serde_json::Error> {
    let l: Line = serde_json::from_slice(line)?;
    let t = l.time.as_ref().and_then(from_value);
    let text = l.text.as_deref().unwrap_or("");
    match l.ty.as_deref().unwrap_or("") {
        "turn_start" => d.begin_turn(l.prompt.as_deref().or(l.text.as_deref()), t),
        "prompt" => {
            if d.is_open() && !d.has_prompt() {
                d.prompt(text, t);
            } else {
                d.begin_turn(Some(text), t);
            }
        }
        "step" => d.step(t),
        "assistant_text" => d.assistant_text(text, t),
        "tool_call" => d.tool_call(
            l.name.as_deref().unwrap_or("tool"),
            l.summary.as_deref().unwrap_or(""),
            l.id.as_deref(),
            t,
        ),
        "tool_error" => d.tool_error(l.id.as_deref(), l.name.as_deref(), text, t),
        "error" => d.error(text, t),
        "todos" => {
            d.set_todos(l.items.0.iter().filter_map(|i| {
                Some((i.text.as_deref()?, i.status.as_deref().unwrap_or("pending")))
            }))
        }
        "goal" => d.set_goal(text, "goal"),
        "title" => d.set_goal(text, "title"),
        "model" => d.set_model(l.name.as_deref().or(l.text.as_deref()).unwrap_or("")),
        "compaction" => d.compaction(t),
        "turn_end" => d.end_turn(l.outcome.as_deref().unwrap_or("completed"), t),
        _ => {}
    }
    Ok(())
}
