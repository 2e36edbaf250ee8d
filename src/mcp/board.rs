//! The MCP `tmux_dashboard` tool: the dashboard's rows once, compact text for the model
//! (one line an agent, then the counts and the watch jobs) and the
//! `dashboard --once --json` document in `structuredContent`. Given `host`, refused as
//! `dashboard --host` is.

use serde_json::Value;

use super::ctx::{Answer, Ctx, Tick};
use super::handlers::{args, failed};
use super::on_host::Server;
use super::{RpcError, Session};
use crate::dashboard;
use crate::dashboard::request::Dashboard;
use crate::error::Error;

/// With `host`: refused, as `dashboard --host` is (the board already holds the hosts
/// it follows); never this machine's files read against the host's tmux.
pub(super) fn on_host(
    _: &Session,
    a: &Value,
    _: &Server,
    _: &Tick<'_>,
) -> Result<Answer, RpcError> {
    let _: Dashboard = args("tmux_dashboard", a)?;
    Ok(Answer::Value(failed(&Error::usage(format!(
        "refused: tmux_dashboard does not take host ({}); call it without host",
        dashboard::request::NOT_ON_HOST
    )))))
}

pub(super) fn tmux_dashboard(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    let a: Dashboard = args("tmux_dashboard", a)?;
    Ok(match a.run(c.tmux, false) {
        Ok(b) => {
            let text = dashboard::text::text(&b, crate::sys::time::now_ms());
            match serde_json::to_string(&b) {
                Ok(sc) => Answer::Texted { text, sc },
                Err(e) => Answer::Value(failed(&Error::new(e.to_string()))),
            }
        }
        Err(e) => Answer::Value(failed(&e)),
    })
}
