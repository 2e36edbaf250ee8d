//! tmuxmate on another host: installing it there, running it there, and bringing the
//! results of its watch jobs back to the agents on this machine.
//!
//! `call` runs the installed tmuxmate over the host's ssh master (the same master, slots
//! and retries as the remote tmux calls: `crate::tmux::transport::ssh`); `install` copies
//! this binary there (`crate::cli::forward` turns a `--host` command line into one such call);
//! `served` is what
//! runs on the host; `pending` is this machine's list of remote watch jobs and the
//! per-turn step that queues their results once; `jobs` shows those jobs in the local
//! views (`watch list`, the MCP watch resources).
//!
//! Invariants: nothing but our own fixed shell text and words quoted by
//! `crate::sys::shell` reaches the remote shell; bulk text goes over stdin; a command
//! that needs tmuxmate on a host where it is missing is refused naming what works with
//! plain tmux and how to install it.

pub mod call;
pub mod install;
