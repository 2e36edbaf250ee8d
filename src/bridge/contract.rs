//! The managed-session contract, kept in the session's own options.
//!
//! Owns: `@tmuxmate-managed`, `-adapter`, `-project`, `-permission-mode`, `-pane`,
//! `-cli-session` (Claude's session id), `-rollout` (Codex's rollout path, pinned after the
//! first prompt), `-cli` and `-last-send` (where the reply to the last message starts), and
//! exact session lookup. Invariants: sessions are found by comparing names ourselves and
//! then addressed by `$N` only (tmux's `-t name` prefix-matches); a read of a session that
//! vanished is an error, never an empty contract (tmux answers `display -t $99` with rc 0).

use crate::targs;
use crate::tmux::Arg;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::tmux::Tmux;
use crate::tmux::format::{parse_records, record_format};

pub const KEYS: &[&str] = &[
    "session_id",
    "session_name",
    crate::tmux::options::MANAGED.name,
    crate::tmux::options::ADAPTER.name,
    crate::tmux::options::PROJECT.name,
    crate::tmux::options::PERMISSION_MODE.name,
    crate::tmux::options::PANE.name,
    crate::tmux::options::CLI_SESSION.name,
    crate::tmux::options::ROLLOUT.name,
    crate::tmux::options::CLI.name,
    crate::tmux::options::LAST_SEND.name,
];

#[derive(Debug, Clone, Default)]
pub struct Contract {
    pub session_id: String,
    pub name: String,
    pub managed: bool,
    pub adapter: String,
    pub project: String,
    pub mode: String,
    pub pane: String,
    pub cli_session: String,
    pub rollout: String,
    pub cli: String,
    pub last_send: Option<SendMark>,
}

/// Where the reply to the last message starts.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMark {
    pub at: u64,
    /// Byte offset of the transcript/rollout when the message was sent (0 if none yet).
    pub offset: u64,
    /// The first characters of the message, to recognise its user record.
    pub head: String,
    /// Pane history size when the message was sent (pane fallback).
    #[serde(default)]
    pub history: u64,
    /// Pane fallback: lines already showing the message's head when it was sent (a
    /// repeated prompt), to skip when looking for this turn's.
    #[serde(default)]
    pub prior_matches: usize,
    /// Pane fallback: the start of the message's first line, as it shows on screen.
    #[serde(default)]
    pub pane_key: String,
    /// Size of the message (a large one may take the CLI longer to record).
    #[serde(default)]
    pub bytes: u64,
    /// Inode of the record file at the send (Gemini's chat file is replaced on resume:
    /// another inode means `offset` no longer applies).
    #[serde(default)]
    pub ino: u64,
}

/// `$N` of the session named exactly `name`, if any.
pub fn find(tmux: &Tmux, name: &str) -> Result<Option<String>, Error> {
    crate::control::create::session_by_name(tmux, name)
}

pub fn read(tmux: &Tmux, session_id: &str) -> Result<Contract, Error> {
    let fmt = record_format(KEYS);
    let out = tmux.run_bytes(
        &targs![
            "display-message",
            "-p",
            "-t",
            Arg::id(session_id),
            "-F",
            Arg::ours(&fmt)
        ],
        None,
    )?;
    let recs = parse_records(&out, KEYS.len())
        .map_err(|d| Error::new(format!("unreadable session options: {d}")))?;
    let r = recs.into_iter().next().unwrap_or_default();
    if r.first().is_none_or(|s| s != session_id) {
        return Err(Error::new(format!(
            "session {session_id} disappeared while tmuxmate was working with it; nothing was done to any other session"
        )));
    }
    let mut it = r.into_iter();
    let mut n = || it.next().unwrap_or_default();
    Ok(Contract {
        session_id: n(),
        name: n(),
        managed: n() == "1",
        adapter: n(),
        project: n(),
        mode: n(),
        pane: n(),
        cli_session: n(),
        rollout: n(),
        cli: n(),
        last_send: serde_json::from_str(&n()).ok(),
    })
}

pub fn set(tmux: &Tmux, session_id: &str, key: &str, value: &str) -> Result<(), Error> {
    // Values are data (a project path, a message's head): option values are not expanded.
    tmux.run(&targs![
        "set-option",
        "-t",
        Arg::id(session_id),
        "--",
        Arg::id(key),
        Arg::literal(value)
    ])?;
    Ok(())
}
