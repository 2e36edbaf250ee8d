//! The operating-system layer under every capability: starting processes, quoting for a
//! shell, finding programs on `PATH`, reading `/proc` (`procfs`: terminals; `foreground`: what a pane runs,
//! and the one list of shells), the open-file limit of a resident process (`fdlimit`), the private state directory (`state`), stable short hashes (`hash`), JSON string literals of megabytes (`jsonstr`) and names
//! unique per call (`unique`), and the wake of live views (`wake`: a datagram instead of inotify).
//!
//! Owns nothing of tmux or of the agents. Invariants: every process this binary starts is
//! started by [`process`] (a clippy lint refuses `std::process::Command` elsewhere), every
//! word handed to a shell is quoted by [`shell`], every `PATH` lookup is [`which`].

pub mod base64;
pub mod duration;
pub mod fdlimit;
pub mod files;
pub mod foreground;
pub mod hash;
pub mod jsonstr;
pub mod printable;
pub mod process;
pub mod procfs;
pub mod shell;
pub mod state;
pub mod time;
pub mod unique;
pub mod wake;
pub mod which;
