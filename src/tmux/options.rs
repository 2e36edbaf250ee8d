//! The table of every `@tmuxmate-*` option: its name, where it lives, its default and how
//! its value is read.
//!
//! Owns: the names (no `"@tmuxmate-..."` literal outside this file: a unit test reads the
//! tree), the defaults (the snippet `tmux.conf.d/tmuxmate.conf` sets each user option to
//! exactly the default here: a unit test reads the snippet), and the parsers of the user
//! options. Invariants: a missing or empty user option means its default; a value that
//! does not parse is reported by [`Opt::number`] / [`Opt::flag`] with the option's name and
//! what it accepts, and each caller decides (per-turn and status paths fail soft, commands
//! refuse). Options of ours (state tmuxmate keeps in the server) have no default.

use super::client::Tmux;

/// Where tmux keeps an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `set -g`: the user's setting for the whole server.
    Global,
    /// `set -s` in spirit, kept `-g`: state of ours for the whole server.
    Server,
    /// A session option of ours (bridge sessions).
    Session,
    /// A pane option of ours.
    Pane,
    /// A window option of ours (the window list's agent marker).
    Window,
}

/// What an option holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `on`/`off` (also 1/0, yes/no, true/false).
    Flag,
    /// A whole number in `min..=max`.
    Number { min: u64, max: u64 },
    /// Free text (a command, a path, a list of words or globs, a key name).
    Text,
    /// State of ours: written and read by tmuxmate only.
    Ours,
}

/// One `@tmuxmate-*` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opt {
    pub name: &'static str,
    pub scope: Scope,
    pub kind: Kind,
    /// What a missing or empty value means (user options only).
    pub default: Option<&'static str>,
    pub doc: &'static str,
}

const fn user(name: &'static str, kind: Kind, default: &'static str, doc: &'static str) -> Opt {
    Opt {
        name,
        scope: Scope::Global,
        kind,
        default: Some(default),
        doc,
    }
}

const fn ours(name: &'static str, scope: Scope, doc: &'static str) -> Opt {
    Opt {
        name,
        scope,
        kind: Kind::Ours,
        default: None,
        doc,
    }
}

const fn num(min: u64, max: u64) -> Kind {
    Kind::Number { min, max }
}

