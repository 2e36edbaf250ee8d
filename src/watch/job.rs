//! A watch job: its versioned JSON, where it is stored, and recording its completion.
//!
//! Owns: the `@tmuxmate-job` pane option (the job's state while its pane lives), the
//! mirror under `<state>/jobs/{active,done}/` (what survives the pane or the server), and
//! `complete`, the one way a job ends. Invariants:
//! - a job completes once: the first process to create `<state>/jobs/<id>.done` with
//!   O_EXCL wins (wrapper, poller, per-turn call or `watch stop` may race);
//! - the result is queued to every notify/forward agent's ledger under the key
//!   `watch:<id>` (queued at most once per agent), then the mirror is marked `queued`;
//!   a crash between the `.done` file and `queued` is repaired by `finalize_pending`;
//! - every operation on a job addresses the job's own server (`socket`), whoever runs it:
//!   pane ids repeat across servers;
//! - only `<id>.json` files are jobs; an ended job's pipe file, unreadable flag and gate
//!   are removed, leftover temp files after a minute (see `sweep`).

use crate::targs;
use crate::tmux::Arg;
use std::io::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::location::ledger::Ledger;
use crate::sys::state;
use crate::tmux::{Socket, Tmux};

pub const VERSION: u32 = 1;
pub const DEFAULT_TAIL_LINES: u32 = crate::tmux::options::WATCH_TAIL_LINES.default_number() as u32;
/// Bound on the bytes of a delivered tail, whatever the line count.
pub const TAIL_MAX_BYTES: usize = 4000;

/// Where a job is: running, or how it ended. Stored and shown as its kebab-case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobStatus {
    Running,
    Finished,
    Matched,
    TimedOut,
    Failed,
    Stopped,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Running => "running",
            JobStatus::Finished => "finished",
            JobStatus::Matched => "matched",
            JobStatus::TimedOut => "timed-out",
            JobStatus::Failed => "failed",
            JobStatus::Stopped => "stopped",
        }
    }

    /// The name [`as_str`](Self::as_str) gives, read back (a claim file holds it).
    pub fn parse(s: &str) -> Option<JobStatus> {
        [
            JobStatus::Running,
            JobStatus::Finished,
            JobStatus::Matched,
            JobStatus::TimedOut,
            JobStatus::Failed,
            JobStatus::Stopped,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }
}

impl std::fmt::Display for JobStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub v: u32,
    pub id: String,
    pub command: String,
    #[serde(default)]
    pub regex: Option<String>,
    /// Epoch ms.
    pub deadline: u64,
    pub notify: Vec<String>,
    #[serde(default)]
    pub forward: Vec<String>,
    pub start: u64,
    pub status: JobStatus,
    #[serde(default)]
    pub exit_status: Option<i32>,
    #[serde(default)]
    pub end: Option<u64>,
    #[serde(default)]
    pub detail: Option<String>,
    pub pane_id: String,
    pub socket: String,
    /// true: tmuxmate launched the command (exact exit status); false: typed into a shell.
    pub launched: bool,
    /// Launched jobs: the pane's process (the wrapper). Typed jobs: the shell that was in
    /// the foreground when the command was typed.
    #[serde(default)]
    pub pane_pid: i32,
    /// For typed jobs: the shell's reaped-children fault count before Enter (see poller).
    #[serde(default)]
    pub baseline: u64,
    /// Raw pane output since the start (pipe-pane), for `--done-regex`.
    #[serde(default)]
    pub pipe: Option<String>,
    #[serde(default)]
    pub poller: Option<String>,
    #[serde(default)]
    pub heartbeat: Option<u64>,
    #[serde(default)]
    pub queued: bool,
    #[serde(default)]
    pub tail: Option<String>,
    /// Typed jobs: the pane's tty, the line mode of the shell's idle prompt and the
    /// shell's `rchar` once it has read the typed line (see `prompt`).
    #[serde(default)]
    pub tty: Option<String>,
    #[serde(default)]
    pub prompt_mode: Option<u32>,
    #[serde(default)]
    pub read_target: Option<u64>,
}

use super::{jobs_dir, valid_id};

pub fn active_path(id: &str) -> PathBuf {
    jobs_dir().join("active").join(format!("{id}.json"))
}
pub fn done_path(id: &str) -> PathBuf {
    jobs_dir().join("done").join(format!("{id}.json"))
}
fn claim_path(id: &str) -> PathBuf {
    jobs_dir().join(format!("{id}.done"))
}
pub fn unreadable_path(id: &str) -> PathBuf {
    jobs_dir().join(format!("{id}.unreadable"))
}

