//! The digest of the agent session running in a pane.
//!
//! Owns: reading the transcript path, format and turn limit recorded in the pane's options
//! and folding the transcript, starting from the follower's cache when it matches (so only
//! appended lines are read). Shared by `digest show -t` and the side chat, so what a person
//! inspects is what the side agent is given.

use crate::targs;
use crate::tmux::Arg;
use std::path::PathBuf;

use super::follower::{self, OPT_FORMAT, OPT_TRANSCRIPT, OPT_TURNS};
use super::{Fold, Format};
use crate::error::Error;
use crate::tmux::Tmux;
use crate::tmux::format::{parse_records, record_format};

pub struct PaneDigest {
    pub transcript: PathBuf,
    pub fold: Fold,
    /// The raw `@tmuxmate-digest-turns` value (validated by the caller).
    pub turns_option: Option<String>,
}

/// Load (and bring up to date) the digest of `pane_id`; `format` overrides the recorded one.
pub fn load(tmux: &Tmux, pane_id: &str, format: Option<Format>) -> Result<PaneDigest, Error> {
    let fmt = record_format(&[OPT_TRANSCRIPT, OPT_FORMAT, OPT_TURNS]);
    let out = tmux.run_bytes(
        &targs![
            "display-message",
            "-p",
            "-t",
            Arg::id(pane_id),
            Arg::ours(&fmt)
        ],
        None,
    )?;
    let row = parse_records(&out, 3)
        .map_err(Error::new)?
        .into_iter()
        .next()
        .unwrap_or_default();
    let transcript = row.first().cloned().unwrap_or_default();
    if transcript.is_empty() {
        return Err(Error::new(format!(
            "pane {pane_id} has no recorded transcript ({OPT_TRANSCRIPT} is unset); the per-turn \
             hook records it, or run `tmuxmate digest attach -t {pane_id} --transcript FILE`"
        )));
    }
    let format = format.or_else(|| row.get(1).and_then(|f| Format::parse(f)));
    let mut fold = follower::socket_path(tmux)
        .ok()
        .and_then(|s| follower::load_cache(&s, pane_id, &transcript, format))
        .unwrap_or_else(|| Fold::new(format));
    let path = PathBuf::from(&transcript);
    match fold.update(&path) {
        Ok(_) => {}
        // The harness creates its transcript with the first prompt: an empty digest, not
        // an error (the side chat works before the main agent finished a turn).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(Error::new(format!(
                "cannot read transcript {}: {e}",
                path.display()
            )));
        }
    }
    Ok(PaneDigest {
        transcript: path,
        fold,
        turns_option: row.get(2).cloned().filter(|s| !s.is_empty()),
    })
}
