//! The run engine behind `tmuxmate run [-t T] [--timeout-ms MS] [--until-stable MS]
//! [--max-bytes B] -- CMD...` and the MCP `tmux_run` tool: run a command in a pane and
//! report its exit status and output (`execute`, a typed `RunJson` or a refusal).
//!
//! How completion is detected (deterministic, never screen stability by default): the
//! command runs from a small POSIX script we write to `<state>/run/<id>/cmd.sh` (on a
//! server whose panes cannot see this machine's files, another host's, the script is the
//! pane's own command and its status and output stay there until read:
//! `super::run_results`, which owns where a run's results live):
//!
//! ```sh
//! { trap : INT; ( CMD ) 2>&1; echo "$?" >st; } | (trap '' INT; exec tee /dev/tty) \
//!   | (trap '' INT; exec tail -c KEEP) >out; echo >done
//! ```
//!
//! - CMD is the user's words, each single-quoted for `sh` (argv semantics: for shell syntax
//!   pass `-- sh -c '...'`), run in a subshell so `exit` or `exec` cannot end the wrapper.
//!   It never passes through tmux's parser: the script is a file, and what reaches tmux is
//!   our own fixed text.
//! - Output: the command's stdout and stderr go through a pipe, so exactly this command's
//!   output is kept (no prompt, no earlier screen), `tail -c` bounds what is kept on disk,
//!   and `tee /dev/tty` still shows it in the pane. The command sees a pipe, not a tty
//!   (no pagers, usually no colour); its stdin is the pane's terminal.
//! - Ctrl-C in the pane interrupts the command (its status, 130, is recorded) but not the
//!   wrapper, `tee` or `tail`, so the result is still delivered.
//! - Done = the marker file `done` exists. The wrapper creates it (with a shell builtin)
//!   only after the whole pipeline has ended, so by then `st` holds the status and `out`
//!   the complete output. We poll for it: every millisecond for the first 50 ms, every
//!   5 ms up to a second, then every 20 ms (a `stat` each). Why no `tmux wait-for -S` from
//!   the wrapper any more: that is a tmux client start in the pane (about
//!   10 ms, more on a loaded machine) on the path of every short command, and the
//!   signal's only job was to end our wait sooner than the poll would.
//! - Timeout: we report `timedOut: true`, an exit status only if it exists by then, and
//!   the output so far read from the pane. The command keeps running in its pane.
//!
//! Where it runs:
//! - Without `-t`: a new window (never a split of the user's window) in the caller's
//!   session, else in a session named `tmuxmate` (`crate::control::create`, which also applies
//!   `history-limit` first and marks the pane `@tmuxmate-created`). The pane is started
//!   as `/bin/sh -c 'cd; . cmd.sh; exec "${SHELL:-/bin/sh}"'`. Once the result is read
//!   the pane is removed, so calls do not pile up windows; with `--keep` it stays alive
//!   as an interactive shell, to be inspected and reused with `run -t`. A timed-out
//!   command keeps its pane (it is still running there).
//!   The command gets the caller's working directory but the tmux session's environment
//!   (as every new pane does), not the caller's.
//! - With `-t`: an existing pane named explicitly whose foreground process is a POSIX
//!   shell at its prompt (sh, dash, bash, zsh, ksh..., with no other process in its
//!   foreground group, read from `/proc`, so not on another host): we type
//!   ` . '<dir>/cmd.sh'` and Enter through a uniquely named buffer. Limits: the shell must be idle and
//!   POSIX-compatible (fish, csh, REPLs and TUIs are refused: use `--until-stable`); the
//!   command runs in a subshell, so `cd` or `export` do not persist; text the user is
//!   typing at that moment would mix with ours.
//! - `--until-stable MS`: the explicit heuristic for REPLs and TUIs. The text (the words
//!   joined by spaces, controls made visible) is pasted and Enter pressed, or, without
//!   `-t`, the command runs with the pane's terminal as its stdout; done when the screen
//!   is unchanged for MS (`stabilized: true`), or, in a new pane, when the command ends.
//!   The text is then the screen (with `-t`) or the pane's whole history (new pane).
//!
//! Output: JSON `{paneId, exitStatus, text, truncated, elapsedMs, timedOut, stabilized, kept}`;
//! text mode prints the output, then `[exit N]` (or `[timed out ...]`, `[stabilized
//! ...]`) and exits 0 whatever the command's status (a non-zero exit of tmuxmate means
//! tmuxmate itself failed). The text is bounded by the capture budget; every result is
//! stored as a snapshot.

