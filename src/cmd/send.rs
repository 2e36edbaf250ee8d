//! `tmuxmate send`: one line of literal text, byte-exact, optionally followed by Enter.
//!
//! Invariants: the text goes through a buffer (never `send-keys` arguments), a pane in
//! copy or view mode is refused unless `--cancel-mode` (its keys would be eaten and a `q`
//! would leave the mode), and Enter is its own key press.

use crate::targs;
use crate::tmux::Arg;
use serde::Serialize;

use crate::cli::SendArgs;
use crate::error::{CliError, CliResult};
use crate::input;
use crate::policy;
use crate::tmux::Tmux;
use crate::tmux::panes::PaneInfo;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SendJson<'a> {
    target: String,
    pane_id: &'a str,
    sent: usize,
    enter: bool,
}

/// Refuse (or leave) copy/view mode before typing into a pane.
pub fn ensure_not_in_mode(tmux: &Tmux, p: &PaneInfo, cancel: bool) -> CliResult {
    if !p.in_mode {
        return Ok(());
    }
    if !cancel {
        return Err(CliError::new(format!(
            "refused: pane {} is in {} (typed keys would be eaten by the mode, and a 'q' would leave it); \
             pass --cancel-mode to leave the mode first",
            p.pane_id,
            if p.mode.is_empty() { "a mode" } else { &p.mode }
        )));
    }
    tmux.run(&targs![
        "send-keys",
        "-t",
        Arg::id(&p.pane_id),
        "-X",
        "cancel"
    ])?;
    Ok(())
}

pub fn run(tmux: &Tmux, a: SendArgs) -> CliResult {
    input::validate_line(&a.text)?;
    let p = policy::input_target(
        tmux,
        a.target.as_deref(),
        "send",
        &format!("type {} bytes of text", a.text.len()),
    )?;
    if p.dead {
        return Err(CliError::new(format!(
            "refused: pane {} is dead (its program exited); nothing would read the text",
            p.pane_id
        )));
    }
    ensure_not_in_mode(tmux, &p, a.cancel_mode)?;
    input::paste_bytes(tmux, &p.pane_id, a.text.as_bytes(), false)?;
    if a.enter {
        tmux.run(&targs!["send-keys", "-t", Arg::id(&p.pane_id), "Enter"])?;
    }
    if a.json {
        super::out_json(&SendJson {
            target: p.target(),
            pane_id: &p.pane_id,
            sent: a.text.len(),
            enter: a.enter,
        });
    }
    Ok(())
}
