//! Claude Code transcript JSONL (`~/.claude/projects/<project>/<session>.jsonl`).
//!
//! Owns: mapping one transcript line onto digest operations. The wire facts it relies on
//! (docs/harnesses.md#claude-code-transcript): a `user` line is a human prompt (string or text blocks) or
//! carries `tool_result` blocks; an `assistant` line holds one content block, and one API
//! response spans several lines sharing `message.id` (one step per distinct id); a turn
//! ends at `system/turn_duration`, or, for versions without it, at an assistant line
//! whose `stop_reason` is terminal and that has no `tool_use`; `system/compact_boundary`
//! marks a compaction; todos come from `TodoWrite` (whole list) or `TaskCreate` /
//! `TaskUpdate` pairs (the new task's id arrives in the result).
//! Invariants: injected (`isMeta`), sidechain and compaction-summary lines are not
//! prompts; unknown line types, block types and fields are ignored; a field of an
//! unexpected type is treated as absent.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::json::{LBool, LStr, Lenient, Snippet};
use super::model::Digest;
use super::tools::summarize;
use crate::sys::time::parse_rfc3339;

const PENDING: usize = 64;

/// What the parser remembers between lines (serialized in the follower's cache).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct State {
    last_message_id: Option<String>,
    /// Task tool calls waiting for their result.
    pending: VecDeque<Pending>,
    /// A slash command seen before the turn it starts.
    pending_command: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Pending {
    call: String,
    create: Option<String>,
    update: Option<(String, Option<String>, Option<String>)>,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LStr<'a>,
    #[serde(borrow, default)]
    subtype: LStr<'a>,
    #[serde(borrow, default)]
    timestamp: LStr<'a>,
    #[serde(borrow, default)]
    message: Lenient<Message<'a>>,
    #[serde(rename = "isMeta", default)]
    is_meta: LBool,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: LBool,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: LBool,
    #[serde(rename = "isApiErrorMessage", default)]
    is_api_error: LBool,
    #[serde(rename = "interruptedMessageId", borrow, default)]
    interrupted: LStr<'a>,
    #[serde(rename = "toolUseResult", borrow, default)]
    tool_use_result: Lenient<ToolUseResult<'a>>,
    #[serde(borrow, default)]
    summary: LStr<'a>,
    #[serde(rename = "customTitle", borrow, default)]
    custom_title: LStr<'a>,
    #[serde(rename = "aiTitle", borrow, default)]
    ai_title: LStr<'a>,
    #[serde(borrow, default)]
    title: LStr<'a>,
    #[serde(default)]
    content: Snippet,
    #[serde(borrow, default)]
    level: LStr<'a>,
    /// Older Claude Code versions recorded each response's cost.
    #[serde(rename = "costUSD", default)]
    cost_usd: Option<Value>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(borrow, default)]
    model: LStr<'a>,
    #[serde(borrow, default)]
    content: Content<'a>,
    #[serde(borrow, default)]
    stop_reason: LStr<'a>,
    #[serde(default)]
    usage: Option<Value>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LStr<'a>,
    #[serde(borrow, default)]
    text: LStr<'a>,
    #[serde(borrow, default)]
    name: LStr<'a>,
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(default)]
    input: Option<Value>,
    #[serde(borrow, default)]
    tool_use_id: LStr<'a>,
    #[serde(default)]
    content: Snippet,
    #[serde(default)]
    is_error: LBool,
}

#[derive(Deserialize)]
struct ToolUseResult<'a> {
    #[serde(borrow, default)]
    task: Lenient<TaskRef<'a>>,
}

#[derive(Deserialize)]
struct TaskRef<'a> {
    #[serde(borrow, default)]
    id: LStr<'a>,
}

