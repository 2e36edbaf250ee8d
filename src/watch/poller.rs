//! The per-server poller: one process per tmux server serves every watch on it.
//!
//! Owns: the loop that notices completions the wrapper cannot report itself (a command
//! typed into an existing shell, `--done-regex`, timeouts, vanished panes), the poller
//! lock and heartbeat, the status-line counts, and starting a poller when none runs.
//! Invariants:
//! - at most one poller per server: it holds an exclusive `flock` on
//!   `<state>/pollers/<socket>.lock` for its whole life; "is one running?" is a
//!   non-blocking attempt on the same lock (immune to pid reuse);
//! - it is started with `tmux run-shell -b` and `exec`, so the tmux server owns it;
//! - its tmux cost per second does not grow with the number of watches: one
//!   `list-panes -a` per rescan; per-tick checks read `/proc` and file sizes only;
//! - SIGTERM/SIGINT/SIGHUP end the loop between steps; every state change is an atomic
//!   claim + rename, so a kill at any point leaves state that the next poller resumes.

use crate::targs;
use crate::tmux::Arg;
use crate::watch::job::JobStatus;
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use regex::Regex;

use super::job::{self, Job, Outcome};
use super::prompt;
use crate::sys::procfs;
use crate::sys::state;
use crate::tmux::format::{parse_records, record_format};
use crate::tmux::{Socket, Tmux};

const TICK: Duration = Duration::from_millis(40);
const RESCAN: Duration = Duration::from_millis(1000);
const HEARTBEAT: Duration = Duration::from_millis(2000);
/// How often leftovers of ended jobs are swept (see `job::sweep`).
const SWEEP: Duration = Duration::from_secs(60);
/// With nothing left to watch, linger a little (a new job usually follows), then exit.
const IDLE_EXIT: Duration = Duration::from_secs(20);

pub fn lock_path(socket: &str) -> PathBuf {
    state::state_dir().join("pollers").join(format!(
        "{}.lock",
        crate::location::ledger::file_name(socket)
    ))
}

pub fn heartbeat_path(socket: &str) -> PathBuf {
    lock_path(socket).with_extension("json")
}

/// True if a poller holds the lock for `socket`.
pub fn is_running(socket: &str) -> bool {
    let p = lock_path(socket);
    let Ok(f) = OpenOptions::new().read(true).open(&p) else {
        return false;
    };
    match nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusiveNonblock) {
        Ok(_held) => false,
        Err(_) => true,
    }
}

/// Start a poller for `socket` through tmux unless one runs. Err if the server is gone.
pub fn ensure(socket: &str) -> Result<bool, crate::tmux::TmuxError> {
    if is_running(socket) {
        return Ok(false);
    }
    let tmux = Tmux::new(Socket::Path(PathBuf::from(socket)));
    let bin = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "tmuxmate".into());
    let q = crate::sys::shell::readable;
    // run-shell expands formats, then runs a shell: our paths and ids, shell-quoted, then
    // encoded for the expansion.
    let cmd = format!(
        "exec env TMUXMATE_STATE_DIR={} {} -S {} watch poll >/dev/null 2>&1",
        q(&state::state_dir().to_string_lossy()),
        q(&bin),
        q(socket)
    );
    tmux.run(&targs!["run-shell", "-b", Arg::expanded(&cmd)])?;
    Ok(true)
}

