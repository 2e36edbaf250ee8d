//! What the side chat's processes tell each other: the record `side run` keeps in the main
//! pane's `@tmuxmate-side` while it lives, the start file it writes for `side open`, and
//! the result file it leaves for `side close`.
//!
//! Owns the paths and shapes of those three (one set per main pane, in the state dir's
//! `side/`). Invariants: the start file says `running`, `failed` (with the message a
//! person reads) or `ended`; it and the result file are written atomically, so a reader
//! sees a whole state or none; an unreadable record or start file reads as absent.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::sys::state;

/// What `run` records in the main pane's `@tmuxmate-side` while it lives.
#[derive(Serialize, Deserialize)]
pub struct SideRecord {
    pub pid: u32,
    pub adapter: String,
    pub session: String,
    pub started: u64,
}

/// Where `run` leaves the one line saying whether the side chat's files were deleted.
pub fn result_path(pane: &str) -> PathBuf {
    state::state_dir()
        .join("side")
        .join(format!("{}.result", pane.trim_start_matches('%')))
}

/// Where `run` tells `open` how the start went: `running`, or `failed` with the message.
pub fn start_path(pane: &str) -> PathBuf {
    state::state_dir()
        .join("side")
        .join(format!("{}.start", pane.trim_start_matches('%')))
}

#[derive(Serialize, Deserialize)]
pub struct StartState {
    pub state: String,
    #[serde(default)]
    pub message: String,
}

pub fn write_start(pane: &str, state: &str, message: &str) {
    let v = StartState {
        state: state.into(),
        message: message.into(),
    };
    let _ = state::write_atomic(
        &start_path(pane),
        serde_json::to_string(&v).unwrap_or_default().as_bytes(),
    );
}

pub fn read_start(pane: &str) -> Option<StartState> {
    serde_json::from_str(&std::fs::read_to_string(start_path(pane)).ok()?).ok()
}
