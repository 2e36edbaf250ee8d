//! What a dashboard is asked for: one type for the CLI's `dashboard` flags (`--once` and
//! `--json` aside, which only the CLI has) and the MCP tool's arguments.

use serde::Deserialize;

// A plain comment: clap would make a doc comment here the `dashboard --help` text.
#[derive(clap::Args, Deserialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Ask {
    /// Only the agents whose row holds this text (any case): a state, harness, name,
    /// project, branch, target or what it is doing.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
}
