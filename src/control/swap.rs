//! A structural swap of two panes (`tmuxmate swap`, MCP `tmux_swap`); no keystrokes are sent.

use serde::Serialize;

use crate::control::policy;
use crate::error::Error;
use crate::targs;
use crate::tmux::Arg;
use crate::tmux::Tmux;
use crate::tmux::panes;

#[derive(Serialize, Debug)]
pub struct Swapped {
    pub src: String,
    pub dst: String,
}

pub fn swap(tmux: &Tmux, src: &str, dst: &str) -> Result<Swapped, Error> {
    let caller = crate::location::address::caller(tmux);
    let rows = panes::list_all(tmux)?;
    let s = policy::resolve_in(tmux, &rows, Some(src), &caller.agent)?;
    let d = policy::resolve_in(tmux, &rows, Some(dst), &caller.agent)?;
    if s.pane_id == d.pane_id {
        return Err(Error::usage(format!(
            "refused: {src} and {dst} are the same pane ({}); name two different panes",
            s.pane_id
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
    Ok(Swapped {
        src: s.pane_id.clone(),
        dst: d.pane_id.clone(),
    })
}
