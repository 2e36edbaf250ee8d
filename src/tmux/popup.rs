//! What a person at a tmux client sees of tmuxmate: a popup running one of our commands
//! on the client that pressed a key, and a one-line message when a key did nothing.
//!
//! Invariants: a client name is data (refused when empty or with control characters,
//! passed as one literal argument); the popup's command reaches tmux as separate argv
//! words, so tmux execs it without a shell and expands nothing in it; the message is drawn
//! text, never a format; flags newer than 3.2 (`-T`, `display-message -c`) are gated on
//! the version.

use super::{Tmux, TmuxError};

/// Why a popup did not open.
#[derive(Debug)]
pub enum PopupError {
    /// The name is not a tmux client's (empty, or with control characters).
    NotAClient(String),
    Tmux(TmuxError),
}

impl From<TmuxError> for PopupError {
    fn from(e: TmuxError) -> Self {
        PopupError::Tmux(e)
    }
}

fn is_client_name(client: &str) -> bool {
    !client.is_empty() && !client.chars().any(|c| c.is_control())
}

/// A popup on `client` running `argv` (exec'd by tmux, no shell, nothing expanded).
/// It closes when the command succeeds; when it fails it stays open showing why, until
/// Escape (`-EE`). Blocks until the popup closes (display-popup holds its caller).
pub fn popup(tmux: &Tmux, client: &str, title: &str, argv: &[String]) -> Result<(), PopupError> {
    if !is_client_name(client) {
        return Err(PopupError::NotAClient(client.to_string()));
    }
    let mut args: Vec<super::Arg> = crate::targs![
        "display-popup",
        "-c",
        super::Arg::literal(client),
        "-EE",
        "-w",
        "90%",
        "-h",
        "80%",
    ]
    .into();
    // 3.2 refuses the whole command with a -T.
    let titled = super::version::of_server(tmux).is_some_and(|v| v.popup_has_title());
    if titled {
        args.extend(crate::targs!["-T", super::Arg::drawn(title)]);
    }
    args.push("--".into());
    // More than one word: tmux execs them as they are instead of handing one to `sh -c`.
    args.extend(argv.iter().map(|a| super::Arg::literal(a)));
    let mut long = tmux.clone();
    long.timeout = std::time::Duration::from_secs(7 * 24 * 3600);
    long.run(&args)?;
    Ok(())
}

/// Tell the person at `client` that a key did nothing, and why (the log has the detail).
pub fn tell(tmux: &Tmux, client: &str, what: &str, why: &str) {
    crate::sys::state::log(&format!("key {what} on client {client}: {why}"));
    let first = why.lines().next().unwrap_or("");
    let short: String = first.chars().take(120).collect();
    // display-message expands formats and draws styles: the message is data.
    let msg = format!("tmuxmate {what}: {short} (details in the tmuxmate log)");
    if is_client_name(client) {
        // tmux 3.2 cannot name the client (docs/tmux-versions.md); unnamed, the message
        // goes to the client with the latest activity: the one whose key was pressed.
        let named = tmux.version().is_none_or(|v| v.message_names_its_client());
        let _ = if named {
            tmux.run(&crate::targs![
                "display-message",
                "-c",
                super::Arg::literal(client),
                super::Arg::drawn(&msg)
            ])
        } else {
            tmux.run(&crate::targs!["display-message", super::Arg::drawn(&msg)])
        };
    }
}