// --- The user's settings (the snippet sets each to its default with `set -goq`) ---------
pub const REFRESH_INTERVAL_MS: Opt = user(
    "@tmuxmate-refresh-interval-ms",
    num(0, 86_400_000),
    "0",
    "minimum milliseconds between two location injections (0 = every changed turn)",
);
pub const REQUIRE_EXPLICIT_TARGET: Opt = user(
    "@tmuxmate-require-explicit-target",
    Kind::Flag,
    "on",
    "a missing -t is refused; off lets it mean the pane tmuxmate created last for the agent",
);
pub const PASTE_SETTLE_MS: Opt = user(
    "@tmuxmate-paste-settle-ms",
    num(0, 60_000),
    "150",
    "milliseconds between a paste and its Enter",
);
pub const CAPTURE_MAX_BYTES: Opt = user(
    "@tmuxmate-capture-max-bytes",
    num(1, 1 << 30),
    "100000",
    "the byte budget of a capture",
);
pub const HISTORY_LIMIT: Opt = user(
    "@tmuxmate-history-limit",
    num(0, 100_000_000),
    "50000",
    "scrollback lines of panes tmuxmate creates",
);
pub const SNAPSHOTS: Opt = user(
    "@tmuxmate-snapshots",
    Kind::Flag,
    "on",
    "store every capture, run and watch result privately as a snapshot",
);
pub const WATCH_TIMEOUT_MIN: Opt = user(
    "@tmuxmate-watch-timeout-min",
    num(1, 10_080),
    "120",
    "minutes a watch job runs before it is stopped",
);
pub const WATCH_TAIL_LINES: Opt = user(
    "@tmuxmate-watch-tail-lines",
    num(1, 1000),
    "40",
    "lines of output a watch result carries",
);
pub const WATCH_WINDOWS_KEPT: Opt = user(
    "@tmuxmate-watch-windows-kept",
    num(0, 100_000),
    "10",
    "finished watch windows kept open; older ones that nobody touched are closed once their result was delivered",
);
pub const SHELLS: Opt = user(
    "@tmuxmate-shells",
    Kind::Text,
    "bash zsh fish sh dash ksh ksh93 mksh oksh loksh pdksh ash yash posh busybox tcsh csh nu elvish xonsh pwsh powershell",
    "programs that count as an idle shell (space-separated)",
);
pub const APPROVAL: Opt = user(
    "@tmuxmate-approval",
    Kind::Text,
    "kill-server kill-session kill-window",
    "operations that must be approved (space-separated globs)",
);
pub const APPROVAL_TIMEOUT_S: Opt = user(
    "@tmuxmate-approval-timeout-s",
    num(1, 3600),
    "30",
    "seconds to wait for an approval; no answer counts as No",
);
pub const APPROVE_COMMAND: Opt = user(
    "@tmuxmate-approve-command",
    Kind::Text,
    "",
    "the approver program (sh -c; exit 0 = approve); unset: a menu on an attached client",
);
pub const DIGEST_TURNS: Opt = user(
    "@tmuxmate-digest-turns",
    num(4, 60),
    "12",
    "finished turns shown in a digest",
);
pub const SIDE_AGENT: Opt = user(
    "@tmuxmate-side-agent",
    Kind::Text,
    "claude",
    "the CLI a side chat runs: claude, codex or gemini",
);
pub const SNAPSHOTS_KEY: Opt = user(
    "@tmuxmate-snapshots-key",
    Kind::Text,
    "M-s",
    "the prefix key of the snapshots popup (none: no key)",
);
pub const NOTIFY: Opt = user(
    "@tmuxmate-notify",
    Kind::Flag,
    "on",
    "tell attached clients (display-message) when an agent needs you or is done",
);
pub const NOTIFY_BELL: Opt = user(
    "@tmuxmate-notify-bell",
    Kind::Flag,
    "off",
    "also ring the bell on attached clients' terminals",
);
pub const NOTIFY_OSC: Opt = user(
    "@tmuxmate-notify-osc",
    Kind::Text,
    "off",
    "also send a desktop notification to attached clients' terminals: off, 9 or 777",
);
pub const NOTIFY_COMMAND: Opt = user(
    "@tmuxmate-notify-command",
    Kind::Text,
    "",
    "a program (words, no shell) run with the alert's text as its last argument",
);
pub const NOTIFY_COOLDOWN_S: Opt = user(
    "@tmuxmate-notify-cooldown-s",
    num(0, 3600),
    "10",
    "seconds after an alert for a pane in which that pane alerts no more",
);
pub const HOSTS: Opt = user(
    "@tmuxmate-hosts",
    Kind::Text,
    "",
    "ssh hosts ([user@]host[:port], space-separated) whose agents the list and the status line count",
);
pub const JUMP_KEY: Opt = user(
    "@tmuxmate-jump-key",
    Kind::Text,
    "M-j",
    "the prefix key that jumps to the agent that has needed you longest (none: no key)",
);
pub const DASHBOARD_KEY: Opt = user(
    "@tmuxmate-dashboard-key",
    Kind::Text,
    "M-d",
    "the prefix key that opens the dashboard of every agent in a popup (none: no key)",
);
pub const SIDE_KEY: Opt = user(
    "@tmuxmate-side-key",
    Kind::Text,
    "M-a",
    "the prefix key of the side chat (none: no key)",
);

