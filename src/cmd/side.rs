//! `tmuxmate side open|status|history|report|close` (and the hidden `run`, `relay`): thin
//! handlers over `crate::side` (which owns the side chat's lifecycle and every decision);
//! `status`, `history` and `report` also run on another host (`--host`).
//!
//! Invariant: no command here sends a byte to the main pane.

use super::at::At;
use crate::cli::{Json, SideAction};
use crate::error::{CliResult, Error};
use crate::side::close::Closed;
use crate::side::open::Opened;
use crate::side::request::Report;
use crate::side::{self, relay, sandboxed};

/// `side report`: here, inside a sandbox that blocks tmux and the state dir (Codex
/// read-only) the note is printed for the side chat's hook to deliver.
fn report(at: &At, a: Json<Report>) -> CliResult {
    let r = match (at, a.ask.target.is_none(), relay::nonce()) {
        (At::Here(t), true, Some(nonce)) => match a.ask.run(t) {
            Ok(r) => r,
            Err(e) => {
                let line = sandboxed::report(&nonce, &a.ask.text, &e)?;
                let said = sandboxed::RELAYED_NOTE;
                super::out_json_or_line(
                    a.json,
                    &serde_json::json!({"queued": "relayed", "relay": line, "note": said}),
                    |_| format!("{line}\n{said}"),
                );
                return Ok(());
            }
        },
        _ => at.run(a.ask, |t, r| r.run(t))?,
    };
    super::out_json_or_line(
        a.json,
        &serde_json::json!({"queued": true, "agent": r.agent, "key": r.key}),
        |_| format!("queued for the main agent's next turn ({})", r.agent),
    );
    Ok(())
}

pub fn run(at: &At, action: SideAction) -> CliResult {
    match action {
        SideAction::Open { target, client } => {
            match side::open::open(at.tmux()?, target.as_deref(), client.as_deref())? {
                Opened::Popup => {}
                Opened::Split { main, split } => super::out_line(&format!(
                    "no client is attached to the main pane's session: the side chat opened in a split ({split}) beside {main}"
                )),
            }
            Ok(())
        }
        SideAction::Run { target } => {
            let ended = side::supervise::run(at.tmux()?, &target);
            if let Some(line) = &ended.said {
                super::out_line(line);
            }
            ended.result
        }
        SideAction::Status(a) => {
            let st = at.run(a.ask, |t, r| r.run(t))?;
            super::out_json_or_line(a.json, &st, |st| {
                format!("main agent in {}: {}\n{}", st.main_pane, st.state, st.text)
            });
            Ok(())
        }
        SideAction::History(a) => {
            let lines = at.run(a.ask, |t, r| r.run(t))?;
            if a.json {
                super::out_json(&lines);
            } else if lines.is_empty() {
                super::out_line("(no matching lines in the main session's transcript)");
            } else {
                let text: String = lines
                    .iter()
                    .map(|l| format!("[turn {}] {}\n", l.turn, l.text))
                    .collect();
                super::out(&text);
            }
            Ok(())
        }
        SideAction::Report(a) => report(at, a),
        SideAction::Relay => {
            sandboxed::hook(at.tmux()?, std::io::stdin());
            Ok(())
        }
        SideAction::Close { target } => {
            let Closed { line, ok } = side::close::close(at.tmux()?, target.as_deref())?;
            super::out_line(&line);
            if ok { Ok(()) } else { Err(Error::new(line)) }
        }
    }
}
