//! Which tmux server a client talks to, and where its socket file is.
//!
//! Owns: the `-L`/`-S` choice and its fallbacks (`$TMUX`, tmux's default), the socket
//! directory rule (`$TMUX_TMPDIR` or /tmp, `tmux-<uid>`). Invariant: no tmux process is
//! started here; this is what the wrapper and the error texts both read.

use std::path::{Path, PathBuf};

/// Which tmux server a client talks to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Socket {
    /// `-L NAME`
    Name(String),
    /// `-S PATH`
    Path(PathBuf),
    /// tmux's own default (no flag; tmux follows `$TMUX` itself when set).
    Default,
}

impl Socket {
    /// Resolve the flags given on the command line, falling back to `$TMUX`'s socket.
    pub fn resolve(name: Option<&str>, path: Option<&Path>) -> Socket {
        if let Some(p) = path {
            return Socket::Path(p.to_path_buf());
        }
        if let Some(n) = name {
            return Socket::Name(n.to_string());
        }
        match tmux_env_socket() {
            Some(p) => Socket::Path(p),
            None => Socket::Default,
        }
    }

    pub fn args(&self) -> Vec<String> {
        match self {
            Socket::Name(n) => vec!["-L".into(), n.clone()],
            Socket::Path(p) => vec!["-S".into(), p.to_string_lossy().into_owned()],
            Socket::Default => vec![],
        }
    }

    /// The server on another host: only what was given (`$TMUX` names a local socket).
    pub fn resolve_remote(name: Option<&str>, path: Option<&Path>) -> Socket {
        match (path, name) {
            (Some(p), _) => Socket::Path(p.to_path_buf()),
            (None, Some(n)) => Socket::Name(n.to_string()),
            (None, None) => Socket::Default,
        }
    }

    /// A stable, human-readable name for the server, used in agent addresses and logs.
    pub fn describe(&self) -> String {
        match self {
            Socket::Name(n) => format!("-L {n}"),
            Socket::Path(p) => format!("-S {}", p.display()),
            Socket::Default => "default".into(),
        }
    }
}

/// The socket path from `$TMUX` (`path,pid,session`), if set and non-empty.
pub fn tmux_env_socket() -> Option<PathBuf> {
    let v = std::env::var_os("TMUX")?;
    let s = v.to_string_lossy();
    let path = s.split(',').next().unwrap_or("");
    if path.is_empty() {
        None
    } else {
        Some(PathBuf::from(path))
    }
}

/// tmux's socket directory: `$TMUX_TMPDIR` (else /tmp) + `tmux-<uid>`.
pub(super) fn socket_dir() -> PathBuf {
    let base = std::env::var_os("TMUX_TMPDIR")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    base.join(format!("tmux-{}", nix::unistd::getuid()))
}
