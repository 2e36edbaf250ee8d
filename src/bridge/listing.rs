//! `agent list`: the managed agent sessions on a server and the state of each.
//!
//! Owns: finding our sessions (`@tmuxmate-managed`), reading each one's contract and
//! judging its pane (broken, dialog, busy, ready) from the adapter's patterns.
//! Invariants: one `list-sessions` for all of them; no server means no sessions, not an
//! error; a session whose contract cannot be read is still listed (empty fields).

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::targs;
use crate::tmux::{Arg, Tmux};

use super::{contract, session};

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Listed {
    pub name: String,
    pub session_id: String,
    pub adapter: String,
    pub project: String,
    pub permission_mode: String,
    pub pane_id: String,
    /// The agent CLI's own session id, as `agent start` prints it (`null` when unknown).
    pub cli_session: Option<String>,
    pub state: String,
}

/// Every managed agent session on this server.
pub fn list(tmux: &Tmux) -> Result<Vec<Listed>, Error> {
    let fmt = crate::tmux::format::record_format(contract::KEYS);
    let out = match tmux.run_bytes(&targs!["list-sessions", "-F", Arg::ours(&fmt)], None) {
        Ok(o) => o,
        Err(e) if e.is_no_server() => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let recs = crate::tmux::format::parse_records(&out, contract::KEYS.len()).unwrap_or_default();
    let mut v = Vec::new();
    for r in recs {
        if r[2] != "1" {
            continue;
        }
        let c = contract::read(tmux, &r[0]).unwrap_or_default();
        let state = match session::adapter_of(&c) {
            Ok(a) => match session::check_pane(tmux, &c, &a) {
                Err(_) => "broken",
                Ok(_) => {
                    let scr = super::screen(tmux, &c.pane);
                    if super::any(&a.dialogs, &scr).is_some() {
                        "dialog"
                    } else if super::any(&a.busy, &scr).is_some() {
                        "busy"
                    } else {
                        "ready"
                    }
                }
            },
            Err(_) => "unknown-adapter",
        };
        v.push(Listed {
            name: c.name,
            session_id: c.session_id,
            adapter: c.adapter,
            project: c.project,
            permission_mode: c.mode,
            pane_id: c.pane,
            cli_session: Some(c.cli_session).filter(|s| !s.is_empty()),
            state: state.to_string(),
        });
    }
    Ok(v)
}

/// One short line per session, for people and models: name, CLI, pane, state, permission
/// mode (the project is in the name and in `--json`).
pub fn render(v: &[Listed]) -> String {
    if v.is_empty() {
        return "no managed agent sessions\n".to_string();
    }
    v.iter()
        .map(|l| {
            format!(
                "{} {} {} [{}] {}\n",
                l.name, l.adapter, l.pane_id, l.state, l.permission_mode
            )
        })
        .collect()
}
