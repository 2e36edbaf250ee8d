//! The MCP tools: one table (`TOOLS`) holds each tool's name, description, schemas, hints
//! and handlers; `tools/list` is built from it once, and `tools/call` finds its entry
//! there.
//!
//! Invariants: a tool exists only as a table entry, so the listing and the dispatch
//! cannot disagree; every entry's input schema is held to its handler's argument type by
//! this file's tests. `host`/`hostSocket` are in every input schema and are taken out
//! before the handler sees the arguments: a tool with a host route runs the host's
//! tmuxmate (`on_host`; `tmux_dashboard`'s refuses), the others talk to the host's tmux
//! over ssh. A tool whose handler reads this machine's state about panes (the agents
//! listing: the servers and followed hosts this machine has seen) has a host route, so
//! that state is never mixed with the host's panes (`tmux_agents`' route still waits for
//! one agent over ssh: that reads only the pane's options).

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::ctx::{Answer, Ctx};
use super::handlers as h;
use super::on_host::{self, Server};
use super::{INVALID_PARAMS, RpcError, Session};

/// How often a long wait reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

type Handler = fn(&Ctx, &Value) -> Result<Answer, RpcError>;
type Props = fn() -> Vec<(&'static str, Value)>;

/// What a tool does to the world, for clients that decide by it (one that runs
/// read-only tools at once, one that asks before a destructive one). Truthful rather
/// than flattering: typing into a pane can run anything the pane's program runs, so
/// `send_keys` and `paste` are destructive; a read stores a snapshot in tmuxmate's state
/// but changes no pane, which is what read-only means here.
struct Hints {
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
}

const READ: Hints = Hints {
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
};
const TYPES: Hints = Hints {
    read_only: false,
    destructive: true,
    idempotent: false,
    open_world: false,
};
const CHANGES: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
};
const RUNS: Hints = Hints {
    read_only: false,
    destructive: true,
    idempotent: false,
    open_world: true,
};
const KILLS: Hints = Hints {
    read_only: false,
    destructive: true,
    idempotent: true,
    open_world: false,
};
const ASKS: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: true,
};

/// One tool.
pub(super) struct Tool {
    pub(super) name: &'static str,
    description: &'static str,
    /// Input properties, `host` and `hostSocket` left out (every tool has them, last).
    pub(super) input: Props,
    pub(super) required: &'static [&'static str],
    output: Props,
    hints: Hints,
    /// The answer's text block is made for the model (a tree, lines, the capture):
    /// structured content only when the call asks with `json: true`, and no
    /// `outputSchema`. Claude Code and Codex hand the model the structured content
    /// instead of the text block whenever there is one (docs/mcp.md#what-the-model-reads),
    /// so a default answer carries the text alone, once.
    texted: bool,
    /// The call on this machine's tmux (or, with `host`, the host's tmux over ssh).
    run: Handler,
    /// With `host`: the call that runs the operation on the host's tmuxmate instead (or,
    /// for a tool that never runs on another host, refuses it).
    host: Option<on_host::OnHost>,
}

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
fn or_null(t: &str) -> Value {
    json!({"type": [t, "null"]})
}
fn arr() -> Value {
    json!({"type": "array"})
}

