//! Agent CLI adapters, as data: one row per CLI.
//!
//! Owns: everything that differs between Claude Code, Codex, Gemini CLI and a custom CLI -
//! name, session prefix, launch argv per permission mode, the real executables that
//! identify it, the ready/busy/dialog screen patterns, the settle delay before Enter, and
//! where replies are read from. Invariant: a new CLI is a new row here, not a new code
//! path elsewhere.

use crate::error::Error;

/// Which agent CLI an adapter drives. Stored in a session's contract and shown as its
/// lower-case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdapterName {
    Claude,
    Codex,
    Gemini,
    Custom,
}

impl AdapterName {
    pub fn as_str(self) -> &'static str {
        match self {
            AdapterName::Claude => "claude",
            AdapterName::Codex => "codex",
            AdapterName::Gemini => "gemini",
            AdapterName::Custom => "custom",
        }
    }
}

impl std::fmt::Display for AdapterName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a finished turn's reply is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplySource {
    /// `~/.claude/projects/<enc-cwd>/<session-id>.jsonl`, found by the exact session id.
    ClaudeTranscript,
    /// `$CODEX_HOME/sessions/Y/M/D/rollout-*.jsonl`, pinned after the first prompt.
    CodexRollout,
    /// `~/.gemini/tmp/<project>/chats/session-<time>-<sid8>.jsonl`, found by the session
    /// id we chose; it has no end-of-turn record (the idle screen concludes a turn).
    GeminiChat,
    /// The pane's own output since the send.
    Pane,
}

#[derive(Debug, Clone)]
pub struct Adapter {
    pub name: AdapterName,
    pub cli: String,
    pub prefix: &'static str,
    /// Permission modes and their launch arguments; the first is the default.
    pub modes: Vec<(&'static str, Vec<&'static str>)>,
    /// Arguments for every launch (before the mode's).
    pub base_args: Vec<&'static str>,
    /// `Some(flag)`: the CLI takes a session id we choose (its transcript name is known).
    pub session_id_flag: Option<&'static str>,
    /// Real executable names (`/proc/<pid>/exe` base names) that prove it is running.
    pub exes: Vec<String>,
    /// All must match the screen for the composer to be ready.
    pub ready: Vec<String>,
    /// At start only, all must match too: a CLI that draws its prompt before it can take
    /// one (Gemini CLI 0.61 shows its composer ~2 s before its config is initialized, and
    /// a prompt submitted then is queued and was lost; its banner comes with the init).
    pub start_ready: Vec<String>,
    /// Any visible means a turn is running.
    pub busy: Vec<String>,
    /// Any visible means a dialog that must never receive a keystroke.
    pub dialogs: Vec<String>,
    /// Delay between the paste and Enter. Codex turns an Enter within 120 ms of a burst of
    /// *typed* characters into a newline; our text always arrives as one bracketed paste,
    /// and both Claude 2.1.332 and Codex 0.171 submitted it even with Enter at 0 ms
    /// (docs/harnesses.md#codex-cli-in-a-pane). Submission is verified afterwards either way.
    pub settle_ms: u64,
    /// The settle grows by this many times the time the CLI took to draw the paste (its
    /// event loop's lag), up to `MAX_LAG_SETTLE_MS` more (0: a fixed settle).
    pub settle_lag_factor: u32,
    /// Enter only once `enter_probe` showed the CLI's paste guard over (its settle pause
    /// is then skipped; it remains the fallback when the proof fails).
    pub enter_probe: bool,
    /// After the ready screen, wait this long and look again (late start-up dialogs).
    pub late_dialog_ms: u64,
    pub reply: ReplySource,
    /// Pane fallback: the first line matching any of these ends the reply (the CLI's own
    /// UI drawn below it: hook notices, rules, the composer, the footer).
    pub reply_end: Vec<String>,
    /// Pane fallback: the reply starts at the first line matching this after the prompt
    /// (the lines between are the rest of the echoed prompt).
    pub reply_start: Option<&'static str>,
    /// Pane fallback: how the CLI echoes a submitted prompt in its history (a later one
    /// after ours means our turn is over and another began).
    pub prompt_echo: Option<&'static str>,
    /// Variables set for the CLI on top of the caller's environment.
    pub env: Vec<(&'static str, &'static str)>,
}

const CLAUDE_DIALOGS: &[&str] = &[
    r"Do you want to (proceed|make this edit|create|run|allow)",
    r"(?i)is this a project you trust",
    r"(?i)do you want to use this api key",
    r"(?i)welcome to claude code",
    r"(?m)^\s+❯ \d+\. ",
    r"\[y/N\]",
    r"(?i)allow (this|command)\?",
];
const CODEX_DIALOGS: &[&str] = &[
    r"enter/esc confirm",
    r"(?i)meet gpt-",
    r"(?i)update available",
    r"(?i)allow command\?",
    r"(?i)do you trust",
    r"(?i)approve|approval required",
    r"\[y/N\]",
    r"(?m)^\s*› \d+\. ",
];

