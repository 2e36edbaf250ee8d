//! The agent harnesses tmuxmate serves (Claude Code, Codex CLI, Gemini CLI; DeepSeek
//! Harness through its Claude Code hook bridge) and what differs between them.
//!
//! Owns: the [`Harness`] enum and per-harness facts the per-turn path needs (its turn
//! event, whether its transcript can be digested); the hook wire format is [`hook`], its
//! command line before parsing [`invocation`].
//! Invariant: nothing here talks to tmux or prints.

pub mod hook;
pub mod invocation;

/// Set in the environment of a side chat's agent (naming the main agent's pane), so its
/// hooks answer as a side conversation's and never count as an agent at work.
pub const SIDE_MAIN_ENV: &str = "TMUXMATE_SIDE_MAIN";

/// One agent harness.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Harness {
    /// Claude Code.
    Claude,
    /// Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
}

impl Harness {
    /// The hook event that starts a turn.
    pub fn turn_event(self) -> &'static str {
        match self {
            Harness::Claude | Harness::Codex => "UserPromptSubmit",
            Harness::Gemini => "BeforeAgent",
        }
    }
}
