//! `tmuxmate agents [--json]` and the hidden entries tmux starts (`seen`, `jump`,
//! `notify-run`, and the listeners `title` and `osc`).
//!
//! Invariants: the listing is the named server's (`-L`/`-S`), else every server agents
//! were seen on (`agents::servers`), the current one included (`--host` forwards
//! it); the hidden entries are unattended (a key, a tmux hook, a tmux-started child):
//! they fail soft, log the reason and exit 0.
//!
//! JSON (docs/json.md#agent-state): `{"agents": [{paneId, target, harness, state, since, why}]}`.

use crate::cli::{AgentsAction, AgentsArgs};
use crate::error::{CliResult, Error};
use crate::state;
use crate::tmux::Tmux;

/// `chosen`: `-L`/`-S` named the server.
pub fn run(tmux: &Tmux, a: AgentsArgs, chosen: bool) -> CliResult {
    let soft = |what: &str, r: Result<(), String>| {
        if let Err(e) = r {
            crate::sys::state::log(&format!("agents {what}: {e}"));
        }
        Ok(())
    };
    match a.action {
        None => list(tmux, a.json, chosen),
        Some(AgentsAction::Seen { target }) => soft("seen", state::seen(tmux, &target)),
        Some(AgentsAction::Jump { client }) => soft("jump", state::jump(tmux, &client)),
        Some(AgentsAction::NotifyRun { file }) => {
            soft("notify-run", state::alert::notify_run(tmux, &file))
        }
        Some(AgentsAction::Title { target }) => soft(
            "title",
            pane_id(&target).and_then(|p| state::listen::title(tmux, p)),
        ),
        Some(AgentsAction::Osc { target }) => soft(
            "osc",
            pane_id(&target).and_then(|p| state::listen::osc_stream(tmux, p)),
        ),
        Some(AgentsAction::FollowHost { name }) => soft(
            "follow-host",
            state::hosts::follow(tmux, &name, |t| {
                if let Err(e) = state::summary::refresh(t) {
                    crate::sys::state::log(&format!("agents: status line: {e}"));
                }
            }),
        ),
        Some(AgentsAction::FollowHosts) => {
            state::hosts::ensure_named(tmux);
            Ok(())
        }
        Some(AgentsAction::Changes { after, wait_ms }) => {
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
fn list(tmux: &Tmux, json: bool, chosen: bool) -> CliResult {
    let l = state::list::listing(tmux, chosen).map_err(Error::from)?;
    if json {
        super::out_json(&l.document());
    } else {
        let now = crate::sys::time::now_ms();
        super::out(&state::list::text(&l.rows, now));
        for u in &l.unreached {
            eprintln!("tmuxmate: host {} not reached: {}", u.host, u.why);
        }
    }
    Ok(())
}
