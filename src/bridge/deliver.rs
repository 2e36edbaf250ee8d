//! The checked send: one message to a managed agent as one prompt, or a refusal.
//!
//! Owns: the checks, in order (exact name; managed by this adapter; project root and
//! permission mode; pinned pane exists, alive, in the session; foreground is the CLI by
//! real executable; not mid-turn; no dialog), the sanitized bracketed paste, the settle
//! delay (for a CLI with a paste guard, `enter_probe`'s proof first), exactly one Enter,
//! and verifying that the prompt was submitted. Invariants:
//! every refusal names the check that failed; nothing is typed after a failed check; no
//! Enter is pressed while a dialog is visible, and there is no rescue Enter at all.

use crate::targs;
use crate::tmux::Arg;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::adapters::{Adapter, ReplySource};
use super::contract::{self, Contract, SendMark};
use super::hints::{attach_line, tm_hint};
use super::session::{check_pane, pin_record, reply_file, resolve};
use super::transcript;
use crate::error::Error;
use crate::tmux::Tmux;

#[derive(Debug, Serialize, Deserialize)]
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
    let file = reply_file(c, a);
    if a.reply == ReplySource::Pane || (a.reply == ReplySource::GeminiChat && file.is_none()) {
        let t = super::turns::pane_turn(tmux, c, a, m);
        // A CLI may clear its composer (and look ready) a moment before it draws the
        // prompt it took and its busy line: our send verified, the next check saw neither
        // (Gemini CLI 0.61, release build: a second ask went in and was queued). Until the
        // prompt shows, a recent send counts as a turn in progress.
        let recent = crate::sys::time::now_ms().saturating_sub(m.at) < PANE_ECHO_GRACE_MS;
        return !t.complete && (t.submitted || recent);
    }
    let Some(f) = file else {
        return false;
    };
    let t = super::turns::read_turn(tmux, &c.pane, a, &f, m);
    // Gemini: as on the pane, a send whose prompt is not recorded yet is a turn in
    // progress for a while (it records the prompt only after its BeforeAgent hooks).
    let recent = a.reply == ReplySource::GeminiChat
        && crate::sys::time::now_ms().saturating_sub(m.at) < PANE_ECHO_GRACE_MS;
    !t.complete && (t.submitted || recent)
}

/// How far a failed send got: the three outcomes a caller must tell apart (never
/// retried silently: a second paste after an unconfirmed one would be a second prompt).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
    pub error: Error,
}

pub fn send(
    tmux: &Tmux,
    name: &str,
    message: &str,
    caller_project: &str,
    mode: Option<&str>,
) -> Result<Sent, Error> {
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
    let Typed {
        c,
        mark,
        clean,
        a,
        pasted,
    } = type_prompt(tmux, name, message, caller_project, mode).map_err(not)?;
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

/// What is typed for a message, and how the send is found again: decided from the
/// message alone, before any check reads the pane.
#[derive(Debug, PartialEq)]
struct Plan {
    /// The sanitized text, pasted as one bracketed paste.
    clean: String,
    /// Its first 60 characters, whitespace collapsed (the mark's `head`).
    head: String,
    /// What the pane fallback looks for (`pane_key`).
    pane_key: String,
    /// How long the CLI may take to draw the paste: 5 s + 1 s per 32 KiB. Gemini CLI 0.61
    /// on a loaded 2-core machine took ~25 s to take in 1 MiB.
    draw_limit: Duration,
}

/// The plan for `message`, or the refusal of an empty one (nothing is typed).
fn plan(message: &str) -> Result<Plan, Error> {
    if message.trim().is_empty() {
        return Err(Error::usage(
            "refused: the message is empty; nothing was sent",
        ));
    }
    let (clean, _) = crate::control::pane_input::sanitize_paste(message);
    let head = clean
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(60)
        .collect();
    Ok(Plan {
        head,
        pane_key: pane_key(&clean),
        draw_limit: Duration::from_secs(5 + (clean.len() as u64 >> 15)),
        clean,
    })
}

/// All that `type_prompt` did before Enter: the session, the recorded mark, the text,
/// the adapter, and the screen with the paste drawn (which `verify` compares against).
struct Typed {
    c: Contract,
    mark: SendMark,
    clean: String,
    a: Adapter,
    pasted: String,
}

/// A paste on its way into the composer: what it is compared against while it is drawn.
struct Paste<'a> {
    name: &'a str,
    pane: &'a str,
    /// The screen before the paste.
    before: String,
    /// The cursor before the paste (adapters with an Enter probe only).
    cursor_before: Option<(u32, u32)>,
    at: Instant,
    /// The paste must be drawn by then (`Plan::draw_limit` after it was sent).
    drawn_by: Instant,
    draw_limit: Duration,
}