/// `message.content`: a string or a list of blocks.
#[derive(Default)]
enum Content<'a> {
    #[default]
    None,
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a list of blocks")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some(Lenient(b)) = seq.next_element::<Lenient<Block<'a>>>()? {
                    v.extend(b);
                }
                Ok(Content::Blocks(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map
                    .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Content::None)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// Text between `<tag>` and `</tag>`, if present.
fn tag<'s>(s: &'s str, name: &str) -> Option<&'s str> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let a = s.find(&open)? + open.len();
    let b = s[a..].find(&close)? + a;
    Some(s[a..b].trim())
}

/// `Task #12 created successfully` → `12`.
fn task_number(s: &str) -> Option<String> {
    let i = s.find('#')?;
    let n: String = s[i + 1..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    (!n.is_empty()).then_some(n)
}

fn str_field<'v>(v: &'v Value, keys: &[&str]) -> Option<&'v str> {
    keys.iter().find_map(|k| v.get(k).and_then(Value::as_str))
}

/// A human prompt, a slash command, or harness scaffolding.
fn user_text(st: &mut State, d: &mut Digest, text: &str, t: Option<u64>) {
    let s = text.trim_start();
    if s.is_empty() {
        return;
    }
    if s.starts_with("[Request interrupted by user") {
        d.mark_interrupted(t);
        return;
    }
    if let Some(cmd) = tag(s, "command-name") {
        // A slash command: it names the turn it starts, if the model answers it.
        let args = tag(s, "command-args").unwrap_or("");
        st.pending_command = Some(format!("{cmd} {args}").trim().to_string());
        d.touch(t);
        return;
    }
    if s.starts_with("<local-command")
        || s.starts_with("<command-message>")
        || s.starts_with("<bash-")
        || s.starts_with("Caveat: ")
        || s.starts_with("This session is being continued from a previous conversation")
    {
        d.touch(t);
        return;
    }
    st.pending_command = None;
    // A turn opened by a marker but not yet answered takes this prompt; a turn the model
    // already worked in (a Stop hook's continuation) is over, and this starts the next.
    let fresh = d
        .open_turn
        .as_ref()
        .is_some_and(|o| o.prompt.is_none() && o.steps == 0 && o.tool_count == 0);
    if fresh {
        d.prompt(text, t);
    } else {
        d.begin_turn(Some(text), t);
    }
}

fn tool_use(st: &mut State, d: &mut Digest, b: &Block, t: Option<u64>) {
    let name = b.name.as_deref().unwrap_or("tool");
    let null = Value::Null;
    let input = b.input.as_ref().unwrap_or(&null);
    d.tool_call(name, &summarize(name, input), b.id.as_deref(), t);
    match name {
        "TodoWrite" => {
            if let Some(items) = input.get("todos").and_then(Value::as_array) {
                d.set_todos(items.iter().filter_map(|i| {
                    Some((
                        str_field(i, &["content", "subject", "text"])?,
                        str_field(i, &["status"]).unwrap_or("pending"),
                    ))
                }));
            }
        }
        "TaskCreate" => {
            if let Some(subject) = str_field(input, &["subject", "title", "description"]) {
                d.task_create(subject, None);
                if let Some(id) = b.id.as_deref() {
                    push_pending(st, id, Some(subject.to_string()), None);
                }
            }
        }
        "TaskUpdate" => {
            if let (Some(task), Some(id)) = (
                str_field(input, &["taskId", "id", "task_id"]),
                b.id.as_deref(),
            ) {
                let status = str_field(input, &["status"]).map(str::to_string);
                let subject = str_field(input, &["subject"]).map(str::to_string);
                push_pending(st, id, None, Some((task.to_string(), status, subject)));
            }
        }
        _ => {}
    }
}

fn push_pending(
    st: &mut State,
    call: &str,
    create: Option<String>,
    update: Option<(String, Option<String>, Option<String>)>,
) {
    st.pending.push_back(Pending {
        call: call.to_string(),
        create,
        update,
    });
    while st.pending.len() > PENDING {
        st.pending.pop_front();
    }
}

