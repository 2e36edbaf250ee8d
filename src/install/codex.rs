//! Codex CLI: hooks in `hooks.json` (UserPromptSubmit; SessionStart `compact|clear`), the
//! MCP server as `[mcp_servers.tmuxmate]` in `config.toml` (comment-preserving edit), the
//! skill in `skills/tmuxmate/` (project: `.agents/skills/`).
//!
//! Facts (docs/harnesses.md#codex-cli-hooks and #codex-cli-daemon): Codex runs a hook
//! only after it was trusted in `/hooks`, keyed by
//! `<hooks.json path>:<event_snake>:<group>:<handler>` in `[hooks.state."<key>"]
//! trusted_hash`; any change needs trusting again. In its default daemon mode hooks run
//! from a shared app-server with no terminal, so locations need `codex --no-daemon`.

use super::{Ctx, Kind, Target, Which};

pub const TIMEOUT_S: u64 = 5;

pub const TRUST_NOTE: &str = "Codex runs the new hooks only after you trust them: open /hooks in the Codex TUI once and trust the tmuxmate entries (again after any change). Locations need `codex --no-daemon`: hooks run from Codex's shared daemon have no terminal and get no location.";

pub fn targets(ctx: &Ctx) -> Vec<Target> {
    let p = &ctx.paths;
    vec![
        Target {
            which: Which::Codex,
            path: p.codex_hooks(),
            what: "hooks UserPromptSubmit, SessionStart; state: PermissionRequest, PostToolUse, PostModelRequest, Stop, SessionEnd",
            kind: Kind::Json {
                hooks: Some(super::hook_specs(
                    ctx,
                    "codex",
                    "UserPromptSubmit",
                    ("SessionStart", Some("compact|clear")),
                    TIMEOUT_S,
                )),
                mcp: None,
            },
        },
        Target {
            which: Which::Codex,
            path: p.codex_config(),
            what: "MCP server [mcp_servers.tmuxmate]",
            kind: Kind::CodexToml {
                bin: ctx.bin.clone(),
            },
        },
        super::skill_target(Which::Codex, p.codex_skill()),
    ]
}

/// Trust records for our hooks in config.toml: (event, trusted).
pub fn trusted_events(
    config: &toml_edit::DocumentMut,
    hooks_json: &std::path::Path,
) -> Vec<String> {
    let prefix = format!("{}:", hooks_json.display());
    let Some(state) = config
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(|s| s.as_table_like())
    else {
        return Vec::new();
    };
    state
        .iter()
        .filter(|(k, v)| k.starts_with(&prefix) && v.get("trusted_hash").is_some())
        .filter_map(|(k, _)| k[prefix.len()..].split(':').next().map(String::from))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_trust_records_for_our_hooks_file() {
        // The key shape Codex 0.171 writes (docs/harnesses.md#codex-cli-hooks).
        let doc: toml_edit::DocumentMut = r#"
[hooks.state."/h/.codex/hooks.json:user_prompt_submit:0:0"]
trusted_hash = "sha256:abc"
[hooks.state."/other/hooks.json:session_start:0:0"]
trusted_hash = "sha256:def"
"#
        .parse()
        .unwrap();
        let t = super::trusted_events(&doc, std::path::Path::new("/h/.codex/hooks.json"));
        assert_eq!(t, vec!["user_prompt_submit".to_string()]);
    }
}
