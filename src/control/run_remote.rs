//! `tmuxmate --host H run -- CMD`: the same run, when the tmux server is on another host.
//!
//! Why a variant: the local run keeps its script, output and status in this machine's
//! state directory, which the remote pane cannot see. Here everything stays on the host
//! and travels through the remote tmux only (no tmuxmate there):
//!
//! ```sh
//! trap : INT; d=$(mktemp -d) && { WRAPPER with st/out in "$d" }; \
//!   tmux load-buffer -b tmuxmate-ID-out "$d/out"; tmux load-buffer -b tmuxmate-ID-st "$d/st"; \
//!   rm -rf "$d"; tmux wait-for -S tmuxmate-ID; trap - INT; exec "${SHELL:-/bin/sh}"
//! ```
//!
//! - The script is the pane's own `sh -c` command (tmux's command position, not format
//!   expanded; `Arg::literal` keeps a trailing `;` intact); the user's words are each
//!   single-quoted for that `sh` and the whole line once more for the ssh login shell by
//!   the transport.
//! - Done = the status buffer exists (loaded after the output buffer, so the output is
//!   complete by then); we wait on the `wait-for` channel over the connection and look
//!   for the status buffer every [`POLL`] as the safety net. Both buffers are deleted once
//!   read.
//! - Not supported remotely: `-t` without `--until-stable` (it must check from `/proc`
//!   that the pane's shell is idle, and the host's `/proc` is not ours to read). A
//!   timed-out run leaves its two buffers behind when the command ends later.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::control::budget::{self, Range};
use crate::control::create;
use crate::error::Error;
use crate::targs;
use crate::tmux::{Arg, Text, Tmux};

use super::settle::{Outcome, so_far, wait_stable};
use crate::sys::shell::join as quote_words;

/// How often the status buffer is looked for (each look is one call over the connection).
const POLL: Duration = Duration::from_millis(250);

struct RemoteRun {
    id: String,
}

impl RemoteRun {
    fn new() -> RemoteRun {
        RemoteRun {
            id: format!("r{}", crate::sys::unique::token()),
        }
    }
    fn channel(&self) -> String {
        format!("tmuxmate-{}", self.id)
    }
    fn buffer(&self, what: &str) -> String {
        format!("tmuxmate-{}-{what}", self.id)
    }
    /// `Some(status)` once the wrapper loaded its status buffer (`None` inside: unparsable).
    fn status(&self, tmux: &Tmux) -> Option<Option<i32>> {
        let b = self.buffer("st");
        tmux.run(&targs!["show-buffer", "-b", Arg::id(&b)])
            .ok()
            .map(|s| s.trim().parse().ok())
    }
    fn output(&self, tmux: &Tmux) -> Vec<u8> {
        let b = self.buffer("out");
        // No buffer: the command printed nothing (tmux loads no empty buffer).
        tmux.run_bytes(&targs!["show-buffer", "-b", Arg::id(&b)], None)
            .unwrap_or_default()
    }
    fn cleanup(&self, tmux: &Tmux) {
        for what in ["out", "st"] {
            let b = self.buffer(what);
            let _ = tmux.run(&targs!["delete-buffer", "-b", Arg::id(&b)]);
        }
    }

    /// The pane's script (see the module docs); `keep` bytes of output are kept, or none
    /// (and the command gets the terminal) when `tee_output` is false.
    fn script(&self, tmux: &Tmux, cmd: &[String], keep: usize, tee_output: bool) -> String {
        let q = crate::sys::shell::readable;
        let prog = q(&tmux.program);
        let cmd = quote_words(cmd);
        let body = if tee_output {
            format!(
                "{{ trap : INT; ( {cmd} ) 2>&1; echo \"$?\" >\"$d/st\" 2>/dev/null; }} | (trap '' INT; exec tee /dev/tty) | (trap '' INT; exec tail -c {keep}) >\"$d/out\"; \
                 [ -s \"$d/out\" ] && {prog} load-buffer -b {out} \"$d/out\" 2>/dev/null; ",
                out = q(&self.buffer("out")),
            )
        } else {
            format!("( {cmd} ); echo \"$?\" >\"$d/st\" 2>/dev/null; ")
        };
        format!(
            "trap : INT; d=$(mktemp -d) || exit 1; {body}\
             {prog} load-buffer -b {st} \"$d/st\" 2>/dev/null; rm -rf \"$d\"; \
             {prog} wait-for -S {ch} 2>/dev/null; trap - INT; exec \"${{SHELL:-/bin/sh}}\"",
            st = q(&self.buffer("st")),
            ch = q(&self.channel()),
        )
    }
}