fn tool_result(
    st: &mut State,
    d: &mut Digest,
    b: &Block,
    tur: Option<&ToolUseResult>,
    t: Option<u64>,
) {
    let call = b.tool_use_id.as_deref();
    let pending = call.and_then(|c| {
        let i = st.pending.iter().position(|p| p.call == c)?;
        st.pending.remove(i)
    });
    if b.is_error.0 {
        d.tool_error(call, None, &b.content.0, t);
        return;
    }
    d.touch(t);
    let Some(p) = pending else { return };
    if let Some(subject) = p.create {
        let id = tur
            .and_then(|r| r.task.0.as_ref())
            .and_then(|r| r.id.as_deref().map(str::to_string))
            .or_else(|| task_number(&b.content.0));
        if let Some(id) = id {
            d.task_id(&subject, &id);
        }
    }
    if let Some((task, status, subject)) = p.update {
        d.task_update(&task, status.as_deref(), subject.as_deref());
    }
}

const TERMINAL: &[&str] = &["end_turn", "stop_sequence", "max_tokens", "refusal"];

/// Fold one complete line. `Err` when the line is not JSON (the caller counts it).
pub fn fold_line(st: &mut State, d: &mut Digest, line: &[u8]) -> Result<(), serde_json::Error> {
    let l: Line = serde_json::from_slice(line)?;
    let t = l.timestamp.as_deref().and_then(parse_rfc3339);
    match l.ty.as_deref().unwrap_or("") {
        "user" => user_line(st, d, l, t),
        "assistant" if !l.is_sidechain.0 => {
            if let Some(m) = l.message.0 {
                let first = m.id.as_deref() != st.last_message_id.as_deref();
                assistant_message(st, d, &m, l.is_api_error.0, t);
                if let Some(u) = usage(m.usage.as_ref(), l.cost_usd.as_ref(), first) {
                    d.usage(u);
                }
            }
        }
        "system" => match l.subtype.as_deref().unwrap_or("") {
            "turn_duration" => d.end_turn("completed", t),
            "compact_boundary" => d.compaction(t),
            "api_error" => d.error(&l.content.0, t),
            _ if l.level.is("error") => d.error(&l.content.0, t),
            _ => d.touch(t),
        },
        "summary" => {
            if let Some(s) = l.summary.as_deref() {
                d.set_goal(s, "title");
            }
        }
        "custom-title" | "ai-title" => {
            if let Some(s) = l
                .custom_title
                .as_deref()
                .or(l.ai_title.as_deref())
                .or(l.title.as_deref())
            {
                d.set_goal(s, "title");
            }
        }
        _ => {}
    }
    Ok(())
}

/// A `user` line: a prompt (text, or text blocks), or the results of tool calls.
/// Sidechain lines are skipped; injected and compaction-summary lines are not prompts.
fn user_line(st: &mut State, d: &mut Digest, l: Line, t: Option<u64>) {
    if l.is_sidechain.0 {
        return;
    }
    if l.interrupted.0.is_some() {
        d.mark_interrupted(t);
    }
    let Some(m) = l.message.0 else {
        return;
    };
    let scaffolding = l.is_meta.0 || l.is_compact_summary.0;
    match m.content {
        Content::Text(s) if !scaffolding => user_text(st, d, &s, t),
        Content::Blocks(blocks) => {
            let mut results = false;
            for b in blocks.iter().filter(|b| b.ty.is("tool_result")) {
                results = true;
                tool_result(st, d, b, l.tool_use_result.0.as_ref(), t);
            }
            let prompt = block_text(&blocks);
            if results {
                if is_interrupt(&prompt) {
                    d.mark_interrupted(t);
                }
            } else if !scaffolding {
                user_text(st, d, &prompt, t);
            }
        }
        _ => d.touch(t),
    }
}

