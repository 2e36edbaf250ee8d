//! The checked send: one message to a managed agent as one prompt, or a refusal.
//!
//! Owns: the checks, in order (exact name; managed by this adapter; project root and
//! permission mode; pinned pane exists, alive, in the session; foreground is the CLI by
//! real executable; not mid-turn; no dialog), the sanitized bracketed paste, the settle
//! delay, exactly one Enter, and verifying that the prompt was submitted. Invariants:
//! every refusal names the check that failed; nothing is typed after a failed check; no
//! Enter is pressed while a dialog is visible, and there is no rescue Enter at all.

use crate::targs;
use crate::tmux::Arg;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::adapters::{self, Adapter, ReplySource};
use super::contract::{self, Contract, SendMark};
use super::launch::attach_line;
use super::transcript;
use crate::error::CliError;
use crate::tmux::Tmux;
use crate::tmux::panes;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sent {
    pub name: String,
    pub pane_id: String,
    pub bytes: usize,
    pub submitted: bool,
    /// How submission was verified: `transcript` or `screen`.
    pub verified_by: String,
}

/// The adapter of a managed session (custom sessions carry their CLI path).
pub fn adapter_of(c: &Contract) -> Result<Adapter, CliError> {
    if c.adapter == "custom" {
        return Ok(adapters::custom(&c.cli, ".")); // ready pattern is only used at start
    }
    adapters::by_name(&c.adapter).ok_or_else(|| {
        CliError::new(format!(
            "refused: session {} is not managed by a known adapter ({:?})",
            c.name, c.adapter
        ))
    })
}

/// Resolve a managed session by exact name.
pub fn resolve(tmux: &Tmux, name: &str) -> Result<(Contract, Adapter), CliError> {
    let Some(sid) = contract::find(tmux, name)? else {
        return Err(CliError::new(format!(
            "refused: no tmux session is named exactly {name:?} (see `tmuxmate agent list`)"
        )));
    };
    let c = contract::read(tmux, &sid)?;
    if !c.managed {
        return Err(CliError::new(format!(
            "refused: session {name} is not managed by tmuxmate; it was not started with `tmuxmate agent start`"
        )));
    }
    let a = adapter_of(&c)?;
    if !c.name.starts_with(&format!("{}-", a.prefix)) {
        return Err(CliError::new(format!(
            "refused: session {name} is outside the {} adapter's namespace ({}-*)",
            a.name, a.prefix
        )));
    }
    Ok((c, a))
}

/// The pinned pane exists, is alive, belongs to the session, and runs the CLI.
pub fn check_pane(tmux: &Tmux, c: &Contract, a: &Adapter) -> Result<(), CliError> {
    let rows = panes::query(
        tmux,
        &targs!["list-panes", "-s", "-t", Arg::id(&c.session_id)],
    )?;
    let Some(p) = rows.iter().find(|p| p.pane_id == c.pane) else {
        return Err(CliError::new(format!(
            "refused: the pinned pane {} of session {} is gone (was it closed by hand?); stop the session with `tmuxmate agent stop {} --confirm` and start again",
            c.pane, c.name, c.name
        )));
    };
    if p.dead {
        return Err(CliError::new(format!(
            "refused: the {} CLI in pane {} of session {} has exited; inspect it ({}) and stop the session with `tmuxmate agent stop {} --confirm`",
            a.name,
            c.pane,
            c.name,
            attach_line(tmux, &c.name),
            c.name
        )));
    }
    let pid: i32 = p.pane_pid.parse().unwrap_or(0);
    let fg = crate::procfs::stat(pid).map(|s| if s.tpgid > 0 { s.tpgid } else { pid });
    let exes = fg.map(crate::procfs::group_exes).unwrap_or_default();
    if !exes.iter().any(|e| a.exes.contains(e)) {
        return Err(CliError::new(format!(
            "refused: the foreground of pane {} is {:?}, not the {} CLI ({}); was the CLI restarted by hand? inspect: {}",
            c.pane,
            exes,
            a.name,
            a.exes.join("/"),
            attach_line(tmux, &c.name)
        )));
    }
    Ok(())
}

/// The file the reply is read from, if known now.
pub fn reply_file(c: &Contract, a: &Adapter) -> Option<std::path::PathBuf> {
    match a.reply {
        ReplySource::ClaudeTranscript if !c.cli_session.is_empty() => {
            transcript::claude_transcript(&c.project, &c.cli_session)
        }
        ReplySource::CodexRollout if !c.rollout.is_empty() => Some(c.rollout.clone().into()),
        _ => None,
    }
}

/// Is the turn that began with the last send still open, as far as the record shows?
fn mid_turn(c: &Contract, a: &Adapter) -> bool {
    let Some(m) = &c.last_send else { return false };
    let Some(f) = reply_file(c, a) else {
        return false;
    };
    let t = super::turns::read_turn(a, &f, m);
    t.submitted && !t.complete
}

/// How far a failed send got: the three outcomes a caller must tell apart (never
/// retried silently: a second paste after an unconfirmed one would be a second prompt).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Delivery {
    /// Submitted, and the transcript or screen confirmed it.
    Delivered,
    /// Pasted and Enter pressed once, but not confirmed in time.
    Unconfirmed,
    /// Refused before Enter (nothing typed, or the text sits unsubmitted in the composer).
    NotDelivered,
}

/// A send that did not end in `Delivered`.
#[derive(Debug)]
pub struct Failed {
    pub delivery: Delivery,
    pub error: CliError,
}

pub fn send(
    tmux: &Tmux,
    name: &str,
    message: &str,
    caller_project: &str,
    mode: Option<&str>,
) -> Result<Sent, CliError> {
    send_staged(tmux, name, message, caller_project, mode).map_err(|f| f.error)
}

