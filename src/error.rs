//! The refusal or failure a command hands back: what went wrong, for people and for
//! `--json`.
//!
//! Invariant: every message names what went wrong and what to do; the domain says what
//! kind of failure it is (`kind`), and only `cmd::entry` turns a kind into an exit code
//! (2 for `usage`, 1 for everything else). `msg` is for people; the mechanics (a tmux
//! argv, its raw stderr) travel in `detail`, which goes to the log and to `--verbose`,
//! never into the main message. `kind` and `hint` are what `--json` reports.

use crate::tmux::TmuxError;

#[derive(Debug)]
pub struct CliError {
    pub msg: String,
    /// A short machine-readable class: `usage`, `refused`, `no-server`, `tmux`...
    pub kind: &'static str,
    /// What to do about it, when that is not already part of `msg`.
    pub hint: Option<String>,
    /// Mechanics for the log and `--verbose` (e.g. the tmux argv that failed).
    pub detail: Option<String>,
    /// The command already printed its (incomplete) result on stdout: `--json` must not
    /// add a second object.
    pub printed: bool,
}

impl CliError {
    pub fn new(msg: impl Into<String>) -> CliError {
        let msg = msg.into();
        CliError {
            kind: if msg.starts_with("refused") {
                "refused"
            } else {
                "error"
            },
            msg,
            hint: None,
            detail: None,
            printed: false,
        }
    }
    pub fn usage(msg: impl Into<String>) -> CliError {
        CliError {
            msg: msg.into(),
            kind: "usage",
            hint: None,
            detail: None,
            printed: false,
        }
    }
    pub fn with_hint(mut self, hint: impl Into<String>) -> CliError {
        self.hint = Some(hint.into());
        self
    }
    pub fn printed(mut self) -> CliError {
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

    /// The `--json` form: `{"error":{"kind","message","hint"}}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"error": {
            "kind": self.kind,
            "message": self.msg,
            "hint": self.hint,
        }})
    }
}

impl From<TmuxError> for CliError {
    fn from(e: TmuxError) -> CliError {
        let (msg, hint) = e.parts();
        CliError {
            kind: e.kind(),
            msg,
            hint,
            detail: e.detail(),
            printed: false,
        }
    }
}

impl From<String> for CliError {
    fn from(s: String) -> CliError {
        CliError::new(s)
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> CliError {
        let mut c = CliError::new(format!("I/O error: {e}"));
        c.kind = "io";
        c
    }
}

/// An I/O failure on a path of the state directory: names the path and the way out.
pub fn state_io(what: &str, path: &std::path::Path, e: std::io::Error) -> CliError {
    let mut c = CliError::new(format!("could not {what} {}: {e}", path.display())).with_hint(
        "check that the state directory is writable, or point TMUXMATE_STATE_DIR (or XDG_STATE_HOME) at one that is",
    );
    c.kind = "state-dir";
    c
}

pub type CliResult = Result<(), CliError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape() {
        let e = CliError::usage("bad").with_hint("do x");
        let v = e.to_json();
        assert_eq!(v["error"]["kind"], "usage");
        assert_eq!(v["error"]["message"], "bad");
        assert_eq!(v["error"]["hint"], "do x");
        assert_eq!(e.human(), "bad; do x");
        let v = CliError::new("refused: no").to_json();
        assert_eq!(v["error"]["kind"], "refused");
        assert!(v["error"]["hint"].is_null());
    }
}
