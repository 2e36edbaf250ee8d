//! Watch jobs: background commands whose watch outlives the agent, tmuxmate and the
//! poller, with results delivered at the notify agent's next turn, exactly once.
//!
//! `job` holds the state and the one way a job ends; `poller` the per-server loop and
//! re-attaching.

pub mod job;
pub mod poller;
pub mod start;
pub mod view;