/// Every check, then the paste and the recorded mark: all that comes before Enter.
fn type_prompt(
    tmux: &Tmux,
    name: &str,
    message: &str,
    caller_project: &str,
    mode: Option<&str>,
) -> Result<Typed, Error> {
    let plan = plan(message)?;
    let (c, a, scr) = checked(tmux, name, caller_project, mode)?;
    let mark = mark(tmux, &c, &a, &plan);
    // Gemini may redraw before it shows a large paste (1 MiB; docs/harnesses.md#gemini-cli-in-a-pane): its cursor leaving
    // the empty composer's column is the sign the paste is in.
    let cursor_before = if a.enter_probe {
        super::enter_probe::cursor(tmux, &c.pane)
    } else {
        None
    };
    let at = Instant::now();
    crate::control::pane_input::paste_bytes(tmux, &c.pane, plan.clean.as_bytes(), true)?;
    let paste = Paste {
        name,
        pane: &c.pane,
        before: scr,
        cursor_before,
        at,
        drawn_by: Instant::now() + plan.draw_limit,
        draw_limit: plan.draw_limit,
    };
    let (mut pasted, mut drawn_at) = wait_drawn(tmux, &paste)?;
    // A CLI may draw while it is still taking a long paste in (the stand-in Gemini, slow
    // to redraw a long conversation, took a 100 KB paste in over several draws, and the
    // Enter after the first one landed in its newline window): for a CLI whose settle
    // follows its lag, the paste counts as drawn once the screen holds still.
    if a.settle_lag_factor > 0 {
        (pasted, drawn_at) = hold_still(tmux, &paste, pasted, drawn_at);
    }
    enter_gate(tmux, &a, &paste, drawn_at, plan.clean.len() as u64)?;
    no_dialog(tmux, &a, &c.pane, name)?;
    // Record where the reply starts before the turn can begin.
    contract::set(
        tmux,
        &c.session_id,
        crate::tmux::options::LAST_SEND.name,
        &serde_json::to_string(&mark).unwrap_or_default(),
    )?;
    Ok(Typed {
        c,
        mark,
        clean: plan.clean,
        a,
        pasted,
    })
}

/// The checks before anything is typed, in order: the session and its contract, its
/// pane, the record pinned, not mid-turn, then the screen (no dialog, not busy, at its
/// prompt). The session, its adapter and the screen they passed on.
fn checked(
    tmux: &Tmux,
    name: &str,
    caller_project: &str,
    mode: Option<&str>,
) -> Result<(Contract, Adapter, String), Error> {
    let (mut c, a) = resolve(tmux, name)?;
    super::session::check_contract(tmux, &c, &a, caller_project, mode)?;
    check_pane(tmux, &c, &a)?;
    // After a `/clear` typed in the pane, the prompt goes into Claude's new session.
    pin_record(tmux, &mut c, &a, None)?;
    let scr = super::screen(tmux, &c.pane);
    if mid_turn(tmux, &c, &a) {
        return Err(Error::refused(format!(
            "refused: {name} is mid-turn (its previous message has not finished); wait with `{}`",
            tm_hint(tmux, &["agent", "wait", name])
        )));
    }
    match blocked(&a, &scr) {
        Some(Blocked::Dialog(d)) => Err(Error::refused(format!(
            "refused: {name} shows a dialog ({d:?}); tmuxmate never types into dialogs. Answer it yourself: {}",
            attach_line(tmux, name)
        ))),
        Some(Blocked::Busy(b)) => Err(Error::refused(format!(
            "refused: {name} is busy ({b:?}); wait with `{}`",
            tm_hint(tmux, &["agent", "wait", name])
        ))),
        Some(Blocked::NotReady) => Err(Error::refused(format!(
            "refused: {name} is not at its prompt; inspect: {}",
            attach_line(tmux, name)
        ))),
        None => Ok((c, a, scr)),
    }
}

