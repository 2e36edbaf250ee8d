//! `tmuxmate agents [--json]` and the hidden entries tmux starts (`seen`, `jump`,
//! `notify-run`, and the listeners `title` and `osc`).
//!
//! Invariants: the listing is the named server's (`-L`/`-S`), else every server agents
//! were seen on (`agents::servers`), the current one included (`--host` forwards
//! it); the hidden entries are unattended (a key, a tmux hook, a tmux-started child):
//! they fail soft, log the reason and exit 0.
//!
//! JSON (docs/json.md#agent-state): `{"agents": [{paneId, target, harness, state, since, why}]}`.

use crate::agents;
use crate::cli::{AgentsAction, AgentsArgs};
use crate::error::{CliResult, Error};
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

/// The rows of the current server (if one runs) and of every other server agents were
/// seen on; a server that does not answer is left out and logged.
fn every_server(tmux: &Tmux) -> Result<Vec<agents::list::Row>, Error> {
    let here = agents::socket_of(tmux).ok();
    let mut others = agents::servers::known();
    others.retain(|s| Some(s) != here.as_ref());
    if here.is_none() && others.is_empty() {
        // No server at all: the usual error says so.
        return agents::list::rows(tmux).map_err(Error::from);
    }
    let several = others.len() + usize::from(here.is_some()) > 1;
    let mut rows = Vec::new();
    if let Some(h) = &here {
        let mut r = agents::list::rows(tmux).map_err(Error::from)?;
        if several {
            r.iter_mut().for_each(|x| x.socket = h.clone());
        }
        rows.extend(r);
    }
    for s in others {
        let t = Tmux::new(crate::tmux::Socket::Path(s.clone().into()));
        match agents::list::rows(&t) {
            Ok(mut r) => {
                r.iter_mut().for_each(|x| x.socket = s.clone());
                rows.extend(r);
            }
            Err(e) => crate::sys::state::log(&format!("agents: server {s}: {e}")),
        }
    }
    agents::list::sort_rows(&mut rows);
    Ok(rows)
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
/// on, the current one first (each row then names its server).
fn list(tmux: &Tmux, json: bool, chosen: bool) -> CliResult {
    let rows = if chosen {
        agents::list::rows(tmux).map_err(Error::from)?
    } else {
        every_server(tmux)?
    };
    if json {
        let v = agents::list::json(&rows);
        super::out_json(&serde_json::json!({ "agents": v }));
    } else {
        let now = crate::sys::state::now_ms();
        super::out(&agents::list::text(&rows, now));
    }
    Ok(())
}
