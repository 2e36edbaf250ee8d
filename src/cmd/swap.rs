//! `tmuxmate swap SRC DST`: a structural swap of two panes; no keystrokes are sent.

use crate::targs;
use crate::tmux::Arg;
use serde::Serialize;

use crate::cli::SwapArgs;
use crate::error::{CliError, CliResult};
use crate::policy;
use crate::tmux::Tmux;
use crate::tmux::panes;

#[derive(Serialize)]
struct SwapJson {
    src: String,
    dst: String,
}

pub fn run(tmux: &Tmux, a: SwapArgs) -> CliResult {
    let caller = policy::caller(tmux);
    let rows = panes::list_all(tmux)?;
    let s = policy::resolve_in(tmux, &rows, Some(&a.src), &caller.agent)?;
    let d = policy::resolve_in(tmux, &rows, Some(&a.dst), &caller.agent)?;
    if s.pane_id == d.pane_id {
        return Err(CliError::usage(format!(
            "refused: {} and {} are the same pane ({}); name two different panes",
            a.src, a.dst, s.pane_id
        )));
    }
    tmux.run(&targs![
        "swap-pane",
        "-d",
        "-s",
        Arg::id(&s.pane_id),
        "-t",
        Arg::id(&d.pane_id)
    ])?;
    if a.json {
        super::out_json(&SwapJson {
            src: s.pane_id.clone(),
            dst: d.pane_id.clone(),
        });
    } else {
        super::out_line(&format!("swapped {} and {}", s.pane_id, d.pane_id));
    }
    Ok(())
}
