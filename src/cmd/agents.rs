//! `tmuxmate agents [--json]` and the hidden entries tmux starts (`seen`, `jump`,
//! `notify-run`, and the listeners `title` and `osc`).
//!
//! Invariants: the listing is the named server's (`-L`/`-S`), else every server agents
//! were seen on (`agents::servers`), the current one included (`--host` runs it on
//! the host's tmuxmate); the hidden entries are unattended (a key, a tmux hook, a tmux-started child):
//! they fail soft, log the reason and exit 0.
//!
//! JSON (docs/json.md#agent-state): `{"agents": [{paneId, target, harness, state, since, why}]}`.

use super::at::At;
use crate::cli::{AgentsAction, AgentsArgs};
use crate::error::{CliResult, Error};
use crate::state;
use crate::state::request::Agents;

/// `chosen`: `-L`/`-S` named the server.
pub fn run(at: &At, a: AgentsArgs, chosen: bool) -> CliResult {
    let soft = |what: &str, r: Result<(), String>| {
        if let Err(e) = r {
            crate::sys::state::log(&format!("agents {what}: {e}"));
        }
        Ok(())
    };
    let Some(action) = a.action else {
        return list(at, a.json, chosen);
    };
    let tmux = at.tmux()?;
    match action {
        AgentsAction::Seen { target } => soft("seen", state::seen(tmux, &target)),
        AgentsAction::Jump { client } => soft("jump", state::jump(tmux, &client)),
        AgentsAction::NotifyRun { file } => {
            soft("notify-run", state::alert::notify_run(tmux, &file))
        }
        AgentsAction::Title { target } => soft(
            "title",
            pane_id(&target).and_then(|p| state::listen::title(tmux, p)),
        ),
        AgentsAction::Osc { target } => soft(
            "osc",
            pane_id(&target).and_then(|p| state::listen::osc_stream(tmux, p)),
        ),
        AgentsAction::FollowHost { name } => soft(
            "follow-host",
            state::hosts::follow(tmux, &name, |t| {
                if let Err(e) = state::summary::refresh(t) {
                    crate::sys::state::log(&format!("agents: status line: {e}"));
                }
            }),
        ),
        AgentsAction::FollowHosts => {
            state::hosts::ensure_named(tmux);
            Ok(())
        }
        AgentsAction::Changes { after, wait_ms } => {
            let limit = std::time::Duration::from_millis(wait_ms.min(state::hosts::WAIT_MAX_MS));
            let v = state::longpoll::wait(tmux, &after, limit).map_err(Error::from)?;
            super::out_json(&v);
            Ok(())
        }
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

/// The chosen server's agents (`-L`/`-S`), else those of every server agents were seen
/// on (each row then names its server), with the agents of the hosts they follow.
fn list(at: &At, json: bool, chosen: bool) -> CliResult {
    let doc = at.run(Agents {}, |t, r| r.run(t, chosen))?;
    if json {
        super::out_json(&doc);
    } else {
        let (text, unreached) = state::request::text(&doc, crate::sys::time::now_ms());
        super::out(&text);
        for u in &unreached {
            eprintln!("tmuxmate: {u}");
        }
    }
    Ok(())
}
