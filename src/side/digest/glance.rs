//! The digest at a glance, for views of many agents at once (the dashboard): the status
//! line, the checklist's progress and the usage, one small file per pane that the
//! follower rewrites whenever one of them changes.
//!
//! Owns: `<state>/digest/<socket:pane>.glance.json` (written atomically by the pane's
//! follower, at the status push's rate; removed with its cache) and reading it back.
//! Invariants: its content is derived from the digest alone (nothing here reads the
//! clock), so an unchanged digest is never rewritten and the live views are poked
//! (`sys::wake`) only on news; reads are bounded and a file that does not parse is absent.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::model::{Digest, Usage};
use super::render::status_line;
use crate::sys::state;

/// A glance is a few hundred bytes: anything larger is not ours.
const MAX: u64 = 64 * 1024;

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Glance {
    pub v: u32,
    /// What the follower pushes into `@tmuxmate-status`.
    pub status: String,
    pub todos_done: usize,
    pub todos_total: usize,
    /// The checklist item in progress (else the first pending one).
    pub todo_now: Option<String>,
    pub usage: Option<Usage>,
}

impl Glance {
    pub fn of(d: &Digest) -> Glance {
        let (todos_done, todos_total) = d.todo_progress();
        let now = |s: &str| d.todos.iter().find(|t| t.status == s);
        Glance {
            v: 1,
            status: status_line(d),
            todos_done,
            todos_total,
            todo_now: now("in_progress")
                .or_else(|| now("pending"))
                .map(|t| t.text.clone()),
            usage: d.usage.clone(),
        }
    }
}

pub fn path(socket: &str, pane: &str) -> PathBuf {
    super::dir().join(format!(
        "{}.glance.json",
        crate::location::ledger::file_name(&format!("{socket}:{pane}"))
    ))
}

pub fn write(socket: &str, pane: &str, g: &Glance) {
    let r = serde_json::to_vec(g)
        .map_err(std::io::Error::other)
        .and_then(|b| state::write_atomic(&path(socket, pane), &b));
    match r {
        // The live views show the glance (`sys::wake`).
        Ok(()) => crate::sys::wake::poke(),
        Err(e) => state::log(&format!("digest follower {pane}: glance: {e}")),
    }
}

pub fn remove(socket: &str, pane: &str) {
    if std::fs::remove_file(path(socket, pane)).is_ok() {
        crate::sys::wake::poke();
    }
}

/// The pane's glance, if its follower wrote one.
pub fn read(socket: &str, pane: &str) -> Option<Glance> {
    let b = state::read_private(&path(socket, pane), MAX).ok()?;
    serde_json::from_slice(&b).ok()
}
