//! Claude Code's session file (`<config>/sessions/<pid>.json`), which it rewrites on
//! every state change: the one signal of a permission denied with Escape, for which no
//! hook fires.
//!
//! Owns: finding the file of the Claude that runs a hook (its pid is an ancestor of the
//! hook process), and reading it. The pane's digest follower watches the file (it runs
//! for every Claude pane already) and calls [`changed`]. Invariants: the file is read
//! only when it is a regular file, at most [`MAX`] bytes; a file that is gone or does not
//! parse changes nothing; the path reaches tmux only as an option value.

use std::path::{Path, PathBuf};

use super::sources;
use crate::sys::procfs;
use crate::tmux::Tmux;

/// A session file is a few hundred bytes.
const MAX: u64 = 64 * 1024;

/// Where Claude keeps its session files for the environment this process runs in.
fn sessions_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("sessions"));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".claude").join("sessions"))
}

/// The session file of the Claude this hook runs under: the first ancestor with one.
pub fn of_this_hook() -> Option<PathBuf> {
    let dir = sessions_dir()?;
    let mut pid = procfs::stat(std::process::id() as i32)?.ppid;
    for _ in 0..8 {
        if pid <= 1 {
            return None;
        }
        let f = dir.join(format!("{pid}.json"));
        if f.is_file() {
            return Some(f);
        }
        pid = procfs::stat(pid)?.ppid;
    }
    None
}

/// The file as JSON, when it is a regular file that parses.
pub fn read(path: &Path) -> Option<serde_json::Value> {
    let (bytes, cut) = crate::sys::files::read_tail(path, MAX).ok()?;
    if cut {
        return None;
    }
    serde_json::from_slice(&bytes).ok()
}

/// The file changed: what it says now, applied to `pane`'s record.
pub fn changed(tmux: &Tmux, socket: &str, pane: &str, path: &Path) -> Result<(), String> {
    let Some(file) = read(path) else {
        return Ok(());
    };
    let place = super::place_of(tmux, pane)?;
    super::apply_with(tmux, socket, pane, "claude", &place, |cur| {
        sources::from_claude_session(cur.record.as_ref(), &file)
    })
}
