//! `tmuxmate remote ...`, and the one-call route of `send -t TEXT --host` (the host's
//! tmuxmate, when it has one, types the line: its tmux calls then stay on the host).
//!
//! Invariant: the one-call route is tried only when it cannot lose the text (inline text,
//! never a file or stdin, which could not be read twice) and only when the host may
//! have tmuxmate; without one there the plain-tmux path runs instead.

use crate::cli::{Command, RemoteAction};
use crate::error::{CliResult, Error};
use crate::remote::{call, install};
use crate::tmux::Socket;
use crate::tmux::transport::ssh::Remote;
use crate::watch::remote::served;

pub fn run(action: RemoteAction) -> CliResult {
    match action {
        RemoteAction::Install { machine, json } => {
            let r = install::install(&machine)?;
            super::out_json_or_line(json, &r, install::Installed::line);
        }
        RemoteAction::Id => super::out_line(&served::id()?),
        RemoteAction::Results { collector, jobs } => {
            super::out_line(&served::results(&collector, &jobs)?)
        }
        RemoteAction::Ack { collector, keys } => {
            super::out_line(&served::ack(&collector, &keys)?.to_string())
        }
    }
    Ok(())
}

/// Text longer than this goes the plain way (the several-call path reads it as it does
/// here).
const INLINE_MAX: usize = 16 * 1024;

/// `send -t TEXT --host`: one call to the host's tmuxmate when it has one. False: take
/// the plain-tmux path.
pub fn fast(host: &str, socket: &Socket, cmd: &Command) -> Result<bool, Error> {
    let Command::Send(a) = cmd else {
        return Ok(false);
    };
    let (Some(target), None, Some(text)) = (&a.target, &a.file, &a.text) else {
        return Ok(false);
    };
    if text == "-" || text.len() > INLINE_MAX {
        return Ok(false);
    }
    let remote = Remote::new(host).map_err(Error::usage)?;
    if call::known(&remote.host.to_string()) == Some(false) {
        return Ok(false);
    }
    let line = crate::control::input::SendAsk {
        target: Some(target.clone()),
        text: Some(text.clone()),
        keys: None,
        enter: a.enter,
        cancel_mode: a.cancel_mode,
        file: None,
    };
    match call::op(&remote, socket, line) {
        Ok(done) => {
            super::from_host();
            super::at::show(&done.said);
            if a.json {
                super::out_json(&done.answer);
            }
            Ok(true)
        }
        // Nothing ran there (no tmuxmate, or another version of it): plain tmux types it.
        Err(f) if matches!(f.reached, crate::op::Reached::Nothing) => Ok(false),
        Err(f) => {
            super::at::show(&f.said);
            Err(f.error)
        }
    }
}
