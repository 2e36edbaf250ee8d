//! `tmuxmate watch start|list|show|stop|reattach` (and the hidden `poll`, `record-exit`,
//! `gate`):
//! thin over `watch::start` and `watch::view`; `stop` never kills the pane.

use crate::cli::WatchAction;
use crate::error::{CliResult, Error};
use crate::sys::state;
use crate::tmux::{Socket, Tmux};
use crate::watch::job::JobStatus;
use crate::watch::job::{self, Outcome};
use crate::watch::poller;
use crate::watch::{gate, start, view};

fn list(json: bool) -> CliResult {
    let all = view::all();
    // The jobs this machine started on other hosts (one call per host; a host that does
    // not answer gets a line here, its jobs their last known state).
    let remote = crate::watch::remote::jobs::list(true);
    for e in &remote.errors {
        eprintln!("tmuxmate: {e}");
    }
    if json {
        let mut v: Vec<serde_json::Value> = all
            .iter()
            .map(|l| serde_json::to_value(l.json()).unwrap_or_default())
            .collect();
        v.extend(remote.jobs);
        super::out_json(&v);
        return Ok(());
    }
    if all.is_empty() && remote.jobs.is_empty() {
        super::out_line("no watch jobs");
        return Ok(());
    }
    let mut s = String::new();
    for l in &all {
        let j = &l.job;
        s.push_str(&format!(
            "{} {} {} {}: {}\n",
            j.id,
            j.pane_id,
            l.outcome,
            job::duration(
                j.end
                    .unwrap_or_else(crate::sys::time::now_ms)
                    .saturating_sub(j.start)
            ),
            j.command
        ));
        if let Some(u) = &l.unreadable {
            s.push_str(&format!("    {u}\n"));
        }
    }
    for j in &remote.jobs {
        let f = |k: &str| j[k].as_str().unwrap_or("").to_string();
        let start = j["start"].as_u64().unwrap_or(0);
        let end = j["end"].as_u64().unwrap_or_else(crate::sys::time::now_ms);
        s.push_str(&format!(
            "{} {} {} {}: {} (host {})\n",
            f("jobId"),
            f("paneId"),
            f("outcome"),
            job::duration(end.saturating_sub(start)),
            f("command"),
            f("host")
        ));
        if let Some(u) = j["unreadable"].as_str() {
            s.push_str(&format!("    {u}\n"));
        }
    }
    super::out(&s);
    Ok(())
}

pub fn run(tmux: &Tmux, action: WatchAction) -> CliResult {
    match action {
        WatchAction::Start(a) => {
            let timeout_min = a.timeout_minutes();
            let s = start::start(tmux, &a.request(&timeout_min))?;
            if a.json {
                super::out_json(&s);
            } else {
                super::out_line(&format!("{} {}", s.job_id, s.pane_id));
            }
            Ok(())
        }
        WatchAction::List { json } => list(json),
        WatchAction::Show { job: id, json } => {
            let j = view::listed(view::find(&id)?);
            if json {
                super::out_json(&j.json());
            } else {
                super::out_line(&format!(
                    "{}\n{}",
                    j.outcome,
                    serde_json::to_string_pretty(&j.json()).unwrap_or_default()
                ));
            }
            Ok(())
        }
        WatchAction::Stop { job: id, json } => {
            let (j, stopped) = view::stop(&id)?;
            if json {
                super::out_json(&view::Stopped {
                    job_id: id,
                    stopped,
                    pane_id: j.pane_id,
                });
            } else {
                super::out_line(&format!(
                    "stopped watching {id}; pane {} is left as it is",
                    j.pane_id
                ));
            }
            Ok(())
        }
        WatchAction::Gate {
            job: id,
            starter,
            started,
        } => gate::hold(tmux, &id, starter, started),
        WatchAction::Reattach => {
            poller::reattach_all(false);
            Ok(())
        }
        WatchAction::Poll => {
            let socket = match &tmux.socket {
                Socket::Path(p) => p.to_string_lossy().into_owned(),
                _ => tmux
                    .run(&["display-message", "-p", "#{socket_path}"])?
                    .trim()
                    .to_string(),
            };
            poller::run(tmux, &socket).map_err(Error::new)
        }
        WatchAction::RecordExit { job: id, status } => {
            // Unattended (the wrapper): log, never fail loudly.
            match view::find(&id) {
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
            Ok(())
        }
    }
}
