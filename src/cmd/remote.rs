//! `tmuxmate remote ...` and the `--host` commands that run the tmuxmate on the host:
//! prints what `crate::remote` and `crate::cli::forward` answer.
//!
//! Invariant: a forwarded answer is printed as it came (stdout, then stderr) and this
//! process exits with the host's exit status, so a caller cannot tell it from running
//! tmuxmate on the host.

use crate::cli::RemoteAction;
use crate::cli::forward::{self, Answer};
use crate::error::CliResult;
use crate::remote::{install, served};
use crate::tmux::{Socket, Tmux};

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

fn print(a: Answer, json: bool) -> CliResult {
    use std::io::Write;
    match a {
        Answer::Passed(out) => {
            {
                let mut o = std::io::stdout().lock();
                let _ = o.write_all(&out.stdout);
                let _ = o.flush();
            }
            let _ = std::io::stderr().lock().write_all(&out.stderr);
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
            let _ = std::io::stderr().lock().write_all(&stderr);
            super::out_json_or_line(
                json,
                &serde_json::json!({"jobId": job, "paneId": pane, "host": host}),
                |_| format!("{job} {pane}"),
            );
            Ok(())
        }
    }
}
