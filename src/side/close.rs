//! `side close`: ending the side chat of a main pane from outside it.
//!
//! Owns asking `side run` to stop and waiting for its word. Invariants: only the process
//! recorded in the main pane's `@tmuxmate-side` is signalled (TERM, which `run` passes on
//! to its agent before deleting the session files); the answer is `run`'s own result line,
//! never a guess; waiting is bounded (20 s); the split it ran in is given back.

use std::time::{Duration, Instant};

use crate::error::Error;
use crate::targs;
use crate::tmux::{Arg, Tmux};

use super::handoff::{SideRecord, result_path};
use super::split;

/// How long `close` waits for `run` to finish deleting.
const CLOSE_WAIT: Duration = Duration::from_secs(20);

/// The side chat's result line; `ok` is false when some session files could not be deleted.
pub struct Closed {
    pub line: String,
    pub ok: bool,
}

pub fn close(tmux: &Tmux, target: Option<&str>) -> Result<Closed, Error> {
    let pane = super::main_pane(tmux, target)?;
    let raw = tmux.run(&targs![
        "show-options",
        "-pqv",
        "-t",
        Arg::id(&pane),
        super::OPT_SIDE
    ])?;
    let Ok(rec) = serde_json::from_str::<SideRecord>(raw.trim_end()) else {
        return Err(Error::new(format!("no side chat is open for pane {pane}")));
    };
    let pid = nix::unistd::Pid::from_raw(rec.pid as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).map_err(|e| {
        Error::new(format!(
            "could not end the side chat (pid {}): {e}",
            rec.pid
        ))
    })?;
    let start = Instant::now();
    while start.elapsed() < CLOSE_WAIT {
        if let Ok(line) = std::fs::read_to_string(result_path(&pane)) {
            // The split it ran in (no client was attached) closes; the window is as before.
            split::restore(tmux, &pane);
            let ok = !line.contains("could NOT");
            return Ok(Closed { line, ok });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(Error::new(format!(
        "the side chat of {pane} (pid {}) did not finish within 20 s; its session files may remain",
        rec.pid
    )))
}
