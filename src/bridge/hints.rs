//! The commands the bridge prints for people: attach lines and `tmuxmate` hints.
//!
//! Invariant: every printed command names the server it is for (`-L`/`-S`), so it works
//! as printed from any shell (a hint without the socket points at the wrong server).

use crate::tmux::Tmux;

/// The socket flags that reach this server from any shell: `-L NAME` only when it is read
/// against tmux's default socket directory (no `TMUX_TMPDIR`), else `-S PATH`.
fn socket_words(tmux: &Tmux) -> Vec<String> {
    let tmpdir_set = std::env::var_os("TMUX_TMPDIR").is_some_and(|d| !d.is_empty());
    match (&tmux.socket, tmux.socket_file()) {
        (crate::tmux::Socket::Name(n), _) if !tmpdir_set => vec!["-L".into(), n.clone()],
        (crate::tmux::Socket::Default, _) if !tmpdir_set => vec![],
        (_, Some(p)) => vec!["-S".into(), p.to_string_lossy().into_owned()],
        (_, None) => vec![],
    }
}

/// The command a person runs to look at session `name`, with the socket of the server
/// it lives on (a bare `tmux attach` would find the default server, or none).
pub fn attach_line(tmux: &Tmux, name: &str) -> String {
    let mut w = vec!["tmux".to_string()];
    w.extend(socket_words(tmux));
    w.extend(["attach".into(), "-t".into(), format!("={name}")]);
    crate::sys::shell::join_readable(&w)
}

/// A tmuxmate command as a person or model should type it: with the socket this run
/// used, so that it reaches the same server from anywhere.
pub fn tm_hint(tmux: &Tmux, words: &[&str]) -> String {
    let mut w = vec!["tmuxmate".to_string()];
    w.extend(socket_words(tmux));
    w.extend(words.iter().map(|s| s.to_string()));
    crate::sys::shell::join_readable(&w)
}
