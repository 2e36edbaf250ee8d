//! A structural swap of two panes (`tmuxmate swap`, MCP `tmux_swap`); no keystrokes are sent.

use serde::{Deserialize, Serialize};

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

// Which two panes to swap: the CLI's `swap` flags and positionals (`--json` aside) and
// the MCP `tmux_swap` tool's arguments (`src` and `dst`, both required there; the
// positionals are the CLI's alone). (A plain comment: clap would make a doc comment here
// the `swap --help` text.)
#[derive(clap::Args, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct SwapAsk {
    /// The first pane (as tmux's `swap-pane -s`).
    #[arg(short = 's', long = "src", value_name = "PANE")]
    #[serde(deserialize_with = "super::request::required")]
    pub src: Option<String>,
    /// The second pane (as tmux's `swap-pane -t`).
    #[arg(short = 't', long = "dst", value_name = "PANE")]
    #[serde(deserialize_with = "super::request::required")]
    pub dst: Option<String>,
    /// The same two panes as positionals: `swap SRC DST` (for the ones not given as flags).
    #[arg(value_name = "PANE", num_args = 0..=2)]
    #[serde(skip)]
    pub panes: Vec<String>,
}

impl SwapAsk {
    /// The two panes: each from its flag, else from the positionals in order.
    pub fn pair(&self) -> Result<(String, String), String> {
        let mut pos = self.panes.iter().cloned();
        let src = self.src.clone().or_else(|| pos.next());
        let dst = self.dst.clone().or_else(|| pos.next());
        match (src, dst, pos.next()) {
            (Some(s), Some(d), None) => Ok((s, d)),
            (_, _, Some(extra)) => Err(format!(
                "swap takes two panes; {extra:?} is a third (give SRC DST, or --src SRC --dst DST)"
            )),
            _ => Err("swap needs two panes: `swap SRC DST` or `swap --src SRC --dst DST`".into()),
        }
    }
}

pub fn swap(tmux: &Tmux, a: &SwapAsk) -> Result<Swapped, Error> {
    let (src, dst) = a.pair().map_err(Error::usage)?;
    let (src, dst) = (src.as_str(), dst.as_str());
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
