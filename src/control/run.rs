//! The run engine behind `tmuxmate run [-t T] [--timeout-ms MS] [--until-stable MS]
//! [--max-bytes B] -- CMD...` and the MCP `tmux_run` tool: run a command in a pane and
//! report its exit status and output (`execute`, a typed `RunJson` or a refusal).
//!
//! How completion is detected (deterministic, never screen stability by default): the
//! command runs from a small POSIX script we write to `<state>/run/<id>/cmd.sh`:
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
//!   foreground group, read from `/proc`): we type ` . '<dir>/cmd.sh'` and
//!   Enter through a uniquely named buffer. Limits: the shell must be idle and
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
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

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

/// How often a long wait looks for the end marker.
const POLL: Duration = Duration::from_millis(20);
/// Extra bytes `tail` keeps beyond the budget, so our own cut can still find a line start.
const TAIL_SLACK: usize = 4096;
/// Run directories older than this are leftovers of killed invocations.
const STALE_RUN_DIR: Duration = Duration::from_secs(24 * 3600);

/// The per-run files and names.
struct RunDir {
    dir: PathBuf,
    id: String,
}

impl RunDir {
    fn create() -> Result<RunDir, Error> {
        let root = state::state_dir().join("run");
        sweep(&root);
        // Exclusively ours: two runs started in one millisecond never share files.
        let (id, dir) = state::new_private_dir(&root, "r").map_err(|e| {
            Error::new(format!(
                "could not create a run directory in {}: {e}; check that the state directory is writable (TMUXMATE_STATE_DIR or XDG_STATE_HOME)",
                root.display()
            ))
        })?;
        Ok(RunDir { dir, id })
    }
    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
    /// The path quoted for `sh` (state paths are ours, but may hold spaces).
    fn q(&self, name: &str) -> String {
        quote(&self.file(name).to_string_lossy())
    }
    fn status(&self) -> Option<i32> {
        std::fs::read_to_string(self.file("st"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }
    /// The wrapper's pipeline has ended (`st` and `out` are complete).
    fn done(&self) -> bool {
        self.file("done").exists()
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        // A still-running (timed-out) command keeps its open files; nothing reads them.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Remove run directories left behind by invocations that were killed.
fn sweep(root: &Path) {
    let Ok(rd) = std::fs::read_dir(root) else {
        return;
    };
    for e in rd.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_RUN_DIR);
        if old {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// What to run and how (the CLI's `run` flags, the MCP tool's arguments).
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
    let remote = !tmux.transport().shares_files();
    // A run in a new pane asks everything it reads of the server in one round trip
    // (`preflight`); else, or when that answer does not read, each question on its own.
    let facts = match (r.target, r.until_stable) {
        (None, None) if !remote => Facts::ask(
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
        // A remote pane cannot see our state dir: the host keeps it all (run_remote).
        (None, None) if remote => {
            super::run_remote::in_new_pane(tmux, r.cmd, budget, timeout, tail_keep(budget))?
        }
        (None, Some(ms)) if remote => {
            super::run_remote::stable_new_pane(tmux, r.cmd, budget, timeout, ms)?
        }
        (Some(_), None) if remote => {
            return Err(Error::usage(
                "refused: `run -t` with --host: typing into an existing pane needs to check that its shell is idle, which tmuxmate reads from /proc and cannot on another host. Leave out -t to run in a fresh pane on the host, or add --until-stable MS",
            ));
        }
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

/// The wrapper body (see the module docs). `tee_output` false runs the command on the
/// pane's terminal (for TUIs under `--until-stable`). The end marker is written by `echo`
/// (a regular builtin: a failed redirection does not end the pane's shell, as it would
/// for `:`), and no tmux client is started.
fn wrapper(rd: &RunDir, cmd: &[String], keep: usize, tee_output: bool) -> String {
    // No subshell (a fork) for the status: the run directory is private (0700) anyway.
    let status = format!("echo \"$?\" 2>/dev/null >{st}", st = rd.q("st"));
    let signal = format!("echo 2>/dev/null >{done}", done = rd.q("done"));
    let cmd = quote_words(cmd);
    if tee_output {
        format!(
            "{{ trap : INT; ( {cmd} ) 2>&1; {status}; }} | (trap '' INT; exec tee /dev/tty) | (trap '' INT; umask 077; exec tail -c {keep} >{out}); {signal}\n",
            out = rd.q("out"),
        )
    } else {
        format!("( {cmd} ); {status}; {signal}\n")
    }
}

use crate::sys::shell::{join as quote_words, quote};

fn write_script(rd: &RunDir, body: &str) -> Result<(), Error> {
    state::write_private(&rd.file("cmd.sh"), body.as_bytes()).map_err(|e| {
        Error::new(format!(
            "could not write {}: {e}; check that the state directory is writable",
            rd.file("cmd.sh").display()
        ))
    })
}

/// A new window of our own running the wrapper, then an interactive shell.
fn new_pane(
    tmux: &Tmux,
    rd: &RunDir,
    body: &str,
    facts: Option<&Facts>,
) -> Result<create::Created, Error> {
    let mut script = String::new();
    // Our cwd is where the caller meant the command to run; a `cd` in the script keeps
    // the path out of tmux (whose -c start directory is format-expanded).
    if let Ok(cwd) = std::env::current_dir()
        && let Some(c) = cwd.to_str()
    {
        script.push_str(&format!("cd {} 2>/dev/null\n", quote(c)));
    }
    script.push_str(body);
    write_script(rd, &script)?;
    let caller = crate::location::address::caller(tmux);
    let boot = format!(
        "trap : INT; . {}; trap - INT; exec \"${{SHELL:-/bin/sh}}\"",
        rd.q("cmd.sh")
    );
    // The wrapper never exits at once (it ends in an interactive shell), so the mark can
    // go in the creation's own command list: one tmux round trip.
    create::new_work_window_of_ours(
        tmux,
        &caller,
        Some(&Text::lossy("run")),
        &["/bin/sh".to_string(), "-c".to_string(), boot],
        facts,
    )
}

fn in_new_pane(
    tmux: &Tmux,
    cmd: &[String],
    budget: usize,
    timeout: Duration,
    progress: Progress,
    facts: Option<&Facts>,
) -> Result<Outcome, Error> {
    let rd = RunDir::create()?;
    let deadline = Instant::now() + timeout;
    let created = new_pane(
        tmux,
        &rd,
        &wrapper(&rd, cmd, tail_keep(budget), true),
        facts,
    )?;
    let finished = on_cancel(
        wait_done(tmux, &created.pane_id, &rd, deadline, progress),
        || remove_pane(tmux, &created.pane_id),
    )?;
    let ended = Ended {
        pane: created,
        done: finished,
        typed_marker: None,
    };
    finish(tmux, &rd, ended, budget)
}

fn typed(
    tmux: &Tmux,
    target: &str,
    cmd: &[String],
    budget: usize,
    timeout: Duration,
    progress: Progress,
) -> Result<Outcome, Error> {
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
    let rd = RunDir::create()?;
    let deadline = Instant::now() + timeout;
    write_script(&rd, &wrapper(&rd, cmd, tail_keep(budget), true))?;
    // The leading space keeps the line out of history where `ignorespace` is set; the
    // line itself is ours (a quoted path), so no user text is ever typed.
    let line = format!(" . {}", rd.q("cmd.sh"));
    type_line(tmux, &pane.pane_id, &line, false)?;
    let finished = on_cancel(
        wait_done(tmux, &pane.pane_id, &rd, deadline, progress),
        || interrupt(tmux, &pane.pane_id, &rd),
    )?;
    let ended = Ended {
        pane: create::Created {
            pane_id: pane.pane_id.clone(),
            target: pane.target(),
        },
        done: finished,
        typed_marker: Some(&rd.id),
    };
    finish(tmux, &rd, ended, budget)
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

/// How long to sleep before the next look at the end marker, `waited` into the wait: a
/// short command is seen within a millisecond, a long one costs a `stat` every 20 ms.
fn poll_interval(waited: Duration) -> Duration {
    if waited < Duration::from_millis(50) {
        Duration::from_millis(1)
    } else if waited < Duration::from_secs(1) {
        Duration::from_millis(5)
    } else {
        POLL
    }
}

/// How often a long wait asks tmux whether the run's pane is still there.
const PANE_LOOK: Duration = Duration::from_secs(1);

/// Block until the wrapper is done or the deadline passes; true when done. A pane that
/// goes away meanwhile (closed by a person, its window killed, its shell gone) ends the
/// wait at once with an error instead of at the deadline: nothing will mark it done.
fn wait_done(
    tmux: &Tmux,
    pane_id: &str,
    rd: &RunDir,
    deadline: Instant,
    progress: Progress,
) -> Result<bool, Error> {
    let began = Instant::now();
    let mut looked = began;
    loop {
        if rd.done() {
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
            if pane_gone(tmux, pane_id) && !rd.done() {
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
        std::thread::sleep(poll_interval(waited).min(deadline - now));
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
fn interrupt(tmux: &Tmux, pane_id: &str, rd: &RunDir) {
    if rd.done() {
        return;
    }
    if let Err(e) = tmux.run(&targs!["send-keys", "-t", Arg::id(pane_id), "C-c"]) {
        state::log(&format!("run: could not interrupt pane {pane_id}: {e}"));
        return;
    }
    // The run directory goes when we return: let the wrapper write its marker first.
    let until = Instant::now() + Duration::from_secs(2);
    while !rd.done() && Instant::now() < until {
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

fn finish(tmux: &Tmux, rd: &RunDir, ended: Ended, budget: usize) -> Result<Outcome, Error> {
    let exit_status = rd.status();
    let create::Created { pane_id, target } = ended.pane;
    let text = if ended.done && rd.file("out").exists() {
        let raw = std::fs::read(rd.file("out")).unwrap_or_default();
        bound_output(&raw, budget, tail_keep(budget))
    } else {
        // Timed out (or no output file): what the pane shows of this command so far.
        so_far(tmux, &pane_id, ended.typed_marker, budget)?
    };
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
    let rd = RunDir::create()?;
    let deadline = Instant::now() + timeout;
    let created = new_pane(tmux, &rd, &wrapper(&rd, cmd, 0, false), None)?;
    let (stabilized, timed_out) = on_cancel(
        wait_stable(
            tmux,
            &created.pane_id,
            stable_ms,
            deadline,
            Vec::new(),
            || rd.done(),
            progress,
        ),
        || remove_pane(tmux, &created.pane_id),
    )?;
    let raw = budget::capture_pane(tmux, &created.pane_id, Range::All, false, true)?;
    Ok(Outcome {
        exit_status: rd.status(),
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
