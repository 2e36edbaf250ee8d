//! Which CLI runs a side chat and how it is told to stay read-only: the argv each of
//! Claude, Codex and Gemini gets, and the role text it is given.
//!
//! Owns the per-CLI flags of the side agent. Invariants: every side agent is launched
//! read-only (Claude in plan mode with write tools disallowed, Codex in its read-only
//! sandbox, Gemini with approval asked); its per-turn hook is this binary's `hook`, named
//! by its shell-quoted path; an adapter other than the three is refused, never guessed.

use crate::error::Error;
use crate::sys::shell::readable as sh_quote;
use crate::tmux::Tmux;
use crate::tmux::options::SIDE_AGENT;

/// The side agent CLI chosen by `@tmuxmate-side-agent` (its default when unset).
pub fn adapter(tmux: &Tmux) -> String {
    SIDE_AGENT.text(&SIDE_AGENT.global(tmux)).to_string()
}

/// The role text for a side chat of `main` run by `adapter`, with `bin` this binary.
pub fn role(adapter: &str, main: &str, bin: &str) -> String {
    let mut role = super::ROLE.replace("{MAIN}", main);
    if adapter == "codex" {
        // Codex runs commands in a login shell, whose profile may reset PATH (Codex 0.171:
        // "tmuxmate: command not found"; docs/harnesses.md#codex-cli-hooks): name the
        // binary by its path.
        role = role.replace("`tmuxmate side", &format!("`{} side", sh_quote(bin)));
    }
    role
}

/// Launch arguments for a read-only side agent of `adapter`.
pub fn argv(adapter: &str, session: &str, role: &str, bin: &str) -> Result<Vec<String>, Error> {
    let hook = format!("{} hook {adapter}", sh_quote(bin));
    Ok(match adapter {
        "claude" => {
            let settings = serde_json::json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": hook}]}]}});
            vec![
                "--session-id".into(), session.into(),
                "--permission-mode".into(), "plan".into(),
                "--allowedTools".into(),
                "Read,Grep,Glob,Bash(tmuxmate side status:*),Bash(tmuxmate side history:*),Bash(tmuxmate side report:*)".into(),
                "--disallowedTools".into(), "Edit,Write,NotebookEdit".into(),
                "--append-system-prompt".into(), role.into(),
                "--settings".into(), settings.to_string(),
            ]
        }
        // Hooks from `-c` are not trusted yet: bypassing trust for this one throwaway
        // session (which also keeps it off the shared daemon) lets its per-turn hook run.
        "codex" => vec![
            // Its own process, not the shared daemon: hooks keep this side chat's
            // environment (its main pane, its relay nonce) and nothing outlives it.
            "--no-daemon".into(),
            "--no-alt-screen".into(),
            "--sandbox".into(),
            "read-only".into(),
            "--ask-for-approval".into(),
            "never".into(),
            "--dangerously-bypass-hook-trust".into(),
            "-c".into(),
            format!(
                "hooks.UserPromptSubmit=[{{hooks=[{{type=\"command\",command={}}}]}}]",
                serde_json::to_string(&hook).unwrap_or_default()
            ),
            // Its read-only sandbox lets `side report` only print; this hook runs outside
            // it and queues what was printed (src/side/relay.rs).
            "-c".into(),
            format!(
                "hooks.PostToolUse=[{{matcher=\"*\",hooks=[{{type=\"command\",command={}}}]}}]",
                serde_json::to_string(&format!("{} side relay", sh_quote(bin))).unwrap_or_default()
            ),
            "-c".into(),
            format!(
                "developer_instructions={}",
                serde_json::to_string(role).unwrap_or_default()
            ),
        ],
        "gemini" => vec!["--approval-mode".into(), "default".into()],
        other => {
            return Err(Error::usage(format!(
                "{} is {other:?}: use claude, codex or gemini",
                SIDE_AGENT.name
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_side_agent_is_refused_naming_the_option() {
        let e = argv("aider", "s", "r", "/bin/tmuxmate").unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Usage);
        assert!(
            e.msg.contains(SIDE_AGENT.name) && e.msg.contains("\"aider\""),
            "{}",
            e.msg
        );
    }

    #[test]
    fn every_side_agent_is_launched_read_only() {
        let claude = argv("claude", "sid", "role", "/bin/tmuxmate").unwrap();
        let at = |v: &[String], f: &str| v.iter().position(|a| a == f).map(|i| v[i + 1].clone());
        assert_eq!(at(&claude, "--permission-mode").as_deref(), Some("plan"));
        assert_eq!(at(&claude, "--session-id").as_deref(), Some("sid"));
        let codex = argv("codex", "sid", "role", "/bin/tmuxmate").unwrap();
        assert_eq!(at(&codex, "--sandbox").as_deref(), Some("read-only"));
        let gemini = argv("gemini", "sid", "role", "/bin/tmuxmate").unwrap();
        assert_eq!(at(&gemini, "--approval-mode").as_deref(), Some("default"));
    }

    #[test]
    fn codex_is_told_the_binary_by_its_path() {
        let r = role("codex", "%3", "/opt/my bin/tmuxmate");
        assert!(r.contains("in tmux pane %3)"), "{r}");
        assert!(!r.contains("`tmuxmate side"), "{r}");
        assert!(
            r.contains(&format!(
                "`{} side status`",
                sh_quote("/opt/my bin/tmuxmate")
            )),
            "{r}"
        );
        let c = role("claude", "%3", "/opt/my bin/tmuxmate");
        assert!(c.contains("`tmuxmate side status`"), "{c}");
    }
}
