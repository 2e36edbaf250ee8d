//! The MCP tools' local handlers: the function that reads each tool's arguments and
//! turns the domain result into a tool result. A control tool's argument type is its
//! operation's request type (`control::<op>`, the one the CLI command flattens); the
//! other tools' types are here.
//!
//! Invariants: arguments are checked against the tool's type by serde (unknown fields,
//! wrong types, a missing required field: -32602) and are otherwise passed on untouched,
//! so every refusal comes from the same function the CLI calls, with the CLI's text, as
//! `isError: true`; successful results carry `structuredContent` and the same JSON as
//! text. A handler is reached only through the tool table (`tools::TOOLS`), whose test
//! holds each argument type to the schema the tool publishes.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::ctx::{Answer, Ctx};
use super::{INVALID_PARAMS, RpcError};
use crate::bridge::request as agent;
use crate::control::run::Cmd;
use crate::control::{capture, input, kill, list, run, split, swap};
use crate::error::Error;

/// MCP's own default for blocking tools: under Codex's 60 s `tool_timeout_sec`.
pub(super) const DEFAULT_WAIT_MS: u64 = 50_000;

/// `timeoutMin` of `tmux_watch`: minutes as a number, or the CLI's duration text.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum Minutes {
    Number(serde_json::Number),
    Text(String),
}

impl Minutes {
    /// The CLI's `--timeout-min` word.
    pub(super) fn into_word(self) -> String {
        match self {
            Minutes::Number(n) => n.to_string(),
            Minutes::Text(s) => s,
        }
    }
}

/// A successful result: the JSON as text and as structured content (the spec's advice,
/// for clients that read only `content`).
pub(super) fn done<T: serde::Serialize>(v: &T) -> Value {
    let sc = serde_json::to_value(v).unwrap_or(Value::Null);
    json!({
        "content": [{"type": "text", "text": sc.to_string()}],
        "structuredContent": sc,
        "isError": false,
    })
}

/// A refusal or failure: the CLI's own words.
pub(super) fn failed(e: &Error) -> Value {
    super::tool_error(&e.human())
}

/// A failed `agent_ask`, here or on a host: how far the message got (`None`: not
/// reported; the text then says so) and the CLI's words.
pub(super) fn ask_failed(delivery: Option<crate::bridge::deliver::Delivery>, text: &str) -> Value {
    let d = serde_json::to_value(delivery).unwrap_or(Value::Null);
    let shown = match d.as_str() {
        Some(d) => format!("{d}: {text}"),
        None => text.to_string(),
    };
    json!({"content": [{"type": "text", "text": shown}],
        "structuredContent": {"delivery": d, "text": text},
        "isError": true})
}

fn result<T: serde::Serialize>(r: Result<T, Error>) -> Result<Answer, RpcError> {
    Ok(Answer::Value(match r {
        Ok(v) => done(&v),
        Err(e) => failed(&e),
    }))
}

/// The arguments as the tool's type (`null` reads as no arguments).
pub(super) fn args<T: DeserializeOwned>(name: &str, v: &Value) -> Result<T, RpcError> {
    let v = if v.is_null() { json!({}) } else { v.clone() };
    serde_json::from_value(v)
        .map_err(|e| RpcError::new(INVALID_PARAMS, format!("{name}: bad arguments: {e}")))
}

fn invalid(text: impl Into<String>) -> RpcError {
    RpcError::new(INVALID_PARAMS, text)
}

/// `tmux_list`: the model reads the compact tree (tens of bytes a pane); the JSON is
/// for code.
pub(super) fn tmux_list(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    args::<list::Ask>("tmux_list", a)?;
    Ok(
        match list::list(c.tmux, true, crate::watch::view::for_listing) {
            Ok(l) => match serde_json::to_string(&l) {
                Ok(sc) => Answer::Texted { text: l.text(), sc },
                Err(_) => Answer::Value(done(&Value::Null)),
            },
            Err(e) => Answer::Value(failed(&e)),
        },
    )
}

pub(super) fn tmux_send_keys(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    let a: input::SendAsk = args("tmux_send_keys", a)?;
    let t = a.target.as_deref();
    match (a.text, a.keys) {
        (Some(text), None) => result(input::send(c.tmux, t, &text, a.enter, a.cancel_mode)),
        (None, Some(keys)) if !a.enter && !a.cancel_mode => result(input::keys(c.tmux, t, &keys)),
        _ => Err(invalid(
            "tmux_send_keys: give either text (with enter, cancelMode) or keys, not both",
        )),
    }
}

