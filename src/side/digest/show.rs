//! `digest show|attach|bench`: a transcript folded on demand, the follower started for a
//! pane, and the folding speed measured.
//!
//! Owns finding the transcript to show (a pane's recorded one, or a file named outright),
//! the turn limit (`--turns`, else the pane's or the global `@tmuxmate-digest-turns`) and
//! the errors of folding a file. Invariants: a pane is resolved through the target policy
//! and its transcript comes from its own options, never a guess; an unreadable format is
//! refused with a clear message, never folded as another format; `show`'s `text` is
//! exactly `render::render`, what a side agent is given.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use super::follower::{self, OPT_TURNS};
use super::{Fold, Format, model, render};
use crate::control::policy;
use crate::error::Error;
use crate::tmux::Tmux;

/// What `digest show` found (its `--json` shape).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shown {
    pub transcript: String,
    pub pane_id: Option<String>,
    pub format: Option<Format>,
    /// Bytes folded (for `.zstd`, compressed bytes).
    pub offset: u64,
    /// Bytes after `offset` not folded yet (an unfinished last line or frame).
    pub pending_bytes: u64,
    pub digest: model::Digest,
    /// The rendered digest: what `digest show` prints and a side agent reads.
    pub text: String,
    /// The status-line text (what the follower pushes into `@tmuxmate-status`).
    pub status: String,
}

/// Fold `path` into `fold` with errors a person can act on.
pub fn fold_file(path: &Path, fold: &mut Fold) -> Result<(), Error> {
    match fold.update(path) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::new(format!(
                "transcript {} does not exist",
                path.display()
            )));
        }
        Err(e) => {
            return Err(Error::new(format!(
                "cannot read transcript {}: {e}",
                path.display()
            )));
        }
    }
    if fold.current_format().is_none() && fold.digest.counts.lines > 0 {
        return Err(Error::new(format!(
            "cannot tell the format of {} from its first lines (not Claude, Codex, dsh or \
             tmuxmate events JSONL); pass --format claude|codex|dsh|events",
            path.display()
        )));
    }
    Ok(())
}

/// `digest show`: the session of pane `target` (its recorded transcript) or the file
/// `transcript`, folded with `format` (detected when none), `turns` the `--turns` value.
pub fn show(
    tmux: &Tmux,
    target: Option<&str>,
    transcript: Option<&Path>,
    format: Option<Format>,
    turns: Option<&str>,
) -> Result<Shown, Error> {
    let mut turns_opt: Option<String> = turns.map(str::to_string);
    let mut pane_id = None;
    let (path, mut fold) = match (target, transcript) {
        (Some(t), _) => {
            let pane = policy::resolve(tmux, Some(t), "cli")?;
            let pd = super::pane::load(tmux, &pane.pane_id, format)?;
            if turns_opt.is_none() {
                turns_opt = pd.turns_option;
            }
            pane_id = Some(pane.pane_id);
            (pd.transcript, pd.fold)
        }
        (None, Some(p)) => {
            if turns_opt.is_none() {
                // Soft: without a server the default applies.
                turns_opt = tmux
                    .run(&["show-options", "-gqv", OPT_TURNS])
                    .ok()
                    .map(|s| s.trim().to_string());
            }
            (p.to_path_buf(), Fold::new(format))
        }
        (None, None) => {
            return Err(Error::usage(
                "refused: say which session: -t PANE (its recorded transcript) or --transcript FILE",
            ));
        }
    };
    let limit = super::turns_limit(turns_opt.as_deref()).map_err(|e| {
        Error::usage(format!(
            "{} {e}",
            if turns.is_some() {
                "--turns".to_string()
            } else {
                format!("tmux option {OPT_TURNS}:")
            }
        ))
    })?;
    fold_file(&path, &mut fold)?;
    let text = render::render(&fold.digest, limit);
    let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    Ok(Shown {
        transcript: path.to_string_lossy().into_owned(),
        pane_id,
        format: fold.current_format(),
        offset: fold.offset,
        pending_bytes: len.saturating_sub(fold.offset),
        status: render::status_line(&fold.digest),
        digest: fold.digest,
        text,
    })
}

/// What `digest attach` did (its `--json` shape).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Attached {
    pub pane_id: String,
    pub transcript: String,
    pub format: Option<Format>,
    /// A new follower was started (false: the running one already follows it).
    pub started: bool,
}

/// `digest attach`: make sure a follower folds `transcript` for pane `target`.
pub fn attach(
    tmux: &Tmux,
    target: &str,
    transcript: &Path,
    format: Option<Format>,
) -> Result<Attached, Error> {
    let pane = policy::resolve(tmux, Some(target), "cli")?;
    let started =
        follower::ensure_follower(tmux, &pane.pane_id, transcript, format).map_err(Error::new)?;
    Ok(Attached {
        pane_id: pane.pane_id,
        transcript: transcript.to_string_lossy().into_owned(),
        format,
        started,
    })
}

/// What `digest bench` measured.
pub struct Bench {
    pub bytes: u64,
    pub lines: u64,
    pub turns: u64,
    pub seconds: f64,
    pub mb_per_s: f64,
}

/// `digest bench`: fold `path` once from the start and time it.
pub fn bench(path: &Path, format: Option<Format>) -> Result<Bench, Error> {
    let mut fold = Fold::new(format);
    let t0 = Instant::now();
    fold_file(path, &mut fold)?;
    let secs = t0.elapsed().as_secs_f64().max(1e-9);
    let mb = fold.offset as f64 / 1e6;
    Ok(Bench {
        bytes: fold.offset,
        lines: fold.digest.counts.lines,
        turns: fold.digest.counts.turns,
        seconds: secs,
        mb_per_s: mb / secs,
    })
}
