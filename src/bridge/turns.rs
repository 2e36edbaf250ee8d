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

use serde::Serialize;

use super::adapters::{Adapter, ReplySource};
use super::contract::{Contract, SendMark};
use super::launch::attach_line;
use super::transcript::{self, Turn};
use crate::error::CliError;
use crate::tmux::Tmux;

/// How long a pane reply must stay unchanged before it counts as complete.
const PANE_STABLE: Duration = Duration::from_millis(500);

/// Bound on a reply handed back to a model.
pub const MAX_REPLY_BYTES: usize = 200_000;

#[derive(Debug, Serialize)]
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

/// Lines of the pane, from the screen's top at `history` on, that contain the first 30
/// characters of `head` (what `pane_turn` will look for).
pub fn pane_matches(tmux: &Tmux, pane: &str, history: u64, head: &str) -> usize {
    let key: String = head.chars().take(30).collect();
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
        .filter(|l| l.contains(&key))
        .count()
}

pub fn read_turn(a: &Adapter, file: &Path, m: &SendMark) -> Turn {
    match a.reply {
        ReplySource::ClaudeTranscript => transcript::claude_turn(file, m.offset, &m.head),
        ReplySource::CodexRollout => transcript::codex_turn(file, m.offset, &m.head),
        ReplySource::Pane => Turn::default(),
    }
}

fn pane_turn(tmux: &Tmux, c: &Contract, a: &Adapter, m: &SendMark) -> Turn {
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
    let key: String = m.head.chars().take(30).collect();
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
        let after = flat[i + 1..].join("\n");
        let scr = super::screen(tmux, &c.pane);
        t.complete = super::any(&a.busy, &scr).is_none()
            && (a.ready.is_empty() || super::all(&a.ready, &scr));
        t.text = after.trim().to_string();
    }
    t
}

fn current(tmux: &Tmux, c: &Contract, a: &Adapter) -> Result<(Turn, String), CliError> {
    let Some(m) = &c.last_send else {
        return Err(CliError::new(format!(
            "nothing was sent to {} through tmuxmate yet; send with `tmuxmate agent send {}`",
            c.name, c.name
        )));
    };
    let mut c = c.clone();
    if a.reply == ReplySource::CodexRollout
        && c.rollout.is_empty()
        && let Some(p) = transcript::find_rollout(&c.project, m.at)
    {
        c.rollout = p.to_string_lossy().into_owned();
        super::contract::set(tmux, &c.session_id, "@tmuxmate-rollout", &c.rollout)?;
    }
    match super::deliver::reply_file(&c, a) {
        Some(f) if f.exists() => Ok((
            read_turn(a, &f, m),
            if a.reply == ReplySource::CodexRollout {
                "rollout"
            } else {
                "transcript"
            }
            .into(),
        )),
        _ => Ok((pane_turn(tmux, &c, a, m), "pane".into())),
    }
}

/// Block until the turn after the last send is complete, or time out.
pub fn wait(tmux: &Tmux, name: &str, timeout: Duration) -> Result<Reply, CliError> {
    wait_with(tmux, name, timeout, None)
}

/// `wait`, calling `progress` with the time waited so far at every look.
pub fn wait_with(
    tmux: &Tmux,
    name: &str,
    timeout: Duration,
    on_progress: Option<&(dyn Fn(Duration) + Sync)>,
) -> Result<Reply, CliError> {
    let (c, a) = super::deliver::resolve(tmux, name)?;
    let start = Instant::now();
    let progress = std::io::stderr().is_terminal();
    // The pane fallback has no end marker: the prompt must be back, nothing busy shown,
    // and the text unchanged for PANE_STABLE (a CLI may draw its prompt before its reply).
    let mut stable_since: Option<(String, Instant)> = None;
    loop {
        // Re-read the contract: the session could vanish under us.
        let c = super::contract::read(tmux, &c.session_id)?;
        let (t, source) = current(tmux, &c, &a)?;
        let done = if source == "pane" {
            if !t.complete {
                stable_since = None;
                false
            } else {
                match &stable_since {
                    Some((text, since)) if *text == t.text => since.elapsed() >= PANE_STABLE,
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
        if let Some(p) = on_progress {
            p(start.elapsed());
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

pub fn reply(tmux: &Tmux, name: &str) -> Result<Reply, CliError> {
    let (c, a) = super::deliver::resolve(tmux, name)?;
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