/// Every tool, in `tools/list` order.
pub(super) static TOOLS: &[Tool] = &[
    Tool {
        name: "tmux_list",
        description: "Sessions, windows (layout) and panes, a compact tree; json: true adds the JSON (paneId, target, command, createdByUs, createdBy = creator's address, agent = the pane's own). Every tool takes host ([user@]host[:port], one ssh master) and hostSocket (-L name or -S path there); watch, agent_ask, side_*, the agents list need `tmuxmate remote install HOST`.",
        input: Vec::new,
        required: &[],
        output: || vec![("sessions", arr()), ("windows", arr()), ("panes", arr())],
        hints: READ,
        texted: true,
        run: h::tmux_list,
        host: None,
    },
    Tool {
        name: "tmux_send_keys",
        description: "Type one line of literal text byte-exact (text, enter) or press named keys (keys: Enter Escape Tab BTab Up Down Left Right Home End PageUp PageDown BSpace C-a..C-z F1..F12). Refuses: no target, control chars, other key names, a dead pane, a pane in copy mode (unless cancelMode).",
        input: || {
            vec![
                ("target", s()),
                ("text", s()),
                ("keys", words()),
                ("enter", b()),
                ("cancelMode", b()),
            ]
        },
        required: &[],
        output: || {
            vec![
                ("target", s()),
                ("paneId", s()),
                ("sent", n()),
                ("enter", b()),
                ("keys", words()),
                ("inMode", b()),
            ]
        },
        hints: TYPES,
        texted: false,
        run: h::tmux_send_keys,
        host: None,
    },
    Tool {
        name: "tmux_paste",
        description: "Paste multi-line text as one bracketed paste (controls made visible), then at most one Enter after settleMs (default 150). Refuses: empty text, dead pane, copy mode with enter.",
        input: || {
            vec![
                ("target", s()),
                ("text", s()),
                ("enter", b()),
                ("settleMs", n()),
            ]
        },
        required: &["text"],
        output: || {
            vec![
                ("target", s()),
                ("paneId", s()),
                ("bytes", n()),
                ("lines", n()),
                ("sanitized", n()),
                ("enter", b()),
            ]
        },
        hints: TYPES,
        texted: false,
        run: h::tmux_paste,
        host: None,
    },
    Tool {
        name: "tmux_capture",
        description: "A pane's screen, last N lines (lines) or all scrollback (all), cut to maxBytes (default 100000; an answer stays under 10 MB) keeping the newest; answer = the capture (json: true adds lineCount, truncated, snapshot URI); stored as a snapshot resource.",
        input: || {
            vec![
                ("target", s()),
                ("lines", n()),
                ("all", b()),
                ("maxBytes", n()),
                ("ansi", b()),
                ("join", b()),
            ]
        },
        required: &[],
        output: || {
            vec![
                ("target", s()),
                ("paneId", s()),
                ("text", s()),
                ("lineCount", n()),
                ("truncated", b()),
                ("snapshot", or_null("string")),
            ]
        },
        hints: READ,
        texted: true,
        run: h::tmux_capture,
        host: None,
    },
    Tool {
        name: "tmux_split",
        description: "New pane marked ours: a split of target (horizontal, size N or N%), else a new window. cmd: argv words. Refuses a program not on PATH.",
        input: || {
            vec![
                ("target", s()),
                ("horizontal", b()),
                ("size", s()),
                ("cwd", s()),
                ("cmd", words()),
            ]
        },
        required: &[],
        output: || vec![("paneId", s()), ("target", s())],
        hints: CHANGES,
        texted: false,
        run: h::tmux_split,
        host: None,
    },
    Tool {
        name: "tmux_swap",
        description: "Swap two panes (no keys sent). Refuses the same pane twice.",
        input: || vec![("src", s()), ("dst", s())],
        required: &["src", "dst"],
        output: || vec![("src", s()), ("dst", s())],
        hints: CHANGES,
        texted: false,
        run: h::tmux_swap,
        host: None,
    },
    Tool {
        name: "tmux_run",
        description: "Run cmd (shell line or argv words) in a fresh pane, or typed into an idle POSIX shell pane (target), and wait: exit status and output. untilStable MS for REPLs/TUIs. timeoutMs default 50000. Refuses busy, non-shell or mode panes.",
        input: || {
            vec![
                ("target", s()),
                ("cmd", command()),
                ("timeoutMs", n()),
                ("untilStable", n()),
                ("maxBytes", n()),
                ("keep", b()),
            ]
        },
        required: &["cmd"],
        output: || {
            vec![
                ("paneId", s()),
                ("text", s()),
                ("exitStatus", or_null("integer")),
                ("truncated", b()),
                ("stabilized", b()),
                ("timedOut", b()),
                ("elapsedMs", n()),
                ("kept", b()),
            ]
        },
        hints: RUNS,
        texted: false,
        run: h::tmux_run,
        host: None,
    },
    Tool {
        name: "tmux_watch",
        description: "Start cmd (shell line or argv words) in the background (new window, or typed into an idle shell pane); done at exit or doneRegex. Result at the agent's next turn and as resource tmuxmate://watch/<jobId> (updated notification when done).",
        input: || {
            vec![
                ("target", s()),
                ("cmd", command()),
                ("doneRegex", s()),
                ("timeoutMin", json!({"type": ["number", "string"]})),
                ("notify", s()),
                ("forward", words()),
                ("cancelMode", b()),
            ]
        },
        required: &["cmd"],
        output: || {
            vec![
                ("kind", s()),
                ("jobId", s()),
                ("paneId", s()),
                ("uri", s()),
                ("host", s()),
            ]
        },
        hints: RUNS,
        texted: false,
        run: h::tmux_watch,
        host: Some(on_host::tmux_watch),
    },
    Tool {
        name: "tmux_kill",
        description: "Kill a pane, window, session or server. Refuses without confirm:true, without an exact target, the caller's own pane/window/session/server, and when the approval policy says no (fails closed).",
        input: || {
            vec![
                (
                    "scope",
                    json!({"enum": ["pane", "window", "session", "server"]}),
                ),
                ("target", s()),
                ("confirm", b()),
            ]
        },
        required: &["scope"],
        output: || {
            vec![
                ("scope", s()),
                ("target", or_null("string")),
                ("paneId", or_null("string")),
                ("windowId", or_null("string")),
                ("sessionId", or_null("string")),
                ("killed", b()),
            ]
        },
        hints: KILLS,
        texted: false,
        run: h::tmux_kill,
        host: None,
    },
    Tool {
        name: "tmux_agents",
        description: "Agent panes' states (needs-you+why, working, done, idle, exited, unknown), most urgent first. target+until: wait until that agent is in one (timeoutMs default 50000). json: true adds the JSON.",
        input: || vec![("target", s()), ("until", words()), ("timeoutMs", n())],
        required: &[],
        output: || vec![("agents", arr()), ("state", s())],
        hints: READ,
        texted: true,
        run: h::tmux_agents,
        host: Some(on_host::tmux_agents),
    },
    Tool {
        name: "tmux_dashboard",
        description: "Every agent at a glance, most urgent first: state, project/branch, what it does now, todos, pending results/notes, context/cost. filter: text. json: true adds the JSON.",
        input: || vec![("filter", s())],
        required: &[],
        output: || {
            vec![
                ("agents", arr()),
                ("counts", json!({"type": "object"})),
                ("watch", json!({"type": "object"})),
                ("unreachedHosts", arr()),
            ]
        },
        hints: READ,
        texted: true,
        run: super::board::tmux_dashboard,
        host: Some(super::board::on_host),
    },
    Tool {
        name: "agent_ask",
        description: "Ask another agent CLI (target: claude/codex/gemini to start or reuse one for project, or a managed session name): send once, wait, complete reply. delivery: delivered, unconfirmed or not-delivered; never retried. Refuses busy agents and dialogs. timeoutS default 50.",
        input: || {
            vec![
                ("target", s()),
                ("message", s()),
                ("project", s()),
                ("permissionMode", s()),
                ("timeoutS", n()),
            ]
        },
        required: &["target", "message"],
        output: || {
            vec![
                ("delivery", s()),
                ("name", s()),
                ("complete", b()),
                ("source", s()),
                ("text", s()),
                ("truncated", b()),
            ]
        },
        hints: ASKS,
        texted: false,
        run: h::agent_ask,
        host: Some(on_host::agent_ask),
    },
    Tool {
        name: "side_chat_main_status",
        description: "The main agent's live digest and whether it is running (side chat).",
        input: || vec![("target", s())],
        required: &[],
        output: || {
            vec![
                ("paneId", s()),
                ("state", s()),
                ("transcript", or_null("string")),
                ("text", s()),
            ]
        },
        hints: READ,
        texted: false,
        run: h::side_chat_main_status,
        host: Some(on_host::side_chat_main_status),
    },
    Tool {
        name: "side_chat_main_history",
        description: "The main session's transcript lines, summarised; filter by turn or contains; limit 1-200 (default 40).",
        input: || {
            vec![
                ("target", s()),
                ("turn", n()),
                ("contains", s()),
                ("limit", n()),
            ]
        },
        required: &[],
        output: || vec![("lines", arr())],
        hints: READ,
        texted: false,
        run: h::side_chat_main_history,
        host: Some(on_host::side_chat_main_history),
    },
    Tool {
        name: "side_chat_report",
        description: "Queue a note for the main agent's next turn (never typed into its pane). Refuses empty text.",
        input: || vec![("target", s()), ("text", s())],
        required: &["text"],
        output: || vec![("queued", b()), ("agent", s()), ("key", s())],
        hints: CHANGES,
        texted: false,
        run: h::side_chat_report,
        host: Some(on_host::side_chat_report),
    },
];

