//! `agent ask` as one operation (CLI `tmuxmate agent ask`, MCP `agent_ask`): start the
//! agent if an adapter is named (or reuse its session), send the message once, wait for
//! the turn, and return the complete reply.
//!
//! Invariants: the three outcomes of the send stay distinct (`deliver::Delivery`): a
//! refusal before Enter is `not-delivered`, an Enter whose prompt was not confirmed is
//! `unconfirmed`, and neither is ever retried; a reply that is not complete by the
//! timeout comes back marked `complete: false`.

use std::path::Path;
use std::time::Duration;

use super::deliver::{self, Delivery};
use super::{adapters, launch, naming, turns};
use crate::error::Error;
use crate::tmux::Tmux;

/// How long a start may wait for the agent's ready screen.
const START_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Request<'a> {
    /// A managed session name, or an adapter (claude, codex, gemini) for `project`.
    pub target: &'a str,
    pub message: &'a str,
    pub project: Option<&'a Path>,
    pub permission_mode: Option<&'a str>,
    pub timeout: Duration,
    pub progress: crate::control::settle::Progress<'a>,
}

/// A failed ask: how far the message got, and why.
pub struct Failed {
    pub delivery: Delivery,
    pub error: Error,
}

impl Failed {
    /// The `--json` form: the error object (`Error::to_json`) and, beside it, how far the
    /// message got (`"delivery"`). A caller that forwarded the ask to another host reads
    /// it back with [`reported`].
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = self.error.to_json();
        v["delivery"] = serde_json::to_value(self.delivery).unwrap_or_default();
        v
    }
}

/// How far a failed ask's message got, from its `--json` form ([`Failed::to_json`]).
/// None: not said (a tmuxmate that predates it), or not one of the three outcomes.
pub fn reported(v: &serde_json::Value) -> Option<Delivery> {
    serde_json::from_value(v.get("delivery")?.clone()).ok()
}

impl From<Error> for Failed {
    fn from(error: Error) -> Failed {
        Failed {
            delivery: Delivery::NotDelivered,
            error,
        }
    }
}

fn project_dir(p: Option<&Path>) -> Result<std::path::PathBuf, Error> {
    match p {
        Some(d) => Ok(d.to_path_buf()),
        None => Ok(std::env::current_dir()?),
    }
}

/// The project root a send checks the session's contract against.
pub fn caller_project(p: Option<&Path>) -> Result<String, Error> {
    let d = project_dir(p)?;
    let proj = naming::project(&d).map_err(|e| {
        Error::new(format!(
            "cannot read project directory {}: {e}",
            d.display()
        ))
    })?;
    Ok(proj.root.to_string_lossy().into_owned())
}

pub fn ask(tmux: &Tmux, r: &Request) -> Result<turns::Reply, Failed> {
    let name = match adapters::by_name(r.target) {
        Some(ad) => {
            let caller = crate::location::address::caller(tmux);
            launch::start(
                tmux,
                &caller,
                &ad,
                &project_dir(r.project)?,
                r.permission_mode,
                START_TIMEOUT,
            )?
            .name
        }
        None => r.target.to_string(),
    };
    deliver::send_staged(
        tmux,
        &name,
        r.message,
        &caller_project(r.project)?,
        r.permission_mode,
    )
    .map_err(|f| Failed {
        delivery: f.delivery,
        error: f.error,
    })?;
    // Delivered: from here on a failure is about reading the reply, not the message.
    turns::wait_with(tmux, &name, r.timeout, r.progress).map_err(|error| Failed {
        delivery: Delivery::Delivered,
        error,
    })
}
