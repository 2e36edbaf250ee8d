//! The JSON contract (docs/json.md) as test-side types: one per `--json` shape and per
//! MCP structured result, each `deny_unknown_fields` with every field listed, so a key
//! that is added, removed or renamed fails the test that reads it. Keep this file and
//! docs/json.md in step: a change here is a change of the contract.
//!
//! Ids are as tmux prints them (`%N` panes, `@N` windows, `$N` sessions) under
//! `paneId`/`windowId`/`sessionId`; `target` is the resolved `session:window.pane`
//! address (for reading: indexes shift, ids do not); indexes are numbers.

#![allow(dead_code)] // every field is deserialized to pin the shape; not all are read

use serde::Deserialize;
use serde::de::DeserializeOwned;

/// Parse `stdout` as exactly one `T` (the whole document: no trailing text).
pub fn parse<T: DeserializeOwned>(what: &str, stdout: &[u8]) -> T {
    let text = String::from_utf8_lossy(stdout);
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{what}: not the documented JSON shape ({e}):\n{text}"))
}

// ---- errors ----

#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ErrorJson {
    pub error: ErrorBody,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ErrorBody {
    pub kind: String,
    pub message: String,
    pub hint: Option<String>,
}

/// A failed `agent ask --json`: the error and how far the message got.
#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AskFailedJson {
    pub error: ErrorBody,
    /// `delivered`, `unconfirmed`, `not-delivered`; null only over `--host` when the host
    /// did not report it.
    pub delivery: Option<String>,
}