/// The tmux of the job's own server.
pub fn tmux_of(job: &Job) -> Tmux {
    Tmux::new(Socket::Path(PathBuf::from(&job.socket)))
}

/// `--done-regex`: `^` and `$` match at line ends too (multi-line mode), so `GO1$`
/// matches the output line `GO1`; bounded compiled size.
pub fn done_regex(re: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(re)
        .multi_line(true)
        .size_limit(1 << 20)
        .build()
}

/// A job id: `w` + a token unique per call (`sys::unique`), safe in option names, file
/// names and formats (see [`super::valid_id`]).
pub fn new_id() -> String {
    format!("w{}", crate::sys::unique::token())
}

impl Job {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn save_mirror(&self) -> std::io::Result<()> {
        let p = if self.status == JobStatus::Running || !self.queued {
            active_path(&self.id)
        } else {
            done_path(&self.id)
        };
        state::write_atomic(&p, self.to_json().as_bytes())?;
        if p == done_path(&self.id) {
            let _ = std::fs::remove_file(active_path(&self.id));
            prune_done();
        }
        // The live views show running jobs and the counts (`sys::wake`).
        crate::sys::wake::poke();
        Ok(())
    }

    /// An ended job's state, written into its pane only while the pane's option still
    /// holds this job: a later job typed into the same pane meanwhile keeps its own.
    fn save_option_if_ours(&self) {
        let tmux = tmux_of(self);
        let now = tmux.run(&targs![
            "show-options",
            "-pqv",
            "-t",
            Arg::id(&self.pane_id),
            crate::tmux::options::JOB.name
        ]);
        let ours = match now {
            Ok(text) => serde_json::from_str::<Job>(text.trim_end())
                .map(|j| j.id == self.id)
                .unwrap_or(true),
            Err(_) => false,
        };
        if ours {
            let _ = self.save_option();
        }
    }

    /// Write the job into its pane's `@tmuxmate-job`, on the job's own server.
    pub fn save_option(&self) -> Result<(), crate::tmux::TmuxError> {
        let v = self.to_json();
        tmux_of(self).run(&targs![
            "set-option",
            "-p",
            "-t",
            Arg::id(&self.pane_id),
            "--",
            crate::tmux::options::JOB.name,
            Arg::literal(&v),
        ])?;
        Ok(())
    }

    /// The words of the outcome, as delivered.
    pub fn outcome(&self) -> String {
        match self.status {
            JobStatus::Finished => match self.exit_status {
                Some(n) => format!("finished (exit {n})"),
                None => "finished (exit status unknown: typed into a shell)".into(),
            },
            JobStatus::Matched => format!("matched /{}/", self.regex.as_deref().unwrap_or("")),
            JobStatus::TimedOut => "timed out".into(),
            JobStatus::Failed => format!("failed: {}", self.detail.as_deref().unwrap_or("unknown")),
            JobStatus::Stopped => "stopped".into(),
            JobStatus::Running => "running".into(),
        }
    }

    /// The first line of the delivery.
    pub fn delivery_head(&self) -> String {
        let dur = self
            .end
            .unwrap_or_else(crate::sys::time::now_ms)
            .saturating_sub(self.start);
        format!(
            "tmux watch {} {} after {} in pane {}: {}",
            self.id,
            self.outcome(),
            duration(dur),
            self.pane_id,
            one_line(&self.command, 300)
        )
    }

    /// The text the notify agents receive at their next turn.
    pub fn delivery(&self) -> String {
        let mut s = self.delivery_head();
        if let Some(t) = self.tail.as_deref().filter(|t| !t.trim().is_empty()) {
            s.push('\n');
            s.push_str(t.trim_end());
        }
        s
    }
}

fn one_line(s: &str, max: usize) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() > max {
        format!("{}…", flat.chars().take(max).collect::<String>())
    } else {
        flat
    }
}

/// `350ms`, `4.2s`, `3m07s`, `2h05m`.
pub fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else if ms < 3_600_000 {
        format!("{}m{:02}s", ms / 60_000, (ms / 1000) % 60)
    } else {
        format!("{}h{:02}m", ms / 3_600_000, (ms / 60_000) % 60)
    }
}

