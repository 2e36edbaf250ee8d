//! `tmuxmate where`: the tty-verified location of the caller (with `--json`, also its
//! agent address), or exit 1 with the reason.

use crate::error::{CliError, CliResult};
use crate::location;
use crate::tmux::{Tmux, version};

pub fn run(tmux: &Tmux, json: bool) -> CliResult {
    version::check(tmux)?;
    match location::read(tmux) {
        Ok(r) => {
            if json {
                // Plus the caller's agent address: what `--notify` and the ledger use.
                let mut v = serde_json::to_value(&r).unwrap_or_default();
                if let Some(m) = v.as_object_mut() {
                    m.insert(
                        "agent".into(),
                        crate::control::policy::agent_address(Some(&r)).into(),
                    );
                }
                super::out_json(&v);
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
