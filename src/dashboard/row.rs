//! One agent's row and the whole board, as the live view draws them and as
//! `dashboard --once --json` and the MCP tool give them (docs/json.md#dashboard).
//!
//! Invariants: a row holds only printable text (the listing's why, a status line, names
//! and paths made visible); optional values are `null`, never a missing key.

use serde::Serialize;

use crate::side::digest::model::Usage;

/// The checklist of the agent's transcript.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Todos {
    pub done: usize,
    pub total: usize,
    /// The item in progress, else the first pending one.
    pub now: Option<String>,
}

/// What waits for the agent's next turn: finished watch jobs' results and notes.
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    pub watch: usize,
    pub notes: usize,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub pane_id: String,
    /// `session:window.pane`.
    pub target: String,
    /// The server's socket path, when it is not the one the dashboard was asked about.
    pub socket: Option<String>,
    /// The ssh host (`@tmuxmate-hosts`); `None`: this machine.
    pub host: Option<String>,
    pub harness: String,
    /// A managed agent's name (its session), else its window's name.
    pub name: String,
    /// Started by `tmuxmate agent start` (so `agent stop` ends it).
    pub managed: bool,
    pub state: &'static str,
    /// Unix milliseconds of the state's last change.
    pub since: u64,
    pub why: String,
    /// The pane's working directory (a managed agent's project).
    pub project: Option<String>,
    pub branch: Option<String>,
    /// The digest's current line (`@tmuxmate-status`); empty when it has none.
    pub doing: String,
    pub todos: Option<Todos>,
    pub pending: Pending,
    pub usage: Option<Usage>,
}

impl Row {
    /// The project's last path component, as a person names it.
    pub fn project_name(&self) -> &str {
        let p = self.project.as_deref().unwrap_or("");
        let p = p.trim_end_matches('/');
        p.rsplit('/').next().unwrap_or(p)
    }

    /// Whether the row holds `needle` (lower case) in any field a person reads.
    pub fn matches(&self, needle: &str) -> bool {
        if needle.is_empty() {
            return true;
        }
        let hay = [
            self.state,
            &self.harness,
            &self.name,
            self.project.as_deref().unwrap_or(""),
            self.branch.as_deref().unwrap_or(""),
            &self.target,
            &self.pane_id,
            &self.doing,
            &self.why,
            self.host.as_deref().unwrap_or(""),
        ];
        hay.iter().any(|h| h.to_lowercase().contains(needle))
    }

    /// On the server the dashboard talks to (a jump, an ask or a stop can reach it).
    pub fn here(&self) -> bool {
        self.host.is_none() && self.socket.is_none()
    }
}

/// The agents per state.
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub needs_you: usize,
    pub working: usize,
    pub done: usize,
    pub idle: usize,
    pub unknown: usize,
    pub exited: usize,
}

impl Counts {
    pub fn of(rows: &[Row]) -> Counts {
        let mut c = Counts::default();
        for r in rows {
            match r.state {
                "needs-you" => c.needs_you += 1,
                "working" => c.working += 1,
                "done" => c.done += 1,
                "idle" => c.idle += 1,
                "exited" => c.exited += 1,
                _ => c.unknown += 1,
            }
        }
        c
    }

    /// "1 needs you · 2 working · 1 done" (states with none left out).
    pub fn text(&self) -> String {
        let parts = [
            (self.needs_you, "needs you", "need you"),
            (self.working, "working", "working"),
            (self.done, "done", "done"),
            (self.idle, "idle", "idle"),
            (self.unknown, "unknown", "unknown"),
            (self.exited, "exited", "exited"),
        ];
        parts
            .iter()
            .filter(|(n, _, _)| *n > 0)
            .map(|(n, one, many)| format!("{n} {}", if *n == 1 { one } else { many }))
            .collect::<Vec<_>>()
            .join(" · ")
    }
}

/// A watch job of the footer.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub job_id: String,
    pub command: String,
    pub status: String,
    pub start: u64,
}

/// The watch jobs of the servers shown: running ones, and results not told yet.
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Watch {
    pub running: usize,
    pub done: usize,
    /// The running jobs, newest first (at most [`JOBS_SHOWN`]).
    pub jobs: Vec<Job>,
}

pub const JOBS_SHOWN: usize = 20;

#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Unreached {
    pub host: String,
    pub why: String,
}

/// Everything the dashboard shows.
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Board {
    pub agents: Vec<Row>,
    pub counts: Counts,
    pub watch: Watch,
    pub unreached_hosts: Vec<Unreached>,
}

impl Board {
    /// The rows that hold `filter` (any case), counts of those alone.
    pub fn filtered(mut self, filter: Option<&str>) -> Board {
        let needle = filter.unwrap_or("").trim().to_lowercase();
        if !needle.is_empty() {
            self.agents.retain(|r| r.matches(&needle));
            self.counts = Counts::of(&self.agents);
        }
        self
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    pub fn row(pane: &str, state: &'static str) -> Row {
        Row {
            pane_id: pane.into(),
            target: "dev:1.0".into(),
            socket: None,
            host: None,
            harness: "claude".into(),
            name: "api".into(),
            managed: false,
            state,
            since: 0,
            why: String::new(),
            project: Some("/src/api-server/".into()),
            branch: Some("main".into()),
            doing: "turn 2 · step 3".into(),
            todos: None,
            pending: Pending::default(),
            usage: None,
        }
    }

    #[test]
    fn counts_and_filter() {
        let mut b = row("%2", "working");
        b.branch = Some("fix-Login".into());
        let board = Board {
            agents: vec![row("%1", "needs-you"), b, row("%3", "needs-you")],
            counts: Counts::default(),
            ..Board::default()
        };
        assert_eq!(Counts::of(&board.agents).text(), "2 need you · 1 working");
        let f = board.clone().filtered(Some(" LOGIN "));
        assert_eq!(f.agents.len(), 1);
        assert_eq!(f.counts.working, 1);
        assert_eq!(board.clone().filtered(None).agents.len(), 3);
        assert_eq!(board.agents[0].project_name(), "api-server");
    }
}
