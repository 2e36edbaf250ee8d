//! `tmuxmate dashboard [--once [--json]]`: the live view in this terminal, its popup on a
//! client (the snippet's key), or the rows once.
//!
//! Invariants: the rows are the chosen server's (`-L`/`-S`), else every server's, with the
//! hosts they follow (as `tmuxmate agents`); the popup path is unattended (a key): it
//! fails soft, tells the client and logs.

use crate::cli::DashboardArgs;
use crate::dashboard;
use crate::error::CliResult;
use crate::tmux::Tmux;

/// `chosen`: `-L`/`-S` named the server.
pub fn run(tmux: &Tmux, a: DashboardArgs, chosen: bool) -> CliResult {
    if a.popup {
        let client = a.client.unwrap_or_default();
        if let Err(e) = dashboard::tui::popup(tmux, &client, chosen) {
            crate::tmux::popup::tell(tmux, &client, "dashboard", &e.msg);
        }
        return Ok(());
    }
    if !a.once {
        return dashboard::tui::run(tmux, &a.ask, a.client.as_deref(), chosen);
    }
    let board = a.ask.run(tmux, chosen)?;
    if a.json {
        super::out_json(&board);
    } else {
        super::out(&dashboard::text::text(&board, crate::sys::time::now_ms()));
    }
    Ok(())
}