use crate::targs;
use crate::tmux::Arg;
use std::time::{Duration, Instant};

use serde::{Deserialize, Deserializer, Serialize};

use super::run_results::{POLL, Results, Waiter};
pub use super::settle::Progress;
use super::settle::{Outcome, so_far, wait_stable};
use crate::control::budget::{self, Bounded, Range};
use crate::control::create;
use crate::control::pane_input;
use crate::control::policy;
use crate::control::preflight::Facts;
use crate::control::snapshot;
use crate::error::Error;
use crate::sys::state;
use crate::tmux::panes::PaneInfo;
use crate::tmux::{Text, Tmux};

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct RunJson {
    pub pane_id: String,
    pub exit_status: Option<i32>,
    pub text: String,
    pub truncated: bool,
    pub elapsed_ms: u64,
    pub timed_out: bool,
    pub stabilized: bool,
    /// The pane still exists (`-t`, `--keep`, or a timed-out command still running).
    pub kept: bool,
    /// For text mode's truncation marker; not part of the JSON.
    #[serde(skip)]
    pub dropped: usize,
    #[serde(skip)]
    pub dropped_at_least: bool,
}

/// Extra bytes `tail` keeps beyond the budget, so our own cut can still find a line start.
const TAIL_SLACK: usize = 4096;

// What to run and how: the CLI's `run` flags (`--json` aside) and the MCP `tmux_run`
// tool's arguments; the flags' help is the doc of each field. `timeout` is the CLI's
// alone; its old hidden spelling in milliseconds is the tool's `timeoutMs`. (A plain
// comment: clap would make a doc comment here the `run --help` text.)
#[derive(clap::Args, Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunAsk {
    /// An existing shell pane to type the command into (default: a new pane of our own).
    /// The pane: `%N`, `session:window.pane`, or another tmux target (see `tmuxmate list`).
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// The command and its arguments (after --), each one word; for shell syntax use
    /// `-- sh -c '...'`.
    #[arg(last = true, required = true, value_name = "CMD")]
    #[serde(deserialize_with = "line_or_words")]
    pub cmd: Vec<Word>,
    /// Give up waiting after this long: 500ms, 30s, 2m, 1h (default 2m); the command
    /// keeps running in its pane.
    #[arg(long, value_name = "DURATION", value_parser = crate::sys::duration::duration_ms)]
    #[serde(skip)]
    pub timeout: Option<u64>,
    /// Old spelling of --timeout, in milliseconds.
    #[arg(long, value_name = "MS", hide = true, conflicts_with = "timeout")]
    pub timeout_ms: Option<u64>,
    /// Fallback for REPLs and TUIs: done when output is unchanged for MS.
    #[arg(long, value_name = "MS")]
    pub until_stable: Option<u64>,
    /// Byte budget for the output (default: @tmuxmate-capture-max-bytes, else 100000);
    /// keeps the newest text.
    #[arg(long, value_name = "B")]
    pub max_bytes: Option<usize>,
    /// Keep the new window once the result is read (default: it is removed; a timed-out
    /// command always keeps its window, since it is still running there).
    #[arg(long, conflicts_with = "target")]
    #[serde(default)]
    pub keep: bool,
}

/// A word of `run`'s command: each of the CLI's words is an `Arg`; the MCP tool's string
/// form is one `Line`, a shell command line.
#[derive(Clone, Debug, PartialEq)]
pub enum Word {
    Arg(String),
    Line(String),
}

impl std::str::FromStr for Word {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Word, Self::Err> {
        Ok(Word::Arg(s.to_string()))
    }
}

/// A command as the MCP tools take it: a shell command line (a string) or argv words.
#[derive(Deserialize, Debug)]
#[serde(untagged)]
pub enum Cmd {
    Line(String),
    Words(Vec<String>),
}

impl Cmd {
    /// The words as given, a line as one word: `watch` reads one word as a shell line.
    pub fn into_given(self) -> Vec<String> {
        match self {
            Cmd::Line(l) => vec![l],
            Cmd::Words(w) => w,
        }
    }
}

