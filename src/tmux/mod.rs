//! Everything that talks to tmux. No other module spawns the tmux binary.

pub mod arg;
pub mod client;
pub mod env;
pub mod error;
pub mod format;
pub mod layout;
pub mod options;
pub mod panes;
pub mod popup;
pub mod socket;
pub mod tap;
pub mod target;
pub mod transport;
pub mod version;

pub use arg::{Arg, Text, TextError};
pub use client::Tmux;
pub use error::TmuxError;
pub use socket::Socket;