// --- State of ours --------------------------------------------------------------------
pub const BIN: Opt = ours(
    "@tmuxmate-bin",
    Scope::Server,
    "this binary's path (the snippet)",
);
pub const SNIPPET: Opt = ours(
    "@tmuxmate-snippet",
    Scope::Server,
    "where the snippet was loaded from",
);
pub const SAVED_WINDOW_SIZE: Opt = ours(
    "@tmuxmate-saved-window-size",
    Scope::Server,
    "the user's window-size while a creation runs on a fresh server",
);
pub const WATCH_STATUS: Opt = ours(
    "@tmuxmate-watch-status",
    Scope::Server,
    "watch counts for the status line",
);
pub const AGENT: Opt = ours(
    "@tmuxmate-agent",
    Scope::Pane,
    "the agent address whose per-turn call came from this pane",
);
pub const CREATED: Opt = ours(
    "@tmuxmate-created",
    Scope::Pane,
    "the mark of a pane we created",
);
pub const JOB: Opt = ours("@tmuxmate-job", Scope::Pane, "a watch job's state");
pub const TIDY_SEEN: Opt = ours(
    "@tmuxmate-tidy-seen",
    Scope::Pane,
    "a finished watch window's activity time when tidying first saw it",
);
pub const LAST_SEND: Opt = ours(
    "@tmuxmate-last-send",
    Scope::Pane,
    "what the bridge sent last",
);
pub const TRANSCRIPT: Opt = ours(
    "@tmuxmate-transcript",
    Scope::Pane,
    "the agent's transcript path",
);
pub const TRANSCRIPT_FORMAT: Opt = ours(
    "@tmuxmate-transcript-format",
    Scope::Pane,
    "the transcript's format",
);
pub const STATUS: Opt = ours("@tmuxmate-status", Scope::Pane, "the agent's digest status");
pub const FOLLOWER: Opt = ours("@tmuxmate-follower", Scope::Pane, "the digest follower");
pub const SIDE: Opt = ours("@tmuxmate-side", Scope::Pane, "the open side chat");
pub const SIDE_TRANSCRIPT: Opt = ours(
    "@tmuxmate-side-transcript",
    Scope::Pane,
    "the side chat's transcript",
);
pub const SIDE_SPLIT: Opt = ours(
    "@tmuxmate-side-split",
    Scope::Pane,
    "the side chat's split and the main window's layout before it",
);
pub const STATE: Opt = ours(
    "@tmuxmate-state",
    Scope::Pane,
    "the agent's state: working, needs-you, done, idle, exited, unknown",
);
pub const STATE_SINCE: Opt = ours(
    "@tmuxmate-state-since",
    Scope::Pane,
    "when the agent's state last changed (unix seconds; tmux's #{t:...} shows it)",
);
pub const STATE_WHY: Opt = ours(
    "@tmuxmate-state-why",
    Scope::Pane,
    "why the agent needs you (a permission, a question, an error)",
);
pub const STATE_RECORD: Opt = ours(
    "@tmuxmate-state-record",
    Scope::Pane,
    "the agent state's whole record (JSON)",
);
pub const STATE_SOURCE: Opt = ours(
    "@tmuxmate-state-source",
    Scope::Pane,
    "what tells the agent's state besides its hooks: osc7501 (a pipe-pane reader), title (a pane-title-changed hook), session-file, or hooks alone (and why)",
);
pub const STATE_FILE: Opt = ours(
    "@tmuxmate-state-file",
    Scope::Pane,
    "the agent's own state file tmuxmate follows (Claude Code's session file)",
);
pub const STATE_ERROR: Opt = ours(
    "@tmuxmate-state-error",
    Scope::Pane,
    "the last failed model request's error while the agent retries (`<unix ms> <why>`), for the failed turn to say why",
);
pub const WINDOW_STATE: Opt = ours(
    "@tmuxmate-window-state",
    Scope::Window,
    "the most urgent agent state in the window",
);
pub const WINDOW_MARKER: Opt = ours(
    "@tmuxmate-window-marker",
    Scope::Window,
    "a short marker of the window's most urgent agent state, for window-status-format",
);
pub const AGENTS_STATUS: Opt = ours(
    "@tmuxmate-agents-status",
    Scope::Server,
    "agent counts for the status line",
);
pub const JUMP_LAST: Opt = ours(
    "@tmuxmate-jump-last",
    Scope::Server,
    "the pane the jump key went to last",
);
pub const MANAGED: Opt = ours("@tmuxmate-managed", Scope::Session, "a bridge session");
pub const ADAPTER: Opt = ours(
    "@tmuxmate-adapter",
    Scope::Session,
    "the bridge agent's CLI",
);
pub const CLI: Opt = ours(
    "@tmuxmate-cli",
    Scope::Session,
    "the bridge agent's executable",
);
pub const CLI_SESSION: Opt = ours(
    "@tmuxmate-cli-session",
    Scope::Session,
    "the bridge agent's conversation id",
);
pub const PROJECT: Opt = ours(
    "@tmuxmate-project",
    Scope::Session,
    "the bridge agent's project",
);
pub const PERMISSION_MODE: Opt = ours(
    "@tmuxmate-permission-mode",
    Scope::Session,
    "the bridge agent's permission mode",
);
pub const PANE: Opt = ours("@tmuxmate-pane", Scope::Session, "the bridge agent's pane");
pub const ROLLOUT: Opt = ours(
    "@tmuxmate-rollout",
    Scope::Session,
    "the Codex rollout file",
);

