//! Codex rollout JSONL (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`).
//!
//! Owns: mapping one rollout line (`{"timestamp","type","payload"}`) onto digest
//! operations. Wire facts (docs/harnesses.md#codex-cli-rollout, checked against a 0.171 rollout): turns are
//! `event_msg` `task_started` / `task_complete` / `turn_aborted`; the prompt arrives as
//! `event_msg user_message`, as `event_msg item_completed` (`UserMessage`) and as a
//! `response_item message` with role `user`, so a prompt equal to the turn's is the same
//! prompt; tool calls are `response_item function_call` (`arguments` is a JSON string),
//! `custom_tool_call` (`apply_patch`), `local_shell_call`, `web_search_call`; a shell
//! failure is reported by `exec_command_end`, `item_completed` (`CommandExecution`) and
//! the call's output, so failures are deduplicated by `call_id`; the checklist is
//! `update_plan` (whole list, last call wins).
//! Invariants: scaffolding user messages (`<environment_context>` and other tagged
//! blocks, AGENTS.md) are not prompts; steps count model items from `response_item` only,
//! so the duplicated event stream never double-counts; unknown kinds are ignored.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::json::{LList, LNum, LStr, Lenient, Snippet};
use super::model::Digest;
use super::tools::summarize_str;
use crate::sys::time::{from_number, parse_rfc3339};

const FAILED_IDS: usize = 64;

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct State {
    /// Call ids already reported as failed (one failure per call, whichever record says it).
    failed: VecDeque<String>,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LStr<'a>,
    #[serde(borrow, default)]
    timestamp: LStr<'a>,
    #[serde(borrow, default)]
    payload: Lenient<Payload<'a>>,
}

#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LStr<'a>,
    #[serde(borrow, default)]
    role: LStr<'a>,
    #[serde(default)]
    content: Snippet,
    #[serde(borrow, default)]
    name: LStr<'a>,
    #[serde(borrow, default)]
    arguments: LStr<'a>,
    #[serde(borrow, default)]
    input: LStr<'a>,
    #[serde(borrow, default)]
    call_id: LStr<'a>,
    #[serde(default)]
    output: Snippet,
    #[serde(borrow, default)]
    message: LStr<'a>,
    #[serde(borrow, default)]
    last_agent_message: LStr<'a>,
    #[serde(default)]
    exit_code: LNum,
    #[serde(default)]
    stderr: Snippet,
    #[serde(default)]
    aggregated_output: Snippet,
    #[serde(default)]
    started_at: LNum,
    #[serde(borrow, default)]
    model: LStr<'a>,
    #[serde(borrow, default)]
    reason: LStr<'a>,
    #[serde(borrow, default)]
    item: Lenient<Item<'a>>,
    #[serde(borrow, default)]
    thread_settings: Lenient<Settings<'a>>,
    #[serde(default)]
    action: Option<Value>,
    /// `token_count`'s numbers.
    #[serde(default)]
    info: Option<Value>,
}

#[derive(Deserialize)]
struct Item<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LStr<'a>,
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(default)]
    content: Snippet,
    #[serde(default)]
    exit_code: LNum,
    #[serde(default)]
    aggregated_output: Snippet,
    #[serde(default)]
    command: Option<Value>,
}

#[derive(Deserialize)]
struct Settings<'a> {
    #[serde(borrow, default)]
    model: LStr<'a>,
}

#[derive(Deserialize)]
struct Plan<'a> {
    #[serde(borrow, default)]
    plan: LList<PlanStep<'a>>,
}

#[derive(Deserialize)]
struct PlanStep<'a> {
    #[serde(borrow, default)]
    step: LStr<'a>,
    #[serde(borrow, default)]
    status: LStr<'a>,
}

/// Harness-written user messages: environment, instructions, AGENTS.md.
fn scaffolding(text: &str) -> bool {
    let s = text.trim_start();
    (s.starts_with('<') && s.trim_end().ends_with('>'))
        || s.starts_with("# AGENTS.md")
        || s.starts_with("<environment_context>")
        || s.starts_with("<user_instructions>")
}

fn prompt(d: &mut Digest, text: &str, t: Option<u64>) {
    if text.trim().is_empty() || scaffolding(text) {
        return;
    }
    let same = d
        .open_turn
        .as_ref()
        .and_then(|o| o.prompt.as_deref())
        .is_some_and(|p| p == super::model::clip(text, super::model::PROMPT_CHARS));
    if same {
        d.touch(t);
        return;
    }
    if d.is_open() && d.has_prompt() {
        // Steering input inside a running turn: the turn keeps its first prompt.
        d.touch(t);
        return;
    }
    d.prompt(text, t);
}

fn failed(
    st: &mut State,
    d: &mut Digest,
    call: Option<&str>,
    text: &str,
    code: Option<f64>,
    t: Option<u64>,
) {
    if let Some(c) = call {
        if st.failed.iter().any(|f| f == c) {
            return;
        }
        st.failed.push_back(c.to_string());
        while st.failed.len() > FAILED_IDS {
            st.failed.pop_front();
        }
    }
    let head = code.map(|c| format!("exit {c}")).unwrap_or_default();
    let msg = match (head.is_empty(), text.trim().is_empty()) {
        (false, false) => format!("{head}: {text}"),
        (false, true) => head,
        _ => text.to_string(),
    };
    d.tool_error(call, Some("shell"), &msg, t);
}

