//! `tmuxmate paste`: multi-line text as one bracketed paste, then at most one Enter.
//!
//! Invariants: the payload is sanitized so it cannot end the bracketed paste early; the
//! buffer is deleted even on failure; `--enter` sends exactly one Enter after the settle
//! delay (agent TUIs such as Codex turn an Enter inside a paste burst into a newline).

use crate::targs;
use crate::tmux::Arg;
use std::io::Read;
use std::time::Duration;

use serde::Serialize;

use crate::cli::PasteArgs;
use crate::error::{CliError, CliResult};
use crate::input;
use crate::policy;
use crate::tmux::Tmux;

pub const DEFAULT_SETTLE_MS: u64 = crate::tmux::options::PASTE_SETTLE_MS.default_number();

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PasteJson<'a> {
    target: String,
    pane_id: &'a str,
    bytes: usize,
    lines: usize,
    sanitized: usize,
    enter: bool,
}

/// Bound on text read from a file or stdin (a 16 MiB paste is surely a mistake).
const MAX_INPUT: u64 = 16 << 20;

/// The bytes of `--file F`, or of stdin when F is `-`.
pub fn read_source(f: &std::path::Path) -> Result<Vec<u8>, CliError> {
    let mut b = Vec::new();
    if f == std::path::Path::new("-") {
        std::io::stdin()
            .take(MAX_INPUT + 1)
            .read_to_end(&mut b)
            .map_err(|e| CliError::new(format!("cannot read stdin: {e}")))?;
    } else {
        std::fs::File::open(f)
            .and_then(|h| h.take(MAX_INPUT + 1).read_to_end(&mut b))
            .map_err(|e| CliError::new(format!("cannot read --file {}: {e}", f.display())))?;
    }
    if b.len() as u64 > MAX_INPUT {
        return Err(CliError::usage("refused: the text is larger than 16 MiB"));
    }
    Ok(b)
}

fn read_text(a: &PasteArgs) -> Result<String, CliError> {
    let raw = match (&a.file, a.text.as_deref()) {
        (Some(f), _) => read_source(f)?,
        (None, Some("-")) => read_source(std::path::Path::new("-"))?,
        (None, Some(t)) => t.as_bytes().to_vec(),
        (None, None) => {
            return Err(CliError::usage(
                "nothing to paste: give the text (after `--` if it starts with `-`), --file F, or - to read stdin",
            ));
        }
    };
    String::from_utf8(raw).map_err(|_| {
        CliError::usage("refused: the text is not valid UTF-8; paste takes text, not binary data")
    })
}

pub fn settle_ms(tmux: &Tmux, flag: Option<u64>) -> u64 {
    flag.or_else(|| {
        tmux.run(&[
            "show-options",
            "-gqv",
            crate::tmux::options::PASTE_SETTLE_MS.name,
        ])
        .ok()
        .and_then(|v| v.trim().parse().ok())
    })
    .unwrap_or(DEFAULT_SETTLE_MS)
}

pub fn run(tmux: &Tmux, a: PasteArgs) -> CliResult {
    let text = read_text(&a)?;
    if text.is_empty() {
        return Err(CliError::usage(
            "refused: the text is empty; nothing to paste",
        ));
    }
    let (clean, sanitized) = input::sanitize_paste(&text);
    let p = policy::input_target(
        tmux,
        a.target.as_deref(),
        "paste",
        &format!("paste {} bytes", clean.len()),
    )?;
    if p.dead {
        return Err(CliError::new(format!(
            "refused: pane {} is dead (its program exited); nothing would read the text",
            p.pane_id
        )));
    }
    // paste-buffer bypasses copy mode, but the Enter after it would not.
    if a.enter {
        super::send::ensure_not_in_mode(tmux, &p, false)?;
    }
    input::paste_bytes(tmux, &p.pane_id, clean.as_bytes(), true)?;
    if a.enter {
        std::thread::sleep(Duration::from_millis(settle_ms(tmux, a.settle_ms)));
        tmux.run(&targs!["send-keys", "-t", Arg::id(&p.pane_id), "Enter"])?;
    }
    if a.json {
        super::out_json(&PasteJson {
            target: p.target(),
            pane_id: &p.pane_id,
            bytes: clean.len(),
            lines: clean.lines().count(),
            sanitized,
            enter: a.enter,
        });
    }
    Ok(())
}
