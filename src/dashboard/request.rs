//! What a dashboard is asked for: one request type for the CLI's `dashboard` flags
//! (`--once`, `--json` and the popup's hidden flags aside, which only the CLI has) and
//! the MCP tool's arguments, and the function both run for the rows once.
//!
//! Invariant: `dashboard --once --json` and the MCP tool's `structuredContent` are the
//! same document (docs/json.md#dashboard), because both are [`Dashboard::run`]'s board.
//! Not an `op::Operation`: the board already holds the agents of the hosts named in
//! `@tmuxmate-hosts`, so `--host` and the MCP tool's `host` are refused ([`NOT_ON_HOST`]).

use serde::{Deserialize, Serialize};

use super::gather::Gatherer;
use super::row::Board;
use crate::error::Error;
use crate::tmux::Tmux;

/// Why the dashboard is not run on another host (`--host`, MCP `host`).
pub const NOT_ON_HOST: &str =
    "it shows the agents of the hosts named in @tmuxmate-hosts already; add the host there";

// `tmuxmate dashboard`, MCP `tmux_dashboard`. (A plain comment: clap would make a doc
// comment here the `dashboard --help` text.)
#[derive(clap::Args, Serialize, Deserialize, Debug, Default, Clone, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Dashboard {
    /// Only the agents whose row holds this text (any case): a state, harness, name,
    /// project, branch, target or what it is doing.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
}

impl Dashboard {
    /// The board once (`chosen`: `-L`/`-S` named the server, else every server agents
    /// were seen on, with the hosts they follow), filtered.
    pub fn run(&self, tmux: &Tmux, chosen: bool) -> Result<Board, Error> {
        Ok(Gatherer::default()
            .board(tmux, chosen)?
            .filtered(self.filter.as_deref()))
    }
}