fn line_or_words<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Word>, D::Error> {
    Ok(match Cmd::deserialize(d)? {
        Cmd::Line(l) => vec![Word::Line(l)],
        Cmd::Words(w) => w.into_iter().map(Word::Arg).collect(),
    })
}

impl RunAsk {
    /// The words `execute` runs. A line runs under `sh -c` (as the CLI's `-- sh -c
    /// '...'`), except where it is typed into a pane's program (`-t` with
    /// `until_stable`): there it is the text as it is.
    pub fn argv(&self) -> Vec<String> {
        let typed = self.target.is_some() && self.until_stable.is_some();
        let mut argv = Vec::with_capacity(self.cmd.len());
        for w in &self.cmd {
            match w {
                Word::Arg(a) => argv.push(a.clone()),
                Word::Line(l) if typed => argv.push(l.clone()),
                Word::Line(l) => argv.extend(["sh".into(), "-c".into(), l.clone()]),
            }
        }
        argv
    }

    /// The run of `argv` (see [`Self::argv`]), waiting `timeout`, else `timeout_ms`, else
    /// `default_ms`.
    pub fn request<'a>(
        &'a self,
        argv: &'a [String],
        default_ms: u64,
        progress: Progress<'a>,
    ) -> Request<'a> {
        Request {
            target: self.target.as_deref(),
            cmd: argv,
            timeout_ms: crate::sys::duration::timeout_or(
                self.timeout,
                self.timeout_ms,
                1,
                default_ms,
            ),
            until_stable: self.until_stable,
            max_bytes: self.max_bytes,
            keep: self.keep,
            progress,
        }
    }
}

/// What to run and how (a [`RunAsk`] with its words and timeout settled).
pub struct Request<'a> {
    pub target: Option<&'a str>,
    pub cmd: &'a [String],
    pub timeout_ms: u64,
    pub until_stable: Option<u64>,
    pub max_bytes: Option<usize>,
    pub keep: bool,
    /// Called while waiting (every 1 to 20 ms) with the time waited so far.
    pub progress: Progress<'a>,
}

/// Run the command and wait for its result (see the module docs).
pub fn execute(tmux: &Tmux, r: &Request) -> Result<RunJson, Error> {
    if r.cmd.first().is_none_or(|w| w.trim().is_empty()) {
        return Err(Error::usage(
            "refused: the command is empty; give it after `--`, e.g. `tmuxmate run -- make test`",
        ));
    }
    if r.timeout_ms == 0 {
        return Err(Error::usage("--timeout-ms must be at least 1"));
    }
    if r.until_stable == Some(0) {
        return Err(Error::usage(
            "--until-stable must be at least 1 (milliseconds the screen must stay unchanged)",
        ));
    }
    // A run in a new pane asks everything it reads of the server in one round trip
    // (`preflight`); else, or when that answer does not read, each question on its own.
    let facts = match (r.target, r.until_stable) {
        (None, None) => Facts::ask(
            tmux,
            &[
                crate::tmux::options::HISTORY_LIMIT.name,
                budget::MAX_BYTES_OPTION,
                snapshot::OPTION,
            ],
        ),
        _ => None,
    };
    let budget = match &facts {
        Some(f) => budget::budget_from(r.max_bytes, f.option(budget::MAX_BYTES_OPTION))?,
        None => budget::budget(tmux, r.max_bytes)?,
    };
    let timeout = Duration::from_millis(r.timeout_ms);
    let started = Instant::now();
    let pr = r.progress;
    let o = match (r.target, r.until_stable) {
        (None, None) => in_new_pane(tmux, r.cmd, budget, timeout, pr, facts.as_ref())?,
        (None, Some(ms)) => stable_new_pane(tmux, r.cmd, budget, timeout, ms, pr)?,
        (Some(t), None) => typed(tmux, t, r.cmd, budget, timeout, pr)?,
        (Some(t), Some(ms)) => stable_typed(tmux, t, r.cmd, budget, timeout, ms, pr)?,
    };
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let (id, target, text, cut) = (&o.pane_id, &o.target, &o.text.text, o.text.truncated);
    let stored = match &facts {
        Some(f) => snapshot::record_if(f.option(snapshot::OPTION), id, target, text, cut),
        None => snapshot::record(tmux, id, target, text, cut),
    };
    if let Err(e) = stored {
        eprintln!("tmuxmate: warning: {e}");
    }
    // A window per call would pile up: ours goes once its result is read, unless asked to
    // stay or its command is still running (a timeout says so and names the pane).
    let kept = r.target.is_some() || r.keep || o.timed_out;
    // Not waited for (about 9 ms of a big server's time): the server removes
    // the pane before it runs anything a later call asks.
    if !kept && let Err(e) = tmux.run_unanswered(&targs!["kill-pane", "-t", Arg::id(&o.pane_id)]) {
        state::log(&format!("run: could not remove pane {}: {e}", o.pane_id));
    }
    Ok(RunJson {
        pane_id: o.pane_id,
        exit_status: o.exit_status,
        truncated: o.text.truncated,
        dropped: o.text.dropped,
        dropped_at_least: o.text.dropped_at_least,
        text: o.text.text,
        elapsed_ms,
        timed_out: o.timed_out,
        stabilized: o.stabilized,
        kept,
    })
}

