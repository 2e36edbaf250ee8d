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

use crate::control::watch::job::JobStatus;
use crate::targs;
use crate::tmux::Arg;
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
    state::state_dir()
        .join("pollers")
        .join(format!("{}.lock", crate::ledger::file_name(socket)))
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

/// The idle-shell list: `@tmuxmate-shells` (else the known shells) and `$SHELL`.
pub fn shells(tmux: &Tmux) -> Vec<String> {
    crate::sys::foreground::idle_shells(
        &tmux
            .run(&["show-options", "-gqv", crate::tmux::options::SHELLS.name])
            .unwrap_or_default(),
    )
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
    let v =
        serde_json::json!({"poller": id, "pid": std::process::id(), "heartbeat": state::now_ms()});
    let _ = state::write_atomic(&heartbeat_path(socket), v.to_string().as_bytes());
}

/// The poller's main loop (`tmuxmate watch poll`).
pub fn run(tmux: &Tmux, socket: &str) -> Result<(), String> {
    let lp = lock_path(socket);
    let f = state::open_private(
        &lp,
        OpenOptions::new().create(true).truncate(false).write(true),
    )
    .map_err(|e| e.to_string())?;
    let _lock = match nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusiveNonblock) {
        Ok(l) => l,
        Err(_) => return Ok(()), // another poller serves this server
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
    ] {
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    let id = format!("p{}-{}", std::process::id(), state::now_ms());
    state::log(&format!("watch poller {id} started for {socket}"));
    let shells = shells(tmux);
    let mut watched: Vec<Watched> = Vec::new();
    let mut last_scan = Instant::now() - RESCAN;
    let mut last_beat = Instant::now() - HEARTBEAT;
    let mut last_sweep = Instant::now() - SWEEP;
    let mut idle_since: Option<Instant> = None;
    let mut last_status: Option<String> = None;
    let mut counter = super::status::Counter::default();
    let active_dir = super::jobs_dir().join("active");
    let mut dir_mtime = None;
    while !stop.load(Ordering::Relaxed) {
        // A new job file changes the directory's mtime: adopt it now, not at the next rescan.
        let m = std::fs::metadata(&active_dir)
            .and_then(|m| m.modified())
            .ok();
        if m != dir_mtime {
            dir_mtime = m;
            last_scan = Instant::now() - RESCAN;
        }
        if last_beat.elapsed() >= HEARTBEAT {
            write_heartbeat(socket, &id);
            last_beat = Instant::now();
        }
        if last_sweep.elapsed() >= SWEEP {
            job::sweep();
            super::tidy::tidy(tmux);
            last_sweep = Instant::now();
        }
        if last_scan.elapsed() >= RESCAN {
            last_scan = Instant::now();
            match rescan(tmux, socket, &id, &mut watched) {
                Ok(_) => {}
                Err(e) if e.is_no_server() => {
                    state::log(&format!("watch poller {id}: server gone, exiting"));
                    drop(watched);
                    drop(_lock);
                    reattach_all(true);
                    return Ok(());
                }
                Err(e) => state::log(&format!("watch poller {id}: rescan: {e}")),
            }
            // From durable state: jobs ended elsewhere (stop, the wrapper) and results
            // delivered at a turn count too.
            let st = super::status::line(&mut counter, socket);
            if last_status.as_ref() != Some(&st) {
                let _ = tmux.run(&targs![
                    "set-option",
                    "-g",
                    crate::tmux::options::WATCH_STATUS.name,
                    Arg::literal(&st)
                ]);
                last_status = Some(st);
            }
        }
        let now = state::now_ms();
        let mut i = 0;
        while i < watched.len() {
            let w = &mut watched[i];
            let outcome = if now >= w.job.deadline {
                Some(Outcome {
                    status: JobStatus::TimedOut,
                    exit_status: None,
                    detail: None,
                    tail: None,
                })
            } else if w.unreadable {
                None
            } else if check_regex(w) {
                Some(Outcome {
                    status: JobStatus::Matched,
                    exit_status: None,
                    detail: None,
                    tail: None,
                })
            } else if !w.job.launched && typed_done(w, &shells) {
                Some(Outcome {
                    status: JobStatus::Finished,
                    exit_status: None,
                    detail: None,
                    tail: None,
                })
            } else {
                None
            };
            if let Some(o) = outcome {
                let j = w.job.clone();
                watched.remove(i);
                // The counts come from durable state at the next rescan.
                let _ = job::complete(&j, o);
                last_scan = Instant::now() - RESCAN; // refresh counts soon
                continue;
            }
            i += 1;
        }
        if watched.is_empty() {
            let since = *idle_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= IDLE_EXIT {
                break;
            }
        } else {
            idle_since = None;
        }
        std::thread::sleep(TICK);
    }
    let _ = std::fs::remove_file(heartbeat_path(socket));
    state::log(&format!("watch poller {id} exiting"));
    drop(_lock);
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
    let fmt = record_format(&["pane_id", crate::tmux::options::JOB.name]);
    let args = targs!["list-panes", "-a", "-F", Arg::ours(&fmt)];
    let out = tmux.run_bytes(&args, None)?;
    // Unreadable output must not read as "no panes": that would fail every job as gone.
    let rows = parse_records(&out, 2).map_err(|detail| crate::tmux::TmuxError::BadOutput {
        argv: tmux.argv(&args),
        detail,
    })?;
    let mut completed = 0;
    // A job someone else ended (`watch stop`, the launched command's own wrapper) is no
    // longer ours to watch: its mirror left `running` or moved to `done`.
    watched.retain(|w| {
        mirror
            .iter()
            .any(|m| m.id == w.job.id && m.status == JobStatus::Running)
    });
    for m in mirror {
        if m.status != JobStatus::Running {
            continue;
        }
        let row = rows.iter().find(|r| r[0] == m.pane_id);
        let Some(row) = row else {
            watched.retain(|w| w.job.id != m.id);
            if job::complete(
                &m,
                Outcome {
                    status: JobStatus::Failed,
                    exit_status: None,
                    detail: Some("pane-gone".into()),
                    tail: pipe_tail(&m),
                },
            ) {
                completed += 1;
            }
            continue;
        };
        // The pane option is the truth while the pane lives.
        let opt: Option<Job> = serde_json::from_str(&row[1]).ok();
        match opt {
            Some(o) if o.id == m.id => {
                if o.status != JobStatus::Running {
                    watched.retain(|w| w.job.id != m.id);
                    continue;
                }
                // Unreadable before, valid again: watch it fully from now on.
                if watched.iter().any(|w| w.job.id == o.id && w.unreadable) {
                    watched.retain(|w| w.job.id != o.id);
                    let _ = std::fs::remove_file(job::unreadable_path(&o.id));
                    state::log(&format!(
                        "watch {}: @tmuxmate-job on pane {} is readable again",
                        o.id, o.pane_id
                    ));
                }
                if !watched.iter().any(|w| w.job.id == o.id) {
                    // Adopted in memory only: writing the option back here could undo a
                    // completion (or a replacement) written since `list-panes` read it.
                    let mut o = o;
                    o.poller = Some(poller.to_string());
                    o.heartbeat = Some(state::now_ms());
                    let regex = o.regex.as_deref().and_then(|r| job::done_regex(r).ok());
                    let skip_echo = !o.launched;
                    watched.push(Watched {
                        job: o,
                        regex,
                        offset: 0,
                        window: String::new(),
                        saw_foreground: false,
                        settled: None,
                        skip_echo,
                        unreadable: false,
                    });
                }
            }
            Some(o) => {
                // Another job's state now sits on this pane: ours can no longer be
                // watched there. End it rather than leave it "running" for ever.
                watched.retain(|w| w.job.id != m.id);
                if job::complete(
                    &m,
                    Outcome {
                        status: JobStatus::Failed,
                        exit_status: None,
                        detail: Some(format!("job-option-replaced (by watch {})", o.id)),
                        tail: None,
                    },
                ) {
                    completed += 1;
                }
            }
            None => {
                // Hand-edited: report it, keep serving the others, and keep only the
                // mirror's deadline for this one (so it still ends, and the poller stays).
                // Every rescan looks again: a valid option ends the verdict.
                let flag = job::unreadable_path(&m.id);
                if !flag.exists() {
                    let _ = state::write_private(&flag, row[1].as_bytes());
                    state::log(&format!(
                        "watch {}: @tmuxmate-job on pane {} is unreadable; only its deadline is kept",
                        m.id, m.pane_id
                    ));
                }
                if !watched.iter().any(|w| w.job.id == m.id) {
                    watched.push(Watched {
                        job: m.clone(),
                        regex: None,
                        offset: 0,
                        window: String::new(),
                        saw_foreground: false,
                        settled: None,
                        skip_echo: false,
                        unreadable: true,
                    });
                } else if let Some(w) = watched.iter_mut().find(|w| w.job.id == m.id) {
                    w.unreadable = true;
                }
            }
        }
    }
    Ok(completed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_ansi() {
        assert_eq!(
            strip_ansi("\x1b[1;31mred\x1b[0m\r\n\x1b]0;title\x07x"),
            "red\nx"
        );
    }
}