/// The per-turn / `watch list` entry: repair, then make sure every server with running
/// jobs has a poller; jobs on a server that is gone are reported lost. With
/// `check_servers`, servers whose poller seems alive are asked too (one tmux call each:
/// for `watch list`, not for the hot per-turn path).
pub fn reattach_all(check_servers: bool) {
    let jobs = job::active_jobs();
    if jobs.is_empty() {
        return;
    }
    let mut sockets: Vec<String> = jobs.iter().map(|j| j.socket.clone()).collect();
    sockets.sort();
    sockets.dedup();
    for sock in sockets {
        let tmux = Tmux::new(Socket::Path(PathBuf::from(&sock)));
        job::finalize_pending(&sock);
        let alive = if check_servers && is_running(&sock) {
            tmux.run(&["display-message", "-p", "#{pid}"])
                .map(|_| false)
        } else {
            ensure(&sock)
        };
        match alive {
            Ok(_) => {}
            Err(e) if e.is_no_server() || matches!(e, crate::tmux::TmuxError::Failed { .. }) => {
                for j in jobs
                    .iter()
                    .filter(|j| j.socket == sock && j.status == JobStatus::Running)
                {
                    job::complete(
                        j,
                        Outcome {
                            status: JobStatus::Failed,
                            exit_status: None,
                            detail: Some(format!(
                                "server-gone (the tmux server at {sock} is not running; the job's pane and command are lost)"
                            )),
                            tail: pipe_tail(j),
                        },
                    );
                }
            }
            Err(e) => state::log(&format!("watch: cannot start a poller for {sock}: {e}")),
        }
    }
}

fn pipe_tail(j: &Job) -> Option<String> {
    let p = j.pipe.as_ref()?;
    // Only the end: the output of a long build can be gigabytes.
    let (data, _) = crate::sys::files::read_tail(std::path::Path::new(p), 16 * 1024).ok()?;
    Some(job::bound_tail(
        &strip_ansi(&String::from_utf8_lossy(&data)),
        job::DEFAULT_TAIL_LINES,
    ))
}

/// Remove CSI/OSC escape sequences and carriage returns from raw pane output.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\x1b' => match it.peek() {
                Some('[') => {
                    it.next();
                    while let Some(&n) = it.peek() {
                        it.next();
                        if ('@'..='~').contains(&n) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    it.next();
                    while let Some(n) = it.next() {
                        if n == '\x07' {
                            break;
                        }
                        if n == '\x1b' && it.peek() == Some(&'\\') {
                            it.next();
                            break;
                        }
                    }
                }
                _ => {
                    it.next();
                }
            },
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

struct Watched {
    job: Job,
    regex: Option<Regex>,
    offset: u64,
    window: String,
    saw_foreground: bool,
    /// The shell's (reaped-children count, bytes read) at the previous look, when it was
    /// idle.
    settled: Option<(u64, u64)>,
    /// Typed jobs: the pipe's first line is the shell echoing the typed command, which
    /// must not match `--done-regex`; true until that line has passed.
    skip_echo: bool,
    /// Its pane option is unreadable: only the mirror's deadline still applies.
    unreadable: bool,
}

/// A typed job is done when the foreground is its shell again and the shell is back at
/// its prompt (see `prompt`: it read the whole typed line, its tty is in the prompt's line
/// mode with nothing queued, and it sleeps), which also sees commands that fork nothing
/// (`true`, `cd /tmp`). Where that cannot be observed (no tty or `/proc/PID/io` access):
/// when the shell reaped a child since the start (so a 5 ms command that came and went
/// between two looks counts), or another program was seen in the foreground in between.
/// Either way the state must hold for two consecutive looks with no child reaped and
/// nothing read in between, because `a; b` briefly returns to the shell between `a` and `b`.
fn typed_done(w: &mut Watched, shells: &[String]) -> bool {
    let shell = w.job.pane_pid;
    match crate::sys::foreground::shell_at(shell, shells) {
        Some((fg, _)) if fg != shell => {
            w.saw_foreground = true;
            w.settled = None;
            false
        }
        Some((_, true)) => {
            let faults = procfs::children_faults(shell).unwrap_or(0);
            let prompt = match (&w.job.tty, w.job.prompt_mode, w.job.read_target) {
                (Some(tty), Some(mode), Some(target)) => {
                    prompt::at_prompt(shell, tty, mode, target)
                }
                _ => None,
            };
            let (ready, read) = match prompt {
                Some((back, read)) => (back, read),
                None => (w.saw_foreground || faults > w.job.baseline, 0),
            };
            if !ready {
                w.settled = None;
                return false;
            }
            let stable = w.settled == Some((faults, read));
            w.settled = Some((faults, read));
            stable
        }
        _ => false,
    }
}

