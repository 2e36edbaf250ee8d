//! Reading watch jobs as the CLI and the MCP resources show them: one job with its
//! outcome (`listed`), all of them (`all`), lookup by id (`find`) and `stop`.

use crate::control::watch::job::JobStatus;
use serde::Serialize;

use crate::control::watch::job::{self, Job, Outcome};
use crate::control::watch::poller;
use crate::error::CliError;

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ListedJob {
    #[serde(flatten)]
    pub job: Job,
    /// Why the job state could not be read, if it could not.
    pub unreadable: Option<String>,
    pub outcome: String,
}

pub fn listed(j: Job) -> ListedJob {
    let flag = job::unreadable_path(&j.id);
    let unreadable = std::fs::read_to_string(flag).ok().map(|raw| {
        format!(
            "the @tmuxmate-job option on pane {} is unreadable (hand-edited?): {}",
            j.pane_id,
            raw.chars().take(120).collect::<String>()
        )
    });
    let outcome = if unreadable.is_some() {
        "unreadable".to_string()
    } else {
        j.outcome()
    };
    ListedJob {
        job: j,
        unreadable,
        outcome,
    }
}

/// Running jobs, then the 20 most recent ended ones (restarts dead pollers first, and
/// waits at most 3 s for completions another process has claimed but not yet written).
pub fn all() -> Vec<ListedJob> {
    poller::reattach_all(true);
    job::settle_claimed(std::time::Duration::from_secs(3));
    job::sweep();
    let mut all: Vec<ListedJob> = job::active_jobs().into_iter().map(listed).collect();
    let done = job::done_jobs();
    let keep = done.len().saturating_sub(20);
    all.extend(done.into_iter().skip(keep).map(listed));
    all
}

pub fn find(id: &str) -> Result<Job, CliError> {
    if !job::valid_id(id) {
        return Err(CliError::usage(format!(
            "{id:?} is not a watch job id (they look like w1a2b3c; see `tmuxmate watch list`)"
        )));
    }
    job::load(id)
        .ok_or_else(|| CliError::new(format!("no watch job {id}; see `tmuxmate watch list`")))
}

/// Stop watching a running job; the pane and its command are left alone.
pub fn stop(id: &str) -> Result<(Job, bool), CliError> {
    let j = find(id)?;
    if j.status != JobStatus::Running {
        return Err(CliError::new(format!(
            "watch job {id} already ended ({})",
            j.outcome()
        )));
    }
    let stopped = job::complete(
        &j,
        Outcome {
            status: JobStatus::Stopped,
            exit_status: None,
            detail: None,
            tail: None,
        },
    );
    Ok((j, stopped))
}
