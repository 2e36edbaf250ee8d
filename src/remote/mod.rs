//! tmuxmate on another host: installing it there, and running it there.
//!
//! `call` runs the installed tmuxmate over the host's ssh master (the same master, slots
//! and retries as the remote tmux calls: `crate::tmux::transport::ssh`), and sends it one
//! operation as JSON (`call::op`, run there by the hidden `tmuxmate call`); `install`
//! copies this binary there. (Remote watch jobs: `crate::watch::remote`.)
//!
//! Invariants: nothing but our own fixed shell text and words quoted by
//! `crate::sys::shell` reaches the remote shell; bulk text goes over stdin; a command
//! that needs tmuxmate on a host where it is missing is refused naming what works with
//! plain tmux and how to install it.

pub mod call;
pub mod install;