fn check_regex(w: &mut Watched) -> bool {
    let (Some(re), Some(p)) = (&w.regex, &w.job.pipe) else {
        return false;
    };
    let Ok(mut f) = std::fs::File::open(p) else {
        return false;
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len <= w.offset {
        return false;
    }
    let _ = f.seek(SeekFrom::Start(w.offset));
    let mut buf = Vec::new();
    let _ = f.take(1 << 20).read_to_end(&mut buf);
    w.offset += buf.len() as u64;
    w.window
        .push_str(&strip_ansi(&String::from_utf8_lossy(&buf)));
    if w.skip_echo {
        match w.window.find('\n') {
            Some(i) => {
                w.window.drain(..=i);
                w.skip_echo = false;
            }
            // No line end in 8 KiB: not an echo of one typed line; stop skipping.
            None if w.window.len() > 8192 => w.skip_echo = false,
            None => return false,
        }
    }
    let hit = re.is_match(&w.window);
    // Keep a tail so a match spanning two reads is still seen.
    if w.window.len() > 8192 {
        let mut cut = w.window.len() - 4096;
        while !w.window.is_char_boundary(cut) {
            cut += 1;
        }
        w.window = w.window[cut..].to_string();
    }
    hit
}

fn write_heartbeat(socket: &str, id: &str) {
    let v = serde_json::json!({"poller": id, "pid": std::process::id(), "heartbeat": crate::sys::time::now_ms()});
    let _ = state::write_atomic(&heartbeat_path(socket), v.to_string().as_bytes());
}

/// An outcome that is only its status (what the loop itself observes).
fn ended(status: JobStatus) -> Outcome {
    Outcome {
        status,
        exit_status: None,
        detail: None,
        tail: None,
    }
}

/// How a watched job ended at this look, if it did: its deadline first (a job whose
/// option is unreadable has only that), then `--done-regex`, then, for a command typed
/// into a shell, the shell back at its prompt.
fn verdict(w: &mut Watched, now: u64, shells: &[String]) -> Option<JobStatus> {
    if now >= w.job.deadline {
        Some(JobStatus::TimedOut)
    } else if w.unreadable {
        None
    } else if check_regex(w) {
        Some(JobStatus::Matched)
    } else if !w.job.launched && typed_done(w, shells) {
        Some(JobStatus::Finished)
    } else {
        None
    }
}

/// Complete every watched job that ended at this look; true if any did.
fn settle(watched: &mut Vec<Watched>, now: u64, shells: &[String]) -> bool {
    let mut any = false;
    let mut i = 0;
    while i < watched.len() {
        match verdict(&mut watched[i], now, shells) {
            Some(status) => {
                let w = watched.remove(i);
                // The counts come from durable state at the next rescan.
                let _ = job::complete(&w.job, ended(status));
                any = true;
            }
            None => i += 1,
        }
    }
    any
}

/// When the loop's periodic steps last ran (None: due now), and since when it has had
/// nothing to watch.
#[derive(Default)]
struct Schedule {
    scan: Option<Instant>,
    beat: Option<Instant>,
    sweep: Option<Instant>,
    idle_since: Option<Instant>,
}

/// True (and `last` becomes `now`) when `every` has passed since `last`.
fn due(last: &mut Option<Instant>, every: Duration, now: Instant) -> bool {
    let due = last.is_none_or(|t| now.saturating_duration_since(t) >= every);
    if due {
        *last = Some(now);
    }
    due
}

impl Schedule {
    fn scan_due(&mut self, now: Instant) -> bool {
        due(&mut self.scan, RESCAN, now)
    }
    fn beat_due(&mut self, now: Instant) -> bool {
        due(&mut self.beat, HEARTBEAT, now)
    }
    fn sweep_due(&mut self, now: Instant) -> bool {
        due(&mut self.sweep, SWEEP, now)
    }
    /// Rescan at the next pass (a new job file, or a completion whose counts changed).
    fn scan_soon(&mut self) {
        self.scan = None;
    }
    /// With nothing to watch for [`IDLE_EXIT`], the poller exits.
    fn idle_over(&mut self, nothing_watched: bool, now: Instant) -> bool {
        if !nothing_watched {
            self.idle_since = None;
            return false;
        }
        let since = *self.idle_since.get_or_insert(now);
        now.saturating_duration_since(since) >= IDLE_EXIT
    }
}

/// The lock that makes this the server's one poller; None when another holds it.
fn take_lock(socket: &str) -> Result<Option<nix::fcntl::Flock<std::fs::File>>, String> {
    let f = state::open_private(
        &lock_path(socket),
        OpenOptions::new().create(true).truncate(false).write(true),
    )
    .map_err(|e| e.to_string())?;
    Ok(nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusiveNonblock).ok())
}

