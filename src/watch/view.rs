//! Reading watch jobs as the CLI and the MCP resources show them: one job with its
//! outcome (`listed`), all of them (`all`), lookup by id (`find`) and `stop`.
//!
//! Invariant: what is printed is `JobJson` (docs/json.md), never the stored `Job`: the
//! storage fields (format version, poller, heartbeat, shell baselines, pipe path) stay
//! out of the contract, and the id is `jobId` as `watch start` prints it.

use crate::watch::job::JobStatus;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::watch::job::{self, Job, Outcome};
use crate::watch::poller;

/// One job as `watch list`/`watch show --json`, a `list --json` pane's `watch` and the
/// MCP watch resource show it.
#[derive(Serialize, Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct JobJson {
    pub job_id: String,
    pub pane_id: String,
    pub command: String,
    /// `--done-regex`, if one was given.
    pub done_regex: Option<String>,
    pub status: JobStatus,
    /// The status for people (`finished (exit 7)`, `unreadable` ...).
    pub outcome: String,
    pub exit_status: Option<i32>,
    /// Why it failed, for `failed`.
    pub detail: Option<String>,
    /// Epoch ms: started, ended (null while running), gives up.
    pub start: u64,
    pub end: Option<u64>,
    pub deadline: u64,
    pub notify: Vec<String>,
    pub forward: Vec<String>,
    /// true: tmuxmate launched the command (exact exit status); false: typed into a shell.
    pub launched: bool,
    /// The result is queued for (or was delivered to) the notify agents.
    pub queued: bool,
    /// The last lines of output, once ended.
    pub tail: Option<String>,
    /// The socket path of the job's tmux server.
    pub socket: String,
    /// Why the job state could not be read, if it could not.
    pub unreadable: Option<String>,
}

impl JobJson {
    fn of(j: &Job, outcome: String, unreadable: Option<String>) -> JobJson {
        JobJson {
            job_id: j.id.clone(),
            pane_id: j.pane_id.clone(),
            command: j.command.clone(),
            done_regex: j.regex.clone(),
            status: j.status,
            outcome,
            exit_status: j.exit_status,
            detail: j.detail.clone(),
            start: j.start,
            end: j.end,
            deadline: j.deadline,
            notify: j.notify.clone(),
            forward: j.forward.clone(),
            launched: j.launched,
            queued: j.queued,
            tail: j.tail.clone(),
            socket: j.socket.clone(),
            unreadable,
        }
    }
}

/// A pane's `@tmuxmate-job` option as the job it holds (`None` when it does not parse:
/// `watch list` says why).
pub fn from_option(raw: &str) -> Option<JobJson> {
    let j: Job = serde_json::from_str(raw).ok()?;
    Some(JobJson::of(&j, j.outcome(), None))
}

/// A pane's `@tmuxmate-job` option as the pane listing shows it (`control::list`): the
/// job's JSON and whether it is running; `None` when the option does not parse.
pub fn for_listing(raw: &str) -> Option<(serde_json::Value, bool)> {
    let j = from_option(raw)?;
    let running = j.status == JobStatus::Running;
    Some((serde_json::to_value(&j).ok()?, running))
}

#[derive(Debug)]
pub struct ListedJob {
    pub job: Job,
    /// Why the job state could not be read, if it could not.
    pub unreadable: Option<String>,
    pub outcome: String,
}

impl ListedJob {
    pub fn json(&self) -> JobJson {
        JobJson::of(&self.job, self.outcome.clone(), self.unreadable.clone())
    }
}

pub fn listed(j: Job) -> ListedJob {
    let flag = job::unreadable_path(&j.id);
    let unreadable = crate::sys::state::read_private(&flag, 64 << 10)
        .ok()
        .map(|raw| String::from_utf8_lossy(&raw).into_owned())
        .map(|raw| {
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

pub fn find(id: &str) -> Result<Job, Error> {
    if !crate::watch::valid_id(id) {
        return Err(Error::usage(format!(
            "{id:?} is not a watch job id (they look like w1a2b3c; see `tmuxmate watch list`)"
        )));
    }
    job::load(id).ok_or_else(|| Error::new(format!("no watch job {id}; see `tmuxmate watch list`")))
}

/// `watch stop --json`.
#[derive(Serialize, Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Stopped {
    pub job_id: String,
    /// This call ended the watch (false: it ended by itself meanwhile).
    pub stopped: bool,
    pub pane_id: String,
}

/// Stop watching a running job; the pane and its command are left alone.
pub fn stop(id: &str) -> Result<(Job, bool), Error> {
    let j = find(id)?;
    if j.status != JobStatus::Running {
        return Err(Error::new(format!(
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
