//! Claude Code: hooks in `settings.json` (UserPromptSubmit per turn; SessionStart
//! `compact|clear` to re-inject), the MCP server as `claude mcp add --scope user` records it
//! (`.claude.json` `mcpServers`; project: `.mcp.json`), the skill in `skills/tmuxmate/`.

use serde_json::json;

use super::{Ctx, Kind, Target, Which};

pub const TIMEOUT_S: u64 = 5;

pub fn mcp_entry(ctx: &Ctx) -> serde_json::Value {
    json!({"type": "stdio", "command": ctx.bin, "args": ["mcp"], "env": {}})
}

pub fn targets(ctx: &Ctx) -> Vec<Target> {
    let p = &ctx.paths;
    vec![
        Target {
            which: Which::Claude,
            path: p.claude_settings(),
            what: "hooks UserPromptSubmit, SessionStart; state: PermissionRequest, PostToolUse, Stop, StopFailure, SessionEnd",
            kind: Kind::Json {
                hooks: Some(super::hook_specs(
                    ctx,
                    "claude",
                    "UserPromptSubmit",
                    ("SessionStart", Some("compact|clear")),
                    TIMEOUT_S,
                )),
                mcp: None,
            },
        },
        Target {
            which: Which::Claude,
            path: p.claude_mcp(),
            what: "MCP server tmuxmate",
            kind: Kind::Json {
                hooks: None,
                mcp: Some(mcp_entry(ctx)),
            },
        },
        super::skill_target(Which::Claude, p.claude_skill()),
    ]
}

#[cfg(test)]
mod tests {
    /// The plugin (`hooks/hooks.json`) wires the same events as `tmuxmate install claude`.
    #[test]
    fn the_plugin_hooks_are_the_installers() {
        let v: serde_json::Value =
            serde_json::from_str(include_str!("../../hooks/hooks.json")).unwrap();
        let mut plugin: Vec<&str> = v["hooks"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut ours = vec!["UserPromptSubmit", "SessionStart"];
        ours.extend(crate::state::signal::events(
            crate::harness::Harness::Claude,
        ));
        plugin.sort();
        ours.sort();
        assert_eq!(plugin, ours);
        for (ev, groups) in v["hooks"].as_object().unwrap() {
            let cmd = &groups[0]["hooks"][0]["command"];
            assert_eq!(cmd, "tmuxmate hook claude", "{ev}");
        }
    }
}
