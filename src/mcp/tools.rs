//! The MCP tools: their definitions (`tools/list`, under 10 KB in all) and `tools/call`,
//! which turns the arguments into the domain request and the domain result into a tool
//! result.
//!
//! Invariants: arguments are checked against the input schema by serde (unknown fields,
//! wrong types, a missing required field: -32602) and are otherwise passed on untouched,
//! so every refusal comes from the same function the CLI calls, with the CLI's text, as
//! `isError: true`; successful results carry `structuredContent` (matching the tool's
//! `outputSchema`) and the same JSON as text.

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{INVALID_PARAMS, RpcError, Session};
use crate::bridge::ask;
use crate::control::budget::Range;
use crate::control::kill_scope::KillScope;
use crate::control::watch::start;
use crate::control::{capture, input, kill, list, run, split, swap};
use crate::error::Error;

/// MCP's own default for blocking tools: under Codex's 60 s `tool_timeout_sec`.
const DEFAULT_WAIT_MS: u64 = 50_000;
/// How often a long wait reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

fn s() -> Value {
    json!({"type": "string"})
}
fn b() -> Value {
    json!({"type": "boolean"})
}
fn n() -> Value {
    json!({"type": "integer", "minimum": 0})
}
fn words() -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}
/// A command: a shell command line (a string) or argv words (models write strings first).
fn command() -> Value {
    json!({"anyOf": [s(), words()]})
}

/// `cmd` of `tmux_run` and `tmux_watch`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Cmd {
    Line(String),
    Words(Vec<String>),
}

impl Cmd {
    /// argv words for `run` (a line runs under `sh -c`, as the CLI's `-- sh -c '...'`).
    fn for_run(self) -> Vec<String> {
        match self {
            Cmd::Line(l) => vec!["sh".into(), "-c".into(), l],
            Cmd::Words(w) => w,
        }
    }
    /// The words as given, a line as one word: `watch` reads one word as a shell line,
    /// and `run -t --until-stable` types its text into the pane's program.
    fn into_given(self) -> Vec<String> {
        match self {
            Cmd::Line(l) => vec![l],
            Cmd::Words(w) => w,
        }
    }
}

/// One tool definition: `props` are `(name, schema)`, `out` the output properties.
fn tool(
    name: &str,
    description: &str,
    props: &[(&str, Value)],
    required: &[&str],
    out: &[(&str, Value)],
) -> Value {
    let obj = |ps: &[(&str, Value)]| {
        Value::Object(ps.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    };
    json!({
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": obj(props), "required": required,
            "additionalProperties": false},
        "outputSchema": {"type": "object", "properties": obj(out)},
        "annotations": annotations(name),
    })
}

/// What each tool does to the world, for clients that decide by it (one that runs
/// read-only tools at once, one that asks before a destructive one). Truthful rather
/// than flattering: typing into a pane can run anything the pane's program runs, so
/// `send_keys` and `paste` are destructive; a read stores a snapshot in tmuxmate's state
/// but changes no pane, which is what read-only means here.
fn annotations(name: &str) -> Value {
    // (readOnly, destructive, idempotent, openWorld)
    let (ro, destructive, idempotent, open) = match name {
        "tmux_list"
        | "tmux_capture"
        | "tmux_agents"
        | "side_chat_main_status"
        | "side_chat_main_history" => (true, false, true, false),
        "tmux_send_keys" | "tmux_paste" => (false, true, false, false),
        "tmux_split" | "tmux_swap" | "side_chat_report" => (false, false, false, false),
        "tmux_run" | "tmux_watch" => (false, true, false, true),
        "tmux_kill" => (false, true, true, false),
        "agent_ask" => (false, false, false, true),
        _ => (false, true, false, true),
    };
    json!({
        "readOnlyHint": ro,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": open,
    })
}