// ---- location ----

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WhereJson {
    pub pane_id: String,
    pub target: String,
    pub session_name: String,
    pub window_index: u32,
    pub window_name: String,
    pub pane_index: u32,
    pub window_active: bool,
    pub pane_active: bool,
    pub layout: String,
    pub socket_path: String,
    pub agent: String,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnJson {
    pub agent: String,
    pub turn: u64,
    pub items: Vec<String>,
    pub text: String,
    pub no_location: Option<String>,
}

/// `hook <harness>`: the harness's own shape (Claude Code, Codex, Gemini).
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HookJson {
    pub hook_specific_output: HookOutput,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HookOutput {
    pub hook_event_name: String,
    pub additional_context: String,
}

// ---- control ----

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListJson {
    pub sessions: Vec<SessionJson>,
    pub windows: Vec<WindowJson>,
    pub panes: Vec<PaneJson>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionJson {
    pub session_id: String,
    pub name: String,
    pub attached: bool,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WindowJson {
    pub window_id: String,
    pub session_id: String,
    pub index: u32,
    pub name: String,
    pub active: bool,
    pub layout: String,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PaneJson {
    pub pane_id: String,
    pub target: String,
    pub session_id: String,
    pub window_id: String,
    pub width: u32,
    pub height: u32,
    pub current_command: String,
    pub executable: Option<String>,
    pub active: bool,
    pub dead: bool,
    pub in_mode: bool,
    pub mode: String,
    pub created_by_us: bool,
    pub watch: Option<JobJson>,
    pub agent: Option<String>,
    pub created_by: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SentJson {
    pub target: String,
    pub pane_id: String,
    pub sent: usize,
    pub enter: bool,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PastedJson {
    pub target: String,
    pub pane_id: String,
    pub bytes: usize,
    pub lines: usize,
    pub sanitized: usize,
    pub enter: bool,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PressedJson {
    pub target: String,
    pub pane_id: String,
    pub keys: Vec<String>,
    pub in_mode: bool,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CaptureJson {
    pub target: String,
    pub pane_id: String,
    pub text: String,
    pub line_count: usize,
    pub truncated: bool,
}

/// `split`, `new-window`, MCP `tmux_split`.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreatedJson {
    pub pane_id: String,
    pub target: String,
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SwappedJson {
    pub src: String,
    pub dst: String,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunJson {
    pub pane_id: String,
    pub exit_status: Option<i32>,
    pub text: String,
    pub truncated: bool,
    pub elapsed_ms: u64,
    pub timed_out: bool,
    pub stabilized: bool,
    pub kept: bool,
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KillJson {
    pub scope: String,
    pub target: Option<String>,
    pub pane_id: Option<String>,
    pub window_id: Option<String>,
    pub session_id: Option<String>,
    pub killed: bool,
}

// ---- snapshots ----

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SnapshotRow {
    pub snapshot_id: String,
    pub time: u64,
    pub pane_id: String,
    pub target: String,
    pub line_count: usize,
    pub truncated: bool,
    pub preview: String,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SnapshotFull {
    pub snapshot_id: String,
    pub time: u64,
    pub pane_id: String,
    pub target: String,
    pub line_count: usize,
    pub truncated: bool,
    pub preview: String,
    pub text: String,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClearedJson {
    pub cleared: usize,
}

// ---- watch ----

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WatchStartedJson {
    pub job_id: String,
    pub pane_id: String,
}

/// `watch start --host H --json`: the job runs on the host.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WatchStartedRemoteJson {
    pub job_id: String,
    pub pane_id: String,
    pub host: String,
}

/// `remote install HOST --json`.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RemoteInstalledJson {
    pub host: String,
    pub path: String,
    pub installed: bool,
    pub already_installed: bool,
    pub bytes: u64,
    pub sha256: String,
    pub version: String,
}

/// `watch list` (an array of these), `watch show`, a `list` pane's `watch`, the MCP
/// watch resource.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobJson {
    pub job_id: String,
    pub pane_id: String,
    pub command: String,
    pub done_regex: Option<String>,
    pub status: String,
    pub outcome: String,
    pub exit_status: Option<i32>,
    pub detail: Option<String>,
    pub start: u64,
    pub end: Option<u64>,
    pub deadline: u64,
    pub notify: Vec<String>,
    pub forward: Vec<String>,
    pub launched: bool,
    pub queued: bool,
    pub tail: Option<String>,
    pub socket: String,
    pub unreadable: Option<String>,
    /// A job this machine started on another host (local `watch list`).
    #[serde(default)]
    pub host: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WatchStoppedJson {
    pub job_id: String,
    pub stopped: bool,
    pub pane_id: String,
}

// ---- agent bridge ----

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentStartedJson {
    pub name: String,
    pub session_id: String,
    pub pane_id: String,
    pub adapter: String,
    pub project: String,
    pub permission_mode: String,
    pub reused: bool,
    pub cli_session: Option<String>,
    pub attach: String,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentSentJson {
    pub name: String,
    pub pane_id: String,
    pub bytes: usize,
    pub submitted: bool,
    pub verified_by: String,
}

/// `agent reply`, `agent wait`, `agent ask`.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplyJson {
    pub name: String,
    pub complete: bool,
    pub source: String,
    pub text: String,
    pub truncated: bool,
    pub attach: String,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentListedJson {
    pub name: String,
    pub session_id: String,
    pub adapter: String,
    pub project: String,
    pub permission_mode: String,
    pub pane_id: String,
    pub cli_session: Option<String>,
    pub state: String,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentStoppedJson {
    pub name: String,
    pub stopped: bool,
    pub processes: usize,
    pub ended_by_pid: Vec<i32>,
}

// ---- side chat ----

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SideStatusJson {
    pub pane_id: String,
    pub state: String,
    pub transcript: Option<String>,
    pub text: String,
}

/// `side history` (an array of these).
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HistoryLineJson {
    pub turn: u64,
    pub text: String,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReportedJson {
    pub queued: bool,
    pub agent: String,
    pub key: String,
}

// ---- agent state ----

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentRowJson {
    pub pane_id: String,
    pub target: String,
    pub harness: String,
    pub state: String,
    pub since: u64,
    pub why: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct AgentsJson {
    pub agents: Vec<AgentRowJson>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WaitedJson {
    pub pane_id: String,
    pub state: String,
    pub why: String,
    pub since: u64,
    pub waited_ms: u64,
}

// ---- dashboard ----

#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DashTodosJson {
    pub done: usize,
    pub total: usize,
    pub now: Option<String>,
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DashPendingJson {
    pub watch: usize,
    pub notes: usize,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DashRowJson {
    pub pane_id: String,
    pub target: String,
    pub socket: Option<String>,
    pub host: Option<String>,
    pub harness: String,
    pub name: String,
    pub managed: bool,
    pub state: String,
    pub since: u64,
    pub why: String,
    pub project: Option<String>,
    pub branch: Option<String>,
    pub doing: String,
    pub todos: Option<DashTodosJson>,
    pub pending: DashPendingJson,
    pub usage: Option<UsageJson>,
}

#[derive(Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DashCountsJson {
    pub needs_you: usize,
    pub working: usize,
    pub done: usize,
    pub idle: usize,
    pub unknown: usize,
    pub exited: usize,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DashJobJson {
    pub job_id: String,
    pub command: String,
    pub status: String,
    pub start: u64,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DashWatchJson {
    pub running: usize,
    pub done: usize,
    pub jobs: Vec<DashJobJson>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DashUnreachedJson {
    pub host: String,
    pub why: String,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DashboardJson {
    pub agents: Vec<DashRowJson>,
    pub counts: DashCountsJson,
    pub watch: DashWatchJson,
    pub unreached_hosts: Vec<DashUnreachedJson>,
}

// ---- digest ----

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DigestShowJson {
    pub transcript: String,
    pub pane_id: Option<String>,
    pub format: Option<String>,
    pub offset: u64,
    pub pending_bytes: u64,
    pub digest: DigestJson,
    pub text: String,
    pub status: String,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DigestJson {
    pub goal: Option<String>,
    pub goal_source: Option<String>,
    pub model: Option<String>,
    pub turns: Vec<DigestTurnJson>,
    pub open_turn: Option<OpenTurnJson>,
    pub todos: Vec<TodoJson>,
    pub recent_tools: Vec<ToolJson>,
    pub last_error: Option<FailureJson>,
    pub counts: CountsJson,
    pub last_activity: Option<u64>,
    pub usage: Option<UsageJson>,
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UsageJson {
    pub context_tokens: Option<u64>,
    pub context_window: Option<u64>,
    pub total_tokens: Option<u64>,
    pub cost_usd: Option<f64>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DigestTurnJson {
    pub n: u64,
    pub prompt: Option<String>,
    pub outcome: String,
    pub started: Option<u64>,
    pub ended: Option<u64>,
    pub steps: u64,
    pub tools: u64,
    pub errors: u64,
    pub result: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpenTurnJson {
    pub n: u64,
    pub prompt: Option<String>,
    pub started: Option<u64>,
    pub steps: u64,
    pub tool_count: u64,
    pub error_count: u64,
    pub latest_text: Option<String>,
    pub tools: Vec<ToolJson>,
    pub failures: Vec<FailureJson>,
    pub interrupted: bool,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TodoJson {
    pub text: String,
    pub status: String,
    /// `null` when the transcript gave none.
    pub id: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolJson {
    pub name: String,
    pub summary: String,
    /// `null` when the transcript gave none.
    pub id: Option<String>,
    pub at: Option<u64>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FailureJson {
    pub tool: Option<String>,
    pub text: String,
    pub at: Option<u64>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CountsJson {
    pub turns: u64,
    pub steps: u64,
    pub tool_calls: u64,
    pub errors: u64,
    pub compactions: u64,
    pub lines: u64,
    pub bad_lines: u64,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DigestAttachJson {
    pub pane_id: String,
    pub transcript: String,
    pub format: Option<String>,
    pub started: bool,
}

// ---- doctor ----

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DoctorJson {
    pub ok: bool,
    pub problems: usize,
    pub checks: Vec<CheckJson>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckJson {
    pub area: String,
    /// ok | warning | problem | skipped
    pub status: String,
    pub detail: String,
    pub fix: Option<String>,
}

// ---- MCP structured results that add to a CLI shape ----

/// `tmux_capture`: the capture plus its snapshot resource's uri.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpCaptureJson {
    pub target: String,
    pub pane_id: String,
    pub text: String,
    pub line_count: usize,
    pub truncated: bool,
    pub snapshot: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpWatchJson {
    pub kind: String,
    pub job_id: String,
    pub pane_id: String,
    pub uri: String,
    /// With `host`: the host the job runs on.
    #[serde(default)]
    pub host: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpHistoryJson {
    pub lines: Vec<HistoryLineJson>,
}

/// `agent_ask`: the reply plus `delivery`.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpAskJson {
    pub delivery: String,
    pub name: String,
    pub complete: bool,
    pub source: String,
    pub text: String,
    pub truncated: bool,
    pub attach: String,
}
