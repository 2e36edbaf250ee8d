//! The side chat's operations that also run on another host (`side status`, `side
//! history`, `side report`): one request type each, the command line's flags (`--json`
//! aside), the MCP tool's arguments and what `--host` sends, and the function every one
//! of them runs.
//!
//! Invariant: the CLI, the MCP tool and a host's `tmuxmate call` run the same `run`, so
//! a refusal reads the same from each. (Plain comments on the structs: clap would make a
//! doc comment the command's `--help` text.)

use serde::{Deserialize, Serialize};

use super::{HistoryLine, Reported, Status as Digest};
use crate::error::Error;
use crate::op::Operation;
use crate::tmux::Tmux;

// `side status`, MCP `side_chat_main_status`.
#[derive(clap::Args, Serialize, Deserialize, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Status {
    /// The main agent's pane (default inside a side chat: the pane it is about).
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
}

impl Status {
    pub fn run(&self, tmux: &Tmux) -> Result<Digest, Error> {
        super::status_for(tmux, self.target.as_deref())
    }
}

impl Operation for Status {
    const NAME: &'static str = "side.status";
    type Answer = Digest;
}

fn history_default() -> usize {
    super::HISTORY_DEFAULT
}

// `side history`, MCP `side_chat_main_history`.
#[derive(clap::Args, Serialize, Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct History {
    /// The main agent's pane (default inside a side chat: the pane it is about).
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// Only this turn.
    #[arg(long, value_name = "N")]
    pub turn: Option<u64>,
    /// Only lines containing this text (case-insensitive).
    #[arg(long, value_name = "TEXT")]
    pub contains: Option<String>,
    /// At most K lines, newest last (default 40, max 200).
    #[arg(long, value_name = "K", default_value_t = super::HISTORY_DEFAULT)]
    #[serde(default = "history_default")]
    pub limit: usize,
}

impl History {
    pub fn run(&self, tmux: &Tmux) -> Result<Vec<HistoryLine>, Error> {
        super::history_for(
            tmux,
            self.target.as_deref(),
            self.turn,
            self.contains.as_deref(),
            self.limit,
        )
    }
}

impl Operation for History {
    const NAME: &'static str = "side.history";
    type Answer = Vec<HistoryLine>;
}

// `side report`, MCP `side_chat_report`.
#[derive(clap::Args, Serialize, Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Report {
    /// The main agent's pane (default inside a side chat: the pane it is about).
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// The note (text that starts with `-` goes after `--`).
    pub text: String,
}

impl Report {
    pub fn run(&self, tmux: &Tmux) -> Result<Reported, Error> {
        super::report_for(tmux, self.target.as_deref(), &self.text)
    }
}

impl Operation for Report {
    const NAME: &'static str = "side.report";
    type Answer = Reported;
}
