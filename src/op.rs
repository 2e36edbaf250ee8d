//! An operation as another host's tmuxmate runs it: its name on the wire, its answer type,
//! how long it may take there, and what must be given before it may run there. Each
//! capability's request types implement [`Operation`]; `crate::remote::call::op` sends
//! one to a host's hidden `tmuxmate call`, and `cmd::call` runs it there with the same
//! function the command line runs here.
//!
//! Invariants: a request and its answer are one serde type each (the request with
//! `deny_unknown_fields`, so a field a host does not know is refused, never dropped);
//! the answer is the operation's `--json` document; a failure says how far the call got
//! ([`Reached`]): nothing ran, the host's own error document, or not known. That is a
//! fact of this machine or the host's word, never a guess.

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::Error;

/// The time a host gets besides what the operation waits for on its own (an ssh
/// session, a slow host).
pub const MARGIN: Duration = Duration::from_secs(60);

/// One request type that another host's tmuxmate can run.
pub trait Operation: Serialize + DeserializeOwned {
    /// The name `call` knows it by (`capability.verb`).
    const NAME: &'static str;
    /// What it answers: its `--json` document.
    type Answer: Serialize + DeserializeOwned;

    /// How long it may wait on its own (an agent's turn, a ready screen); a host call
    /// gets this plus [`MARGIN`].
    fn waits(&self) -> Duration {
        Duration::from_secs(30)
    }

    /// A refusal before it is sent: a path the host reads must be given (this machine's
    /// current directory means nothing there).
    fn for_host(&self) -> Result<(), Error> {
        Ok(())
    }

    /// The request as a host is sent it: what only this machine can read (a file, stdin)
    /// read in, bounded, as text.
    fn read_in(self) -> Result<Self, Error> {
        Ok(self)
    }
}

/// How far a failed call to a host got.
#[derive(Debug)]
pub enum Reached {
    /// Nothing ran there: refused here, no tmuxmate there, or one that does not know
    /// the operation.
    Nothing,
    /// The host's tmuxmate answered with its error document (`Error::to_json`, and what
    /// the operation adds beside it).
    Host(serde_json::Value),
    /// Not known: the call ended before an answer (a lost connection, a crash, an answer
    /// that is not the operation's).
    Unknown,
}

/// A call to a host that did not give the operation's answer.
#[derive(Debug)]
pub struct Failure {
    pub error: Error,
    pub reached: Reached,
    /// What the host's tmuxmate said on stderr beside it, made printable.
    pub said: String,
}

/// How a failure travels: boxed, so a `Result` of an answer stays small.
pub type Failed = Box<Failure>;

impl Failure {
    pub fn nothing(error: Error) -> Failed {
        Box::new(Failure {
            error,
            reached: Reached::Nothing,
            said: String::new(),
        })
    }
}

impl From<Failed> for Error {
    fn from(f: Failed) -> Error {
        f.error
    }
}

/// A path the host must be given: the refusal when it is not.
pub fn needs_project(what: &str, project: Option<&std::path::Path>) -> Result<(), Error> {
    if project.is_some() {
        return Ok(());
    }
    Err(Error::usage(format!(
        "refused: {what} with --host needs --project DIR (MCP: project), a directory on the host (this machine's current directory means nothing there)"
    )))
}