fn v(x: &[&str]) -> Vec<String> {
    x.iter().map(|s| s.to_string()).collect()
}

pub fn claude() -> Adapter {
    Adapter {
        name: AdapterName::Claude,
        cli: "claude".into(),
        prefix: "tc",
        modes: vec![
            ("default", vec!["--permission-mode", "default"]),
            ("plan", vec!["--permission-mode", "plan"]),
            ("acceptEdits", vec!["--permission-mode", "acceptEdits"]),
            ("auto", vec!["--permission-mode", "auto"]),
            ("dontAsk", vec!["--permission-mode", "dontAsk"]),
            (
                "bypassPermissions",
                vec!["--permission-mode", "bypassPermissions"],
            ),
        ],
        base_args: vec![],
        session_id_flag: Some("--session-id"),
        exes: v(&["claude", "claude.exe"]),
        ready: v(&[r"(?m)^❯(\s|$)", "────"]),
        start_ready: vec![],
        busy: v(&[r"(?m)^[✻✽✶✳✢·*] \S.*…", r"esc to interrupt\)"]),
        dialogs: v(CLAUDE_DIALOGS),
        settle_ms: 30,
        settle_lag_factor: 0,
        enter_probe: false,
        late_dialog_ms: 300,
        reply: ReplySource::ClaudeTranscript,
        reply_end: vec![],
        reply_start: None,
        prompt_echo: None,
        env: vec![],
    }
}

pub fn codex() -> Adapter {
    Adapter {
        name: AdapterName::Codex,
        cli: "codex".into(),
        prefix: "ta-codex",
        modes: vec![
            (
                "workspace-write",
                vec![
                    "--sandbox",
                    "workspace-write",
                    "--ask-for-approval",
                    "never",
                ],
            ),
            (
                "read-only",
                vec!["--sandbox", "read-only", "--ask-for-approval", "never"],
            ),
            (
                "full-access",
                vec![
                    "--sandbox",
                    "danger-full-access",
                    "--ask-for-approval",
                    "never",
                ],
            ),
            (
                "on-request",
                vec![
                    "--sandbox",
                    "workspace-write",
                    "--ask-for-approval",
                    "on-request",
                ],
            ),
        ],
        // `--no-daemon`: without it Codex 0.171 starts (or joins) a shared app-server
        // daemon that outlives the session and runs the hooks without the pane's tty.
        base_args: vec!["--no-alt-screen", "--no-daemon"],
        session_id_flag: None,
        exes: v(&["codex"]),
        ready: v(&[r"(?m)^› ", r"\? for shortcuts"]),
        start_ready: vec![],
        busy: v(&[r"(?m)^• Working \(", r"esc to interrupt"]),
        dialogs: v(CODEX_DIALOGS),
        settle_ms: 60,
        settle_lag_factor: 0,
        enter_probe: false,
        late_dialog_ms: 1500,
        reply: ReplySource::CodexRollout,
        reply_end: vec![],
        reply_start: None,
        prompt_echo: None,
        env: vec![],
    }
}

