//! The steps the per-turn pipeline (`crate::location::turn`) takes from the capabilities
//! above it, wired here so that location imports none of them: watch results gathered
//! before the decision, and after the answer the status-line counts and the live digest's
//! follower for the agent's transcript.

use crate::harness::Harness;
use crate::location::turn::{Done, Steps};
use crate::tmux::Tmux;

/// A per-turn call's steps; `harness`: the hook's, whose transcript the digest follows.
pub struct PerTurn {
    pub harness: Option<Harness>,
}

impl Steps for PerTurn {
    fn gather(&self, _: &Tmux) {
        crate::watch::turn::gather();
    }

    fn after(&self, done: &Done) {
        crate::watch::turn::delivered(done.delivered);
        let fmt = self
            .harness
            .and_then(crate::side::digest::Format::of_harness);
        if let (Some(r), Some(tp), Some(fmt)) = (done.reading, done.transcript, fmt) {
            // By socket path: when the follower already runs, this costs no tmux call.
            if let Err(e) =
                crate::side::digest::ensure_follower(done.tmux, &r.pane_id, tp, Some(fmt))
            {
                crate::sys::state::log(&format!("hook {:?}: digest follower: {e}", self.harness));
            }
        }
    }
}
