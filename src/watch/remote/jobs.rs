//! This machine's remote watch jobs as the local views show them: `watch list` (text and
//! `--json`) and the MCP watch resources.
//!
//! Owns: the shape of a remote job in a local view (the host's own job JSON plus `host`,
//! or, when the host is not asked or does not answer, the last known state from the local
//! record: status `unknown`, `unreadable` saying why), and the fresh look: one `watch
//! list` operation per server over its master (`crate::remote::call::op`), never one per
//! job.
//!
//! Invariants: only jobs with a local record are shown (`watch list`: started here,
//! result not arrived yet; the MCP resources also read the kept records of arrived
//! ones); a host that cannot be asked costs its own jobs their fresh state and one error
//! line, never the rest of the listing; nothing here runs unless a person or a client
//! asked (the status line counts records itself: `crate::watch::status`).

use std::time::Duration;

use serde_json::{Value, json};

use super::pending::{self, RemoteWatch};
use crate::error::Error;
use crate::remote::call;
use crate::tmux::Socket;
use crate::tmux::transport::ssh::Remote;
use crate::watch::request::{List, Show};

/// One look at a host: its own timeouts bound it; this is the call's own.
const ASK_TIMEOUT: Duration = Duration::from_secs(15);

/// Remote jobs for a local listing, and one line per server that could not be asked.
pub struct Listed {
    pub jobs: Vec<Value>,
    pub errors: Vec<String>,
}

/// A remote job's local record, and whether its result has arrived here.
pub struct Record {
    pub r: RemoteWatch,
    pub arrived: bool,
}

/// The last known state of a job from its record (`why`: the host's state is not here).
pub fn last_known(rec: &Record, why: String) -> Value {
    waiting_or_arrived(&rec.r, rec.arrived, why)
}

fn waiting_or_arrived(r: &RemoteWatch, arrived: bool, why: String) -> Value {
    let outcome = if arrived {
        format!("ran on host {}; its result reached this machine", r.host)
    } else {
        format!("started on host {}, result not here yet", r.host)
    };
    json!({
        "jobId": r.job_id,
        "paneId": r.pane_id.clone().unwrap_or_default(),
        "command": r.command.clone().unwrap_or_default(),
        "doneRegex": null,
        "status": "unknown",
        "outcome": outcome,
        "exitStatus": null,
        "detail": null,
        "start": r.at,
        "end": null,
        "deadline": 0,
        "notify": r.notify,
        "forward": [],
        "launched": false,
        "queued": false,
        "tail": null,
        "socket": r.socket().describe(),
        "unreadable": why,
        "host": r.host,
    })
}

/// The host's answer for one job, marked with its host.
fn hosted(mut v: Value, host: &str) -> Value {
    v["host"] = json!(host);
    v
}

/// One server's jobs: `watch list` there, or why not.
fn ask_list(host: &str, socket: &Socket) -> Result<Vec<Value>, Error> {
    let remote = Remote::new(host).map_err(Error::usage)?;
    Ok(call::op_within(&remote, socket, List {}, ASK_TIMEOUT)?.answer)
}

/// This machine's remote jobs; `fresh`: their state asked from each server (one call
/// each), else their last known state (no ssh).
pub fn list(fresh: bool) -> Listed {
    let recs = pending::all();
    let mut jobs = Vec::new();
    let mut errors = Vec::new();
    if !fresh {
        for r in &recs {
            jobs.push(waiting_or_arrived(
                r,
                false,
                format!(
                    "not asked: `tmuxmate watch show --host {} {}`",
                    r.host, r.job_id
                ),
            ));
        }
        return Listed { jobs, errors };
    }
    let mut servers: Vec<(String, String)> = recs
        .iter()
        .map(|r| (r.host.clone(), r.socket().describe()))
        .collect();
    servers.sort();
    servers.dedup();
    for (host, sock) in servers {
        let group: Vec<&RemoteWatch> = recs
            .iter()
            .filter(|r| r.host == host && r.socket().describe() == sock)
            .collect();
        match ask_list(&host, &group[0].socket()) {
            Ok(there) => {
                for r in group {
                    match there.iter().find(|j| j["jobId"] == r.job_id.as_str()) {
                        Some(j) => jobs.push(hosted(j.clone(), &host)),
                        None => jobs.push(waiting_or_arrived(
                            r,
                            false,
                            format!("not among the jobs host {host} lists (ended long ago?)"),
                        )),
                    }
                }
            }
            Err(e) => {
                let e = e.human();
                errors.push(format!(
                    "host {host} ({sock}): cannot ask for the state of its {} job(s): {e}; shown as last known",
                    group.len()
                ));
                for r in group {
                    jobs.push(waiting_or_arrived(
                        r,
                        false,
                        format!("host {host} not reachable: {e}"),
                    ));
                }
            }
        }
    }
    Listed { jobs, errors }
}

/// The record of remote job `id`, if this machine has one: waiting for its result, or
/// (one of the newest `pending::ARRIVED_KEPT`) with its result here.
pub fn record_of(id: &str) -> Option<Record> {
    if let Some(r) = pending::all().into_iter().find(|r| r.job_id == id) {
        return Some(Record { r, arrived: false });
    }
    pending::arrived()
        .into_iter()
        .rev()
        .find(|r| r.job_id == id)
        .map(|r| Record { r, arrived: true })
}

/// `watch show --json` of job `id` on `host`: the host's JSON with `host`.
pub fn show_at(host: &str, socket: &Socket, id: &str) -> Result<Value, Error> {
    let remote = Remote::new(host).map_err(Error::usage)?;
    let show = Show {
        job: id.to_string(),
    };
    let j = call::op_within(&remote, socket, show, ASK_TIMEOUT)
        .map_err(|f| Error::new(format!("host {host}: {}", f.error.human())))?
        .answer;
    Ok(hosted(serde_json::to_value(j).unwrap_or_default(), host))
}