/// The `tools/list` result, built once.
pub fn list() -> &'static Value {
    static LIST: OnceLock<Value> = OnceLock::new();
    LIST.get_or_init(|| {
        let t = || ("target", s());
        let h = || ("host", s());
        let hs = || ("hostSocket", s());
        json!({"tools": [
            tool("tmux_list",
                "Sessions, windows (layout) and panes (paneId, target, command, createdByUs, createdBy = creator's address, agent = the pane's own). Every tool takes host ([user@]host[:port], one ssh master) and hostSocket (-L name or -S path there); watch, agent_ask, side_* need `tmuxmate remote install HOST`.",
                &[h(), hs()], &[],
                &[("sessions", json!({"type": "array"})), ("windows", json!({"type": "array"})), ("panes", json!({"type": "array"}))]),
            tool("tmux_send_keys",
                "Type one line of literal text byte-exact (text, enter) or press named keys (keys: Enter Escape Tab BTab Up Down Left Right Home End PageUp PageDown BSpace C-a..C-z F1..F12). Refuses: no target, control chars, other key names, a dead pane, a pane in copy mode (unless cancelMode).",
                &[t(), ("text", s()), ("keys", words()), ("enter", b()), ("cancelMode", b()), h(), hs()], &[],
                &[("target", s()), ("paneId", s()), ("sent", n()), ("enter", b()), ("keys", words()), ("inMode", b())]),
            tool("tmux_paste",
                "Paste multi-line text as one bracketed paste (controls made visible), then at most one Enter after settleMs (default 150). Refuses: empty text, dead pane, copy mode with enter.",
                &[t(), ("text", s()), ("enter", b()), ("settleMs", n()), h(), hs()], &["text"],
                &[("target", s()), ("paneId", s()), ("bytes", n()), ("lines", n()), ("sanitized", n()), ("enter", b())]),
            tool("tmux_capture",
                "A pane's screen, last N lines (lines) or all scrollback (all), cut to maxBytes (default 100000) keeping the newest; text block = the capture; stored as a snapshot resource.",
                &[t(), ("lines", n()), ("all", b()), ("maxBytes", n()), ("ansi", b()), ("join", b()), h(), hs()], &[],
                &[("target", s()), ("paneId", s()), ("text", s()), ("lineCount", n()), ("truncated", b()), ("snapshot", json!({"type": ["string", "null"]}))]),
            tool("tmux_split",
                "New pane marked ours: a split of target (horizontal, size N or N%), else a new window. cmd: argv words. Refuses a program not on PATH.",
                &[t(), ("horizontal", b()), ("size", s()), ("cwd", s()), ("cmd", words()), h(), hs()], &[],
                &[("paneId", s()), ("target", s())]),
            tool("tmux_swap", "Swap two panes (no keys sent). Refuses the same pane twice.",
                &[("src", s()), ("dst", s()), h(), hs()], &["src", "dst"],
                &[("src", s()), ("dst", s())]),
            tool("tmux_run",
                "Run cmd (shell line or argv words) in a fresh pane, or typed into an idle POSIX shell pane (target), and wait: exit status and output. untilStable MS for REPLs/TUIs. timeoutMs default 50000. Refuses busy, non-shell or mode panes.",
                &[t(), ("cmd", command()), ("timeoutMs", n()), ("untilStable", n()), ("maxBytes", n()), ("keep", b()), h(), hs()], &["cmd"],
                &[("paneId", s()), ("text", s()), ("exitStatus", json!({"type": ["integer", "null"]})), ("truncated", b()), ("stabilized", b()), ("timedOut", b()), ("elapsedMs", n()), ("kept", b())]),
            tool("tmux_watch",
                "Start cmd (shell line or argv words) in the background (new window, or typed into an idle shell pane); done at exit or doneRegex. Result at the agent's next turn and as resource tmuxmate://watch/<jobId> (updated notification when done).",
                &[t(), ("cmd", command()), ("doneRegex", s()), ("timeoutMin", json!({"type": ["number", "string"]})), ("notify", s()), ("forward", words()), ("cancelMode", b()), h(), hs()], &["cmd"],
                &[("kind", s()), ("jobId", s()), ("paneId", s()), ("uri", s()), ("host", s())]),
            tool("tmux_kill",
                "Kill a pane, window, session or server. Refuses without confirm:true, without an exact target, the caller's own pane/window/session/server, and when the approval policy says no (fails closed).",
                &[("scope", json!({"enum": ["pane", "window", "session", "server"]})), t(), ("confirm", b()), h(), hs()], &["scope"],
                &[("scope", s()), ("target", json!({"type": ["string", "null"]})), ("paneId", json!({"type": ["string", "null"]})), ("windowId", json!({"type": ["string", "null"]})), ("sessionId", json!({"type": ["string", "null"]})), ("killed", b())]),
            tool("tmux_agents",
                "Agent panes' states (needs-you+why, working, done, idle, exited, unknown), most urgent first. target+until: wait until that agent is in one (timeoutMs default 50000).",
                &[t(), ("until", words()), ("timeoutMs", n()), h(), hs()], &[],
                &[("agents", json!({"type": "array"})), ("state", s())]),
            tool("agent_ask",
                "Ask another agent CLI (target: claude/codex/gemini to start or reuse one for project, or a managed session name): send once, wait, complete reply. delivery: delivered, unconfirmed or not-delivered; never retried. Refuses busy agents and dialogs. timeoutS default 50.",
                &[t(), ("message", s()), ("project", s()), ("permissionMode", s()), ("timeoutS", n()), h(), hs()], &["target", "message"],
                &[("delivery", s()), ("name", s()), ("complete", b()), ("source", s()), ("text", s()), ("truncated", b())]),
            tool("side_chat_main_status", "The main agent's live digest and whether it is running (side chat).",
                &[t(), h(), hs()], &[],
                &[("paneId", s()), ("state", s()), ("transcript", json!({"type": ["string", "null"]})), ("text", s())]),
            tool("side_chat_main_history", "The main session's transcript lines, summarised; filter by turn or contains; limit 1-200 (default 40).",
                &[t(), ("turn", n()), ("contains", s()), ("limit", n()), h(), hs()], &[],
                &[("lines", json!({"type": "array"}))]),
            tool("side_chat_report", "Queue a note for the main agent's next turn (never typed into its pane). Refuses empty text.",
                &[t(), ("text", s()), h(), hs()], &["text"],
                &[("queued", b()), ("agent", s()), ("key", s())]),
        ]})
    })
}