/// A flag SIGTERM, SIGINT and SIGHUP set: the loop ends between steps.
fn stop_on_signals() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
    ] {
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    stop
}

/// How a pass of the loop ended.
enum Pass {
    /// Sleep a tick, then the next pass.
    Again,
    /// Nothing watched for [`IDLE_EXIT`].
    Idle,
    /// The server is gone.
    ServerGone,
}

/// The loop's state between passes.
struct Poller<'a> {
    tmux: &'a Tmux,
    socket: &'a str,
    id: String,
    shells: Vec<String>,
    watched: Vec<Watched>,
    schedule: Schedule,
    counter: super::status::Counter,
    last_status: Option<String>,
    active_dir: PathBuf,
    dir_mtime: Option<std::time::SystemTime>,
}

impl Poller<'_> {
    /// One pass: adopt new job files, beat, sweep, rescan and publish the counts when due,
    /// then look at every watched job.
    fn pass(&mut self) -> Pass {
        // A new job file changes the directory's mtime: adopt it now, not at the next rescan.
        let m = std::fs::metadata(&self.active_dir)
            .and_then(|m| m.modified())
            .ok();
        if m != self.dir_mtime {
            self.dir_mtime = m;
            self.schedule.scan_soon();
        }
        let now = Instant::now();
        if self.schedule.beat_due(now) {
            write_heartbeat(self.socket, &self.id);
        }
        if self.schedule.sweep_due(now) {
            job::sweep();
            super::tidy::tidy(self.tmux);
        }
        if self.schedule.scan_due(Instant::now()) {
            match rescan(self.tmux, self.socket, &self.id, &mut self.watched) {
                Ok(_) => {}
                Err(e) if e.is_no_server() => return Pass::ServerGone,
                Err(e) => state::log(&format!("watch poller {}: rescan: {e}", self.id)),
            }
            self.publish_status();
        }
        if settle(&mut self.watched, crate::sys::time::now_ms(), &self.shells) {
            self.schedule.scan_soon(); // refresh counts soon
        }
        if self
            .schedule
            .idle_over(self.watched.is_empty(), Instant::now())
        {
            return Pass::Idle;
        }
        Pass::Again
    }

    /// The status-line counts, from durable state: jobs ended elsewhere (stop, the
    /// wrapper) and results delivered at a turn count too. Set only when they changed.
    fn publish_status(&mut self) {
        let st = super::status::line(&mut self.counter, self.socket);
        if self.last_status.as_ref() != Some(&st) {
            let _ = self.tmux.run(&targs![
                "set-option",
                "-g",
                crate::tmux::options::WATCH_STATUS.name,
                Arg::literal(&st)
            ]);
            self.last_status = Some(st);
        }
    }
}

