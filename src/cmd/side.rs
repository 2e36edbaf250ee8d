//! `tmuxmate side open|status|history|report|close` (and the hidden `run`, `relay`): thin
//! handlers over `crate::side` (which owns the side chat's lifecycle and every decision).
//!
//! Invariant: no command here sends a byte to the main pane.

use crate::cli::SideAction;
use crate::error::{CliResult, Error};
use crate::side::close::Closed;
use crate::side::open::Opened;
use crate::side::{self, relay, sandboxed};
use crate::tmux::Tmux;

pub fn run(tmux: &Tmux, action: SideAction) -> CliResult {
    match action {
        SideAction::Open { target, client } => {
            match side::open::open(tmux, target.as_deref(), client.as_deref())? {
                Opened::Popup => {}
                Opened::Split { main, split } => super::out_line(&format!(
                    "no client is attached to the main pane's session: the side chat opened in a split ({split}) beside {main}"
                )),
            }
            Ok(())
        }
        SideAction::Run { target } => {
            let ended = side::supervise::run(tmux, &target);
            if let Some(line) = &ended.said {
                super::out_line(line);
            }
            ended.result
        }
        SideAction::Status { target, json } => {
            let st = side::status_for(tmux, target.as_deref())?;
            if json {
                super::out_json(&st);
            } else {
                super::out_line(&format!(
                    "main agent in {}: {}\n{}",
                    st.main_pane, st.state, st.text
                ));
            }
            Ok(())
        }
        SideAction::History {
            target,
            turn,
            contains,
            limit,
            json,
        } => {
            let lines =
                side::history_for(tmux, target.as_deref(), turn, contains.as_deref(), limit)?;
            if json {
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
        SideAction::Report { target, text, json } => {
            let r = match (
                side::report_for(tmux, target.as_deref(), &text),
                target.is_none(),
                relay::nonce(),
            ) {
                (Ok(r), _, _) => r,
                // Inside a sandbox that blocks tmux and the state dir (Codex read-only):
                // print the note for the side chat's hook to deliver.
                (Err(e), true, Some(nonce)) => {
                    let line = sandboxed::report(&nonce, &text, &e)?;
                    let said = sandboxed::RELAYED_NOTE;
                    if json {
                        super::out_json(
                            &serde_json::json!({"queued": "relayed", "relay": line, "note": said}),
                        );
                    } else {
                        super::out_line(&format!("{line}\n{said}"));
                    }
                    return Ok(());
                }
                (Err(e), _, _) => return Err(e),
            };
            let (agent, key) = (r.agent, r.key);
            if json {
                super::out_json(&serde_json::json!({"queued": true, "agent": agent, "key": key}));
            } else {
                super::out_line(&format!("queued for the main agent's next turn ({agent})"));
            }
            Ok(())
        }
        SideAction::Relay => {
            sandboxed::hook(tmux, std::io::stdin());
            Ok(())
        }
        SideAction::Close { target } => {
            let Closed { line, ok } = side::close::close(tmux, target.as_deref())?;
            super::out_line(&line);
            if ok { Ok(()) } else { Err(Error::new(line)) }
        }
    }
}
