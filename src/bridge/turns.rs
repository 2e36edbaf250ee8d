//! Waiting for a managed agent's turn to end, and reading its reply.
//!
//! Owns: the "turn finished" decision per reply source (transcript end marker; for the
//! pane fallback, the ready screen back and not busy on two looks in a row) and the reply
//! text. Invariant: an incomplete reply is labelled incomplete and ends with the attach
//! line; it is never presented as whole.

use crate::targs;
use crate::tmux::Arg;
use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::adapters::{Adapter, ReplySource};
use super::contract::{Contract, SendMark};
use super::gemini_chat;
use super::hints::{attach_line, tm_hint};
use super::transcript::{self, Turn};
use crate::error::Error;
use crate::tmux::Tmux;

/// How long a pane reply must stay unchanged before it counts as complete.
const PANE_STABLE: Duration = Duration::from_millis(500);

/// Bound on a reply handed back to a model.
pub const MAX_REPLY_BYTES: usize = 200_000;
/// `agent wait`'s and `agent ask`'s default `--timeout`: ten minutes.
pub const DEFAULT_WAIT_MS: u64 = 600_000;

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reply {
    pub name: String,
    pub complete: bool,
    /// transcript | rollout | pane
    pub source: String,
    pub text: String,
    pub truncated: bool,
    pub attach: String,
}

/// Lines of the pane, from the screen's top at `history` on, that contain `key` (what
/// `pane_turn` will look for).
pub fn pane_matches(tmux: &Tmux, pane: &str, history: u64, key: &str) -> usize {
    if key.is_empty() {
        return 0;
    }
    let all = tmux
        .run(&targs![
            "capture-pane",
            "-p",
            "-J",
            "-S",
            "-",
            "-t",
            Arg::id(pane)
        ])
        .unwrap_or_default();
    all.lines()
        .skip(history as usize)
        .filter(|l| l.contains(key))
        .count()
}

/// The turn after the send `m`, as the CLI's own record shows it. Gemini's chat file has
/// no end-of-turn record: its turn is over when the file shows a reply without tool calls
/// last and the screen, captured after the file was read, is idle.
pub fn read_turn(tmux: &Tmux, pane: &str, a: &Adapter, file: &Path, m: &SendMark) -> Turn {
    match a.reply {
        ReplySource::ClaudeTranscript => transcript::claude_turn(file, m.offset, &m.head),
        ReplySource::CodexRollout => transcript::codex_turn(file, m.offset, &m.head),
        ReplySource::GeminiChat => {
            let chat = gemini_chat::chat_turn(file, m.offset, m.ino, m.at, &m.head);
            let ask_screen = chat.submitted && (chat.ours_end_shaped || chat.later);
            chat.settle(ask_screen && screen_idle(tmux, pane, a))
        }
        ReplySource::Pane => Turn::default(),
    }
}

/// No busy line on the screen and the composer ready.
fn screen_idle(tmux: &Tmux, pane: &str, a: &Adapter) -> bool {
    let scr = super::screen(tmux, pane);
    super::any(&a.busy, &scr).is_none() && (a.ready.is_empty() || super::ready(a, &scr))
}