/// The poller's main loop (`tmuxmate watch poll`).
pub fn run(tmux: &Tmux, socket: &str) -> Result<(), String> {
    let Some(lock) = take_lock(socket)? else {
        return Ok(()); // another poller serves this server
    };
    let stop = stop_on_signals();
    let id = format!("p{}-{}", std::process::id(), crate::sys::time::now_ms());
    state::log(&format!("watch poller {id} started for {socket}"));
    let mut p = Poller {
        tmux,
        socket,
        id,
        shells: super::prompt::shells(tmux),
        watched: Vec::new(),
        schedule: Schedule::default(),
        counter: super::status::Counter::default(),
        last_status: None,
        active_dir: super::jobs_dir().join("active"),
        dir_mtime: None,
    };
    while !stop.load(Ordering::Relaxed) {
        match p.pass() {
            Pass::Again => std::thread::sleep(TICK),
            Pass::Idle => break,
            Pass::ServerGone => {
                state::log(&format!("watch poller {}: server gone, exiting", p.id));
                drop(p);
                drop(lock);
                reattach_all(true);
                return Ok(());
            }
        }
    }
    let _ = std::fs::remove_file(heartbeat_path(socket));
    state::log(&format!("watch poller {} exiting", p.id));
    drop(lock);
    // Killed along with its server (tmux SIGTERMs run-shell children on exit): report
    // the jobs lost now rather than at the next call.
    if tmux
        .run(&["display-message", "-p", "#{pid}"])
        .is_err_and(|e| e.is_no_server())
    {
        reattach_all(true);
    }
    Ok(())
}

/// What a rescan does about one job (see [`plan_rescan`]).
#[derive(Debug, PartialEq)]
enum Reconcile {
    /// Someone else ended it (`watch stop`, the launched command's own wrapper), or its
    /// option says it ended: no longer ours to watch.
    Forget(String),
    /// Its pane is gone: it failed.
    PaneGone(Job),
    /// Another job's state now sits on its pane: ours can no longer be watched there.
    Replaced { job: Job, by: String },
    /// Watch it, as its pane option has it; `readable_again` when it was watched for
    /// its deadline only.
    Adopt { job: Job, readable_again: bool },
    /// Its pane option does not parse (`raw`): keep only the mirror's deadline.
    Unreadable { job: Job, raw: String },
}

/// Reconcile the mirror's jobs with the panes' `@tmuxmate-job` options (`rows`: pane id,
/// option) and what is watched: the pane option is the truth while the pane lives.
fn plan_rescan(mirror: Vec<Job>, rows: &[Vec<String>], watched: &[Watched]) -> Vec<Reconcile> {
    let running = |id: &str| {
        mirror
            .iter()
            .any(|m| m.id == id && m.status == JobStatus::Running)
    };
    let mut plan: Vec<Reconcile> = watched
        .iter()
        .filter(|w| !running(&w.job.id))
        .map(|w| Reconcile::Forget(w.job.id.clone()))
        .collect();
    for m in mirror {
        if m.status != JobStatus::Running {
            continue;
        }
        let Some(row) = rows.iter().find(|r| r[0] == m.pane_id) else {
            plan.push(Reconcile::PaneGone(m));
            continue;
        };
        let seen = watched.iter().find(|w| w.job.id == m.id);
        plan.extend(match serde_json::from_str::<Job>(&row[1]).ok() {
            Some(o) if o.id == m.id && o.status != JobStatus::Running => {
                Some(Reconcile::Forget(m.id))
            }
            Some(o) if o.id == m.id => match seen {
                Some(w) if !w.unreadable => None,
                _ => Some(Reconcile::Adopt {
                    job: o,
                    readable_again: seen.is_some(),
                }),
            },
            Some(o) => Some(Reconcile::Replaced { job: m, by: o.id }),
            None => Some(Reconcile::Unreadable {
                job: m,
                raw: row[1].clone(),
            }),
        });
    }
    plan
}

impl Watched {
    /// A job adopted from its pane option, watched fully.
    fn adopted(job: Job) -> Watched {
        let regex = job.regex.as_deref().and_then(|r| job::done_regex(r).ok());
        let skip_echo = !job.launched;
        Watched {
            job,
            regex,
            offset: 0,
            window: String::new(),
            saw_foreground: false,
            settled: None,
            skip_echo,
            unreadable: false,
        }
    }

    /// A job whose pane option is unreadable: only its deadline applies.
    fn deadline_only(job: Job) -> Watched {
        Watched {
            job,
            regex: None,
            offset: 0,
            window: String::new(),
            saw_foreground: false,
            settled: None,
            skip_echo: false,
            unreadable: true,
        }
    }
}