pub(super) fn tmux_paste(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    let a: input::PasteAsk = args("tmux_paste", a)?;
    result(input::paste(
        c.tmux,
        a.target.as_deref(),
        a.text.as_deref().unwrap_or_default(),
        a.enter,
        a.settle_ms,
    ))
}

pub(super) fn tmux_capture(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    let a: capture::Ask = args("tmux_capture", a)?;
    if a.conflicts() {
        return Err(invalid("tmux_capture: lines and all exclude each other"));
    }
    Ok(match capture::capture(c.tmux, &a.request()) {
        Ok(cap) => captured(fitted(cap, if c.json { 2 } else { 1 })),
        Err(e) => Answer::Value(failed(&e)),
    })
}

/// The capture with its text cut, newest kept, to what one message carries `copies`
/// times (the text block and, with `json`, the structured content; the rest of the answer
/// is under 64 KiB): a whole history asked with a big `maxBytes` would otherwise be a
/// message the client refuses, losing the call (`super::MAX_MESSAGE`). The cut is marked
/// as any budget's is; the snapshot keeps what tmux gave (true: this cut was made).
fn fitted(mut c: capture::Captured, copies: usize) -> (capture::Captured, bool) {
    let room = (super::MAX_MESSAGE - (64 << 10)) / copies;
    let b = c.text.text.as_bytes();
    let keep = crate::sys::jsonstr::tail_within(b, room);
    if keep < b.len() {
        let cut = crate::control::budget::bound(b, keep);
        c.text = crate::control::budget::Bounded {
            text: cut.text,
            truncated: true,
            dropped: c.text.dropped + cut.dropped,
            dropped_at_least: c.text.dropped_at_least,
        };
        return (c, true);
    }
    (c, false)
}

/// A capture's answer. The model reads the text block: the capture as text (with the
/// CLI's truncation marker line); the structured content is the `capture --json`
/// document with the snapshot's URI. The text is escaped into JSON once, and the text
/// block cut from the document when they are the same (no marker line): a
/// whole-history capture is megabytes. A text cut to fit one message (`fit_cut`) says on
/// its marker line where the whole capture is: its snapshot, too big for an answer too.
fn captured((c, fit_cut): (capture::Captured, bool)) -> Answer {
    let uri = c
        .snapshot
        .as_ref()
        .map(|id| format!("tmuxmate://snapshot/{id}"));
    let rendered = match (&c.snapshot, c.text.marker()) {
        (Some(id), Some(m)) if fit_cut => Some(format!(
            "{m} (one MCP answer holds at most {} MB; the whole capture: `tmuxmate snapshots \
             show {id}`)\n{}",
            super::MAX_MESSAGE / 1_000_000,
            c.text.text
        )),
        (_, m) => m.is_some().then(|| c.text.render()),
    };
    let mut j = c.json();
    j.snapshot = Some(uri);
    let (sc, at) = j.to_json_with_text();
    let text_json = match (rendered, &at) {
        (None, Some(_)) => None,
        (Some(r), _) => Some(serde_json::to_string(&r).unwrap_or_else(|_| "\"\"".into())),
        (None, None) => Some(serde_json::to_string(&j.text).unwrap_or_else(|_| "\"\"".into())),
    };
    Answer::Escaped {
        at: at.unwrap_or(0..0),
        sc,
        text_json,
    }
}

pub(super) fn tmux_split(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    let a: split::SplitAsk = args("tmux_split", a)?;
    result(split::split(c.tmux, &a))
}

pub(super) fn tmux_swap(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    let a: swap::SwapAsk = args("tmux_swap", a)?;
    result(swap::swap(c.tmux, &a))
}

pub(super) fn tmux_run(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    let a: run::RunAsk = args("tmux_run", a)?;
    let argv = a.argv();
    result(run::execute(
        c.tmux,
        &a.request(&argv, DEFAULT_WAIT_MS, Some(c.tick)),
    ))
}

/// `tmux_watch`'s arguments: `cmd` a line or words, `timeoutMin` a number or the CLI's
/// words (its schema is published as such); [`Watch::request`] is `watch start`'s.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct Watch {
    target: Option<String>,
    cmd: Cmd,
    done_regex: Option<String>,
    timeout_min: Option<Minutes>,
    notify: Option<String>,
    #[serde(default)]
    forward: Vec<String>,
    #[serde(default)]
    cancel_mode: bool,
}

impl Watch {
    pub(super) fn request(self) -> crate::watch::request::Start {
        crate::watch::request::Start {
            target: self.target,
            done_regex: self.done_regex,
            timeout: None,
            timeout_min: self.timeout_min.map(Minutes::into_word),
            notify: self.notify,
            forward: self.forward,
            cancel_mode: self.cancel_mode,
            cmd: self.cmd.into_given(),
        }
    }
}