impl RunJson {
    /// Text mode: the output, then `[exit N]` (or `[timed out ...]`, `[stabilized ...]`).
    pub fn render(&self) -> String {
        let b = Bounded {
            text: self.text.clone(),
            truncated: self.truncated,
            dropped: self.dropped,
            dropped_at_least: self.dropped_at_least,
        };
        let mut s = b.render();
        if !s.is_empty() {
            s.push('\n');
        }
        let elapsed_ms = self.elapsed_ms;
        s.push_str(&if self.timed_out {
            format!(
                "[timed out after {elapsed_ms} ms; the command is still running in pane {}]",
                self.pane_id
            )
        } else if self.stabilized {
            format!(
                "[stabilized after {elapsed_ms} ms in pane {}; exit status unknown]",
                self.pane_id
            )
        } else {
            match self.exit_status {
                Some(n) => format!("[exit {n}]"),
                None => format!(
                    "[exit status unknown: the wrapper in pane {} did not record one]",
                    self.pane_id
                ),
            }
        });
        s
    }
}

/// A new window of our own running `cmd`'s wrapper (its output kept up to `keep` bytes,
/// or on the terminal), then an interactive shell.
fn new_pane(
    tmux: &Tmux,
    res: &Results,
    cmd: &[String],
    keep: Option<usize>,
    facts: Option<&Facts>,
) -> Result<create::Created, Error> {
    let command = res.pane_command(tmux, cmd, keep)?;
    let caller = crate::location::address::caller(tmux);
    // The wrapper never exits at once (it ends in an interactive shell), so the mark can
    // go in the creation's own command list: one tmux round trip.
    create::new_work_window_of_ours(tmux, &caller, Some(&Text::lossy("run")), &command, facts)
}

fn in_new_pane(
    tmux: &Tmux,
    cmd: &[String],
    budget: usize,
    timeout: Duration,
    progress: Progress,
    facts: Option<&Facts>,
) -> Result<Outcome, Error> {
    let res = Results::for_server(tmux)?;
    let deadline = Instant::now() + timeout;
    let created = new_pane(tmux, &res, cmd, Some(tail_keep(budget)), facts)?;
    let finished = on_cancel(
        wait_done(tmux, &created.pane_id, &res, deadline, progress),
        || remove_pane(tmux, &created.pane_id),
    )?;
    let ended = Ended {
        pane: created,
        done: finished,
        typed_marker: None,
    };
    finish(tmux, &res, ended, budget)
}