/// `tmux_agents`: the listing (compact text for the model, the rows as JSON), one pane's
/// row, or a wait for one pane's state.
fn agents_tool(tmux: &crate::tmux::Tmux, a: AgentsArgs, tick: &dyn Fn(Duration) -> bool) -> Answer {
    use crate::agents::{list, wait};
    let texted = |text: String, v: Value| Answer::Texted {
        text,
        sc: v.to_string(),
    };
    let Some(target) = a.target else {
        if a.until.is_some() {
            return Answer::Value(failed(&Error::usage(
                "tmux_agents: until needs a target (the agent to wait for; see the listing without until)",
            )));
        }
        return match list::listing(tmux, false) {
            Ok(l) => {
                let now = crate::sys::state::now_ms();
                let mut text = list::text(&l.rows, now);
                for u in &l.unreached {
                    text.push_str(&format!("host {} not reached: {}\n", u.host, u.why));
                }
                texted(text, l.document())
            }
            Err(e) => Answer::Value(failed(&Error::from(e))),
        };
    };
    let pane = match wait::pane_of(tmux, &target) {
        Ok(p) => p,
        Err(e) => return Answer::Value(failed(&e)),
    };
    let until = match a.until {
        Some(u) => match wait::parse_until(&u.join(",")) {
            Ok(v) => v,
            Err(e) => return Answer::Value(failed(&e)),
        },
        // No states: the pane as it is now (any state ends the wait at once).
        None => crate::agents::machine::State::ALL.to_vec(),
    };
    let limit = Duration::from_millis(a.timeout_ms.unwrap_or(50_000).min(3_600_000));
    match wait::wait(tmux, &pane, &until, limit, tick) {
        Ok(r) => texted(r.text(), serde_json::to_value(&r).unwrap_or(Value::Null)),
        Err(e) => Answer::Value(failed(&e)),
    }
}

