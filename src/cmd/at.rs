//! Where a command's operation runs: this machine's tmux server, or another host's
//! tmuxmate (`--host`, through `crate::remote::call::op`). Either way the handler gets
//! the operation's answer, and prints it the same way.
//!
//! Invariant: what a host's tmuxmate said on stderr is shown (made printable) before
//! the answer is printed; nothing of the host's reaches this terminal unprintable
//! (`super::from_host`).

use crate::error::Error;
use crate::op::{Failed, Failure, Operation};
use crate::remote::call;
use crate::tmux::transport::ssh::Remote;
use crate::tmux::{Socket, Tmux};

/// Where an operation runs.
pub enum At<'a> {
    /// This machine's server.
    Here(&'a Tmux),
    /// The tmuxmate on `host`, for its server `socket`.
    Host { host: &'a str, socket: &'a Socket },
}

impl At<'_> {
    /// Run `req` here with `here`, or on the host: its answer.
    pub fn run<R: Operation>(
        &self,
        req: R,
        here: impl FnOnce(&Tmux, &R) -> Result<R::Answer, Error>,
    ) -> Result<R::Answer, Error> {
        match self {
            At::Here(t) => here(t, &req),
            At::Host { .. } => self.call(req).map_err(Error::from),
        }
    }

    /// Run `req` on the host; a failure says how far it got (`agent ask` reports it).
    /// Here it is refused: the caller runs its own path.
    pub fn call<R: Operation>(&self, req: R) -> Result<R::Answer, Failed> {
        let At::Host { host, socket } = self else {
            return Err(Failure::nothing(Error::new(
                "internal: a host call without a host",
            )));
        };
        let remote = Remote::new(host)
            .map_err(Error::usage)
            .map_err(Failure::nothing)?;
        match call::op(&remote, socket, req) {
            Ok(done) => {
                show(&done.said);
                Ok(done.answer)
            }
            Err(f) => {
                show(&f.said);
                Err(f)
            }
        }
    }

    /// This machine's server, for what never runs on another host (`host::route`
    /// refuses those with `--host` first).
    pub fn tmux(&self) -> Result<&Tmux, Error> {
        match self {
            At::Here(t) => Ok(t),
            At::Host { .. } => Err(Error::usage(
                "refused: this command does not run on another host",
            )),
        }
    }
}

/// What a host said on stderr, on ours.
pub fn show(said: &str) {
    if !said.is_empty() {
        eprintln!("{said}");
    }
}