/// Carry out one step of the plan; true if it completed the job here.
fn reconcile(step: Reconcile, poller: &str, watched: &mut Vec<Watched>) -> bool {
    let fail = |job: &Job, detail: String, tail: Option<String>| {
        let o = Outcome {
            detail: Some(detail),
            tail,
            ..ended(JobStatus::Failed)
        };
        job::complete(job, o)
    };
    match step {
        Reconcile::Forget(id) => {
            watched.retain(|w| w.job.id != id);
            false
        }
        Reconcile::PaneGone(m) => {
            watched.retain(|w| w.job.id != m.id);
            fail(&m, "pane-gone".into(), pipe_tail(&m))
        }
        Reconcile::Replaced { job, by } => {
            // End it rather than leave it "running" for ever.
            watched.retain(|w| w.job.id != job.id);
            fail(&job, format!("job-option-replaced (by watch {by})"), None)
        }
        Reconcile::Adopt {
            mut job,
            readable_again,
        } => {
            if readable_again {
                watched.retain(|w| w.job.id != job.id);
                let _ = std::fs::remove_file(job::unreadable_path(&job.id));
                state::log(&format!(
                    "watch {}: @tmuxmate-job on pane {} is readable again",
                    job.id, job.pane_id
                ));
            }
            // Adopted in memory only: writing the option back here could undo a
            // completion (or a replacement) written since `list-panes` read it.
            job.poller = Some(poller.to_string());
            job.heartbeat = Some(crate::sys::time::now_ms());
            watched.push(Watched::adopted(job));
            false
        }
        Reconcile::Unreadable { job, raw } => {
            mark_unreadable(&job, &raw);
            match watched.iter_mut().find(|w| w.job.id == job.id) {
                Some(w) => w.unreadable = true,
                None => watched.push(Watched::deadline_only(job)),
            }
            false
        }
    }
}

/// Hand-edited: report it once (a flag beside the job), keep serving the others, and keep
/// only the mirror's deadline for this one (so it still ends, and the poller stays). Every
/// rescan looks again: a valid option ends the verdict.
fn mark_unreadable(m: &Job, raw: &str) {
    let flag = job::unreadable_path(&m.id);
    if !flag.exists() {
        let _ = state::write_private(&flag, raw.as_bytes());
        state::log(&format!(
            "watch {}: @tmuxmate-job on pane {} is unreadable; only its deadline is kept",
            m.id, m.pane_id
        ));
    }
}

/// Every pane's id and `@tmuxmate-job`, in one `list-panes -a`.
fn pane_jobs(tmux: &Tmux) -> Result<Vec<Vec<String>>, crate::tmux::TmuxError> {
    let fmt = record_format(&["pane_id", crate::tmux::options::JOB.name]);
    let args = targs!["list-panes", "-a", "-F", Arg::ours(&fmt)];
    let out = tmux.run_bytes(&args, None)?;
    // Unreadable output must not read as "no panes": that would fail every job as gone.
    parse_records(&out, 2).map_err(|detail| crate::tmux::TmuxError::BadOutput {
        argv: tmux.argv(&args),
        detail,
    })
}

