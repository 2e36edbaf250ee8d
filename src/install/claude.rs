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
            what: "hooks UserPromptSubmit, SessionStart",
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
