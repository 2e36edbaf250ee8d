//! `tmuxmate digest show|attach` (and the hidden `follow`, `bench`).
//!
//! Invariants: `show` prints exactly `digest::render::render` (the text a side agent is
//! given), or with `--json` that same text beside the digest fields; a pane is resolved
//! through the target policy and its transcript comes from its own options, never a
//! guess; an unreadable format is refused with a clear message, never folded as another
//! format; `follow` is unattended, so it logs its failures and exits 0.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::cli::{DigestAction, DigestFormat, DigestShowArgs};
use crate::control::policy;
use crate::digest::follower::{self, OPT_TURNS};
use crate::digest::{self, Fold, Format, render};
use crate::error::{CliError, CliResult};
use crate::sys::state;
use crate::tmux::Tmux;

fn format_of(f: Option<DigestFormat>) -> Option<Format> {
    f.map(|f| match f {
        DigestFormat::Claude => Format::Claude,
        DigestFormat::Codex => Format::Codex,
        DigestFormat::Dsh => Format::Dsh,
        DigestFormat::Events => Format::Events,
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ShowJson<'a> {
    transcript: String,
    pane_id: Option<String>,
    format: Option<Format>,
    /// Bytes folded (for `.zstd`, compressed bytes).
    offset: u64,
    /// Bytes after `offset` not folded yet (an unfinished last line or frame).
    pending_bytes: u64,
    digest: &'a digest::model::Digest,
    /// The rendered digest: what `digest show` prints and a side agent reads.
    text: String,
    /// The status-line text (what the follower pushes into `@tmuxmate-status`).
    status: String,
}

/// Fold `path` into `fold` with errors a person can act on.
fn fold_file(path: &Path, fold: &mut Fold) -> CliResult {
    match fold.update(path) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(CliError::new(format!(
                "transcript {} does not exist",
                path.display()
            )));
        }
        Err(e) => {
            return Err(CliError::new(format!(
                "cannot read transcript {}: {e}",
                path.display()
            )));
        }
    }
    if fold.current_format().is_none() && fold.digest.counts.lines > 0 {
        return Err(CliError::new(format!(
            "cannot tell the format of {} from its first lines (not Claude, Codex, dsh or \
             tmuxmate events JSONL); pass --format claude|codex|dsh|events",
            path.display()
        )));
    }
    Ok(())
}

fn show(tmux: &Tmux, a: DigestShowArgs) -> CliResult {
    let format = format_of(a.format);
    let mut turns_opt: Option<String> = a.turns.clone();
    let mut pane_id = None;
    let (path, mut fold) = match (&a.target, &a.transcript) {
        (Some(t), _) => {
            let pane = policy::resolve(tmux, Some(t), "cli")?;
            let pd = digest::pane::load(tmux, &pane.pane_id, format)?;
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
            (p.clone(), Fold::new(format))
        }
        (None, None) => {
            return Err(CliError::usage(
                "refused: say which session: -t PANE (its recorded transcript) or --transcript FILE",
            ));
        }
    };
    let turns = digest::turns_limit(turns_opt.as_deref()).map_err(|e| {
        CliError::usage(format!(
            "{} {e}",
            if a.turns.is_some() {
                "--turns".to_string()
            } else {
                format!("tmux option {OPT_TURNS}:")
            }
        ))
    })?;
    fold_file(&path, &mut fold)?;
    let text = render::render(&fold.digest, turns);
    if a.json {
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        super::out_json(&ShowJson {
            transcript: path.to_string_lossy().into_owned(),
            pane_id,
            format: fold.current_format(),
            offset: fold.offset,
            pending_bytes: len.saturating_sub(fold.offset),
            digest: &fold.digest,
            status: render::status_line(&fold.digest),
            text,
        });
    } else {
        super::out(&text);
    }
    Ok(())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AttachJson {
    pane_id: String,
    transcript: String,
    format: Option<Format>,
    started: bool,
}

fn attach(
    tmux: &Tmux,
    target: &str,
    transcript: &Path,
    format: Option<Format>,
    json: bool,
) -> CliResult {
    let pane = policy::resolve(tmux, Some(target), "cli")?;
    let started = follower::ensure_follower(tmux, &pane.pane_id, transcript, format)
        .map_err(CliError::new)?;
    if json {
        super::out_json(&AttachJson {
            pane_id: pane.pane_id,
            transcript: transcript.to_string_lossy().into_owned(),
            format,
            started,
        });
    } else {
        super::out_line(&format!(
            "{} follows {} for pane {}",
            if started {
                "a new follower"
            } else {
                "the running follower"
            },
            transcript.display(),
            pane.pane_id
        ));
    }
    Ok(())
}

fn bench(path: &Path, format: Option<Format>) -> CliResult {
    let mut fold = Fold::new(format);
    let t0 = Instant::now();
    fold_file(path, &mut fold)?;
    let secs = t0.elapsed().as_secs_f64().max(1e-9);
    let mb = fold.offset as f64 / 1e6;
    super::out_line(&format!(
        "bytes {} lines {} turns {} seconds {secs:.3} MB/s {:.1}",
        fold.offset,
        fold.digest.counts.lines,
        fold.digest.counts.turns,
        mb / secs
    ));
    Ok(())
}

pub fn run(tmux: &Tmux, action: DigestAction) -> CliResult {
    match action {
        DigestAction::Show(a) => show(tmux, a),
        DigestAction::Attach {
            target,
            transcript,
            format,
            json,
        } => attach(tmux, &target, &transcript, format_of(format), json),
        DigestAction::Follow { target } => {
            if let Err(e) = follower::run(tmux, &target) {
                state::log(&format!("digest follower {target}: {e}"));
            }
            Ok(())
        }
        DigestAction::Bench { transcript, format } => bench(&transcript, format_of(format)),
    }
}
