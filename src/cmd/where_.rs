//! `tmuxmate where`: the tty-verified location of the caller, or exit 1 with the reason.

use crate::error::{CliError, CliResult};
use crate::location;
use crate::tmux::{Tmux, version};

pub fn run(tmux: &Tmux, json: bool) -> CliResult {
    version::check(tmux)?;
    match location::read(tmux) {
        Ok(r) => {
            if json {
                super::out_json(&r);
            } else {
                super::out_line(&r.state());
            }
            Ok(())
        }
        Err(e) => {
            let mut c = CliError::new(e.to_string());
            c.kind = "not-in-pane";
            Err(c)
        }
    }
}
