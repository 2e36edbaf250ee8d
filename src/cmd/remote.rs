//! `tmuxmate remote ...` and the `--host` commands that run the tmuxmate on the host:
//! prints what `crate::remote` and `crate::cli::forward` answer.
//!
//! Invariant: a forwarded answer is printed as it came (stdout, then stderr) and this
//! process exits with the host's exit status, so a caller cannot tell it from running
//! tmuxmate on the host. (`agent ask --json` only adds: a line on stderr when the host did
//! not say how far its message got, and `delivery` in a failure of ours; `crate::cli::asked`.)

use crate::cli::RemoteAction;
use crate::cli::asked;
use crate::cli::forward::{self, Answer};
use crate::error::CliResult;
use crate::remote::install;
use crate::tmux::{Socket, Tmux};
use crate::watch::remote::served;

pub fn run(tmux: &Tmux, action: RemoteAction) -> CliResult {
    match action {
        RemoteAction::Install { machine, json } => {
            let r = install::install(&machine)?;
            super::out_json_or_line(json, &r, install::Installed::line);
        }
        RemoteAction::Id => super::out_line(&served::id()?),
        RemoteAction::WatchStart { collector, args } => {
            let timeout_min = args.timeout_minutes();
            let s = served::watch_start(tmux, &collector, &args.request(&timeout_min))?;
            if args.json {
                super::out_json(&s);
            } else {
                super::out_line(&format!("{} {}", s.job_id, s.pane_id));
            }
        }
        RemoteAction::Results { collector, jobs } => {
            super::out_line(&served::results(&collector, &jobs)?)
        }
        RemoteAction::Ack { collector, keys } => {
            super::out_line(&served::ack(&collector, &keys)?.to_string())
        }
    }
    Ok(())
}

/// A command that runs the tmuxmate on `host`.
pub fn forwarded(host: &str, socket: Socket, cmd: crate::cli::Command) -> CliResult {
    if let crate::cli::Command::Agent {
        action: crate::cli::AgentAction::Ask { json, .. },
    } = &cmd
    {
        let json = *json;
        return ask(host, forward::run(host, socket, cmd), json);
    }
    let json = matches!(
        &cmd,
        crate::cli::Command::Watch {
            action: crate::cli::WatchAction::Start(a)
        } if a.json
    );
    print(forward::run(host, socket, cmd)?, json)
}

/// `send -t TEXT --host`: one call to the host's tmuxmate when it has one. False: take
/// the plain-tmux path.
pub fn fast(
    host: &str,
    socket: &Socket,
    cmd: &crate::cli::Command,
) -> Result<bool, crate::error::Error> {
    match forward::fast(host, socket, cmd)? {
        Some(a) => print(a, false).map(|()| true),
        None => Ok(false),
    }
}

/// `agent ask --host`: the host's answer as it came; with `--json`, a failure the host
/// did not say how far it got gets a line that says so on stderr, and one of ours (no
/// answer from the host) the same object `agent ask --json` prints here, `delivery` in it.
fn ask(host: &str, r: Result<Answer, crate::error::Error>, json: bool) -> CliResult {
    match r {
        Ok(Answer::Passed(out)) => {
            let note = if json {
                asked::unreported_in(host, &out)
            } else {
                None
            };
            print_noted(Answer::Passed(out), json, note.as_deref())
        }
        Ok(a) => print(a, json),
        Err(e) => {
            let (delivery, e) = asked::failed(host, e);
            if json {
                super::out_line(&asked::failure_json(delivery, &e).to_string());
                return Err(e.printed());
            }
            Err(e)
        }
    }
}

/// What a host printed, as it may reach this terminal: its tmuxmate's answers are
/// printable text (JSON escapes its controls), so an ESC or another control byte here
/// came from something else and is shown, not obeyed.
fn shown(bytes: &[u8]) -> String {
    crate::sys::printable::visible(&String::from_utf8_lossy(bytes)).0
}

fn print(a: Answer, json: bool) -> CliResult {
    print_noted(a, json, None)
}

/// Print an answer; `note`: a line of ours on stderr after the host's.
fn print_noted(a: Answer, json: bool, note: Option<&str>) -> CliResult {
    use std::io::Write;
    match a {
        Answer::Passed(out) => {
            {
                let mut o = std::io::stdout().lock();
                let _ = o.write_all(shown(&out.stdout).as_bytes());
                let _ = o.flush();
            }
            let _ = std::io::stderr()
                .lock()
                .write_all(shown(&out.stderr).as_bytes());
            if let Some(n) = note {
                eprintln!("tmuxmate: {n}");
            }
            match out.status.code() {
                Some(0) => Ok(()),
                Some(n) => std::process::exit(n),
                None => std::process::exit(1),
            }
        }
        Answer::Started {
            job,
            pane,
            host,
            stderr,
        } => {
            let _ = std::io::stderr()
                .lock()
                .write_all(shown(&stderr).as_bytes());
            super::out_json_or_line(
                json,
                &serde_json::json!({"jobId": job, "paneId": pane, "host": host}),
                |_| format!("{job} {pane}"),
            );
            Ok(())
        }
    }
}