/// The text blocks of a message, one per line.
fn block_text(blocks: &[Block]) -> String {
    let text: Vec<&str> = blocks
        .iter()
        .filter(|b| b.ty.is("text"))
        .filter_map(|b| b.text.as_deref())
        .collect();
    text.join("\n")
}

/// The notice Claude writes when the user interrupts a turn.
fn is_interrupt(text: &str) -> bool {
    text.trim_start()
        .starts_with("[Request interrupted by user")
}

/// One `assistant` line (one content block of an API response): a step per distinct
/// `message.id`, its text or tool use, and the end of the turn for a terminal
/// `stop_reason` without tool use (versions without `turn_duration`).
fn assistant_message(st: &mut State, d: &mut Digest, m: &Message, api_error: bool, t: Option<u64>) {
    if !d.is_open() {
        // A reply without a prompt line: a slash command's turn, or a turn that a
        // Stop hook continued.
        let p = st.pending_command.take();
        d.begin_turn(p.as_deref(), t);
    }
    let id = m.id.as_deref();
    if id.is_none() || id != st.last_message_id.as_deref() {
        d.step(t);
        st.last_message_id = id.map(str::to_string);
    }
    if let Some(model) = m.model.as_deref() {
        d.set_model(model);
    }
    let mut tools = false;
    if let Content::Blocks(blocks) = &m.content {
        for b in blocks {
            match b.ty.as_deref() {
                Some("text") => {
                    let text = b.text.as_deref().unwrap_or("");
                    if api_error {
                        d.error(text, t);
                    } else {
                        d.assistant_text(text, t);
                    }
                }
                Some("tool_use" | "server_tool_use") => {
                    tools = true;
                    tool_use(st, d, b, t);
                }
                _ => d.touch(t),
            }
        }
    }
    if ends_turn(m.stop_reason.as_deref(), tools) {
        d.end_turn("completed", t);
    }
}

/// A response's `usage` (its lines repeat it: the cost counts once, on its first line)
/// as the context it filled: input, cache writes and reads, and its output.
fn usage(u: Option<&Value>, cost: Option<&Value>, first: bool) -> Option<super::model::Usage> {
    let n = |k: &str| u.and_then(|u| u.get(k)).and_then(Value::as_u64);
    let parts = [
        n("input_tokens"),
        n("cache_creation_input_tokens"),
        n("cache_read_input_tokens"),
        n("output_tokens"),
    ];
    let context = parts
        .iter()
        .any(Option::is_some)
        .then(|| parts.iter().flatten().sum());
    let cost_usd = cost.and_then(Value::as_f64).filter(|_| first);
    (context.is_some() || cost_usd.is_some()).then_some(super::model::Usage {
        context_tokens: context,
        cost_usd,
        ..Default::default()
    })
}