/// `send`, telling an unconfirmed submission from one that never happened.
pub fn send_staged(
    tmux: &Tmux,
    name: &str,
    message: &str,
    caller_project: &str,
    mode: Option<&str>,
) -> Result<Sent, Failed> {
    let not = |error| Failed {
        delivery: Delivery::NotDelivered,
        error,
    };
    let (c, mark, clean, a) =
        type_prompt(tmux, name, message, caller_project, mode).map_err(not)?;
    tmux.run(&targs!["send-keys", "-t", Arg::id(&c.pane), "Enter"])
        .map_err(|e| not(e.into()))?;
    let verified_by = verify(tmux, &c, &a, &mark, &clean).map_err(|error| Failed {
        delivery: Delivery::Unconfirmed,
        error,
    })?;
    Ok(Sent {
        name: name.to_string(),
        pane_id: c.pane.clone(),
        bytes: clean.len(),
        submitted: true,
        verified_by,
    })
}

/// Every check, then the paste and the recorded mark: all that comes before Enter.
fn type_prompt(
    tmux: &Tmux,
    name: &str,
    message: &str,
    caller_project: &str,
    mode: Option<&str>,
) -> Result<(Contract, SendMark, String, Adapter), CliError> {
    if message.trim().is_empty() {
        return Err(CliError::usage(
            "refused: the message is empty; nothing was sent",
        ));
    }
    let (c, a) = resolve(tmux, name)?;
    super::launch::check_contract(&c, &a, caller_project, mode)?;
    check_pane(tmux, &c, &a)?;
    let scr = super::screen(tmux, &c.pane);
    if mid_turn(&c, &a) {
        return Err(CliError::new(format!(
            "refused: {name} is mid-turn (its previous message has not finished); wait with `tmuxmate agent wait {name}`"
        )));
    }
    if let Some(d) = super::any(&a.dialogs, &scr) {
        return Err(CliError::new(format!(
            "refused: {name} shows a dialog ({d:?}); tmuxmate never types into dialogs. Answer it yourself: {}",
            attach_line(tmux, name)
        )));
    }
    if let Some(b) = super::any(&a.busy, &scr) {
        return Err(CliError::new(format!(
            "refused: {name} is busy ({b:?}); wait with `tmuxmate agent wait {name}`"
        )));
    }
    if !a.ready.is_empty() && !super::all(&a.ready, &scr) {
        return Err(CliError::new(format!(
            "refused: {name} is not at its prompt; inspect: {}",
            attach_line(tmux, name)
        )));
    }
    let (clean, _) = crate::input::sanitize_paste(message);
    let head: String = clean
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(60)
        .collect();
    let file = reply_file(&c, &a);
    let history = tmux
        .run(&targs![
            "display-message",
            "-p",
            "-t",
            Arg::id(&c.pane),
            "#{history_size}"
        ])
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    let prior_matches = if a.reply == ReplySource::Pane {
        super::turns::pane_matches(tmux, &c.pane, history, &head)
    } else {
        0
    };
    let mark = SendMark {
        at: crate::state::now_ms(),
        offset: file.as_deref().map(transcript::size).unwrap_or(0),
        head,
        history,
        prior_matches,
    };
    crate::input::paste_bytes(tmux, &c.pane, clean.as_bytes(), true)?;
    std::thread::sleep(Duration::from_millis(a.settle_ms));
    let scr = super::screen(tmux, &c.pane);
    if let Some(d) = super::any(&a.dialogs, &scr) {
        return Err(CliError::new(format!(
            "a dialog appeared after the message was pasted into {name} ({d:?}); Enter was NOT pressed, the text sits in the composer. Look: {}",
            attach_line(tmux, name)
        )));
    }
    // Record where the reply starts before the turn can begin.
    contract::set(
        tmux,
        &c.session_id,
        "@tmuxmate-last-send",
        &serde_json::to_string(&mark).unwrap_or_default(),
    )?;
    Ok((c, mark, clean, a))
}

/// Wait until the transcript records our prompt, or the composer emptied.
fn verify(
    tmux: &Tmux,
    c: &Contract,
    a: &Adapter,
    mark: &SendMark,
    clean: &str,
) -> Result<String, CliError> {
    let start = Instant::now();
    let first_line: String = clean
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .chars()
        .take(40)
        .collect();
    while start.elapsed() < Duration::from_secs(15) {
        // Codex writes its rollout only with the first prompt: pin it when it appears.
        let mut c2 = c.clone();
        if a.reply == ReplySource::CodexRollout
            && c2.rollout.is_empty()
            && let Some(p) = transcript::find_rollout(&c.project, mark.at)
        {
            c2.rollout = p.to_string_lossy().into_owned();
            contract::set(tmux, &c.session_id, "@tmuxmate-rollout", &c2.rollout)?;
        }
        if let Some(f) = reply_file(&c2, a) {
            let t = super::turns::read_turn(a, &f, mark);
            if t.submitted {
                return Ok("transcript".into());
            }
        } else if a.reply == ReplySource::Pane {
            let scr = super::screen(tmux, &c.pane);
            let composer_holds = scr
                .lines()
                .rev()
                .take(6)
                .any(|l| !first_line.is_empty() && l.contains(&first_line));
            if !composer_holds || super::any(&a.busy, &scr).is_some() {
                return Ok("screen".into());
            }
        }
        std::thread::sleep(Duration::from_millis(15));
    }
    Err(CliError::new(format!(
        "the message was pasted and Enter pressed once, but {} did not record it as a prompt within 15 s; no second Enter was pressed. Look: {}",
        c.name,
        attach_line(tmux, &c.name)
    )))
}
