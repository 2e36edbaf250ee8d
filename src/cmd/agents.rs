//! `tmuxmate agents [--json]` and the snippet's hidden entries (`seen`, `jump`,
//! `notify-run`).
//!
//! Invariants: the listing is the server's (`-L`/`-S`, else `$TMUX`; `--host` forwards
//! it); the hidden entries are unattended (a key, a tmux hook, a tmux-started child):
//! they fail soft, log the reason and exit 0.
//!
//! JSON (docs/json.md#agent-state): `{"agents": [{paneId, target, harness, state, since, why}]}`.

use crate::agents;
use crate::cli::{AgentsAction, AgentsArgs};
use crate::error::{CliResult, Error};
use crate::tmux::Tmux;

pub fn run(tmux: &Tmux, a: AgentsArgs) -> CliResult {
    let soft = |what: &str, r: Result<(), String>| {
        if let Err(e) = r {
            crate::sys::state::log(&format!("agents {what}: {e}"));
        }
        Ok(())
    };
    match a.action {
        None => list(tmux, a.json),
        Some(AgentsAction::Seen { target }) => soft("seen", agents::seen(tmux, &target)),
        Some(AgentsAction::Jump { client }) => soft("jump", agents::jump(tmux, &client)),
        Some(AgentsAction::NotifyRun { file }) => {
            soft("notify-run", agents::alert::notify_run(tmux, &file))
        }
    }
}

fn list(tmux: &Tmux, json: bool) -> CliResult {
    let rows = agents::list::rows(tmux).map_err(Error::from)?;
    if json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "paneId": r.pane_id,
                    "target": r.target,
                    "harness": r.harness,
                    "state": r.state,
                    "since": r.since_ms,
                    "why": r.why,
                })
            })
            .collect();
        super::out_json(&serde_json::json!({ "agents": v }));
    } else {
        let now = crate::sys::state::now_ms();
        super::out(&agents::list::text(&rows, now));
    }
    Ok(())
}