impl Tool {
    /// The tool's `tools/list` entry.
    fn definition(&self) -> Value {
        let obj = |ps: Vec<(&str, Value)>| {
            Value::Object(ps.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
        };
        let mut input = (self.input)();
        if self.texted {
            input.push(("json", b()));
        }
        input.push(("host", s()));
        input.push(("hostSocket", s()));
        let mut d = json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": {"type": "object", "properties": obj(input), "required": self.required,
                "additionalProperties": false},
            "outputSchema": {"type": "object", "properties": obj((self.output)())},
            "annotations": {
                "readOnlyHint": self.hints.read_only,
                "destructiveHint": self.hints.destructive,
                "idempotentHint": self.hints.idempotent,
                "openWorldHint": self.hints.open_world,
            },
        });
        // A schema obliges every successful answer to carry structured content (and a
        // client checks for it), which a texted tool's default answer does not.
        if self.texted
            && let Some(m) = d.as_object_mut()
        {
            m.remove("outputSchema");
        }
        d
    }
}

/// The `tools/list` result, built once.
pub fn list() -> &'static Value {
    static LIST: OnceLock<Value> = OnceLock::new();
    LIST.get_or_init(|| json!({"tools": TOOLS.iter().map(Tool::definition).collect::<Vec<_>>()}))
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