fn typed(
    tmux: &Tmux,
    target: &str,
    cmd: &[String],
    budget: usize,
    timeout: Duration,
    progress: Progress,
) -> Result<Outcome, Error> {
    if !tmux.transport().sees_processes() {
        return Err(typed_refusal());
    }
    let pane = policy::resolve(tmux, Some(target), "")?;
    check_typeable(&pane)?;
    let fg = pane
        .pane_pid
        .parse()
        .ok()
        .and_then(crate::sys::foreground::leader);
    let exe = fg
        .and_then(crate::sys::procfs::exe_name)
        .unwrap_or_default();
    if !crate::sys::foreground::is_posix_shell(&exe) {
        return Err(Error::refused(format!(
            "refused: pane {} is running {} in the foreground, not a POSIX shell at its prompt; \
             `run -t` types a command line into an idle sh/bash/zsh/ksh. For a REPL or TUI pass \
             --until-stable MS; to run in a fresh pane leave out -t",
            pane.pane_id,
            if exe.is_empty() {
                "an unknown program".to_string()
            } else {
                format!("`{exe}`")
            }
        )));
    }
    if let Some(fg) = fg
        && busy(fg)
    {
        return Err(Error::refused(format!(
            "refused: the shell in pane {} is busy running something (its foreground process group has children); \
             wait for it to finish, or leave out -t to run in a fresh pane",
            pane.pane_id
        )));
    }
    let res = Results::for_server(tmux)?;
    let deadline = Instant::now() + timeout;
    let (line, marker) = res
        .typed_line(cmd, tail_keep(budget))
        .ok_or_else(typed_refusal)??;
    type_line(tmux, &pane.pane_id, &line, false)?;
    let finished = on_cancel(
        wait_done(tmux, &pane.pane_id, &res, deadline, progress),
        || interrupt(tmux, &pane.pane_id, &res),
    )?;
    let ended = Ended {
        pane: create::Created {
            pane_id: pane.pane_id.clone(),
            target: pane.target(),
        },
        done: finished,
        typed_marker: Some(marker),
    };
    finish(tmux, &res, ended, budget)
}

/// `run -t` on a server whose panes' processes (or files) are not this machine's.
fn typed_refusal() -> Error {
    Error::usage(
        "refused: `run -t` with --host: typing into an existing pane needs to check that its shell is idle, which tmuxmate reads from /proc and cannot on another host. Leave out -t to run in a fresh pane on the host, or add --until-stable MS",
    )
}

/// Whether the foreground leader has children in its own process group: a shell at its
/// prompt has none (background jobs live in other groups), while a non-interactive shell
/// running a script or pipeline (no job control) does. Unknown (no `children` file) = idle.
fn busy(leader: i32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{leader}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        std::fs::read_to_string(t.path().join("children"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|c| c.parse::<i32>().ok())
            .any(|c| crate::sys::procfs::stat(c).is_some_and(|s| s.pgrp == leader))
    })
}

fn check_typeable(pane: &PaneInfo) -> Result<(), Error> {
    if pane.dead {
        return Err(Error::refused(format!(
            "refused: pane {} is dead (its program exited); run without -t for a fresh pane",
            pane.pane_id
        )));
    }
    if pane.in_mode {
        return Err(Error::refused(format!(
            "refused: pane {} is in {} and would eat the typed command; leave the mode first (press q in it, or `tmux send-keys -t {} -X cancel`)",
            pane.pane_id,
            if pane.mode.is_empty() {
                "a mode"
            } else {
                &pane.mode
            },
            pane.pane_id
        )));
    }
    Ok(())
}

/// Paste `text` through a unique buffer, then press Enter as its own key.
fn type_line(tmux: &Tmux, pane_id: &str, text: &str, bracketed: bool) -> Result<(), Error> {
    pane_input::paste_then_enter(tmux, pane_id, text.as_bytes(), bracketed)
}

/// How often a long wait asks tmux whether the run's pane is still there.
const PANE_LOOK: Duration = Duration::from_secs(1);

/// Block until the wrapper is done or the deadline passes; true when done. A pane that
/// goes away meanwhile (closed by a person, its window killed, its shell gone) ends the
/// wait at once with an error instead of at the deadline: nothing will mark it done.
fn wait_done(
    tmux: &Tmux,
    pane_id: &str,
    res: &Results,
    deadline: Instant,
    progress: Progress,
) -> Result<bool, Error> {
    let mut waiter = res.waiter(tmux, deadline);
    let r = wait_with(tmux, pane_id, res, &mut waiter, deadline, progress);
    waiter.end(tmux);
    r
}

fn wait_with(
    tmux: &Tmux,
    pane_id: &str,
    res: &Results,
    waiter: &mut Waiter,
    deadline: Instant,
    progress: Progress,
) -> Result<bool, Error> {
    let began = Instant::now();
    let mut looked = began;
    loop {
        if waiter.signalled() || res.done(tmux) {
            return Ok(true);
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(false);
        }
        let waited = now.duration_since(began);
        if now.duration_since(looked) >= PANE_LOOK {
            looked = now;
            // Looked at again after the answer: the wrapper may have ended meanwhile.
            if pane_gone(tmux, pane_id) && !res.done(tmux) {
                return Err(Error::new(format!(
                    "pane {pane_id} went away before its command finished (closed, or its shell \
                     exited): there is no exit status and its output went with it; run it again"
                )));
            }
        }
        if let Some(p) = progress
            && !p(waited)
        {
            return Err(super::settle::cancelled());
        }
        waiter.pause(res.poll(waited).min(deadline - now));
    }
}