/// A capture's answer. The model reads the text block: the capture as text (with the
/// CLI's truncation marker line); the structured content is `capture --json` plus the
/// snapshot's URI. The text is escaped into JSON once and written in both places when
/// they are the same (no marker line): a whole-history capture is megabytes.
fn captured(c: crate::control::capture::Captured) -> Answer {
    let uri = c
        .snapshot
        .as_ref()
        .map(|id| format!("tmuxmate://snapshot/{id}"));
    let marked = c.text.marker().is_some();
    let rendered = marked.then(|| c.text.render());
    let j = c.json();
    let esc = |t: &str| serde_json::to_string(t).unwrap_or_else(|_| "\"\"".into());
    let text_json = esc(&j.text);
    let sc = format!(
        r#"{{"target":{},"paneId":{},"text":{},"lineCount":{},"truncated":{},"snapshot":{}}}"#,
        esc(&j.target),
        esc(&j.pane_id),
        text_json,
        j.line_count,
        j.truncated,
        uri.as_deref().map_or_else(|| "null".to_string(), esc),
    );
    let text_json = match rendered {
        Some(r) => esc(&r),
        None => text_json,
    };
    Answer::Escaped { text_json, sc }
}

/// A successful result: the JSON as text and as structured content (the spec's advice,
/// for clients that read only `content`).
fn done<T: serde::Serialize>(v: &T) -> Value {
    let sc = serde_json::to_value(v).unwrap_or(Value::Null);
    json!({
        "content": [{"type": "text", "text": sc.to_string()}],
        "structuredContent": sc,
        "isError": false,
    })
}

/// A refusal or failure: the CLI's own words.
fn failed(e: &Error) -> Value {
    json!({"content": [{"type": "text", "text": e.human()}], "isError": true})
}

/// A failed `agent_ask`, here or on a host: how far the message got (`None`: not
/// reported; the text then says so) and the CLI's words.
fn ask_failed(delivery: Option<crate::bridge::deliver::Delivery>, text: &str) -> Value {
    let d = serde_json::to_value(delivery).unwrap_or(Value::Null);
    let shown = match d.as_str() {
        Some(d) => format!("{d}: {text}"),
        None => text.to_string(),
    };
    json!({"content": [{"type": "text", "text": shown}],
        "structuredContent": {"delivery": d, "text": text},
        "isError": true})
}

fn result<T: serde::Serialize>(r: Result<T, Error>) -> Value {
    match r {
        Ok(v) => done(&v),
        Err(e) => failed(&e),
    }
}