/// The last `lines` lines of text, at most `TAIL_MAX_BYTES`, cut on a char boundary.
pub fn bound_tail(text: &str, lines: u32) -> String {
    let trimmed = text.trim_end();
    let all: Vec<&str> = trimmed.lines().collect();
    let start = all.len().saturating_sub(lines as usize);
    let mut out = all[start..].join("\n");
    if out.len() > TAIL_MAX_BYTES {
        let mut cut = out.len() - TAIL_MAX_BYTES;
        while !out.is_char_boundary(cut) {
            cut += 1;
        }
        let rest = &out[cut..];
        let rest = rest.split_once('\n').map(|x| x.1).unwrap_or(rest);
        out = format!("[... earlier output truncated ...]\n{rest}");
    }
    out
}

pub fn tail_lines(tmux: &Tmux) -> u32 {
    let o = crate::tmux::options::WATCH_TAIL_LINES;
    o.number_or_default(&o.global(tmux)) as u32
}

/// Read the pane's last lines now (None when the pane is gone).
pub fn capture_tail(tmux: &Tmux, pane_id: &str, lines: u32) -> Option<String> {
    let start = format!("-{lines}");
    let out = tmux
        .run(&targs![
            "capture-pane",
            "-p",
            "-J",
            "-t",
            Arg::id(pane_id),
            "-S",
            Arg::id(&start)
        ])
        .ok()?;
    Some(bound_tail(&out, lines))
}

/// The `<id>.json` files of one of the mirror's directories (never a writer's temp file).
fn job_files(sub: &str) -> Vec<PathBuf> {
    job_files_in(&jobs_dir().join(sub))
}

fn job_files_in(dir: &std::path::Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.extension().is_some_and(|x| x == "json")
                        && p.file_stem().and_then(|s| s.to_str()).is_some_and(valid_id)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every job in one of the mirror's directories (`active` or `done`), oldest first.
fn jobs_in(sub: &str) -> Vec<Job> {
    let mut v: Vec<Job> = job_files(sub)
        .into_iter()
        .filter_map(|p| state::read_private(&p, STATE_MAX).ok())
        .filter_map(|t| serde_json::from_slice(&t).ok())
        .collect();
    v.sort_by_key(|j| j.start);
    v
}

pub fn active_jobs() -> Vec<Job> {
    jobs_in("active")
}

pub fn done_jobs() -> Vec<Job> {
    jobs_in("done")
}

/// A job's state file is small (its tail is bounded); anything larger is not ours.
const STATE_MAX: u64 = 4 << 20;

pub fn load(id: &str) -> Option<Job> {
    [active_path(id), done_path(id)]
        .iter()
        .find_map(|p| state::read_private(p, STATE_MAX).ok())
        .and_then(|t| serde_json::from_slice(&t).ok())
}

/// How many ended jobs `jobs/done` keeps (with their `.done` claims).
pub const DONE_KEPT: usize = 200;

/// Keep the newest `DONE_KEPT` ended jobs. Other processes prune and rename in the same
/// directory at the same time: every mtime is read once, before sorting (a key that
/// changed during the sort would break the sort's order), and a file that vanished in
/// between is simply gone already.
fn prune_done() {
    prune_in(&jobs_dir().join("done"), DONE_KEPT);
}

fn prune_in(dir: &std::path::Path, keep: usize) {
    let files = job_files_in(dir);
    if files.len() <= keep {
        return;
    }
    let mut dated: Vec<(std::time::SystemTime, PathBuf)> = files
        .into_iter()
        .filter_map(|p| {
            let t = std::fs::metadata(&p).and_then(|m| m.modified()).ok()?;
            Some((t, p))
        })
        .collect();
    if dated.len() <= keep {
        return;
    }
    dated.sort();
    let excess = dated.len() - keep;
    for (_, p) in dated.into_iter().take(excess) {
        let _ = std::fs::remove_file(&p);
        if let Some(stem) = p.file_stem().and_then(|s| s.to_str())
            && let Some(jobs) = dir.parent()
        {
            let _ = std::fs::remove_file(jobs.join(format!("{stem}.done")));
        }
    }
}

/// A leftover older than this is no longer anyone's work in progress (writers rename
/// their temp files within milliseconds; a start finishes within seconds).
const LEFTOVER_AGE: std::time::Duration = std::time::Duration::from_secs(60);

fn older_than(p: &std::path::Path, age: std::time::Duration) -> bool {
    std::fs::metadata(p)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|e| e >= age))
}