pub fn pane_turn(tmux: &Tmux, c: &Contract, a: &Adapter, m: &SendMark) -> Turn {
    let all = tmux
        .run(&targs![
            "capture-pane",
            "-p",
            "-J",
            "-S",
            "-",
            "-t",
            Arg::id(&c.pane)
        ])
        .unwrap_or_default();
    let key: String = if m.pane_key.is_empty() {
        m.head.chars().take(30).collect()
    } else {
        m.pane_key.clone()
    };
    let mut t = Turn::default();
    let flat: Vec<&str> = all.lines().collect();
    // Lines above the screen's top at send time are older than our message.
    let from = (m.history as usize).min(flat.len());
    if let Some(i) = flat[from..]
        .iter()
        .enumerate()
        .filter(|(_, l)| !key.is_empty() && l.contains(&key))
        .nth(m.prior_matches)
        .map(|(i, _)| i + from)
    {
        t.submitted = true;
        let ends: Vec<regex::Regex> = a
            .reply_end
            .iter()
            .filter_map(|p| regex::Regex::new(p).ok())
            .collect();
        let echo = a.prompt_echo.and_then(|p| regex::Regex::new(p).ok());
        let rest = &flat[i + 1..];
        let stop = rest
            .iter()
            .position(|l| ends.iter().any(|re| re.is_match(l)))
            .unwrap_or(rest.len());
        // A later prompt echoed in the history: our turn ended where it begins.
        let later = echo
            .as_ref()
            .and_then(|re| rest[..stop].iter().position(|l| re.is_match(l)));
        let body = &rest[..later.unwrap_or(stop)];
        let first = a
            .reply_start
            .and_then(|p| regex::Regex::new(p).ok())
            .map(|re| {
                body.iter()
                    .position(|l| re.is_match(l))
                    .unwrap_or(body.len())
            })
            .unwrap_or(0);
        let after = body[first..].join("\n");
        let scr = super::screen(tmux, &c.pane);
        let idle =
            super::any(&a.busy, &scr).is_none() && (a.ready.is_empty() || super::ready(a, &scr));
        t.text = after.trim().to_string();
        // Nothing drawn yet is no reply: a CLI can look idle between Enter and its
        // first busy frame.
        t.complete = (idle || later.is_some()) && !t.text.is_empty();
        t.later_open = later.is_some() && !idle;
    }
    t
}

fn current(tmux: &Tmux, c: &Contract, a: &Adapter) -> Result<(Turn, String), Error> {
    let Some(m) = &c.last_send else {
        return Err(Error::new(format!(
            "nothing was sent to {} through tmuxmate yet; send with `{}`",
            c.name,
            tm_hint(tmux, &["agent", "send", &c.name, "--message", "..."])
        )));
    };
    let mut c = c.clone();
    let mut turn = None;
    if let Some(f) = super::session::reply_file(&c, a) {
        turn = Some(read_turn(tmux, &c.pane, a, &f, m));
    }
    // Not in the pinned record (yet): Codex's rollout may have appeared, or a `/clear`
    // moved Claude to a new session that holds our prompt.
    if !turn.as_ref().is_some_and(|t| t.submitted) {
        super::session::pin_record(tmux, &mut c, a, Some(m))?;
        turn = None;
    }
    let m = c.last_send.clone().unwrap_or_else(|| m.clone());
    match super::session::reply_file(&c, a) {
        Some(f) if f.exists() => Ok((
            turn.unwrap_or_else(|| read_turn(tmux, &c.pane, a, &f, &m)),
            if a.reply == ReplySource::CodexRollout {
                "rollout"
            } else {
                "transcript"
            }
            .into(),
        )),
        _ => Ok((pane_turn(tmux, &c, a, &m), "pane".into())),
    }
}

/// Block until the turn after the last send is complete, or time out.
pub fn wait(tmux: &Tmux, name: &str, timeout: Duration) -> Result<Reply, Error> {
    wait_with(tmux, name, timeout, None)
}