fn args<T: DeserializeOwned>(name: &str, v: &Value) -> Result<T, RpcError> {
    let v = if v.is_null() { json!({}) } else { v.clone() };
    serde_json::from_value(v)
        .map_err(|e| RpcError::new(INVALID_PARAMS, format!("{name}: bad arguments: {e}")))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AgentsArgs {
    target: Option<String>,
    until: Option<Vec<String>>,
    timeout_ms: Option<u64>,
}

/// Which server a tool call talks to: `host` and `hostSocket` (a `-L` name, or a `-S`
/// path when it holds a `/`), taken out of the arguments.
struct Server {
    host: String,
    socket: Option<String>,
}

/// The arguments without `host`/`hostSocket`, and the server they name. Only strings are
/// taken; anything else stays in place, so the schema check refuses it. A `hostSocket`
/// without `host` stays too (it means nothing here).
fn take_host(a: &Value) -> (Value, Option<Server>) {
    let mut a = a.clone();
    let Some(m) = a.as_object_mut() else {
        return (a, None);
    };
    if !m.get("host").is_some_and(Value::is_string) {
        return (a, None);
    }
    let host = m
        .remove("host")
        .and_then(|h| h.as_str().map(str::to_string));
    let socket = match m.get("hostSocket") {
        Some(Value::String(_)) => m
            .remove("hostSocket")
            .and_then(|v| v.as_str().map(str::to_string)),
        _ => None,
    };
    (a, host.map(|host| Server { host, socket }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SendKeys {
    target: Option<String>,
    text: Option<String>,
    keys: Option<Vec<String>>,
    #[serde(default)]
    enter: bool,
    #[serde(default)]
    cancel_mode: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Paste {
    target: Option<String>,
    text: String,
    #[serde(default)]
    enter: bool,
    settle_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Capture {
    target: Option<String>,
    lines: Option<u64>,
    #[serde(default)]
    all: bool,
    max_bytes: Option<usize>,
    #[serde(default)]
    ansi: bool,
    #[serde(default)]
    join: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Split {
    target: Option<String>,
    #[serde(default)]
    horizontal: bool,
    size: Option<String>,
    cwd: Option<PathBuf>,
    #[serde(default)]
    cmd: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Swap {
    src: String,
    dst: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Run {
    target: Option<String>,
    cmd: Cmd,
    timeout_ms: Option<u64>,
    until_stable: Option<u64>,
    max_bytes: Option<usize>,
    #[serde(default)]
    keep: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Watch {
    target: Option<String>,
    cmd: Cmd,
    done_regex: Option<String>,
    timeout_min: Option<Value>,
    notify: Option<String>,
    #[serde(default)]
    forward: Vec<String>,
    #[serde(default)]
    cancel_mode: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Kill {
    scope: String,
    target: Option<String>,
    #[serde(default)]
    confirm: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Ask {
    target: String,
    message: String,
    project: Option<PathBuf>,
    permission_mode: Option<String>,
    timeout_s: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SideTarget {
    target: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SideHistory {
    target: Option<String>,
    turn: Option<u64>,
    contains: Option<String>,
    limit: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SideReport {
    target: Option<String>,
    text: String,
}

/// `notifications/progress` for the client's token, at most once per `PROGRESS_EVERY`.
struct Progress {
    out: super::Out,
    token: Value,
    last: Mutex<Instant>,
}

impl Progress {
    fn tick(&self, waited: Duration) {
        let Ok(mut last) = self.last.lock() else {
            return;
        };
        if last.elapsed() < PROGRESS_EVERY {
            return;
        }
        *last = Instant::now();
        self.out.notify(
            "notifications/progress",
            json!({"progressToken": self.token, "progress": waited.as_millis() as u64,
                "message": format!("waiting, {} s", waited.as_secs())}),
        );
    }
}

/// A tool's answer: a result value, or a successful result whose text block is made for
/// the model and whose structured content is already JSON text (`Out::reply_call` writes
/// both without a value tree).
pub enum Answer {
    Value(Value),
    /// A successful result whose text block is made for the model (`text`) and whose
    /// structured content is the JSON text `sc`.
    Texted {
        text: String,
        sc: String,
    },
    /// As `Texted`, with the text block already a JSON string (quoted and escaped).
    Escaped {
        text_json: String,
        sc: String,
    },
}

/// One `tools/call`. `cancelled` is the call's flag: a long wait (run, ask) looks at it
/// with each progress tick and ends what it started when it is set.
pub fn call(
    session: &Session,
    params: &Value,
    cancelled: &std::sync::atomic::AtomicBool,
) -> Result<Answer, RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::new(INVALID_PARAMS, "tools/call needs a tool name"))?;
    let a = params.get("arguments").unwrap_or(&Value::Null);
    // `host` picks the server for the tmux tools (the rest of the arguments are the
    // tool's own); the other tools refuse it rather than act on this machine.
    let (a, host) = take_host(a);
    let a = &a;
    let remote;
    let tmux = match host {
        None => &session.tmux,
        // These run the host's tmuxmate, as the CLI's --host does.
        Some(h) if !name.starts_with("tmux_") || name == "tmux_watch" => {
            return on_host(session, name, a, h).map(Answer::Value);
        }
        Some(h) => match session.remote(&h.host, h.socket.as_deref()) {
            Ok(t) => {
                remote = t;
                &remote
            }
            Err(e) => return Ok(Answer::Value(failed(&e))),
        },
    };
    let progress = params
        .pointer("/_meta/progressToken")
        .filter(|t| t.is_string() || t.is_number())
        .map(|token| Progress {
            out: session.out.clone(),
            token: token.clone(),
            last: Mutex::new(Instant::now()),
        });
    let tick = |d: Duration| {
        if let Some(p) = &progress {
            p.tick(d)
        }
        !cancelled.load(std::sync::atomic::Ordering::SeqCst)
    };
    if name == "tmux_list" {
        args::<NoArgs>(name, a)?;
        // The model reads the compact tree (tens of bytes a pane); the JSON is for code.
        return Ok(match list::list(tmux, true) {
            Ok(l) => match serde_json::to_string(&l) {
                Ok(sc) => Answer::Texted { text: l.text(), sc },
                Err(_) => Answer::Value(done(&Value::Null)),
            },
            Err(e) => Answer::Value(failed(&e)),
        });
    }
    if name == "tmux_agents" {
        let a: AgentsArgs = args(name, a)?;
        return Ok(agents_tool(tmux, a, &tick));
    }
    Ok(Answer::Value(match name {
        "tmux_send_keys" => {
            let a: SendKeys = args(name, a)?;
            let t = a.target.as_deref();
            match (a.text, a.keys) {
                (Some(text), None) => result(input::send(tmux, t, &text, a.enter, a.cancel_mode)),
                (None, Some(keys)) if !a.enter && !a.cancel_mode => {
                    result(input::keys(tmux, t, &keys))
                }
                _ => {
                    return Err(RpcError::new(
                        INVALID_PARAMS,
                        "tmux_send_keys: give either text (with enter, cancelMode) or keys, not both",
                    ));
                }
            }
        }
        "tmux_paste" => {
            let a: Paste = args(name, a)?;
            result(input::paste(
                tmux,
                a.target.as_deref(),
                &a.text,
                a.enter,
                a.settle_ms,
            ))
        }
        "tmux_capture" => {
            let a: Capture = args(name, a)?;
            let range = match (a.all, a.lines) {
                (true, Some(_)) => {
                    return Err(RpcError::new(
                        INVALID_PARAMS,
                        "tmux_capture: lines and all exclude each other",
                    ));
                }
                (true, None) => Range::All,
                (false, Some(n)) => Range::Lines(n),
                (false, None) => Range::Screen,
            };
            let r = capture::capture(
                tmux,
                &capture::Request {
                    target: a.target.as_deref(),
                    range: Some(range),
                    max_bytes: a.max_bytes,
                    ansi: a.ansi,
                    join: a.join,
                },
            );
            match r {
                Ok(c) => return Ok(captured(c)),
                Err(e) => failed(&e),
            }
        }
        "tmux_split" => {
            let a: Split = args(name, a)?;
            result(split::split(
                tmux,
                &split::SplitRequest {
                    target: a.target.as_deref(),
                    horizontal: a.horizontal,
                    size: a.size.as_deref(),
                    cwd: a.cwd.as_deref(),
                    cmd: &a.cmd,
                },
            ))
        }
        "tmux_swap" => {
            let a: Swap = args(name, a)?;
            result(swap::swap(tmux, &a.src, &a.dst))
        }
        "tmux_run" => {
            let a: Run = args(name, a)?;
            let cmd = if a.target.is_some() && a.until_stable.is_some() {
                a.cmd.into_given()
            } else {
                a.cmd.for_run()
            };
            result(run::execute(
                tmux,
                &run::Request {
                    target: a.target.as_deref(),
                    cmd: &cmd,
                    timeout_ms: a.timeout_ms.unwrap_or(DEFAULT_WAIT_MS),
                    until_stable: a.until_stable,
                    max_bytes: a.max_bytes,
                    keep: a.keep,
                    progress: Some(&tick),
                },
            ))
        }
        "tmux_watch" => {
            let a: Watch = args(name, a)?;
            let timeout = a.timeout_min.map(|v| match v {
                Value::String(s) => s,
                other => other.to_string(),
            });
            let cmd = a.cmd.into_given();
            let r = start::start(
                tmux,
                &start::Request {
                    target: a.target.as_deref(),
                    cmd: &cmd,
                    done_regex: a.done_regex.as_deref(),
                    timeout_min: timeout.as_deref(),
                    notify: a.notify.as_deref(),
                    forward: &a.forward,
                    cancel_mode: a.cancel_mode,
                },
            );
            match r {
                Ok(s) => {
                    session.resources.started(session, &s.job_id);
                    done(
                        &json!({"kind": "background", "jobId": s.job_id, "paneId": s.pane_id,
                        "uri": super::resources::watch_uri(&s.job_id)}),
                    )
                }
                Err(e) => failed(&e),
            }
        }
        "tmux_kill" => {
            let a: Kill = args(name, a)?;
            let scope = match a.scope.as_str() {
                "pane" => KillScope::Pane,
                "window" => KillScope::Window,
                "session" => KillScope::Session,
                "server" => KillScope::Server,
                other => {
                    return Err(RpcError::new(
                        INVALID_PARAMS,
                        format!(
                            "tmux_kill: scope {other:?} is not one of pane, window, session, server"
                        ),
                    ));
                }
            };
            result(kill::kill(tmux, scope, a.target.as_deref(), a.confirm))
        }
        "agent_ask" => {
            let a: Ask = args(name, a)?;
            let r = ask::ask(
                tmux,
                &ask::Request {
                    target: &a.target,
                    message: &a.message,
                    project: a.project.as_deref(),
                    permission_mode: a.permission_mode.as_deref(),
                    timeout: Duration::from_secs(a.timeout_s.unwrap_or(DEFAULT_WAIT_MS / 1000)),
                    progress: Some(&tick),
                },
            );
            match r {
                Ok(reply) => {
                    let mut v = serde_json::to_value(&reply).unwrap_or_else(|_| json!({}));
                    v["delivery"] = json!("delivered");
                    done(&v)
                }
                Err(f) => ask_failed(Some(f.delivery), &f.error.human()),
            }
        }
        "side_chat_main_status" => {
            let a: SideTarget = args(name, a)?;
            result(crate::side::status_for(tmux, a.target.as_deref()))
        }
        "side_chat_main_history" => {
            let a: SideHistory = args(name, a)?;
            let r = crate::side::history_for(
                tmux,
                a.target.as_deref(),
                a.turn,
                a.contains.as_deref(),
                a.limit.unwrap_or(crate::side::HISTORY_DEFAULT),
            );
            result(r.map(|lines| json!({"lines": lines})))
        }
        "side_chat_report" => {
            let a: SideReport = args(name, a)?;
            result(crate::side::report_for(tmux, a.target.as_deref(), &a.text))
        }
        other => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                format!("unknown tool {other:?}; see tools/list"),
            ));
        }
    }))
}

/// A tool that runs the host's tmuxmate: its arguments become the CLI command they
/// stand for, run by the CLI's own `--host` route (`crate::cli::forward`: every word
/// quoted for the remote shell, long text over stdin); the host's JSON answer is the
/// result, its error text the refusal.
fn on_host(session: &Session, name: &str, a: &Value, h: Server) -> Result<Value, RpcError> {
    use crate::cli::{AgentAction, Command, MessageArgs, SideAction, WatchAction, WatchStartArgs};
    let cmd = match name {
        "tmux_watch" => {
            let a: Watch = args(name, a)?;
            Command::Watch {
                action: WatchAction::Start(WatchStartArgs {
                    target: a.target,
                    done_regex: a.done_regex,
                    timeout: None,
                    timeout_min: a.timeout_min.map(|v| match v {
                        Value::String(s) => s,
                        other => other.to_string(),
                    }),
                    notify: a.notify,
                    forward: a.forward,
                    cancel_mode: a.cancel_mode,
                    json: true,
                    cmd: a.cmd.into_given(),
                }),
            }
        }
        "agent_ask" => {
            let a: Ask = args(name, a)?;
            Command::Agent {
                action: AgentAction::Ask {
                    target: a.target,
                    msg: MessageArgs {
                        message: Some(a.message),
                        message_file: None,
                        stdin: None,
                    },
                    project: a.project,
                    permission_mode: a.permission_mode,
                    timeout: None,
                    timeout_s: Some(a.timeout_s.unwrap_or(DEFAULT_WAIT_MS / 1000)),
                    json: true,
                },
            }
        }
        "side_chat_main_status" => {
            let a: SideTarget = args(name, a)?;
            Command::Side {
                action: SideAction::Status {
                    target: a.target,
                    json: true,
                },
            }
        }
        "side_chat_main_history" => {
            let a: SideHistory = args(name, a)?;
            Command::Side {
                action: SideAction::History {
                    target: a.target,
                    turn: a.turn,
                    contains: a.contains,
                    limit: a.limit.unwrap_or(crate::side::HISTORY_DEFAULT),
                    json: true,
                },
            }
        }
        "side_chat_report" => {
            let a: SideReport = args(name, a)?;
            Command::Side {
                action: SideAction::Report {
                    target: a.target,
                    text: a.text,
                    json: true,
                },
            }
        }
        other => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                format!("unknown tool {other:?}; see tools/list"),
            ));
        }
    };
    let socket = super::host_socket(h.socket.as_deref());
    let answer = crate::cli::forward::run_from(&session.tmux, &h.host, socket.clone(), cmd);
    if name == "agent_ask" {
        use crate::cli::asked::{self, Asked};
        return Ok(match asked::read(&h.host, answer) {
            Asked::Reply(mut v) => {
                v["delivery"] = json!("delivered");
                done(&v)
            }
            Asked::Failed { delivery, text } => ask_failed(delivery, &text),
        });
    }
    let answer = match answer {
        Ok(a) => a,
        Err(e) => return Ok(failed(&e)),
    };
    Ok(match answer {
        crate::cli::forward::Answer::Started {
            job, pane, host, ..
        } => {
            session
                .resources
                .started_remote(session, &job, &host, socket);
            done(&json!({"kind": "background", "jobId": job, "paneId": pane,
                "uri": super::resources::watch_uri(&job), "host": host}))
        }
        crate::cli::forward::Answer::Passed(out) => {
            let v = serde_json::from_slice::<Value>(&out.stdout).ok();
            let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
            match v {
                // As the local tool answers: the lines in an object.
                Some(v) if out.status.success() && name == "side_chat_main_history" => {
                    done(&json!({"lines": v}))
                }
                Some(v) if out.status.success() => done(&v),
                // With --json the host prints its error object on stdout, not stderr.
                Some(v) if v["error"].is_object() => {
                    let text = crate::cli::asked::human_of(&v["error"]);
                    json!({"content": [{"type": "text", "text": text}], "isError": true})
                }
                _ => json!({"content": [{"type": "text", "text": stderr}], "isError": true}),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_list_fits_the_token_budget() {
        let bytes = serde_json::to_string(list()).unwrap().len();
        eprintln!("tools/list: {bytes} bytes");
        // Fourteen tools at under 800 bytes each: 11 KB (peers: 57-140 KB for fewer).
        assert!(bytes <= 11 * 1024, "tools/list is {bytes} bytes");
        let names: Vec<&str> = list()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), 14, "{names:?}");
    }
}