/// Why a screen takes no prompt.
#[derive(Debug, PartialEq)]
enum Blocked {
    /// A dialog is up (its line).
    Dialog(String),
    /// The CLI is busy (its line).
    Busy(String),
    /// The CLI's prompt is not on screen.
    NotReady,
}

/// The first reason, in this order, that `scr` takes no prompt: a dialog, busy, or (for
/// an adapter that knows its prompt) not at it.
fn blocked(a: &Adapter, scr: &str) -> Option<Blocked> {
    if let Some(d) = super::any(&a.dialogs, scr) {
        return Some(Blocked::Dialog(d));
    }
    if let Some(b) = super::any(&a.busy, scr) {
        return Some(Blocked::Busy(b));
    }
    (!a.ready.is_empty() && !super::ready(a, scr)).then_some(Blocked::NotReady)
}

/// Where the reply will start: the record file's size and inode, the pane's history, and
/// (the pane fallback only) how often the message's key is already on it.
fn mark(tmux: &Tmux, c: &Contract, a: &Adapter, plan: &Plan) -> SendMark {
    let file = reply_file(c, a);
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
    // The pane fallback only: it reads the whole history (a chat file makes it needless).
    let prior_matches =
        if a.reply == ReplySource::Pane || (a.reply == ReplySource::GeminiChat && file.is_none()) {
            super::turns::pane_matches(tmux, &c.pane, history, &plan.pane_key)
        } else {
            0
        };
    SendMark {
        bytes: plan.clean.len() as u64,
        at: crate::sys::time::now_ms(),
        offset: file.as_deref().map(transcript::size).unwrap_or(0),
        ino: file.as_deref().map(super::gemini_chat::inode).unwrap_or(0),
        head: plan.head.clone(),
        pane_key: plan.pane_key.clone(),
        history,
        prior_matches,
    }
}

/// Wait until the CLI drew the paste (the screen with it, and when): Enter only once it
/// did. Gemini CLI 0.61 right after start-up took the text but lost an Enter that came
/// 150 ms after it (the text stayed in its input).
fn wait_drawn(tmux: &Tmux, p: &Paste) -> Result<(String, Instant), Error> {
    let mut changed_at: Option<Instant> = None;
    loop {
        let now = super::screen(tmux, p.pane);
        if now != p.before {
            // Its column: Gemini moved the empty composer down a row first, once (1 MiB).
            let moved = p.cursor_before.is_some_and(|b| {
                super::enter_probe::cursor(tmux, p.pane).is_some_and(|n| n.0 != b.0)
            });
            // A cursor that never moves only costs the probe (the settle pause follows).
            let changed = *changed_at.get_or_insert_with(Instant::now);
            if moved || p.cursor_before.is_none() || changed.elapsed() >= Duration::from_secs(2) {
                return Ok((now, Instant::now()));
            }
        }
        if changed_at.is_none() && Instant::now() >= p.drawn_by {
            return Err(Error::new(format!(
                "the message was pasted into {}, but its screen did not change within {} s; Enter was NOT pressed, so nothing was submitted (the text may sit in its input). Look: {}",
                p.name,
                p.draw_limit.as_secs(),
                attach_line(tmux, p.name)
            )));
        }
        // Closely at first: most CLIs draw a paste within a few milliseconds.
        let early = p.at.elapsed() < Duration::from_millis(500);
        std::thread::sleep(Duration::from_millis(if early { 5 } else { 15 }));
    }
}

/// Follow the screen until it holds still (or the draw deadline): the last screen drawn
/// and when.
fn hold_still(
    tmux: &Tmux,
    p: &Paste,
    mut pasted: String,
    mut drawn_at: Instant,
) -> (String, Instant) {
    loop {
        std::thread::sleep(Duration::from_millis(15));
        let now = super::screen(tmux, p.pane);
        if now == pasted || Instant::now() >= p.drawn_by {
            return (pasted, drawn_at);
        }
        pasted = now;
        drawn_at = Instant::now();
    }
}

