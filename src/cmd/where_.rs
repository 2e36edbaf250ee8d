//! `tmuxmate where`: the tty-verified location of the caller (with `--json`, also its
//! agent address), or exit 1 with the reason.

use serde::Serialize;

use crate::error::{CliResult, Error};
use crate::location::{self, Reading};
use crate::tmux::Tmux;

/// `where --json` (docs/json.md): the reading with indexes as numbers, plus the pane's
/// address and the caller's agent address; the change-detection fields stay out.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WhereJson<'a> {
    pane_id: &'a str,
    /// `session:window.pane`, as `list` shows it.
    target: String,
    session_name: &'a str,
    window_index: u32,
    window_name: &'a str,
    pane_index: u32,
    window_active: bool,
    pane_active: bool,
    layout: &'a str,
    socket_path: &'a str,
    /// What `--notify` and the ledger use for the caller.
    agent: String,
}

fn json(r: &Reading) -> WhereJson<'_> {
    WhereJson {
        pane_id: &r.pane_id,
        target: format!("{}:{}.{}", r.session, r.window_index, r.pane_index),
        session_name: &r.session,
        window_index: r.window_index.parse().unwrap_or(0),
        window_name: &r.window_name,
        pane_index: r.pane_index.parse().unwrap_or(0),
        window_active: r.window_active,
        pane_active: r.pane_active,
        layout: &r.layout,
        socket_path: &r.socket_path,
        agent: crate::location::address::agent_address(Some(r)),
    }
}

pub fn run(tmux: &Tmux, json_out: bool) -> CliResult {
    match location::read(tmux) {
        Ok(r) => {
            if json_out {
                super::out_json(&json(&r));
            } else {
                super::out_line(&r.state());
            }
            Ok(())
        }
        Err(e) => {
            let mut c = Error::new(e.to_string());
            c.kind = crate::error::Kind::NotInPane;
            Err(c)
        }
    }
}
