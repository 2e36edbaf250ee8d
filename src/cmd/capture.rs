//! `tmuxmate capture`: a pane's screen or scrollback within a byte budget.
//!
//! Invariants: the target is resolved by `policy` and only its `%N` id reaches tmux; the
//! text is cut to the budget keeping the newest lines (see `crate::capture`), a cut is
//! marked (`[... N earlier bytes truncated ...]` first line, `truncated: true` in JSON);
//! every capture is stored as a snapshot before it is printed.
//!
//! JSON: `{target, paneId, text, lineCount, truncated}` where `target` is the pane's
//! `session:window.pane` (for reading only) and `text` has no trailing newline.

use serde::Serialize;

use crate::capture::{self, Range};
use crate::cli::CaptureArgs;
use crate::error::CliResult;
use crate::policy;
use crate::snapshot;
use crate::tmux::Tmux;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaptureJson {
    pub target: String,
    pub pane_id: String,
    pub text: String,
    pub line_count: usize,
    pub truncated: bool,
}

pub fn run(tmux: &Tmux, a: CaptureArgs) -> CliResult {
    let budget = capture::budget(tmux, a.max_bytes)?;
    // The agent address only matters when no -t is given (the "newest pane we created"
    // fallback); finding it costs a tty lookup, so skip it when a target is named.
    let agent = match a.target {
        Some(_) => String::new(),
        None => policy::caller(tmux).agent,
    };
    let pane = policy::resolve(tmux, a.target.as_deref(), &agent)?;
    let range = match (a.all, a.lines) {
        (true, _) => Range::All,
        (false, Some(n)) => Range::Lines(n),
        (false, None) => Range::Screen,
    };
    let raw = capture::capture_pane(tmux, &pane.pane_id, range, a.ansi, a.join)?;
    let b = capture::bound(capture::trim_trailing_blank(&raw), budget);
    let target = pane.target();
    if let Err(e) = snapshot::record(tmux, &pane.pane_id, &target, &b.text, b.truncated) {
        // The capture itself succeeded; losing its stored copy must not hide it.
        eprintln!("tmuxmate: warning: {e}");
    }
    if a.json {
        super::out_json(&CaptureJson {
            target,
            pane_id: pane.pane_id.clone(),
            line_count: b.line_count(),
            truncated: b.truncated,
            text: b.text,
        });
    } else {
        let text = b.render();
        if !text.is_empty() {
            super::out_line(&text);
        }
    }
    Ok(())
}
