//! The refusal or failure a command hands back: what went wrong, for people and for
//! `--json`.
//!
//! Invariant: every message names what went wrong and what to do; the domain says what
//! kind of failure it is (a [`Kind`]: a refusal is built as one with [`Error::refused`],
//! never recognised by its wording), and only `cmd::entry` turns a kind into an exit code
//! (2 for `usage`, 1 for everything else). `msg` is for people; the mechanics (a tmux
//! argv, its raw stderr) travel in `detail`, which goes to the log and to `--verbose`,
//! never into the main message. `kind` and `hint` are what `--json` reports.

use crate::tmux::TmuxError;

/// What kind of failure: the class `--json` reports as `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bad arguments: the caller must change the command (exit 2).
    Usage,
    /// A safety rule or the state of the target refuses the operation; nothing was done.
    Refused,
    /// Any other failure.
    Error,
    /// The caller is not in a tmux pane (`where`).
    NotInPane,
    Io,
    /// The state directory cannot be read or written.
    StateDir,
    /// The side chat's agent did not start.
    SideAgentFailed,
    /// The program to run in a new pane does not exist.
    CommandNotFound,
    /// A managed agent is showing a dialog (trust, permissions) instead of its prompt.
    Dialog,
    /// The caller cancelled the call (an MCP `notifications/cancelled`, or its client
    /// went away); what the call started was ended.
    Cancelled,
    /// A tmux or ssh failure, with [`TmuxError::kind`]'s class.
    Tmux(&'static str),
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Usage => "usage",
            Kind::Refused => "refused",
            Kind::Error => "error",
            Kind::NotInPane => "not-in-pane",
            Kind::Io => "io",
            Kind::StateDir => "state-dir",
            Kind::SideAgentFailed => "side-agent-failed",
            Kind::CommandNotFound => "command-not-found",
            Kind::Dialog => "dialog",
            Kind::Cancelled => "cancelled",
            Kind::Tmux(k) => k,
        }
    }

    /// A kind as another tmuxmate named it in its `--json` ([`Kind::as_str`]): one of
    /// ours, else a tmux or ssh class (kept once per name, at most [`NAMES_KEPT`] of
    /// them; a name past that, or not of a class's shape, reads as `error`).
    pub fn from_name(name: &str) -> Kind {
        const NAMED: [Kind; 10] = [
            Kind::Usage,
            Kind::Refused,
            Kind::Error,
            Kind::NotInPane,
            Kind::Io,
            Kind::StateDir,
            Kind::SideAgentFailed,
            Kind::CommandNotFound,
            Kind::Dialog,
            Kind::Cancelled,
        ];
        if let Some(k) = NAMED.iter().find(|k| k.as_str() == name) {
            return *k;
        }
        let shaped = !name.is_empty()
            && name.len() <= 40
            && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
        if !shaped {
            return Kind::Error;
        }
        static KEPT: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
        let Ok(mut kept) = KEPT.lock() else {
            return Kind::Error;
        };
        if let Some(k) = kept.iter().find(|k| **k == name) {
            return Kind::Tmux(k);
        }
        if kept.len() >= NAMES_KEPT {
            return Kind::Error;
        }
        // Leaked once per name: a kind is `&'static` so that it stays `Copy`.
        let k: &'static str = Box::leak(name.to_string().into_boxed_str());
        kept.push(k);
        Kind::Tmux(k)
    }
}

/// How many tmux/ssh class names [`Kind::from_name`] keeps (there are about twenty).
const NAMES_KEPT: usize = 64;

#[derive(Debug)]
pub struct Error {
    pub msg: String,
    pub kind: Kind,
    /// What to do about it, when that is not already part of `msg`.
    pub hint: Option<String>,
    /// Mechanics for the log and `--verbose` (e.g. the tmux argv that failed).
    pub detail: Option<String>,
    /// The command already printed its (incomplete) result on stdout: `--json` must not
    /// add a second object.
    pub printed: bool,
}

impl Error {
    pub fn of(kind: Kind, msg: impl Into<String>) -> Error {
        Error {
            msg: msg.into(),
            kind,
            hint: None,
            detail: None,
            printed: false,
        }
    }
    pub fn new(msg: impl Into<String>) -> Error {
        Error::of(Kind::Error, msg)
    }
    /// A refusal: the operation was not done (the message says why, and starts with
    /// "refused").
    pub fn refused(msg: impl Into<String>) -> Error {
        Error::of(Kind::Refused, msg)
    }
    pub fn usage(msg: impl Into<String>) -> Error {
        Error::of(Kind::Usage, msg)
    }
    pub fn with_hint(mut self, hint: impl Into<String>) -> Error {
        self.hint = Some(hint.into());
        self
    }
    pub fn printed(mut self) -> Error {
        self.printed = true;
        self
    }