/// May Enter follow? A CLI with a paste guard on its event loop: once two later keys were
/// drawn; if its cursor cannot be seen, after the settle pause as before; if it stopped
/// taking keys, never. Any other CLI: after the settle pause.
fn enter_gate(
    tmux: &Tmux,
    a: &Adapter,
    p: &Paste,
    drawn_at: Instant,
    bytes: u64,
) -> Result<(), Error> {
    let probe = if a.enter_probe {
        // No key at all goes to a dialog, the probe's cursor keys included.
        no_dialog(tmux, a, p.pane, p.name)?;
        let (short, until) = probe_deadlines(Instant::now(), p.drawn_by, probe_wait(bytes));
        super::enter_probe::guard_passed(tmux, p.pane, drawn_at, short, until)
    } else {
        super::enter_probe::Probe::Unseen(String::new())
    };
    match probe {
        super::enter_probe::Probe::Proven => Ok(()),
        super::enter_probe::Probe::Unseen(why) => {
            if a.enter_probe {
                crate::sys::state::log(&format!(
                    "bridge: {}'s paste guard was not shown over in {} ({why}); the settle pause instead",
                    p.name, p.pane
                ));
            }
            std::thread::sleep(settle(a, p.at.elapsed()));
            Ok(())
        }
        super::enter_probe::Probe::Stuck(why) => Err(Error::new(format!(
            "the message was pasted into {}, but it stopped taking keys ({why}); Enter was NOT pressed, so nothing was submitted (the text sits in its composer). Look: {}",
            p.name,
            attach_line(tmux, p.name)
        ))),
    }
}

