//! Gemini CLI: hooks in `settings.json` (BeforeAgent per turn; timeouts in ms), the MCP
//! server in its `mcpServers`, the skill in `skills/tmuxmate/`.
//!
//! Why SessionStart and not PreCompress for "forget what was injected": Gemini CLI 0.61
//! fires PreCompress before every model request, compressed or not
//! (docs/harnesses.md#gemini-cli-hooks), so a PreCompress hook made every turn re-inject
//! the location; SessionStart
//! with source `clear` is the real reset (`hook gemini` ignores its other sources).

use serde_json::json;

use super::{Ctx, Kind, Target, Which};

pub const TIMEOUT_MS: u64 = 5000;

pub fn mcp_entry(ctx: &Ctx) -> serde_json::Value {
    json!({"command": ctx.bin, "args": ["mcp"]})
}

pub fn targets(ctx: &Ctx) -> Vec<Target> {
    let p = &ctx.paths;
    vec![
        Target {
            which: Which::Gemini,
            path: p.gemini_settings(),
            what: "hooks BeforeAgent, SessionStart; state: Notification, AfterTool, AfterAgent, SessionEnd; MCP server tmuxmate",
            kind: Kind::Json {
                hooks: Some(super::hook_specs(
                    ctx,
                    "gemini",
                    "BeforeAgent",
                    ("SessionStart", None),
                    TIMEOUT_MS,
                )),
                mcp: Some(mcp_entry(ctx)),
            },
        },
        super::skill_target(Which::Gemini, p.gemini_skill()),
    ]
}
