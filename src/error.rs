//! The error a command hands back to `main`: a message for the user and an exit code.
//!
//! Invariant: every message names what went wrong and what to do; exit 1 is a runtime
//! failure or refusal, exit 2 a usage error.

use crate::tmux::TmuxError;

#[derive(Debug)]
pub struct CliError {
    pub code: i32,
    pub msg: String,
}

impl CliError {
    pub fn new(msg: impl Into<String>) -> CliError {
        CliError {
            code: 1,
            msg: msg.into(),
        }
    }
    pub fn usage(msg: impl Into<String>) -> CliError {
        CliError {
            code: 2,
            msg: msg.into(),
        }
    }
}

impl From<TmuxError> for CliError {
    fn from(e: TmuxError) -> CliError {
        CliError::new(e.to_string())
    }
}

impl From<String> for CliError {
    fn from(s: String) -> CliError {
        CliError::new(s)
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> CliError {
        CliError::new(format!("I/O error: {e}"))
    }
}

pub type CliResult = Result<(), CliError>;