/// `wait`, calling `progress` with the time waited so far at every look.
pub fn wait_with(
    tmux: &Tmux,
    name: &str,
    timeout: Duration,
    on_progress: crate::control::settle::Progress,
) -> Result<Reply, Error> {
    let (c, a) = super::session::resolve(tmux, name)?;
    let start = Instant::now();
    let progress = std::io::stderr().is_terminal();
    // The pane fallback has no end marker: the prompt must be back, nothing busy shown,
    // and the text unchanged for PANE_STABLE (a CLI may draw its prompt before its reply).
    let mut stable_since: Option<(String, Instant)> = None;
    // When a turn tmuxmate did not start (typed in the pane) was seen running.
    let mut foreign_since: Option<Instant> = None;
    loop {
        // Re-read the contract: the session could vanish under us.
        let c = super::contract::read(tmux, &c.session_id)?;
        let (t, source) = current(tmux, &c, &a)?;
        // Our last turn is over and another one runs: wait for it, but its reply is not
        // ours to hand back (nor is our previous one an answer to anything now).
        if t.complete && t.later_open {
            foreign_since.get_or_insert_with(Instant::now);
            if start.elapsed() >= timeout {
                return Err(Error::new(format!(
                    "{name} is in a turn that tmuxmate did not start (a prompt given there after tmuxmate's last message was answered); it is still running after {} s. Wait again, or look: {}",
                    start.elapsed().as_secs(),
                    attach_line(tmux, name)
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        if let Some(since) = foreign_since
            && t.complete
        {
            return Err(Error::new(format!(
                "the turn that was running in {name} was not started by tmuxmate; it ended after {} s, and {name} is idle now: send with `{}` (the reply to tmuxmate's own last message: `{}`)",
                since.elapsed().as_secs(),
                tm_hint(tmux, &["agent", "send", name, "--message", "..."]),
                tm_hint(tmux, &["agent", "reply", name])
            )));
        }
        let done = if source == "pane" || a.reply == ReplySource::GeminiChat {
            // Gemini's end is the file and the idle screen: the same on two looks in a
            // row, the second file read after the first idle screen (a continuation
            // written between a read and its screen would show on the second).
            let settle = if source == "pane" {
                PANE_STABLE
            } else {
                Duration::ZERO
            };
            if !t.complete {
                stable_since = None;
                false
            } else {
                match &stable_since {
                    Some((text, since)) if *text == t.text => since.elapsed() >= settle,
                    _ => {
                        stable_since = Some((t.text.clone(), Instant::now()));
                        false
                    }
                }
            }
        } else {
            t.complete
        };
        if done {
            return Ok(reply_of(tmux, name, t, source));
        }
        if start.elapsed() >= timeout {
            let mut r = reply_of(tmux, name, t, source);
            r.complete = false;
            return Ok(r);
        }
        if progress {
            eprint!("\rwaiting for {name}: {} s ", start.elapsed().as_secs());
        }
        if let Some(p) = on_progress
            && !p(start.elapsed())
        {
            return Err(crate::control::settle::cancelled());
        }
        // Short turns are common: look often at first, then back off.
        let ms = if start.elapsed() < Duration::from_secs(3) {
            15
        } else {
            100
        };
        std::thread::sleep(Duration::from_millis(ms));
    }
}

pub fn reply(tmux: &Tmux, name: &str) -> Result<Reply, Error> {
    let (c, a) = super::session::resolve(tmux, name)?;
    let (t, source) = current(tmux, &c, &a)?;
    Ok(reply_of(tmux, name, t, source))
}

fn reply_of(tmux: &Tmux, name: &str, t: Turn, source: String) -> Reply {
    let mut text = t.text;
    let truncated = text.len() > MAX_REPLY_BYTES;
    if truncated {
        let mut cut = text.len() - MAX_REPLY_BYTES;
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        text = format!(
            "[... {cut} earlier bytes of the reply truncated ...]\n{}",
            &text[cut..]
        );
    }
    Reply {
        name: name.to_string(),
        complete: t.complete && t.submitted,
        source,
        text,
        truncated,
        attach: attach_line(tmux, name),
    }
}

impl Reply {
    /// Human/model text: the reply, or a clearly labelled partial one ending with attach.
    pub fn render(&self) -> String {
        if self.complete {
            self.text.clone()
        } else {
            format!(
                "[incomplete: the turn of {} has not finished (or its record could not be read); what is there so far:]\n{}\n[to look yourself:] {}",
                self.name, self.text, self.attach
            )
        }
    }
}