/// Options of ours named per instance: `@tmuxmate-bound-<action>-key` (the key tmuxmate
/// bound for a key-binding action, so a changed key unbinds the old one).
pub const BOUND_PREFIX: &str = "@tmuxmate-bound-";
/// `@tmuxmate-answer-<nonce>`: one approval menu's answer, set by its menu items.
pub const ANSWER_PREFIX: &str = "@tmuxmate-answer-";

/// Every option, users' first.
pub const ALL: &[Opt] = &[
    REFRESH_INTERVAL_MS,
    REQUIRE_EXPLICIT_TARGET,
    PASTE_SETTLE_MS,
    CAPTURE_MAX_BYTES,
    HISTORY_LIMIT,
    SNAPSHOTS,
    WATCH_TIMEOUT_MIN,
    WATCH_TAIL_LINES,
    WATCH_WINDOWS_KEPT,
    SHELLS,
    APPROVAL,
    APPROVAL_TIMEOUT_S,
    APPROVE_COMMAND,
    DIGEST_TURNS,
    SIDE_AGENT,
    SNAPSHOTS_KEY,
    SIDE_KEY,
    NOTIFY,
    NOTIFY_BELL,
    NOTIFY_OSC,
    NOTIFY_COMMAND,
    NOTIFY_COOLDOWN_S,
    HOSTS,
    JUMP_KEY,
    DASHBOARD_KEY,
    BIN,
    SNIPPET,
    SAVED_WINDOW_SIZE,
    WATCH_STATUS,
    AGENT,
    CREATED,
    JOB,
    TIDY_SEEN,
    LAST_SEND,
    TRANSCRIPT,
    TRANSCRIPT_FORMAT,
    STATUS,
    FOLLOWER,
    SIDE,
    SIDE_TRANSCRIPT,
    SIDE_SPLIT,
    STATE,
    STATE_SINCE,
    STATE_WHY,
    STATE_RECORD,
    STATE_SOURCE,
    STATE_FILE,
    STATE_ERROR,
    WINDOW_STATE,
    WINDOW_MARKER,
    AGENTS_STATUS,
    JUMP_LAST,
    MANAGED,
    ADAPTER,
    CLI,
    CLI_SESSION,
    PROJECT,
    PERMISSION_MODE,
    PANE,
    ROLLOUT,
];

impl Opt {
    /// The default as a number (the table holds one for every number option); `const` so
    /// the modules' own constants are this table's values.
    pub const fn default_number(&self) -> u64 {
        let d = match self.default {
            Some(d) => d.as_bytes(),
            None => b"",
        };
        let mut n = 0u64;
        let mut i = 0;
        while i < d.len() {
            n = n * 10 + (d[i] - b'0') as u64;
            i += 1;
        }
        n
    }