/// The arguments without `json` (when it is a boolean; anything else stays for the
/// schema check to refuse), and whether it was true.
fn take_json(a: Value) -> (Value, bool) {
    let mut a = a;
    let json = match a.as_object_mut() {
        Some(m) if m.get("json").is_some_and(Value::is_boolean) => {
            m.remove("json").and_then(|v| v.as_bool()).unwrap_or(false)
        }
        _ => false,
    };
    (a, json)
}

/// A texted tool's answer as the call asked for it: with `json`, as the handler made it;
/// without, its text block alone (the structured content dropped unsent).
fn shaped(answer: Answer, json: bool) -> Answer {
    if json {
        return answer;
    }
    match answer {
        Answer::Texted { text, .. } => {
            let json = serde_json::to_string(&text).unwrap_or_else(|_| "\"\"".into());
            let at = 0..json.len();
            Answer::Plain { json, at }
        }
        Answer::Escaped {
            text_json: Some(json),
            ..
        } => {
            let at = 0..json.len();
            Answer::Plain { json, at }
        }
        Answer::Escaped {
            sc,
            at,
            text_json: None,
        } => Answer::Plain { json: sc, at },
        other => other,
    }
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
    let tool = TOOLS.iter().find(|t| t.name == name).ok_or_else(|| {
        RpcError::new(
            INVALID_PARAMS,
            format!("unknown tool {name:?}; see tools/list"),
        )
    })?;
    let a = params.get("arguments").unwrap_or(&Value::Null);
    let (a, host) = take_host(a);
    let (a, json) = if tool.texted { take_json(a) } else { (a, true) };
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
    let remote;
    let tmux = match (host, tool.host) {
        (None, _) => &session.tmux,
        (Some(h), Some(on_host)) => {
            return on_host(session, &a, &h, &tick).map(|r| shaped(r, json));
        }
        (Some(h), None) => match session.remote(&h.host, h.socket.as_deref()) {
            Ok(t) => {
                remote = t;
                &remote
            }
            Err(e) => return Ok(Answer::Value(h::failed(&e))),
        },
    };
    (tool.run)(
        &Ctx {
            session,
            tmux,
            tick: &tick,
            json,
        },
        &a,
    )
    .map(|r| shaped(r, json))
}

#[cfg(test)]
mod tests;
