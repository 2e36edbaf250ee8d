//! Where each harness reads its hooks, MCP servers and skills, for the user (`$HOME`, with
//! the harnesses' own overrides) or for one project (`--project DIR`).
//!
//! Facts (docs/harnesses.md#claude-code-hooks, #claude-code-session-ids-and-files,
//! #codex-cli-hooks, #gemini-cli-hooks; checked with the real CLIs): Claude settings in
//! `$CLAUDE_CONFIG_DIR` (else `~/.claude`), user MCP servers in
//! `${CLAUDE_CONFIG_DIR:-$HOME}/.claude.json` (what `claude mcp add --scope user` writes),
//! project ones in `DIR/.mcp.json`; Codex in `$CODEX_HOME` (else `~/.codex`); Gemini in
//! `${GEMINI_CLI_HOME:-$HOME}/.gemini`; tmux's config `~/.tmux.conf` or
//! `${XDG_CONFIG_HOME:-~/.config}/tmux/tmux.conf`.

use std::path::{Path, PathBuf};

fn env_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

pub struct Paths {
    pub home: PathBuf,
    pub project: Option<PathBuf>,
}

impl Paths {
    pub fn claude_dir(&self) -> PathBuf {
        match &self.project {
            Some(p) => p.join(".claude"),
            None => env_dir("CLAUDE_CONFIG_DIR").unwrap_or_else(|| self.home.join(".claude")),
        }
    }
    pub fn claude_settings(&self) -> PathBuf {
        self.claude_dir().join("settings.json")
    }
    pub fn claude_mcp(&self) -> PathBuf {
        match &self.project {
            Some(p) => p.join(".mcp.json"),
            None => env_dir("CLAUDE_CONFIG_DIR")
                .unwrap_or_else(|| self.home.clone())
                .join(".claude.json"),
        }
    }
    pub fn claude_skill(&self) -> PathBuf {
        self.claude_dir().join("skills/tmuxmate/SKILL.md")
    }
    pub fn codex_dir(&self) -> PathBuf {
        match &self.project {
            Some(p) => p.join(".codex"),
            None => env_dir("CODEX_HOME").unwrap_or_else(|| self.home.join(".codex")),
        }
    }
    pub fn codex_hooks(&self) -> PathBuf {
        self.codex_dir().join("hooks.json")
    }
    pub fn codex_config(&self) -> PathBuf {
        self.codex_dir().join("config.toml")
    }
    pub fn codex_skill(&self) -> PathBuf {
        match &self.project {
            Some(p) => p.join(".agents/skills/tmuxmate/SKILL.md"),
            None => self.codex_dir().join("skills/tmuxmate/SKILL.md"),
        }
    }
    pub fn gemini_dir(&self) -> PathBuf {
        match &self.project {
            Some(p) => p.join(".gemini"),
            None => env_dir("GEMINI_CLI_HOME")
                .unwrap_or_else(|| self.home.clone())
                .join(".gemini"),
        }
    }
    pub fn gemini_settings(&self) -> PathBuf {
        self.gemini_dir().join("settings.json")
    }
    pub fn gemini_skill(&self) -> PathBuf {
        self.gemini_dir().join("skills/tmuxmate/SKILL.md")
    }
    fn xdg_config(&self) -> PathBuf {
        env_dir("XDG_CONFIG_HOME").unwrap_or_else(|| self.home.join(".config"))
    }
    /// The snippet file install writes (always user-level: tmux has no project config).
    pub fn tmux_snippet(&self) -> PathBuf {
        self.xdg_config().join("tmux/tmuxmate.conf")
    }
    /// The tmux.conf tmux reads: the first that exists, else `~/.tmux.conf`.
    pub fn tmux_conf(&self) -> PathBuf {
        let candidates = [
            self.home.join(".tmux.conf"),
            self.xdg_config().join("tmux/tmux.conf"),
            self.home.join(".config/tmux/tmux.conf"),
        ];
        candidates
            .iter()
            .find(|p| p.exists())
            .cloned()
            .unwrap_or_else(|| candidates[0].clone())
    }

    /// `~/…` for messages.
    pub fn label(&self, p: &Path) -> String {
        match p.strip_prefix(&self.home) {
            Ok(rest) if !self.home.as_os_str().is_empty() => format!("~/{}", rest.display()),
            _ => p.display().to_string(),
        }
    }
}

pub use crate::sys::which::which;
