//! `tmuxmate digest show|attach` (and the hidden `follow`, `bench`): thin handlers over
//! `crate::side::digest::show` and the follower.
//!
//! Invariants: `show` prints exactly `digest::render::render` (the text a side agent is
//! given), or with `--json` that same text beside the digest fields; `follow` is
//! unattended, so it logs its failures and exits 0.

use crate::cli::{DigestAction, DigestFormat};
use crate::error::CliResult;
use crate::side::digest::{Format, follower, show};
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

pub fn run(tmux: &Tmux, action: DigestAction) -> CliResult {
    match action {
        DigestAction::Show(a) => {
            let shown = show::show(
                tmux,
                a.target.as_deref(),
                a.transcript.as_deref(),
                format_of(a.format),
                a.turns.as_deref(),
            )?;
            if a.json {
                super::out_json(&shown);
            } else {
                super::out(&shown.text);
            }
        }
        DigestAction::Attach {
            target,
            transcript,
            format,
            json,
        } => {
            let a = show::attach(tmux, &target, &transcript, format_of(format))?;
            if json {
                super::out_json(&a);
            } else {
                super::out_line(&format!(
                    "{} follows {} for pane {}",
                    if a.started {
                        "a new follower"
                    } else {
                        "the running follower"
                    },
                    transcript.display(),
                    a.pane_id
                ));
            }
        }
        DigestAction::Follow { target } => {
            if let Err(e) = follower::run(tmux, &target) {
                state::log(&format!("digest follower {target}: {e}"));
            }
        }
        DigestAction::Bench { transcript, format } => {
            let b = show::bench(&transcript, format_of(format))?;
            super::out_line(&format!(
                "bytes {} lines {} turns {} seconds {:.3} MB/s {:.1}",
                b.bytes, b.lines, b.turns, b.seconds, b.mb_per_s
            ));
        }
    }
    Ok(())
}