/// Reconcile with tmux: adopt new jobs, report vanished panes and unreadable options.
/// Returns how many jobs completed here.
///
/// The mirror is read before the panes: `watch start` writes the pane option before the
/// mirror, so a job found in the mirror has its option in place by the time `list-panes`
/// runs, and a job is never seen half-made.
fn rescan(
    tmux: &Tmux,
    socket: &str,
    poller: &str,
    watched: &mut Vec<Watched>,
) -> Result<usize, crate::tmux::TmuxError> {
    job::finalize_pending(socket);
    let mirror: Vec<Job> = job::active_jobs()
        .into_iter()
        .filter(|j| j.socket == socket)
        .collect();
    let rows = pane_jobs(tmux)?;
    let mut completed = 0;
    for step in plan_rescan(mirror, &rows, watched) {
        if reconcile(step, poller, watched) {
            completed += 1;
        }
    }
    Ok(completed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: &str, pane: &str, status: &str) -> Job {
        serde_json::from_value(serde_json::json!({
            "v": 1, "id": id, "command": "make", "deadline": 1000, "notify": [],
            "start": 0, "status": status, "paneId": pane, "socket": "/s", "launched": true,
        }))
        .unwrap()
    }

    fn row(pane: &str, option: &str) -> Vec<String> {
        vec![pane.to_string(), option.to_string()]
    }

    fn option(j: &Job) -> String {
        serde_json::to_string(j).unwrap()
    }

    #[test]
    fn a_rescan_adopts_new_jobs_and_ends_those_it_cannot_watch() {
        let (a, b, c, d) = (
            job("a", "%1", "running"),
            job("b", "%2", "running"),
            job("c", "%3", "running"),
            job("d", "%4", "running"),
        );
        let rows = [
            row("%1", &option(&a)),
            row("%3", &option(&job("x", "%3", "running"))),
            row("%4", "{hand-edited"),
        ];
        let mirror = vec![a.clone(), b.clone(), c.clone(), d.clone()];
        let plan = plan_rescan(mirror, &rows, &[]);
        assert_eq!(
            plan,
            [
                Reconcile::Adopt {
                    job: a.clone(),
                    readable_again: false
                },
                Reconcile::PaneGone(b),
                Reconcile::Replaced {
                    job: c,
                    by: "x".into()
                },
                Reconcile::Unreadable {
                    job: d,
                    raw: "{hand-edited".into()
                },
            ]
        );
        // Watched already: nothing to do; watched for its deadline only: fully again.
        let watched = [Watched::adopted(a.clone())];
        assert_eq!(plan_rescan(vec![a.clone()], &rows[..1], &watched), []);
        let watched = [Watched::deadline_only(a.clone())];
        assert_eq!(
            plan_rescan(vec![a.clone()], &rows[..1], &watched),
            [Reconcile::Adopt {
                job: a,
                readable_again: true
            }]
        );
    }

    #[test]
    fn a_rescan_forgets_jobs_ended_elsewhere() {
        let a = job("a", "%1", "running");
        let done = job("a", "%1", "finished");
        let watched = [Watched::adopted(a.clone())];
        // Its mirror moved on (`watch stop`, the wrapper), or its option says it ended.
        let gone = plan_rescan(vec![done.clone()], &[row("%1", &option(&done))], &watched);
        assert_eq!(gone, [Reconcile::Forget("a".into())]);
        let ended = plan_rescan(vec![a], &[row("%1", &option(&done))], &[]);
        assert_eq!(ended, [Reconcile::Forget("a".into())]);
    }

    #[test]
    fn the_deadline_ends_a_job_before_anything_else_is_looked_at() {
        let mut w = Watched::deadline_only(job("a", "%1", "running"));
        assert_eq!(verdict(&mut w, 999, &[]), None);
        assert_eq!(verdict(&mut w, 1000, &[]), Some(JobStatus::TimedOut));
        // A launched job with no pattern ends only by its wrapper (or its deadline).
        let mut w = Watched::adopted(job("a", "%1", "running"));
        assert_eq!(verdict(&mut w, 999, &[]), None);
    }

    #[test]
    fn periodic_steps_come_due_once_per_period() {
        let t = Instant::now();
        let mut s = Schedule::default();
        assert!(s.scan_due(t) && s.beat_due(t) && s.sweep_due(t));
        assert!(!s.scan_due(t + RESCAN / 2));
        assert!(s.scan_due(t + RESCAN));
        s.scan_soon();
        assert!(s.scan_due(t + RESCAN));
        assert!(!s.beat_due(t + RESCAN) && s.beat_due(t + HEARTBEAT));
        assert!(!s.sweep_due(t + HEARTBEAT));
        // Idle: counted from the first empty look; a job resets it.
        assert!(!s.idle_over(true, t));
        assert!(!s.idle_over(false, t + IDLE_EXIT));
        assert!(!s.idle_over(true, t + IDLE_EXIT));
        assert!(s.idle_over(true, t + IDLE_EXIT * 2));
    }

    #[test]
    fn strips_ansi() {
        assert_eq!(
            strip_ansi("\x1b[1;31mred\x1b[0m\r\n\x1b]0;title\x07x"),
            "red\nx"
        );
    }
}