/// A terminal `stop_reason` on a line without tool use ends the turn.
fn ends_turn(stop_reason: Option<&str>, tools: bool) -> bool {
    !tools && stop_reason.is_some_and(|r| TERMINAL.contains(&r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(lines: &[&str]) -> (State, Digest) {
        let mut st = State::default();
        let mut d = Digest::default();
        for l in lines {
            fold_line(&mut st, &mut d, l.as_bytes()).unwrap();
        }
        (st, d)
    }

    #[test]
    fn task_tools_pair_by_result() {
        let (_, d) = fold(&[
            r#"{"type":"user","message":{"role":"user","content":"plan it"}}"#,
            r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"TaskCreate","input":{"subject":"Recon"}}]}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"Task #1 created successfully: Recon"}]},"toolUseResult":{"task":{"id":"1","subject":"Recon"}}}"#,
            r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"t2","name":"TaskCreate","input":{"subject":"Ship"}}]}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"Task #2 created successfully: Ship"}]}}"#,
            r#"{"type":"assistant","message":{"id":"m3","content":[{"type":"tool_use","id":"t3","name":"TaskUpdate","input":{"taskId":"1","status":"completed"}}]}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t3","content":"Updated"}]}}"#,
            r#"{"type":"assistant","message":{"id":"m4","content":[{"type":"tool_use","id":"t4","name":"TaskUpdate","input":{"taskId":"2","status":"completed"}}]}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t4","content":"no such task","is_error":true}]}}"#,
        ]);
        assert_eq!(d.todos.len(), 2);
        assert_eq!(
            (d.todos[0].status.as_str(), d.todos[1].status.as_str()),
            ("completed", "pending")
        );
        assert_eq!(d.todos[1].id.as_deref(), Some("2"));
        assert_eq!(d.counts.errors, 1);
        assert_eq!(
            d.last_error.as_ref().unwrap().tool.as_deref(),
            Some("TaskUpdate(#2 completed)")
        );
        assert_eq!(d.counts.steps, 4);
    }

    #[test]
    fn fallback_end_and_interrupt() {
        let (_, d) = fold(&[
            r#"{"type":"user","message":{"content":"one"}}"#,
            r#"{"type":"assistant","message":{"id":"a","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn"}}"#,
            r#"{"type":"system","subtype":"turn_duration","durationMs":5}"#,
            r#"{"type":"user","message":{"content":"two"}}"#,
            r#"{"type":"assistant","message":{"id":"b","content":[{"type":"tool_use","id":"x","name":"Bash","input":{"command":"sleep 9"}}],"stop_reason":"tool_use"}}"#,
            r#"{"type":"user","message":{"content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]}}"#,
            r#"{"type":"user","message":{"content":"three"}}"#,
        ]);
        assert_eq!(d.turns.len(), 2);
        assert_eq!(d.turns[0].outcome, "completed");
        assert_eq!(d.turns[1].outcome, "interrupted");
        assert_eq!(
            d.open_turn.as_ref().unwrap().prompt.as_deref(),
            Some("three")
        );
    }

    #[test]
    fn slash_command_names_its_turn_and_meta_is_not_a_prompt() {
        let (_, d) = fold(&[
            r#"{"type":"user","isMeta":true,"message":{"content":"Caveat: injected"}}"#,
            r#"{"type":"user","message":{"content":"<command-message>review</command-message>\n<command-name>/review</command-name>\n<command-args>src</command-args>"}}"#,
            r#"{"type":"user","isMeta":true,"message":{"content":[{"type":"text","text":"expanded prompt"}]}}"#,
            r#"{"type":"assistant","message":{"id":"a","model":"claude-x","content":[{"type":"text","text":"reviewing"}]}}"#,
        ]);
        assert_eq!(
            d.open_turn.as_ref().unwrap().prompt.as_deref(),
            Some("/review src")
        );
        assert_eq!(d.model.as_deref(), Some("claude-x"));
    }

    fn blocks(json: &str) -> Vec<Block<'_>> {
        match serde_json::from_str::<Content>(json).unwrap() {
            Content::Blocks(b) => b,
            _ => Vec::new(),
        }
    }

    #[test]
    fn a_prompt_is_its_text_blocks_and_an_interrupt_is_a_notice() {
        let b = blocks(
            r#"[{"type":"text","text":"a"},{"type":"tool_result","content":"r"},{"type":"text","text":"b"},{"type":"text"}]"#,
        );
        assert_eq!(block_text(&b), "a\nb");
        assert_eq!(block_text(&[]), "");
        assert!(is_interrupt("  [Request interrupted by user for tool use]"));
        assert!(!is_interrupt("please [Request interrupted by user]"));
    }

    #[test]
    fn only_a_terminal_stop_without_tool_use_ends_a_turn() {
        assert!(ends_turn(Some("end_turn"), false));
        assert!(ends_turn(Some("max_tokens"), false));
        assert!(!ends_turn(Some("end_turn"), true));
        assert!(!ends_turn(Some("tool_use"), false));
        assert!(!ends_turn(None, false));
    }
}
