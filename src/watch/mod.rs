//! Watch jobs: background commands whose watch outlives the agent, tmuxmate and the
//! poller, with results delivered at the notify agent's next turn, exactly once.
//!
//! `job` holds the state and the one way a job ends; `poller` the per-server loop and
//! re-attaching; `status` the status-line counts; `prompt` tells when a typed command gave
//! its shell back; `gate` holds a launched command until its job state exists; `start`
//! and `view` are the operations the CLI and the MCP server share.

pub mod gate;
pub mod job;
pub mod poller;
pub mod prompt;
pub mod remote;
pub mod request;
pub mod start;
pub mod status;
pub mod tidy;
pub mod turn;
pub mod view;

/// Where every file of the watch jobs lives (`<state>/jobs`): active and done job states,
/// gates, pipes and markers, each module naming its own files below it.
pub fn jobs_dir() -> std::path::PathBuf {
    crate::sys::state::state_dir().join("jobs")
}

/// A job id as tmuxmate makes them (`w` and lower-case letters and digits, short): the only
/// ids that may become file names under [`jobs_dir`] or reach a tmux argument.
pub fn valid_id(id: &str) -> bool {
    id.len() > 1
        && id.len() < 40
        && id.starts_with('w')
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}
