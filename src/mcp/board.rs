//! The MCP `tmux_dashboard` tool: the dashboard's rows once, compact text for the model
//! (one line an agent, then the counts and the watch jobs) and the
//! `dashboard --once --json` document in `structuredContent`.

use serde_json::Value;

use super::RpcError;
use super::handlers::{args, failed};
use super::tools::{Answer, Ctx};
use crate::dashboard;

pub(super) fn tmux_dashboard(c: &Ctx, a: &Value) -> Result<Answer, RpcError> {
    let a: dashboard::Ask = args("tmux_dashboard", a)?;
    let board = dashboard::gather::Gatherer::default().board(c.tmux, false);
    Ok(match board {
        Ok(b) => {
            let b = b.filtered(a.filter.as_deref());
            let text = dashboard::text::text(&b, crate::sys::time::now_ms());
            match serde_json::to_string(&b) {
                Ok(sc) => Answer::Texted { text, sc },
                Err(e) => Answer::Value(failed(&crate::error::Error::new(e.to_string()))),
            }
        }
        Err(e) => Answer::Value(failed(&e)),
    })
}
