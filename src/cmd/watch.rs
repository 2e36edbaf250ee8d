//! `tmuxmate watch start|list|show|stop|reattach` (and the hidden `poll`, `record-exit`,
//! `gate`):
//! thin over `watch::start` and `watch::view`; `stop` never kills the pane.

use crate::cli::WatchAction;
use crate::control::watch::job::JobStatus;
use crate::control::watch::job::{self, Outcome};
use crate::control::watch::poller;
use crate::control::watch::{gate, start, view};
use crate::error::{CliResult, Error};
use crate::sys::state;
use crate::tmux::{Socket, Tmux};

fn list(json: bool) -> CliResult {
    let all = view::all();
    if json {
        super::out_json(&all.iter().map(view::ListedJob::json).collect::<Vec<_>>());
        return Ok(());
    }
    if all.is_empty() {
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
            job::duration(j.end.unwrap_or_else(state::now_ms).saturating_sub(j.start)),
            j.command
        ));
        if let Some(u) = &l.unreadable {
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
