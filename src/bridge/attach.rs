//! A managed agent session as a person reaches it: attaching this terminal to it, and the
//! session name an adapter gets for a project directory.
//!
//! Invariants: attaching inside tmux switches this client (no nested tmux); outside tmux it
//! replaces this process with `tmux attach-session`, so it returns only on failure; a
//! session is named only for one of the known adapters.

use std::path::Path;

use crate::error::Error;
use crate::targs;
use crate::tmux::{Arg, Tmux};

use super::{adapters, naming, session};

/// `agent attach NAME`: show the agent's session in this terminal.
pub fn attach(tmux: &Tmux, name: &str) -> Result<(), Error> {
    let (c, _) = session::resolve(tmux, name)?;
    if std::env::var_os("TMUX").is_some() {
        tmux.run(&targs!["switch-client", "-t", Arg::id(&c.session_id)])?;
        Ok(())
    } else {
        Err(Error::new(format!(
            "could not attach: {}",
            tmux.exec_interactive(&targs!["attach-session", "-t", Arg::id(&c.session_id)])
        )))
    }
}

/// `agent name`: the session name `adapter` gets for the project in `dir`.
pub fn name_for(adapter: &str, dir: &Path) -> Result<String, Error> {
    let ad = adapters::by_name(adapter).ok_or_else(|| {
        Error::usage(format!(
            "unknown adapter {adapter:?}: use one of claude, codex, gemini"
        ))
    })?;
    let p = naming::project(dir)
        .map_err(|e| Error::new(format!("cannot read {}: {e}", dir.display())))?;
    Ok(naming::name(ad.prefix, &p))
}
