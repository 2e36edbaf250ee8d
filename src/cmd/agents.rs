//! `tmuxmate agents [--json]` and the hidden entries tmux starts (`seen`, `jump`,
//! `notify-run`, and the listeners `title` and `osc`).
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
        Some(AgentsAction::Title { target }) => soft(
            "title",
            pane_id(&target).and_then(|p| agents::listen::title(tmux, p)),
        ),
        Some(AgentsAction::Osc { target }) => soft(
            "osc",
            pane_id(&target).and_then(|p| agents::listen::osc_stream(tmux, p)),
        ),
    }
}

/// The listeners name their pane by id (tmux filled it in): anything else is refused.
fn pane_id(t: &str) -> Result<&str, String> {
    let digits = t.strip_prefix('%').unwrap_or("");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{t:?} is not a pane id (%N)"));
    }
    Ok(t)
}

fn list(tmux: &Tmux, json: bool) -> CliResult {
    let rows = agents::list::rows(tmux).map_err(Error::from)?;
    if json {
        let v = agents::list::json(&rows);
        super::out_json(&serde_json::json!({ "agents": v }));
    } else {
        let now = crate::sys::state::now_ms();
        super::out(&agents::list::text(&rows, now));
    }
    Ok(())
}