/// Remove what no live job needs: temp files and probes of killed writers (`*.tmp.*`,
/// `.probe-*`, also of a poller's heartbeat) and the pipe files, unreadable flags and gates of jobs that are not
/// running, once they are a minute old. Together with `DONE_KEPT` this bounds `jobs/`
/// (see README, state dir).
pub fn sweep() {
    let dir = jobs_dir();
    let running = |id: &str| active_path(id).exists();
    for sub in ["", "active", "done", "pipes", "gates", "../pollers"] {
        let Ok(rd) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            let id = name.split('.').next().unwrap_or("");
            let leftover = if name.contains(".tmp.") || name.starts_with(".probe-") {
                true
            } else {
                match sub {
                    "pipes" | "gates" => !running(id),
                    "" => name.ends_with(".unreadable") && !running(id),
                    _ => false,
                }
            };
            if leftover && older_than(&p, LEFTOVER_AGE) {
                let _ = std::fs::remove_file(&p);
            }
        }
    }
}

/// The files only a running job needs.
fn remove_run_files(j: &Job) {
    if let Some(p) = &j.pipe
        && std::path::Path::new(p).starts_with(jobs_dir())
    {
        let _ = std::fs::remove_file(p);
    }
    let _ = std::fs::remove_file(unreadable_path(&j.id));
    super::gate::remove(&j.id);
}