/// A cancelled wait ends what the run started (`undo`); any other outcome passes.
fn on_cancel<T>(r: Result<T, Error>, undo: impl FnOnce()) -> Result<T, Error> {
    if let Err(e) = &r
        && e.kind == crate::error::Kind::Cancelled
    {
        undo();
    }
    r
}

/// Our run's own pane, with what still runs in it.
fn remove_pane(tmux: &Tmux, pane_id: &str) {
    // A cancelled run must not leave its pane: a kill that failed (a tmux call lost on a
    // loaded machine) is tried again while the pane is still there.
    for attempt in 1..=3 {
        match tmux.run(&targs!["kill-pane", "-t", Arg::id(pane_id)]) {
            Ok(_) => return,
            Err(e) => {
                state::log(&format!(
                    "run: could not remove pane {pane_id} (attempt {attempt}): {e}"
                ));
                if pane_gone(tmux, pane_id) {
                    return;
                }
            }
        }
    }
}

/// The command typed into someone's shell gets C-c (the wrapper records its status and
/// the prompt comes back); nothing is pressed when it already ended, so a line the person
/// types meanwhile is never touched.
fn interrupt(tmux: &Tmux, pane_id: &str, res: &Results) {
    if res.done(tmux) {
        return;
    }
    if let Err(e) = tmux.run(&targs!["send-keys", "-t", Arg::id(pane_id), "C-c"]) {
        state::log(&format!("run: could not interrupt pane {pane_id}: {e}"));
        return;
    }
    // The run directory goes when we return: let the wrapper write its marker first.
    let until = Instant::now() + Duration::from_secs(2);
    while !res.done(tmux) && Instant::now() < until {
        std::thread::sleep(POLL);
    }
}

/// The pane no longer exists, or its process is dead (`remain-on-exit`). Unknown (tmux
/// did not answer, or failed otherwise) counts as there: the deadline still ends the wait.
fn pane_gone(tmux: &Tmux, pane_id: &str) -> bool {
    match tmux.run(&targs![
        "display-message",
        "-p",
        "-t",
        Arg::id(pane_id),
        "#{pane_dead}"
    ]) {
        // tmux 3.3a answers a missing `-t` of display-message with an empty line.
        Ok(v) => v.trim() != "0",
        Err(e) => matches!(e, crate::tmux::TmuxError::TargetNotFound { .. }) || e.is_no_server(),
    }
}

/// A run that ended, or ran out of time, in its pane: what `finish` reports on.
struct Ended<'a> {
    pane: create::Created,
    /// The wrapper wrote its `done` marker before the deadline.
    done: bool,
    /// A typed run: the marker its part of the pane's text starts after.
    typed_marker: Option<&'a str>,
}

/// How many bytes of output the wrapper's `tail` keeps for a `budget`.
fn tail_keep(budget: usize) -> usize {
    budget + TAIL_SLACK
}

/// The wrapper's output file as the answer's text: bounded by `budget`; a file that
/// reached `keep` bytes was cut by `tail`, which dropped an unknown amount before it.
fn bound_output(raw: &[u8], budget: usize, keep: usize) -> Bounded {
    let mut b = budget::bound(budget::trim_trailing_blank(raw), budget);
    if raw.len() >= keep {
        b.truncated = true;
        b.dropped_at_least = true;
    }
    b
}

fn finish(tmux: &Tmux, res: &Results, ended: Ended, budget: usize) -> Result<Outcome, Error> {
    let exit_status = res.status(tmux);
    let create::Created { pane_id, target } = ended.pane;
    let text = match res.output(tmux, ended.done) {
        Some(raw) => bound_output(&raw, budget, tail_keep(budget)),
        // Timed out (or no output file): what the pane shows of this command so far.
        None => so_far(tmux, &pane_id, ended.typed_marker, budget)?,
    };
    if ended.done || exit_status.is_some() {
        res.release(tmux);
    }
    Ok(Outcome {
        pane_id,
        target,
        exit_status,
        text,
        timed_out: !ended.done,
        stabilized: false,
    })
}