/// `Process exited with code 2` (unified exec) or `"exit_code":2` (older shell output).
fn output_exit_code(out: &str) -> Option<f64> {
    if let Some(i) = out.find("Process exited with code ") {
        let rest = &out[i + "Process exited with code ".len()..];
        let n: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '-')
            .collect();
        return n.parse().ok();
    }
    if let Some(i) = out.find("\"exit_code\":") {
        let rest = out[i + "\"exit_code\":".len()..].trim_start();
        let n: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '-')
            .collect();
        return n.parse().ok();
    }
    None
}

/// Fold one rollout line: `event_msg` and `response_item` payloads each by their own
/// function; unknown kinds are ignored.
pub fn fold_line(st: &mut State, d: &mut Digest, line: &[u8]) -> Result<(), serde_json::Error> {
    let l: Line = serde_json::from_slice(line)?;
    let t = l.timestamp.as_deref().and_then(parse_rfc3339);
    let Some(p) = l.payload.0 else {
        return Ok(());
    };
    match l.ty.as_deref().unwrap_or("") {
        "turn_context" => {
            if let Some(m) = p.model.as_deref() {
                d.set_model(m);
            }
        }
        "compacted" => d.compaction(t),
        "event_msg" => event_msg(st, d, &p, t),
        "response_item" => response_item(st, d, &p, t),
        _ => {}
    }
    Ok(())
}

/// The event stream: turn boundaries, prompts and replies, command ends, settings.
fn event_msg(st: &mut State, d: &mut Digest, p: &Payload, t: Option<u64>) {
    match p.ty.as_deref().unwrap_or("") {
        "task_started" => d.begin_turn(None, p.started_at.0.and_then(from_number).or(t)),
        "task_complete" => {
            if let Some(m) = p.last_agent_message.as_deref() {
                d.assistant_text(m, t);
            }
            d.end_turn("completed", t);
        }
        "turn_aborted" => d.end_turn(abort_outcome(p.reason.as_deref()), t),
        "user_message" => prompt(d, p.message.as_deref().unwrap_or(""), t),
        "agent_message" => d.assistant_text(p.message.as_deref().unwrap_or(""), t),
        "exec_command_end" => match p.exit_code.0 {
            Some(c) if c != 0.0 => failed(
                st,
                d,
                p.call_id.as_deref(),
                exec_failure_text(p),
                Some(c),
                t,
            ),
            _ => d.touch(t),
        },
        "item_completed" => {
            if let Some(item) = p.item.0.as_ref() {
                item_completed(st, d, item, t);
            }
        }
        "thread_settings_applied" => {
            if let Some(m) = p
                .thread_settings
                .0
                .as_ref()
                .and_then(|s| s.model.as_deref())
            {
                d.set_model(m);
            }
        }
        "context_compacted" => d.compaction(t),
        "token_count" => {
            if let Some(u) = token_count(p.info.as_ref()) {
                d.usage(u);
            }
        }
        "error" | "stream_error" => d.error(p.message.as_deref().unwrap_or(""), t),
        _ => {}
    }
}

/// A `token_count` event: the last request's tokens (the context it filled), the window
/// and the session's total.
fn token_count(info: Option<&Value>) -> Option<super::model::Usage> {
    let info = info?;
    let n = |p: &str| info.pointer(p).and_then(Value::as_u64);
    let u = super::model::Usage {
        context_tokens: n("/last_token_usage/total_tokens"),
        context_window: n("/model_context_window"),
        total_tokens: n("/total_token_usage/total_tokens"),
        cost_usd: None,
    };
    (u.context_tokens.is_some() || u.total_tokens.is_some()).then_some(u)
}

/// `interrupted` when the reason says so, else `aborted`.
fn abort_outcome(reason: Option<&str>) -> &'static str {
    if reason == Some("interrupted") {
        "interrupted"
    } else {
        "aborted"
    }
}

/// A failed command's words: its stderr, else its whole output.
fn exec_failure_text<'p>(p: &'p Payload) -> &'p str {
    if p.stderr.0.trim().is_empty() {
        &p.aggregated_output.0
    } else {
        &p.stderr.0
    }
}

/// `item_completed`: the same prompt, reply or command end again, as an item.
fn item_completed(st: &mut State, d: &mut Digest, item: &Item, t: Option<u64>) {
    match item.ty.as_deref().unwrap_or("") {
        "UserMessage" => prompt(d, &item.content.0, t),
        "AgentMessage" => d.assistant_text(&item.content.0, t),
        "CommandExecution" => match item.exit_code.0 {
            Some(c) if c != 0.0 => failed(
                st,
                d,
                item.id.as_deref(),
                &item.aggregated_output.0,
                Some(c),
                t,
            ),
            _ => d.touch(t),
        },
        _ => d.touch(t),
    }
    let _ = &item.command;
}

