//! Getting text and keys into a pane without tmux or a shell reinterpreting them.
//!
//! Owns: the buffer path (text into a uniquely named buffer, then `paste-buffer -d`, with
//! the buffer deleted even on failure), paste sanitizing, single-line validation and the
//! named-key allow-list. Invariants: model text never travels as `send-keys` arguments
//! (tmux's parser eats a trailing `;` even after `-l --`, and `send-keys -l` turns text
//! into key presses: tmux drops characters it cannot measure) and is never read as key
//! names; a bracketed paste cannot be ended early by its payload (tmux before 3.7 passes
//! an embedded `ESC[201~` through), so ESC and C0 controls other than tab and newline are
//! replaced by visible control pictures before loading.
//!
//! How the text reaches the buffer: text that fits one message to
//! the server (under [`SOCKET_TEXT_MAX`] bytes) goes as the data argument of `set-buffer
//! -b <unique> -- TEXT` over the server's socket (`crate::tmux::transport::direct`, one
//! round trip, no process start), always as [`Arg::literal`], so tmux's argument splitter gives back
//! exactly the text (a trailing `;` is escaped; nothing else in an argument is
//! interpreted); it never goes into a tmux client's argv, where other processes could
//! read it. Everything else - larger text, a remote server, no usable socket - goes
//! `load-buffer -b <unique> -` on a tmux client's stdin as before.

use crate::targs;
use crate::tmux::Arg;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::Error;
use crate::tmux::Tmux;

static SEQ: AtomicU32 = AtomicU32::new(0);

pub fn unique_buffer() -> String {
    format!(
        "tmuxmate-{}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::SeqCst),
        crate::sys::time::now_ms()
    )
}

/// Load `data` into a fresh buffer and paste it into `pane_id` (bracketed if asked and
/// the application enabled it); the buffer is gone afterwards whatever happened.
pub fn paste_bytes(tmux: &Tmux, pane_id: &str, data: &[u8], bracketed: bool) -> Result<(), Error> {
    paste_list(tmux, pane_id, data, bracketed, false)
}

/// `paste_bytes` then Enter as its own key, in ONE tmux invocation (a command list:
/// `load-buffer -b B - ; paste-buffer -d[p]r -b B -t %N ; send-keys -t %N Enter`). tmux
/// runs the list in order on the server, so the Enter is still a separate key event after
/// the whole paste (for TUIs that need a pause before Enter, use `paste_bytes`, sleep,
/// then send Enter). On failure the buffer is deleted, as in `paste_bytes`.
pub fn paste_then_enter(
    tmux: &Tmux,
    pane_id: &str,
    data: &[u8],
    bracketed: bool,
) -> Result<(), Error> {
    paste_list(tmux, pane_id, data, bracketed, true)
}

/// Text under this many bytes may travel as a `set-buffer` argument over the socket: the
/// whole command list must fit tmux's 16 KiB message (a longer list is refused by the
/// socket path before anything is sent, and the text then goes on stdin).
pub const SOCKET_TEXT_MAX: usize = 12 * 1024;

/// One invocation (one round trip over ssh for a remote server): tmux's queue runs the
/// paste only after the buffer holds all of the text (`load-buffer -` reads all of stdin
/// first), and stops at a failed load.
fn paste_list(
    tmux: &Tmux,
    pane_id: &str,
    data: &[u8],
    bracketed: bool,
    enter: bool,
) -> Result<(), Error> {
    let name = unique_buffer();
    let flags = if bracketed { "-dpr" } else { "-dr" };
    let mut rest = Vec::from(targs![
        Arg::SEP,
        "paste-buffer",
        flags,
        "-b",
        Arg::id(&name),
        "-t",
        Arg::id(pane_id)
    ]);
    if enter {
        rest.extend(targs![
            Arg::SEP,
            "send-keys",
            "-t",
            Arg::id(pane_id),
            "Enter"
        ]);
    }
    // Small text: the data argument of set-buffer, over the socket only (see the header).
    let small = (data.len() < SOCKET_TEXT_MAX && !data.contains(&0))
        .then(|| std::str::from_utf8(data).ok())
        .flatten();
    let on_socket = small.and_then(|text| {
        let mut args = Vec::from(targs!["set-buffer", "-b", Arg::id(&name), "--"]);
        args.push(Arg::literal(text));
        args.extend(rest.iter().cloned());
        tmux.run_on_socket(&args)
    });
    let r = match on_socket {
        Some(r) => r.map(|_| ()),
        None => {
            let mut args = Vec::from(targs!["load-buffer", "-b", Arg::id(&name), "-"]);
            args.extend(rest);
            tmux.run_bytes(&args, Some(data)).map(|_| ())
        }
    };
    if r.is_err() {
        let _ = tmux.run(&targs!["delete-buffer", "-b", Arg::id(&name)]);
    }
    Ok(r?)
}

/// A single line of literal text: no newline, no control characters.
pub fn validate_line(text: &str) -> Result<(), Error> {
    if text.is_empty() {
        return Err(Error::usage("refused: the text is empty; nothing to send"));
    }
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return Err(Error::usage(format!(
            "refused: the text contains the control character {:?}; `send` types one line of literal text. \
             Use `tmuxmate paste` for multi-line text, or `tmuxmate keys` for keys such as Enter or C-c",
            c
        )));
    }
    Ok(())
}

/// Replace ESC and C0 controls (but tab and newline) with visible control pictures;
/// CRLF and lone CR become newline. Returns the text and how many characters changed.
pub fn sanitize_paste(text: &str) -> (String, usize) {
    crate::sys::printable::visible(text)
}

/// The only key names `keys` accepts.
pub fn is_allowed_key(k: &str) -> bool {
    const NAMED: &[&str] = &[
        "Enter", "Escape", "Tab", "BTab", "Up", "Down", "Left", "Right", "Home", "End", "PageUp",
        "PageDown", "BSpace",
    ];
    if NAMED.contains(&k) {
        return true;
    }
    if let Some(l) = k.strip_prefix("C-") {
        return l.len() == 1 && l.as_bytes()[0].is_ascii_lowercase();
    }
    if let Some(n) = k.strip_prefix('F') {
        return matches!(n.parse::<u8>(), Ok(1..=12)) && !n.starts_with('0');
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizes_paste_injection() {
        let (s, n) = sanitize_paste("a\x1b[201~rm -rf /\x1b[200~\r\nb\tc\x03");
        assert!(!s.contains('\x1b'));
        assert!(!s.contains('\x03'));
        assert_eq!(n, 3);
        assert!(s.contains("\nb\tc"));
    }

    #[test]
    fn key_list() {
        for k in ["Enter", "C-c", "F12", "BTab", "PageDown"] {
            assert!(is_allowed_key(k), "{k}");
        }
        for k in [
            "hello", "C-", "C-ab", "F13", "F0", "F01", "S-Tab", "M-x", ";", "Enter;", "C-C",
        ] {
            assert!(!is_allowed_key(k), "{k}");
        }
    }

    #[test]
    fn line_validation() {
        assert!(validate_line("echo $(x); `y` %:' 日本 🚀;").is_ok());
        assert!(validate_line("a\nb").is_err());
        assert!(validate_line("a\x1bb").is_err());
        assert!(validate_line("").is_err());
    }
}