pub fn gemini() -> Adapter {
    Adapter {
        name: AdapterName::Gemini,
        cli: "gemini".into(),
        prefix: "tg",
        modes: vec![
            ("default", vec!["--approval-mode", "default"]),
            ("auto_edit", vec!["--approval-mode", "auto_edit"]),
            ("yolo", vec!["--approval-mode", "yolo"]),
        ],
        base_args: vec![],
        // Gemini CLI 0.61 takes `--session-id <uuid>` and names its chat file after it.
        session_id_flag: Some("--session-id"),
        exes: v(&["gemini", "node"]),
        ready: v(&[r"Type your message"]),
        start_ready: v(&[r"Gemini CLI v\d"]),
        busy: v(&[r"esc to cancel"]),
        dialogs: v(&[
            r"(?i)allow execution",
            r"(?i)do you trust",
            r"\[y/N\]",
            r"(?m)^\s*● \d+\. ",
        ]),
        // Gemini CLI 0.61 turns an Enter within 40 ms of an (untrusted) paste into a
        // newline, timed on its own event loop: on a loaded machine 150 ms was not enough.
        settle_ms: 400,
        // That window is a 40 ms timer and then a re-render on Gemini's event loop, which
        // on a busy machine runs late: as late, at least, as it drew the paste (at load 10
        // the fixed 400 ms lost the Enter of a 2-line paste to a newline;
        // docs/harnesses.md#gemini-cli-in-a-pane).
        settle_lag_factor: 2,
        // The pause above is only the fallback: Gemini's guard clears on its own event
        // loop, so the bridge proves it over with two drawn cursor keys first.
        enter_probe: true,
        late_dialog_ms: 500,
        reply: ReplySource::GeminiChat,
        // The pane fallback (no chat file found). Gemini CLI 0.61's inline screen below
        // a reply (docs/harnesses.md#gemini-cli-in-a-pane): a leftover
        // `Executing Hook: …` line or `? for shortcuts`, a rule, `Shift+Tab to accept
        // edits` / `YOLO Ctrl+Y`, the composer, the footer.
        reply_end: v(&[
            r"^\s*Executing Hook",
            r"\? for shortcuts",
            r"^─{8,}",
            r"^\s*[>*]\s+Type your message",
            r"^\s*(Shift\+Tab to accept edits|YOLO Ctrl\+Y)",
            r"^\s*Press Ctrl\+O to expand pasted text",
        ]),
        // Gemini CLI 0.61 echoes a prompt as ` > text` (continuation lines indented) and
        // starts its reply with `✦ `.
        reply_start: Some(r"^✦ "),
        prompt_echo: Some(r"^ > \S"),
        // One process instead of a launcher that relaunches itself and ignores SIGHUP
        // (Gemini CLI 0.61: both survived `kill-session`); this one exits on the hangup.
        env: vec![("GEMINI_CLI_NO_RELAUNCH", "true")],
    }
}

/// A CLI we know only by its path and its ready pattern. Its identity is the executable
/// the path resolves to (`/usr/bin/python3` runs as `python3.11`), or the name itself.
pub fn custom(cli: &str, ready: &str) -> Adapter {
    let base = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let mut exes = vec![base(cli)];
    if let Some(real) = crate::sys::which::which(cli)
        .and_then(|p| std::fs::canonicalize(p).ok())
        .map(|p| base(&p.to_string_lossy()))
        && !exes.contains(&real)
    {
        exes.push(real);
    }
    Adapter {
        name: AdapterName::Custom,
        cli: cli.to_string(),
        prefix: "tx",
        modes: vec![("default", vec![])],
        base_args: vec![],
        session_id_flag: None,
        exes,
        ready: vec![ready.to_string()],
        start_ready: vec![],
        busy: vec![],
        dialogs: v(&[r"\[y/N\]", r"(?i)do you want to proceed"]),
        settle_ms: 150,
        settle_lag_factor: 0,
        enter_probe: false,
        late_dialog_ms: 0,
        reply: ReplySource::Pane,
        reply_end: vec![],
        reply_start: None,
        prompt_echo: None,
        env: vec![],
    }
}

pub const NAMES: &[&str] = &["claude", "codex", "gemini", "custom"];

pub fn by_name(name: &str) -> Option<Adapter> {
    match name {
        "claude" => Some(claude()),
        "codex" => Some(codex()),
        "gemini" => Some(gemini()),
        _ => None,
    }
}

impl Adapter {
    pub fn mode_args(&self, mode: &str) -> Option<&[&'static str]> {
        self.modes
            .iter()
            .find(|(m, _)| *m == mode)
            .map(|(_, a)| a.as_slice())
    }
    pub fn default_mode(&self) -> &'static str {
        self.modes[0].0
    }
    pub fn mode_names(&self) -> String {
        self.modes
            .iter()
            .map(|(m, _)| *m)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The adapter `agent start` asked for: a known name, or `custom` with its CLI and ready
/// pattern (which must compile).
pub fn choose(name: &str, cli: Option<&str>, ready: Option<&str>) -> Result<Adapter, Error> {
    if name == AdapterName::Custom.as_str() {
        let (Some(cli), Some(re)) = (cli, ready) else {
            return Err(Error::usage(
                "the custom adapter needs --cli PATH and --ready-regex RE",
            ));
        };
        regex::Regex::new(re)
            .map_err(|e| Error::usage(format!("--ready-regex does not compile: {e}")))?;
        return Ok(custom(cli, re));
    }
    by_name(name).ok_or_else(|| {
        Error::usage(format!(
            "unknown adapter {name:?}: use one of {}",
            NAMES.join(", ")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_compile() {
        for a in [claude(), codex(), gemini(), custom("/x/y", "ok>")] {
            for p in a.ready.iter().chain(&a.busy).chain(&a.dialogs) {
                assert!(regex::Regex::new(p).is_ok(), "{}: {p}", a.name);
            }
            assert!(a.mode_args(a.default_mode()).is_some());
        }
    }
}
