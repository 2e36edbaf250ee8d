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

/// The line to type: the argument, else `--file F` (`-` = stdin), without one trailing
/// newline (what `echo` and editors end a file with).
fn read_line(a: &SendArgs) -> Result<String, CliError> {
    let src = match (&a.file, a.text.as_deref()) {
        (Some(f), _) => Some(f.as_path()),
        (None, Some("-")) => Some(std::path::Path::new("-")),
        (None, Some(t)) => return Ok(t.to_string()),
        (None, None) => {
            return Err(CliError::usage(
                "nothing to send: give the text (after `--` if it starts with `-`), --file F, or - to read stdin",
            ));
        }
    };
    let raw = super::paste::read_source(src.unwrap_or(std::path::Path::new("-")))?;
    let mut t = String::from_utf8(raw)
        .map_err(|_| CliError::usage("refused: the text is not valid UTF-8"))?;
    if t.ends_with('\n') {
        t.pop();
        if t.ends_with('\r') {
            t.pop();
        }
    }
    Ok(t)
}

pub fn run(tmux: &Tmux, a: SendArgs) -> CliResult {
    let text = read_line(&a)?;
    input::validate_line(&text)?;
    let p = policy::input_target(
        tmux,
        a.target.as_deref(),
        "send",
        &format!("type {} bytes of text", text.len()),
    )?;
    if p.dead {
        return Err(CliError::new(format!(
            "refused: pane {} is dead (its program exited); nothing would read the text",
            p.pane_id
        )));
    }
    ensure_not_in_mode(tmux, &p, a.cancel_mode)?;
    input::paste_bytes(tmux, &p.pane_id, text.as_bytes(), false)?;
    if a.enter {
        tmux.run(&targs!["send-keys", "-t", Arg::id(&p.pane_id), "Enter"])?;
    }
    if a.json {
        super::out_json(&SendJson {
            target: p.target(),
            pane_id: &p.pane_id,
            sent: text.len(),
            enter: a.enter,
        });
    }
    Ok(())
}
