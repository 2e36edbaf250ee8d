//! The operating-system layer under every capability: starting processes, quoting for a
//! shell, finding programs on `PATH`.
//!
//! Owns nothing of tmux or of the agents. Invariants: every process this binary starts is
//! started by [`process`] (a clippy lint refuses `std::process::Command` elsewhere), every
//! word handed to a shell is quoted by [`shell`], every `PATH` lookup is [`which`].

pub mod process;
pub mod shell;
pub mod which;
