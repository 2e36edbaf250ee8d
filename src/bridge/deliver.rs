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

use super::adapters::{Adapter, ReplySource};
use super::contract::{self, Contract, SendMark};
use super::hints::{attach_line, tm_hint};
use super::session::{check_pane, pin_record, reply_file, resolve};
use super::transcript;
use crate::error::CliError;
use crate::tmux::Tmux;

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

/// Pane fallback: how long after a send its prompt may take to show before the turn is
/// taken as not started (a lost prompt blocks further sends no longer than this).
const PANE_ECHO_GRACE_MS: u64 = 10_000;

/// Is the turn that began with the last send still open, as far as the record shows?
/// (The pane fallback: our prompt is on screen and its reply not yet whole; a CLI may
/// look idle for a moment between Enter and its first busy frame.)
fn mid_turn(tmux: &Tmux, c: &Contract, a: &Adapter) -> bool {
    let Some(m) = &c.last_send else { return false };
    if a.reply == ReplySource::Pane {
        let t = super::turns::pane_turn(tmux, c, a, m);
        // A CLI may clear its composer (and look ready) a moment before it draws the
        // prompt it took and its busy line: our send verified, the next check saw neither
        // (Gemini CLI 0.61, release build: a second ask went in and was queued). Until the
        // prompt shows, a recent send counts as a turn in progress.
        let recent = crate::sys::state::now_ms().saturating_sub(m.at) < PANE_ECHO_GRACE_MS;
        return !t.complete && (t.submitted || recent);
    }
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
    let (c, mark, clean, a, pasted) =
        type_prompt(tmux, name, message, caller_project, mode).map_err(not)?;
    tmux.run(&targs!["send-keys", "-t", Arg::id(&c.pane), "Enter"])
        .map_err(|e| not(e.into()))?;
    let verified_by = verify(tmux, &c, &a, &mark, &pasted).map_err(|error| Failed {
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

/// Every check, then the paste and the recorded mark: all that comes before Enter (the
/// last item is the screen with the paste drawn, which `verify` compares against).
fn type_prompt(
    tmux: &Tmux,
    name: &str,
    message: &str,
    caller_project: &str,
    mode: Option<&str>,
) -> Result<(Contract, SendMark, String, Adapter, String), CliError> {
    if message.trim().is_empty() {
        return Err(CliError::usage(
            "refused: the message is empty; nothing was sent",
        ));
    }
    let (mut c, a) = resolve(tmux, name)?;
    super::session::check_contract(tmux, &c, &a, caller_project, mode)?;
    check_pane(tmux, &c, &a)?;
    // After a `/clear` typed in the pane, the prompt goes into Claude's new session.
    pin_record(tmux, &mut c, &a, None)?;
    let scr = super::screen(tmux, &c.pane);
    if mid_turn(tmux, &c, &a) {
        return Err(CliError::refused(format!(
            "refused: {name} is mid-turn (its previous message has not finished); wait with `{}`",
            tm_hint(tmux, &["agent", "wait", name])
        )));
    }
    if let Some(d) = super::any(&a.dialogs, &scr) {
        return Err(CliError::refused(format!(
            "refused: {name} shows a dialog ({d:?}); tmuxmate never types into dialogs. Answer it yourself: {}",
            attach_line(tmux, name)
        )));
    }
    if let Some(b) = super::any(&a.busy, &scr) {
        return Err(CliError::refused(format!(
            "refused: {name} is busy ({b:?}); wait with `{}`",
            tm_hint(tmux, &["agent", "wait", name])
        )));
    }
    if !a.ready.is_empty() && !super::ready(&a, &scr) {
        return Err(CliError::refused(format!(
            "refused: {name} is not at its prompt; inspect: {}",
            attach_line(tmux, name)
        )));
    }
    let (clean, _) = crate::control::pane_input::sanitize_paste(message);
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
        super::turns::pane_matches(tmux, &c.pane, history, &pane_key(&clean))
    } else {
        0
    };
    let mark = SendMark {
        bytes: clean.len() as u64,
        at: crate::sys::state::now_ms(),
        offset: file.as_deref().map(transcript::size).unwrap_or(0),
        head,
        pane_key: pane_key(&clean),
        history,
        prior_matches,
    };
    crate::control::pane_input::paste_bytes(tmux, &c.pane, clean.as_bytes(), true)?;
    // Enter only once the CLI drew the paste: Gemini CLI 0.61 right after start-up took
    // the text but lost an Enter that came 150 ms after it (the text stayed in its input).
    // Gemini CLI 0.61 on a loaded 2-core machine took ~25 s to take in 1 MiB.
    let draw_limit = Duration::from_secs(5 + (clean.len() as u64 >> 15));
    let drawn_by = Instant::now() + draw_limit;
    let pasted = loop {
        let now = super::screen(tmux, &c.pane);
        if now != scr {
            break now;
        }
        if Instant::now() >= drawn_by {
            return Err(CliError::new(format!(
                "the message was pasted into {name}, but its screen did not change within {} s; Enter was NOT pressed, so nothing was submitted (the text may sit in its input). Look: {}",
                draw_limit.as_secs(),
                attach_line(tmux, name)
            )));
        }
        std::thread::sleep(Duration::from_millis(15));
    };
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
        crate::tmux::options::LAST_SEND.name,
        &serde_json::to_string(&mark).unwrap_or_default(),
    )?;
    Ok((c, mark, clean, a, pasted))
}

/// What the pane fallback looks for: the start of the message's first non-blank line (a
/// CLI echoes a multi-line prompt over several screen lines).
fn pane_key(clean: &str) -> String {
    clean
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .chars()
        .take(30)
        .collect()
}

/// Wait until the transcript records our prompt, or (pane fallback) the CLI shows that
/// it took it: busy, or its ready prompt back on a screen other than the one with our
/// paste in the composer.
fn verify(
    tmux: &Tmux,
    c: &Contract,
    a: &Adapter,
    mark: &SendMark,
    pasted: &str,
) -> Result<String, CliError> {
    let start = Instant::now();
    // A large paste takes the CLI longer to take in (1 MiB: 0.2 s in Claude 2.1.332,
    // 3.5 s in Codex 0.171, ~30 s in Gemini CLI 0.61 on a loaded machine).
    // TMUXMATE_VERIFY_TIMEOUT_MS replaces the limit (tests; very slow machines).
    let limit = std::env::var("TMUXMATE_VERIFY_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(15 + (mark.bytes >> 14).min(105)));
    let mut c2 = c.clone();
    c2.last_send = Some(mark.clone());
    while start.elapsed() < limit {
        // Codex writes its rollout only with the first prompt: pin it when it appears.
        pin_record(tmux, &mut c2, a, Some(mark))?;
        let m = c2.last_send.clone().unwrap_or_else(|| mark.clone());
        if let Some(f) = reply_file(&c2, a) {
            let t = super::turns::read_turn(a, &f, &m);
            if t.submitted {
                return Ok("transcript".into());
            }
        } else if a.reply == ReplySource::Pane {
            let scr = super::screen(tmux, &c.pane);
            if super::any(&a.busy, &scr).is_some() || (scr != pasted && super::ready(a, &scr)) {
                return Ok("screen".into());
            }
        }
        std::thread::sleep(Duration::from_millis(15));
    }
    // Never a reason to send again: the prompt may be recorded late, and `wait`/`reply`
    // look for it from the same mark.
    Err(CliError::new(format!(
        "the message was pasted and Enter pressed once, but {} did not record it as a prompt within {:.1} s; no second Enter was pressed. Do not send it again: if it was taken late, `{}` returns its reply. Look: {}",
        c.name,
        limit.as_secs_f64(),
        tm_hint(tmux, &["agent", "wait", &c.name]),
        attach_line(tmux, &c.name)
    )))
}