fn stable_new_pane(
    tmux: &Tmux,
    cmd: &[String],
    budget: usize,
    timeout: Duration,
    stable_ms: u64,
    progress: Progress,
) -> Result<Outcome, Error> {
    let res = Results::for_server(tmux)?;
    let deadline = Instant::now() + timeout;
    let created = new_pane(tmux, &res, cmd, None, None)?;
    let (stabilized, timed_out) = on_cancel(
        wait_stable(
            tmux,
            &created.pane_id,
            stable_ms,
            deadline,
            Vec::new(),
            || res.done(tmux),
            progress,
        ),
        || remove_pane(tmux, &created.pane_id),
    )?;
    let exit_status = res.status(tmux);
    if exit_status.is_some() {
        res.release(tmux);
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

fn stable_typed(
    tmux: &Tmux,
    target: &str,
    cmd: &[String],
    budget: usize,
    timeout: Duration,
    stable_ms: u64,
    progress: Progress,
) -> Result<Outcome, Error> {
    let pane = policy::resolve(tmux, Some(target), "")?;
    check_typeable(&pane)?;
    let (text, _) = pane_input::sanitize_paste(&cmd.join(" "));
    let deadline = Instant::now() + timeout;
    let before = budget::capture_pane(tmux, &pane.pane_id, Range::Screen, false, false)?;
    type_line(tmux, &pane.pane_id, &text, true)?;
    let (stabilized, timed_out) = wait_stable(
        tmux,
        &pane.pane_id,
        stable_ms,
        deadline,
        before,
        || false,
        progress,
    )?;
    let raw = budget::capture_pane(tmux, &pane.pane_id, Range::Screen, false, false)?;
    Ok(Outcome {
        pane_id: pane.pane_id.clone(),
        target: pane.target(),
        exit_status: None,
        text: budget::bound(budget::trim_trailing_blank(&raw), budget),
        timed_out,
        stabilized,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The MCP tool's string form runs under `sh -c`, or is typed as it is into a pane's
    /// program; words are argv either way; the CLI's `--timeout` wins over the old spelling.
    #[test]
    fn a_line_runs_under_sh_unless_typed_into_a_program() {
        let ask = |v: serde_json::Value| serde_json::from_value::<RunAsk>(v).unwrap();
        let a = ask(serde_json::json!({"cmd": "echo a; echo b"}));
        assert_eq!(a.argv(), ["sh", "-c", "echo a; echo b"]);
        let a = ask(serde_json::json!({"cmd": "1+1", "target": "%1", "untilStable": 300}));
        assert_eq!(a.argv(), ["1+1"]);
        let a = ask(serde_json::json!({"cmd": "1+1", "untilStable": 300}));
        assert_eq!(a.argv(), ["sh", "-c", "1+1"]);
        let a = ask(serde_json::json!({"cmd": ["ls", "-l"], "target": "%1", "untilStable": 9}));
        assert_eq!(a.argv(), ["ls", "-l"]);
        let r = a.request(&[], 5, None);
        assert_eq!((r.timeout_ms, r.until_stable), (5, Some(9)));
        let a = ask(serde_json::json!({"cmd": ["x"], "timeoutMs": 7}));
        assert_eq!(a.request(&[], 5, None).timeout_ms, 7);
        let a = RunAsk {
            timeout: Some(3),
            ..a
        };
        assert_eq!(a.request(&[], 5, None).timeout_ms, 3);
    }

    #[test]
    fn output_that_filled_the_tail_is_marked_cut() {
        // Under the tail's size: the whole output, as the command printed it.
        let b = bound_output(b"one\ntwo\n\n\n", 100, tail_keep(100));
        assert_eq!(b.text, "one\ntwo");
        assert!(!b.truncated && !b.dropped_at_least);
        // As long as the tail keeps: `tail` dropped an unknown amount before it.
        let full = vec![b'x'; tail_keep(10)];
        let b = bound_output(&full, 10, tail_keep(10));
        assert!(b.truncated && b.dropped_at_least);
        assert!(b.text.len() <= 10);
    }
}