/// How long the probe may wait for its keys: as long as the CLI may take to record the
/// prompt (a stalled Gemini drew a key 15 s late after a 100 KB paste), at least 10 s.
/// TMUXMATE_PROBE_TIMEOUT_MS replaces it (tests).
fn probe_wait(bytes: u64) -> Duration {
    std::env::var("TMUXMATE_PROBE_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or_else(|| record_limit(bytes).max(Duration::from_secs(10)))
}

/// The probe's (short, until) deadlines from `now`: `until` after `wait`; `short` at the
/// paste's draw deadline, but at least 2 s away, and never after `until`.
fn probe_deadlines(now: Instant, drawn_by: Instant, wait: Duration) -> (Instant, Instant) {
    let until = now + wait;
    let short = drawn_by.max(now + Duration::from_secs(2)).min(until);
    (short, until)
}

/// How long a CLI may take to take in a message of `bytes`: 15 s + 1 s per 8 KiB.
/// TMUXMATE_VERIFY_TIMEOUT_MS replaces it (tests; very slow machines).
fn record_limit(bytes: u64) -> Duration {
    std::env::var("TMUXMATE_VERIFY_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(15 + (bytes >> 13).min(225)))
}

/// Refuse to press anything while one of the adapter's dialogs is on screen.
fn no_dialog(tmux: &Tmux, a: &Adapter, pane: &str, name: &str) -> Result<(), Error> {
    let scr = super::screen(tmux, pane);
    match super::any(&a.dialogs, &scr) {
        Some(d) => Err(Error::new(format!(
            "a dialog appeared after the message was pasted into {name} ({d:?}); Enter was NOT pressed, the text sits in the composer. Look: {}",
            attach_line(tmux, name)
        ))),
        None => Ok(()),
    }
}

/// The most a slow draw adds to an adapter's settle before Enter.
const MAX_LAG_SETTLE_MS: u64 = 3_000;

/// The pause between the paste being drawn and Enter: the adapter's own, plus, for a CLI
/// whose paste window runs on its event loop, a multiple of how late it drew the paste.
fn settle(a: &Adapter, draw_lag: Duration) -> Duration {
    let extra = (draw_lag.as_millis() as u64)
        .saturating_mul(u64::from(a.settle_lag_factor))
        .min(MAX_LAG_SETTLE_MS);
    Duration::from_millis(a.settle_ms + extra)
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
) -> Result<String, Error> {
    let start = Instant::now();
    // A large paste takes the CLI longer to take in (1 MiB: 0.2 s in Claude 2.1.332,
    // 3.5 s in Codex 0.171, ~30 s in Gemini CLI 0.61 on a loaded machine, and once more
    // than the 79 s this allowed: so 1 s per 8 KiB, 143 s for 1 MiB).
    let limit = record_limit(mark.bytes);
    let mut c2 = c.clone();
    c2.last_send = Some(mark.clone());
    while start.elapsed() < limit {
        // Codex writes its rollout only with the first prompt: pin it when it appears.
        pin_record(tmux, &mut c2, a, Some(mark))?;
        let m = c2.last_send.clone().unwrap_or_else(|| mark.clone());
        if let Some(f) = reply_file(&c2, a) {
            let t = super::turns::read_turn(tmux, &c.pane, a, &f, &m);
            if t.submitted {
                return Ok("transcript".into());
            }
        } else if matches!(a.reply, ReplySource::Pane | ReplySource::GeminiChat) {
            // No record file (Gemini's chat file not found): the screen, as the pane
            // fallback reads the reply.
            let scr = super::screen(tmux, &c.pane);
            if super::any(&a.busy, &scr).is_some() || (scr != pasted && super::ready(a, &scr)) {
                return Ok("screen".into());
            }
        }
        std::thread::sleep(Duration::from_millis(15));
    }
    // Never a reason to send again: the prompt may be recorded late, and `wait`/`reply`
    // look for it from the same mark.
    Err(Error::new(format!(
        "the message was pasted and Enter pressed once, but {} did not record it as a prompt within {:.1} s; no second Enter was pressed. Do not send it again: if it was taken late, `{}` returns its reply. Look: {}",
        c.name,
        limit.as_secs_f64(),
        tm_hint(tmux, &["agent", "wait", &c.name]),
        attach_line(tmux, &c.name)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_settle_grows_with_its_draw_lag_and_is_bounded() {
        let g = super::super::adapters::gemini();
        let c = super::super::adapters::claude();
        let ms = |d: Duration| d.as_millis() as u64;
        assert_eq!(ms(settle(&c, Duration::from_millis(900))), 30);
        assert_eq!(ms(settle(&g, Duration::from_millis(0))), 400);
        assert_eq!(ms(settle(&g, Duration::from_millis(500))), 1400);
        assert_eq!(ms(settle(&g, Duration::from_secs(30))), 3400);
    }

    #[test]
    fn the_plan_is_the_sanitized_text_its_marks_and_its_draw_limit() {
        let e = plan(" \n\t").unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Usage);
        assert!(e.msg.contains("nothing was sent"), "{}", e.msg);
        let p = plan("\n\n  fix   the\tlogin bug\nand the tests  ").unwrap();
        assert_eq!(p.head, "fix the login bug and the tests");
        assert_eq!(p.pane_key, "fix   the\tlogin bug");
        assert_eq!(p.draw_limit, Duration::from_secs(5));
        let long = plan(&"word ".repeat(20_000)).unwrap();
        assert_eq!(long.head.chars().count(), 60);
        assert_eq!(long.pane_key.chars().count(), 30);
        // 100 000 bytes: 5 s + 3 s (one per 32 KiB).
        assert_eq!(long.clean.len(), 100_000);
        assert_eq!(long.draw_limit, Duration::from_secs(8));
    }

    #[test]
    fn a_screen_is_blocked_by_a_dialog_first_then_busy_then_not_ready() {
        let mut a = super::super::adapters::claude();
        a.dialogs = vec!["Do you trust".into()];
        a.busy = vec!["esc to interrupt".into()];
        a.ready = vec!["(?m)^> ".into()];
        assert_eq!(blocked(&a, "> \n"), None);
        assert_eq!(
            blocked(&a, "Do you trust this folder?\nesc to interrupt\n> "),
            Some(Blocked::Dialog("Do you trust this folder?".into()))
        );
        assert_eq!(
            blocked(&a, "working (esc to interrupt)\n> "),
            Some(Blocked::Busy("working (esc to interrupt)".into()))
        );
        assert_eq!(blocked(&a, "loading"), Some(Blocked::NotReady));
        // An adapter that does not know its prompt is never "not ready".
        a.ready.clear();
        assert_eq!(blocked(&a, "loading"), None);
    }

    #[test]
    fn the_probe_waits_at_least_two_seconds_and_never_past_its_end() {
        let now = Instant::now();
        let s = Duration::from_secs;
        // The draw deadline already passed: short is 2 s away.
        assert_eq!(probe_deadlines(now, now, s(10)), (now + s(2), now + s(10)));
        // A later draw deadline is kept.
        assert_eq!(
            probe_deadlines(now, now + s(5), s(10)),
            (now + s(5), now + s(10))
        );
        // Never after the end.
        assert_eq!(
            probe_deadlines(now, now + s(30), s(10)),
            (now + s(10), now + s(10))
        );
        assert_eq!(probe_deadlines(now, now, s(1)), (now + s(1), now + s(1)));
    }
}
