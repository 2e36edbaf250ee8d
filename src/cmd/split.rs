//! `tmuxmate split` and `tmuxmate new-window`: call `control::split` and print the new pane.

use crate::cli::{NewWindowArgs, SplitArgs};
use crate::control::create::Created;
use crate::control::split;
use crate::error::CliResult;
use crate::tmux::Tmux;

fn print(c: &Created, json: bool) {
    if json {
        super::out_json(c);
    } else {
        super::out_line(&format!("{} {}", c.pane_id, c.target));
    }
}

pub fn run_split(tmux: &Tmux, a: SplitArgs) -> CliResult {
    let c = split::split(
        tmux,
        &split::SplitRequest {
            target: a.target.as_deref(),
            horizontal: a.horizontal,
            size: a.size.as_deref(),
            cwd: a.cwd.as_deref(),
            cmd: &a.cmd,
        },
    )?;
    print(&c, a.json);
    Ok(())
}

pub fn run_new_window(tmux: &Tmux, a: NewWindowArgs) -> CliResult {
    let c = split::new_window(
        tmux,
        a.target.as_deref(),
        a.name.as_deref(),
        a.cwd.as_deref(),
        &a.cmd,
    )?;
    print(&c, a.json);
    Ok(())
}