fn new_pane(tmux: &Tmux, script: String) -> Result<create::Created, Error> {
    let caller = crate::location::address::caller(tmux);
    create::new_work_window(
        tmux,
        &caller,
        Some(&Text::lossy("run")),
        None,
        &["/bin/sh".to_string(), "-c".to_string(), script],
    )
}

/// `run -- CMD` on a remote server: a new window of our own.
pub(super) fn in_new_pane(
    tmux: &Tmux,
    cmd: &[String],
    budget: usize,
    timeout: Duration,
    keep: usize,
) -> Result<Outcome, Error> {
    let rr = RemoteRun::new();
    let deadline = Instant::now() + timeout;
    let created = new_pane(tmux, rr.script(tmux, cmd, keep, true))?;
    let status = wait_done(tmux, &rr, deadline);
    let out = match status {
        Some(exit_status) => {
            let raw = rr.output(tmux);
            rr.cleanup(tmux);
            let mut text = budget::bound(budget::trim_trailing_blank(&raw), budget);
            if raw.len() >= keep {
                text.truncated = true;
                text.dropped_at_least = true;
            }
            Outcome {
                pane_id: created.pane_id,
                target: created.target,
                exit_status,
                text,
                timed_out: false,
                stabilized: false,
            }
        }
        None => Outcome {
            text: so_far(tmux, &created.pane_id, None, budget)?,
            pane_id: created.pane_id,
            target: created.target,
            exit_status: None,
            timed_out: true,
            stabilized: false,
        },
    };
    Ok(out)
}

/// `run --until-stable MS -- CMD` on a remote server: the command on the pane's terminal.
pub(super) fn stable_new_pane(
    tmux: &Tmux,
    cmd: &[String],
    budget: usize,
    timeout: Duration,
    stable_ms: u64,
) -> Result<Outcome, Error> {
    let rr = RemoteRun::new();
    let deadline = Instant::now() + timeout;
    let created = new_pane(tmux, rr.script(tmux, cmd, 0, false))?;
    let (stabilized, timed_out) = wait_stable(
        tmux,
        &created.pane_id,
        stable_ms,
        deadline,
        Vec::new(),
        || rr.status(tmux).is_some(),
        None,
    )?;
    let exit_status = rr.status(tmux).flatten();
    if exit_status.is_some() {
        rr.cleanup(tmux);
    }
    let raw = budget::capture_pane(tmux, &created.pane_id, Range::All, false, true)?;
    Ok(Outcome {
        exit_status,
        pane_id: created.pane_id,
        target: created.target,
        text: budget::bound(budget::trim_trailing_blank(&raw), budget),
        timed_out,
        stabilized,
    })
}

/// Wait for the wrapper's status buffer; `None` when the deadline passed first.
fn wait_done(tmux: &Tmux, rr: &RemoteRun, deadline: Instant) -> Option<Option<i32>> {
    let channel = rr.channel();
    let (tx, rx) = mpsc::channel::<bool>();
    let mut waiter = tmux.clone();
    waiter.timeout = deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(5);
    let ch = channel.clone();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(waiter.run(&targs!["wait-for", Arg::id(&ch)]).is_ok());
    });
    let mut waiting = true;
    let status = loop {
        let now = Instant::now();
        if now >= deadline {
            break rr.status(tmux);
        }
        if waiting {
            match rx.recv_timeout(POLL.min(deadline - now)) {
                // Signalled: the status buffer was loaded before the signal.
                Ok(true) => {
                    waiting = false;
                    break Some(rr.status(tmux).flatten());
                }
                // The waiter failed (connection dropped, server gone): polling carries on.
                Ok(false) | Err(mpsc::RecvTimeoutError::Disconnected) => waiting = false,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
        } else {
            std::thread::sleep(POLL.min(deadline - now));
        }
        if let Some(s) = rr.status(tmux) {
            break Some(s);
        }
    };
    if waiting {
        // Release our own waiter rather than leave a tmux client blocked on the host.
        let _ = tmux.run(&targs!["wait-for", "-S", Arg::id(&channel)]);
    }
    let _ = handle.join();
    status
}