    /// The one-line text people read: the message, then the advice.
    pub fn human(&self) -> String {
        match &self.hint {
            Some(h) if !h.is_empty() => format!("{}; {h}", self.msg),
            _ => self.msg.clone(),
        }
    }

    /// An error document ([`Error::to_json`]) read back, as another tmuxmate printed it;
    /// `None` when `v` is not one.
    pub fn from_json(v: &serde_json::Value) -> Option<Error> {
        let e = v.get("error")?;
        let msg = e.get("message")?.as_str()?;
        let kind = Kind::from_name(e.get("kind").and_then(|k| k.as_str()).unwrap_or("error"));
        let mut out = Error::of(kind, msg);
        out.hint = e.get("hint").and_then(|h| h.as_str()).map(str::to_string);
        Some(out)
    }

    /// The `--json` form: `{"error":{"kind","message","hint"}}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"error": {
            "kind": self.kind.as_str(),
            "message": self.msg,
            "hint": self.hint,
        }})
    }
}

impl From<crate::tmux::popup::PopupError> for Error {
    fn from(e: crate::tmux::popup::PopupError) -> Error {
        match e {
            crate::tmux::popup::PopupError::NotAClient(c) => Error::usage(format!(
                "--client {c:?} is not a tmux client name (see `tmux list-clients`)"
            )),
            crate::tmux::popup::PopupError::Tmux(e) => e.into(),
        }
    }
}

impl From<TmuxError> for Error {
    fn from(e: TmuxError) -> Error {
        let (msg, hint) = e.parts();
        Error {
            kind: Kind::Tmux(e.kind()),
            msg,
            hint,
            detail: e.detail(),
            printed: false,
        }
    }
}

/// The message of a helper that returns `Result<_, String>` (parsers, validators): one
/// that starts with "refused" is a refusal, by the house wording those helpers follow.
impl From<String> for Error {
    fn from(s: String) -> Error {
        if s.starts_with("refused") {
            Error::refused(s)
        } else {
            Error::new(s)
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::of(Kind::Io, format!("I/O error: {e}"))
    }
}

/// An I/O failure on a path of the state directory: names the path and the way out.
pub fn state_io(what: &str, path: &std::path::Path, e: std::io::Error) -> Error {
    Error::of(
        Kind::StateDir,
        format!("could not {what} {}: {e}", path.display()),
    )
    .with_hint(
        "check that the state directory is writable, or point TMUXMATE_STATE_DIR (or XDG_STATE_HOME) at one that is",
    )
}

pub type CliResult = Result<(), Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape() {
        let e = Error::usage("bad").with_hint("do x");
        let v = e.to_json();
        assert_eq!(v["error"]["kind"], "usage");
        assert_eq!(v["error"]["message"], "bad");
        assert_eq!(v["error"]["hint"], "do x");
        assert_eq!(e.human(), "bad; do x");
        let v = Error::refused("refused: no").to_json();
        assert_eq!(v["error"]["kind"], "refused");
        assert!(v["error"]["hint"].is_null());
    }

    #[test]
    fn an_error_document_reads_back_as_the_same_error() {
        for e in [
            Error::usage("bad").with_hint("do x"),
            Error::refused("refused: no"),
            Error::of(Kind::Tmux("remote-no-tmuxmate"), "none there"),
            Error::of(Kind::Tmux("ssh"), "lost"),
        ] {
            let back = Error::from_json(&e.to_json()).unwrap();
            assert_eq!(
                (back.kind, back.msg.as_str(), back.hint.as_deref()),
                (e.kind, e.msg.as_str(), e.hint.as_deref())
            );
            assert_eq!(back.to_json().to_string(), e.to_json().to_string());
        }
        assert_eq!(Kind::from_name("NOT A KIND\n"), Kind::Error);
        assert!(Error::from_json(&serde_json::json!({"jobId": "w1"})).is_none());
    }

    /// A refusal is typed where it is made: no `Error::new` carries a "refused" message
    /// (its `--json` kind would say `error`).
    #[test]
    fn refusals_are_built_as_refusals() {
        fn walk(dir: &std::path::Path, bad: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, bad);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    let needle = ["Error::", "new("].concat();
                    for (i, _) in text.match_indices(&needle) {
                        // Ours only: not `TmuxError::new`, `io::Error::new`.
                        let before = text[..i].chars().next_back();
                        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                            continue;
                        }
                        let rest = text[i + needle.len()..].trim_start();
                        let rest = rest.strip_prefix("format!(").unwrap_or(rest).trim_start();
                        if rest.starts_with("\"refused") {
                            bad.push(format!("{}: {}", p.display(), &rest[..rest.len().min(60)]));
                        }
                    }
                }
            }
        }
        let mut bad = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut bad,
        );
        assert!(bad.is_empty(), "use Error::refused for: {bad:#?}");
    }
}