/// Wait (bounded) until no job is "claimed but still running": another process won its
/// completion and is writing it. Readers such as `watch list` then show the outcome, not
/// the moment before it.
pub fn settle_claimed(bound: std::time::Duration) {
    let t0 = std::time::Instant::now();
    while active_jobs()
        .iter()
        .any(|j| j.status == JobStatus::Running && claim_path(&j.id).exists())
        && t0.elapsed() < bound
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// How a job ended.
pub struct Outcome {
    pub status: JobStatus,
    pub exit_status: Option<i32>,
    pub detail: Option<String>,
    /// Pre-read tail (e.g. from the pipe file when the pane is gone).
    pub tail: Option<String>,
}

/// End `job` with `outcome` unless someone already did. Returns true if this call won.
/// Every tmux call goes to the job's own server.
pub fn complete(job: &Job, outcome: Outcome) -> bool {
    let tmux = &tmux_of(job);
    let claim = claim_path(&job.id);
    let won = state::open_private(
        &claim,
        std::fs::OpenOptions::new().write(true).create_new(true),
    )
    .map(|mut f| {
        let _ = f.write_all(outcome.status.as_str().as_bytes());
    })
    .is_ok();
    if !won {
        return false;
    }
    let mut j = job.clone();
    j.status = outcome.status;
    j.exit_status = outcome.exit_status;
    j.detail = outcome.detail;
    j.end = Some(crate::sys::time::now_ms());
    j.tail = outcome
        .tail
        .or_else(|| capture_tail(tmux, &j.pane_id, tail_lines(tmux)));
    // Every finished watch leaves a snapshot, like every capture and run result.
    let target = tmux
        .run(&targs![
            "display-message",
            "-p",
            "-t",
            Arg::id(&j.pane_id),
            "#{session_name}:#{window_index}.#{pane_index}",
        ])
        .ok()
        .map(|t| t.trim_end().to_string())
        .filter(|t| !t.is_empty() && t != "::" && !t.starts_with(':'))
        .unwrap_or_else(|| j.pane_id.clone());
    let snap_text = format!("{}\n{}", j.delivery_head(), j.tail.as_deref().unwrap_or(""));
    if let Err(e) = crate::control::snapshot::record(tmux, &j.pane_id, &target, &snap_text, false) {
        state::log(&format!("watch {}: snapshot: {e}", j.id));
    }
    if let Err(e) = j.save_mirror() {
        state::log(&format!("watch {}: cannot write mirror: {e}", j.id));
    }
    j.save_option_if_ours();
    if j.pipe.is_some() {
        // Stop piping; only if the pane still exists.
        let _ = tmux.run(&targs!["pipe-pane", "-t", Arg::id(&j.pane_id)]);
    }
    // The tail is read; the pipe, the unreadable flag and the gate served the run only.
    remove_run_files(&j);
    finalize(j);
    true
}

/// Queue the result for every addressee and mark the mirror `queued` (idempotent).
pub fn finalize(mut j: Job) {
    if j.queued || j.status == JobStatus::Running {
        return;
    }
    if j.status != JobStatus::Stopped {
        let text = j.delivery();
        let key = format!("watch:{}", j.id);
        let mut all = j.notify.clone();
        all.extend(j.forward.iter().cloned());
        all.sort();
        all.dedup();
        for agent in all {
            if let Err(e) = Ledger::for_agent(&agent).queue(&key, &text) {
                state::log(&format!("watch {}: cannot queue for {agent}: {e}", j.id));
                return;
            }
        }
    }
    j.queued = true;
    if let Err(e) = j.save_mirror() {
        state::log(&format!("watch {}: cannot mark queued: {e}", j.id));
    }
    // The pane option is not written again: its ended state was written by `complete`,
    // and a write now (after the agent may have seen the result and typed its next watch
    // into the same pane) could replace that next job's state. `queued` lives in the
    // mirror only.
}

/// Repair: jobs whose `.done` claim exists but were never queued (crash in between).
/// A claim younger than 5 s may still be in its claimant's hands and is left alone.
/// Only the jobs of the server at `socket` (each is finalized through its own server).
pub fn finalize_pending(socket: &str) {
    for j in active_jobs().into_iter().filter(|j| j.socket == socket) {
        if j.status != JobStatus::Running {
            finalize(j);
        } else if std::fs::metadata(claim_path(&j.id))
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|e| e.as_secs() >= 5))
        {
            // Claimed but the mirror was not updated: the claimant died mid-way.
            let status = state::read_private(&claim_path(&j.id), 64)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            let mut j = j.clone();
            j.status = match JobStatus::parse(&status) {
                Some(JobStatus::Running) | None => JobStatus::Failed,
                Some(s) => s,
            };
            if j.status == JobStatus::Failed && j.detail.is_none() {
                j.detail = Some("interrupted while recording the result".into());
            }
            j.end.get_or_insert_with(crate::sys::time::now_ms);
            remove_run_files(&j);
            // The claimant died before the option said "ended": no later job can have
            // been typed into the pane since (it is refused while the option runs).
            j.save_option_if_ours();
            finalize(j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration(350), "350ms");
        assert_eq!(duration(4200), "4.2s");
        assert_eq!(duration(187_000), "3m07s");
        assert_eq!(duration(7_500_000), "2h05m");
    }

    #[test]
    fn tails_are_bounded() {
        let t: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let b = bound_tail(&t, 40);
        assert_eq!(b.lines().count(), 40);
        assert!(b.ends_with("line 99"));
        let big = "é".repeat(10_000);
        assert!(bound_tail(&big, 40).len() <= TAIL_MAX_BYTES + 40);
    }

    #[test]
    fn pruning_while_others_prune_and_rename_never_panics() {
        let dir = std::env::temp_dir().join(format!("tmuxmate-prune-{}", std::process::id()));
        let done = dir.join("done");
        std::fs::create_dir_all(&done).unwrap();
        for i in 0..1500 {
            std::fs::write(done.join(format!("wpre{i}.json")), b"{}").unwrap();
        }
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Writers keep renaming fresh files in (changing the directory under the sort).
        let writers: Vec<_> = (0..2)
            .map(|w| {
                let (done, stop) = (done.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut i = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        // Replace (new mtime) or delete (no mtime) files mid-sort.
                        let name = if i.is_multiple_of(2) {
                            done.join(format!("wpre{}.json", (i * 7 + w) % 1500))
                        } else {
                            done.join(format!("w{w}x{}.json", i % 1500))
                        };
                        if i.is_multiple_of(3) {
                            let _ = std::fs::remove_file(&name);
                        } else {
                            let tmp = done.join(format!("w{w}x{i}.tmp.1"));
                            let _ = std::fs::write(&tmp, b"{}");
                            let _ = std::fs::rename(&tmp, &name);
                        }
                        i += 1;
                    }
                })
            })
            .collect();
        let pruners: Vec<_> = (0..4)
            .map(|_| {
                let done = done.clone();
                std::thread::spawn(move || {
                    for _ in 0..30 {
                        prune_in(&done, 50);
                    }
                })
            })
            .collect();
        for p in pruners {
            p.join().expect("a pruner panicked");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for w in writers {
            w.join().unwrap();
        }
        prune_in(&done, 50);
        assert!(job_files_in(&done).len() <= 50);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn ids() {
        let id = new_id();
        assert!(valid_id(&id), "{id}");
        assert!(!valid_id("w../x"));
        assert!(!valid_id("#{pane_id}"));
    }
}
