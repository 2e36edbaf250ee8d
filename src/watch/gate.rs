//! The start gate of a launched watch job: its window waits here before the command runs.
//!
//! Owns: `<state>/jobs/gates/<id>`, the "go" file `watch start` creates once the job's
//! state exists (pane option and mirror), the wrapper's wait for it (`hold`: a gate that
//! never opens closes its window).
//! Invariants:
//! - the command runs only after its job state exists, so even a 5 ms command finds its
//!   job when it reports its exit;
//! - a `watch start` that dies before saying go (killed at any moment) never leaves a
//!   window blocked: the wait notices that process is gone (named by pid and start time,
//!   so a reused pid is not taken for it) and the window goes;
//! - the go file lives only between its creation and the wrapper seeing it; an ended job
//!   removes a leftover one.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::sys::procfs;
use crate::targs;
use crate::tmux::{Arg, Tmux};

/// Even with its starter alive, a gate never waits longer than this.
const MAX_WAIT: Duration = Duration::from_secs(600);
const STEP: Duration = Duration::from_millis(5);

pub fn go_path(id: &str) -> PathBuf {
    super::jobs_dir().join("gates").join(id)
}

/// `watch start`: let the command run.
pub fn open(id: &str) -> std::io::Result<()> {
    crate::sys::state::write_private(&go_path(id), b"go")
}

pub fn remove(id: &str) {
    let _ = std::fs::remove_file(go_path(id));
}

/// This process, as a gate names its starter: (pid, start time).
pub fn me() -> (i32, u64) {
    let pid = std::process::id() as i32;
    (pid, procfs::start_time(pid).unwrap_or(0))
}

/// The wrapper's wait: true once the go file is there (it is consumed), false when the
/// starter is gone without saying go (or after `MAX_WAIT`).
pub fn wait(id: &str, starter: i32, started: u64) -> bool {
    let p = go_path(id);
    let t0 = Instant::now();
    loop {
        if p.exists() {
            remove(id);
            return true;
        }
        if !alive(starter, started) {
            // It may have said go just before it ended.
            let go = p.exists();
            remove(id);
            return go;
        }
        if t0.elapsed() > MAX_WAIT {
            return false;
        }
        std::thread::sleep(STEP);
    }
}

/// Is the starter still running? A killed starter can stay a zombie until its parent
/// reaps it: that counts as gone. Without `/proc`, only the pid is checked.
fn alive(pid: i32, started: u64) -> bool {
    if started == 0 || !std::path::Path::new("/proc/self/stat").exists() {
        return nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok();
    }
    procfs::start_time(pid) == Some(started) && procfs::state(pid).is_some_and(|s| s != 'Z')
}

/// `watch gate` (the wrapper, unattended): wait for job `id`'s go; a gate that is never
/// opened logs why and closes its window (`TMUX_PANE`), and nothing runs there.
pub fn hold(tmux: &Tmux, id: &str, starter: i32, started: u64) -> Result<(), Error> {
    if super::valid_id(id) && wait(id, starter, started) {
        return Ok(());
    }
    crate::sys::state::log(&format!(
        "watch {id}: its `watch start` ended before the job was recorded; closing its window"
    ));
    if let Ok(pane) = std::env::var("TMUX_PANE") {
        let _ = tmux.run(&targs!["kill-pane", "-t", Arg::id(&pane)]);
    }
    Err(Error::new(format!(
        "watch {id}: `watch start` ended before the job was recorded; nothing runs here"
    )))
}
