//! tmux: the snippet file (`tmuxmate init tmux`'s text, this binary's path filled in) and
//! one marked `source-file` line in the user's tmux.conf (none when TPM loads tmuxmate).
//! User-level only: `--project` does not apply to tmux.

use super::{Ctx, Kind, Target, Which};

/// A line every snippet carries (its header), identifying the file as ours.
pub const SNIPPET_MARKER: &str = "# tmuxmate - tmux snippet.";

pub fn targets(ctx: &Ctx) -> Vec<Target> {
    let user = super::paths::Paths {
        home: ctx.paths.home.clone(),
        project: None,
    };
    let snippet = user.tmux_snippet();
    vec![
        Target {
            which: Which::Tmux,
            path: snippet.clone(),
            what: "tmux snippet",
            kind: Kind::Whole {
                content: crate::install::snippet::render_snippet_for(&ctx.bin),
                marker: SNIPPET_MARKER,
            },
        },
        Target {
            which: Which::Tmux,
            path: user.tmux_conf(),
            what: "source-file line for the snippet",
            kind: Kind::TmuxConf { snippet },
        },
    ]
}