pub(super) fn tmux_watch(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    let a: Watch = args("tmux_watch", a)?;
    Ok(Answer::Value(match a.request().run(c.tmux) {
        Ok(s) => {
            c.session.resources.started(c.session, &s.job_id);
            done(
                &json!({"kind": "background", "jobId": s.job_id, "paneId": s.pane_id,
                "uri": super::resources::watch_uri(&s.job_id)}),
            )
        }
        Err(e) => failed(&e),
    }))
}

pub(super) fn tmux_kill(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    let a: kill::KillAsk = args("tmux_kill", a)?;
    result(kill::kill(c.tmux, &a))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct Agents {
    target: Option<String>,
    until: Option<Vec<String>>,
    timeout_ms: Option<u64>,
}

impl Agents {
    /// The listing (no target, no until), not a wait for one agent.
    pub(super) fn is_listing(&self) -> bool {
        self.target.is_none() && self.until.is_none()
    }
}

/// `tmux_agents`: the listing (compact text for the model, the rows as JSON), one pane's
/// row, or a wait for one pane's state.
pub(super) fn tmux_agents(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    use crate::state::{list, wait};
    let a: Agents = args("tmux_agents", a)?;
    let texted = |text: String, v: Value| Answer::Texted {
        text,
        sc: v.to_string(),
    };
    let fail = |e: &Error| Ok(Answer::Value(failed(e)));
    let Some(target) = a.target else {
        if a.until.is_some() {
            return fail(&Error::usage(
                "tmux_agents: until needs a target (the agent to wait for; see the listing without until)",
            ));
        }
        return match list::listing(c.tmux, false) {
            Ok(l) => {
                let now = crate::sys::time::now_ms();
                let mut text = list::text(&l.rows, now);
                for u in &l.unreached {
                    text.push_str(&format!("host {} not reached: {}\n", u.host, u.why));
                }
                Ok(texted(text, l.document()))
            }
            Err(e) => fail(&Error::from(e)),
        };
    };
    let pane = match wait::pane_of(c.tmux, &target) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let until = match a.until {
        Some(u) => match wait::parse_until(&u.join(",")) {
            Ok(v) => v,
            Err(e) => return fail(&e),
        },
        // No states: the pane as it is now (any state ends the wait at once).
        None => crate::state::machine::State::ALL.to_vec(),
    };
    let limit = Duration::from_millis(a.timeout_ms.unwrap_or(DEFAULT_WAIT_MS).min(3_600_000));
    match wait::wait(c.tmux, &pane, &until, limit, c.tick) {
        Ok(r) => Ok(texted(
            r.text(),
            serde_json::to_value(&r).unwrap_or(Value::Null),
        )),
        Err(e) => fail(&e),
    }
}

/// `agent_ask`'s arguments: the message inline, the wait in seconds with MCP's own
/// default; [`Ask::request`] is `agent ask`'s.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct Ask {
    target: String,
    message: String,
    project: Option<PathBuf>,
    permission_mode: Option<String>,
    timeout_s: Option<u64>,
}

impl Ask {
    pub(super) fn request(self) -> agent::Ask {
        agent::Ask {
            target: self.target,
            msg: agent::Message {
                message: Some(self.message),
                ..agent::Message::default()
            },
            project: self.project,
            permission_mode: self.permission_mode,
            timeout: None,
            timeout_s: Some(self.timeout_s.unwrap_or(DEFAULT_WAIT_MS / 1000)),
        }
    }
}

/// `agent_ask`'s answer: the reply with `delivery: delivered`.
pub(super) fn replied(reply: &crate::bridge::turns::Reply) -> Value {
    let mut v = serde_json::to_value(reply).unwrap_or_else(|_| json!({}));
    v["delivery"] = json!("delivered");
    done(&v)
}

pub(super) fn agent_ask(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    let a: Ask = args("agent_ask", a)?;
    Ok(Answer::Value(match a.request().run(c.tmux, Some(c.tick)) {
        Ok(reply) => replied(&reply),
        Err(f) => ask_failed(Some(f.delivery), &f.error.human()),
    }))
}

pub(super) fn side_chat_main_status(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    let a: crate::side::request::Status = args("side_chat_main_status", a)?;
    result(a.run(c.tmux))
}

pub(super) fn side_chat_main_history(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    let a: crate::side::request::History = args("side_chat_main_history", a)?;
    result(a.run(c.tmux).map(|lines| json!({"lines": lines})))
}

pub(super) fn side_chat_report(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    let a: crate::side::request::Report = args("side_chat_report", a)?;
    result(a.run(c.tmux))
}