/// The model's items: messages, tool calls and their outputs; each model item is a step.
fn response_item(st: &mut State, d: &mut Digest, p: &Payload, t: Option<u64>) {
    match p.ty.as_deref().unwrap_or("") {
        "message" => match p.role.as_deref() {
            Some("user") => prompt(d, &p.content.0, t),
            Some("assistant") => {
                d.step(t);
                d.assistant_text(&p.content.0, t);
            }
            _ => {}
        },
        "function_call" | "custom_tool_call" => function_call(d, p, t),
        "local_shell_call" => {
            d.step(t);
            let cmd = p
                .action
                .as_ref()
                .map(|a| super::tools::summarize("shell", a))
                .unwrap_or_default();
            d.tool_call("shell", &cmd, p.call_id.as_deref(), t);
        }
        "web_search_call" => {
            d.step(t);
            let q = p
                .action
                .as_ref()
                .and_then(|a| a.get("query"))
                .and_then(Value::as_str)
                .unwrap_or("");
            d.tool_call("web_search", q, None, t);
        }
        "function_call_output" | "custom_tool_call_output" => match output_exit_code(&p.output.0) {
            Some(c) if c != 0.0 => failed(
                st,
                d,
                p.call_id.as_deref(),
                output_body(&p.output.0),
                Some(c),
                t,
            ),
            _ => d.touch(t),
        },
        _ => d.touch(t),
    }
}

/// A function call; `update_plan`'s arguments are also the whole checklist.
fn function_call(d: &mut Digest, p: &Payload, t: Option<u64>) {
    d.step(t);
    let name = p.name.as_deref().unwrap_or("tool");
    let args = p.arguments.as_deref().or(p.input.as_deref()).unwrap_or("");
    let (summary, _) = summarize_str(name, args);
    d.tool_call(name, &summary, p.call_id.as_deref(), t);
    if name == "update_plan"
        && let Ok(plan) = serde_json::from_str::<Plan>(args)
    {
        d.set_todos(
            plan.plan.0.iter().filter_map(|s| {
                Some((s.step.as_deref()?, s.status.as_deref().unwrap_or("pending")))
            }),
        );
    }
}

/// A call output's body: what follows `Output:`, else all of it.
fn output_body(out: &str) -> &str {
    out.split_once("Output:").map(|(_, b)| b).unwrap_or(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_dedupe_by_call_id_and_plan_replaces() {
        let mut st = State::default();
        let mut d = Digest::default();
        for l in [
            r#"{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t1"}}"#,
            r#"{"type":"event_msg","payload":{"type":"user_message","message":"fix it"}}"#,
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call","name":"update_plan","arguments":"{\"plan\":[{\"step\":\"a\",\"status\":\"completed\"},{\"step\":\"b\",\"status\":\"in_progress\"}]}","call_id":"p1"}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"false\"}","call_id":"c1"}}"#,
            r#"{"type":"event_msg","payload":{"type":"exec_command_end","call_id":"c1","exit_code":1,"stderr":"boom"}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Process exited with code 1\nOutput:\nboom"}}"#,
            r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"c1","exit_code":1}}}"#,
            r#"{"type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}"#,
        ] {
            fold_line(&mut st, &mut d, l.as_bytes()).unwrap();
        }
        assert_eq!(d.counts.errors, 1);
        assert_eq!(
            d.last_error.as_ref().unwrap().tool.as_deref(),
            Some("exec_command(false)")
        );
        assert_eq!(d.todos.len(), 2);
        assert_eq!(d.todo_progress(), (1, 2));
        assert_eq!(d.turns[0].prompt.as_deref(), Some("fix it"));
        assert_eq!(d.turns[0].outcome, "interrupted");
        assert_eq!(d.counts.steps, 2);
    }

    #[test]
    fn an_abort_is_interrupted_only_when_it_says_so() {
        assert_eq!(abort_outcome(Some("interrupted")), "interrupted");
        assert_eq!(abort_outcome(Some("replaced")), "aborted");
        assert_eq!(abort_outcome(None), "aborted");
    }

    #[test]
    fn failure_text_is_stderr_or_the_output_body() {
        let p: Payload =
            serde_json::from_str(r#"{"stderr":" ","aggregated_output":"all"}"#).unwrap();
        assert_eq!(exec_failure_text(&p), "all");
        let p: Payload =
            serde_json::from_str(r#"{"stderr":"err","aggregated_output":"all"}"#).unwrap();
        assert_eq!(exec_failure_text(&p), "err");
        assert_eq!(
            output_body("Process exited with code 1\nOutput:\nboom"),
            "\nboom"
        );
        assert_eq!(output_body("just text"), "just text");
        assert_eq!(output_exit_code("Process exited with code 2\n"), Some(2.0));
        assert_eq!(output_exit_code(r#"{"exit_code": -1}"#), Some(-1.0));
        assert_eq!(output_exit_code("fine"), None);
    }
}
