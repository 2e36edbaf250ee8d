//! `tmuxmate watch start|list|show|stop|reattach` (and the hidden `poll`, `record-exit`,
//! `gate`): thin over `watch::request` and `watch::view`, here or (`--host`) on another
//! host; `stop` never kills the pane.

use super::at::At;
use crate::cli::{Json, WatchAction};
use crate::error::{CliResult, Error};
use crate::sys::state;
use crate::tmux::{Socket, Tmux};
use crate::watch::job::{self, JobStatus, Outcome};
use crate::watch::request::{self as req, List, Reattach};
use crate::watch::{gate, poller, view};

/// `watch list`'s jobs: those here, then those this machine started on other hosts (one
/// call per host); the hosts whose jobs' state could not be asked are told on stderr.
pub fn list_jobs(r: &List) -> Vec<serde_json::Value> {
    let mut jobs = r.run();
    let remote = crate::watch::remote::jobs::list(true);
    for e in &remote.errors {
        eprintln!("tmuxmate: {e}");
    }
    jobs.extend(remote.jobs);
    jobs
}

fn start(at: &At, a: Json<req::Start>) -> CliResult {
    let At::Host { host, socket } = at else {
        let s = a.ask.run(at.tmux()?)?;
        super::out_json_or_line(a.json, &s, |s| format!("{} {}", s.job_id, s.pane_id));
        return Ok(());
    };
    // The addressees are this machine's agents, on the server the caller is in.
    let local = Tmux::new(Socket::resolve(None, None));
    let s = crate::watch::remote::on_host::start(&local, host, socket, &a.ask)?;
    if let Some(w) = &s.warning {
        eprintln!("tmuxmate: {w}");
    }
    super::at::show(&s.said);
    super::out_json_or_line(
        a.json,
        &serde_json::json!({"jobId": s.job, "paneId": s.pane, "host": s.host}),
        |_| format!("{} {}", s.job, s.pane),
    );
    Ok(())
}

pub fn run(at: &At, action: WatchAction) -> CliResult {
    match action {
        WatchAction::Start(a) => return start(at, a),
        WatchAction::List { json } => {
            let jobs = at.run(List {}, |_, r| Ok(list_jobs(r)))?;
            if json {
                super::out_json(&jobs);
            } else {
                super::out(&req::list_text(&jobs, crate::sys::time::now_ms()));
            }
        }
        WatchAction::Show(a) => {
            let j = at.run(a.ask, |_, r| r.run())?;
            super::out_json_or_line(a.json, &j, |j| {
                format!(
                    "{}\n{}",
                    j.outcome,
                    serde_json::to_string_pretty(j).unwrap_or_default()
                )
            });
        }
        WatchAction::Stop(a) => {
            let st = at.run(a.ask, |_, r| r.run())?;
            super::out_json_or_line(a.json, &st, |st| {
                format!(
                    "stopped watching {}; pane {} is left as it is",
                    st.job_id, st.pane_id
                )
            });
        }
        WatchAction::Reattach => at.run(Reattach {}, |_, r| {
            r.run();
            Ok(())
        })?,
        WatchAction::Gate {
            job: id,
            starter,
            started,
        } => return gate::hold(at.tmux()?, &id, starter, started),
        WatchAction::Poll => return poll(at.tmux()?),
        WatchAction::RecordExit { job: id, status } => record_exit(&id, status),
    }
    Ok(())
}

fn poll(tmux: &Tmux) -> CliResult {
    let socket = match &tmux.socket {
        Socket::Path(p) => p.to_string_lossy().into_owned(),
        _ => tmux
            .run(&["display-message", "-p", "#{socket_path}"])?
            .trim()
            .to_string(),
    };
    poller::run(tmux, &socket).map_err(Error::new)
}

/// The job wrapper's report: unattended, so it logs and never fails loudly.
fn record_exit(id: &str, status: i32) {
    match view::find(id) {
        Ok(j) => {
            job::complete(
                &j,
                Outcome {
                    status: JobStatus::Finished,
                    exit_status: Some(status),
                    detail: None,
                    tail: None,
                },
            );
        }
        Err(e) => state::log(&format!("watch record-exit {id}: {}", e.msg)),
    }
}
