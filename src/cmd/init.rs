//! `tmuxmate init tmux|bind`: the snippet (rendered by `crate::install::snippet`), and the
//! key bindings the snippet asks for while tmux loads it (and the followers of the hosts
//! it names: `crate::state::hosts`).

use crate::cli::InitWhat;
use crate::error::CliResult;
use crate::install::snippet::render_snippet;

pub fn run(tmux: &crate::tmux::Tmux, what: InitWhat) -> CliResult {
    match what {
        InitWhat::Tmux => super::out(&render_snippet()),
        // Unattended (run by the snippet while tmux loads its configuration): fail soft.
        InitWhat::Bind => {
            match crate::install::bindings::bind_all(tmux) {
                Ok(lines) => {
                    super::out(&lines.iter().map(|l| format!("{l}\n")).collect::<String>())
                }
                Err(e) => crate::sys::state::log(&format!("init bind: {}", e.msg)),
            }
            // The hosts named so far; the client-attached hook starts those named later.
            crate::state::hosts::ensure_named(tmux);
        }
    }
    Ok(())
}