    /// The default as text ("" for options of ours).
    pub const fn default_text(&self) -> &'static str {
        match self.default {
            Some(d) => d,
            None => "",
        }
    }

    /// A number option's value: its default when empty, else a number in range.
    pub fn number(&self, raw: &str) -> Result<u64, String> {
        let raw = raw.trim();
        let (min, max) = match self.kind {
            Kind::Number { min, max } => (min, max),
            _ => (0, u64::MAX),
        };
        if raw.is_empty() {
            return Ok(self.default_number());
        }
        match raw.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(format!(
                "{} is {raw:?}: use a whole number from {min} to {max} (default {})",
                self.name,
                self.default.unwrap_or("none")
            )),
        }
    }

    /// A number option's value, its default when unset or not a number in range.
    pub fn number_or_default(&self, raw: &str) -> u64 {
        self.number(raw).unwrap_or_else(|_| self.default_number())
    }

    /// A flag option's value: its default when empty.
    pub fn flag(&self, raw: &str) -> Result<bool, String> {
        let raw = raw.trim();
        let raw = if raw.is_empty() {
            self.default.unwrap_or("off")
        } else {
            raw
        };
        match raw {
            "on" | "1" | "yes" | "true" => Ok(true),
            "off" | "0" | "no" | "false" => Ok(false),
            other => Err(format!("{} is {other:?}: use on or off", self.name)),
        }
    }

    /// A text option's value: its default when empty.
    pub fn text<'a>(&self, raw: &'a str) -> &'a str {
        let t = raw.trim();
        if t.is_empty() {
            self.default.unwrap_or("")
        } else {
            t
        }
    }

    /// The server-wide value as tmux holds it (empty when unset or when tmux cannot say).
    pub fn global(&self, tmux: &Tmux) -> String {
        tmux.run(&["show-options", "-gqv", self.name])
            .map(|v| v.trim_end_matches('\n').to_string())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_list_default_is_the_one_shell_table() {
        assert_eq!(
            SHELLS.default_text(),
            crate::sys::foreground::SHELLS
                .iter()
                .map(|s| s.0)
                .collect::<Vec<_>>()
                .join(" ")
        );
    }

    #[test]
    fn names_are_unique_and_spelled_alike() {
        let mut seen = std::collections::HashSet::new();
        for o in ALL {
            assert!(seen.insert(o.name), "{} twice", o.name);
            assert!(o.name.starts_with("@tmuxmate-"), "{}", o.name);
            assert!(
                o.name[1..]
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{}",
                o.name
            );
            assert_eq!(o.default.is_some(), o.kind != Kind::Ours, "{}", o.name);
            if let Kind::Number { min, max } = o.kind {
                let d = o.default_number();
                assert_eq!(Some(d.to_string().as_str()), o.default, "{}", o.name);
                assert!((min..=max).contains(&d), "{}", o.name);
            }
        }
    }

    /// `set -goq @tmuxmate-NAME VALUE` lines of the snippet, VALUE unquoted.
    fn snippet_defaults() -> Vec<(String, String)> {
        include_str!("../../tmux.conf.d/tmuxmate.conf")
            .lines()
            .map(|l| l.trim_start_matches('#').trim())
            .filter_map(|l| {
                let rest = l
                    .strip_prefix("set -goq ")
                    .or_else(|| l.strip_prefix("set -g "))?;
                let (name, value) = rest.split_once(' ')?;
                name.starts_with("@tmuxmate-")
                    .then(|| (name.to_string(), value.trim().trim_matches('"').to_string()))
            })
            .collect()
    }

    #[test]
    fn the_snippet_sets_each_user_option_to_the_tables_default() {
        let set = snippet_defaults();
        for o in ALL.iter().filter(|o| o.kind != Kind::Ours) {
            let found: Vec<_> = set.iter().filter(|(n, _)| n == o.name).collect();
            assert!(!found.is_empty(), "the snippet does not mention {}", o.name);
            for (_, v) in found {
                // The approver is shown commented out with an example command.
                if o.name != APPROVE_COMMAND.name {
                    assert_eq!(Some(v.as_str()), o.default, "{}", o.name);
                }
            }
        }
        for (n, _) in &set {
            assert!(ALL.iter().any(|o| o.name == n), "{n} is not in the table");
        }
    }

    #[test]
    fn no_option_name_is_spelled_outside_the_table() {
        fn walk(dir: &std::path::Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs")
                    && !p.ends_with("tmux/options.rs")
                {
                    let text = std::fs::read_to_string(&p).unwrap();
                    for (i, line) in text.lines().enumerate() {
                        let code = line.split("//").next().unwrap_or("");
                        if code.contains("\"@tmuxmate-") {
                            out.push(format!("{}:{}: {}", p.display(), i + 1, line.trim()));
                        }
                    }
                }
            }
        }
        let mut found = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut found,
        );
        assert!(
            found.is_empty(),
            "name these through tmux::options:\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn numbers_and_flags_parse_with_clear_refusals() {
        assert_eq!(DIGEST_TURNS.number(""), Ok(12));
        assert_eq!(DIGEST_TURNS.number(" 20 "), Ok(20));
        let e = DIGEST_TURNS.number("3").unwrap_err();
        assert!(
            e.contains("@tmuxmate-digest-turns") && e.contains("4 to 60"),
            "{e}"
        );
        assert_eq!(WATCH_TAIL_LINES.number_or_default("lots"), 40);
        assert_eq!(SNAPSHOTS.flag(""), Ok(true));
        assert_eq!(SNAPSHOTS.flag("off"), Ok(false));
        assert!(SNAPSHOTS.flag("maybe").unwrap_err().contains("on or off"));
        assert_eq!(SIDE_AGENT.text("  "), "claude");
        assert_eq!(SIDE_AGENT.text("codex"), "codex");
    }
}
