//! The agent bridge: another agent CLI in its own managed tmux session.
//!
//! In layers, each using only those before it: `adapters` (the table of CLIs), `naming`
//! (session names), `contract` (the session options that make a session ours), `hints`
//! (printed commands that name their server), `transcript` and `gemini_chat` (reply reading), `session`
//! (resolving a name, checking the contract and the pinned pane), `turns` (waiting for
//! and reading replies), `enter_probe` (a paste guard shown over), `deliver` (the checked send), `launch` (starting a CLI), then
//! `ask`, `listing`, `message`, `attach` and `stop` for the commands.

pub mod adapters;
pub mod ask;
pub mod asked;
pub mod attach;
pub mod contract;
pub mod deliver;
pub mod enter_probe;
pub mod gemini_chat;
pub mod hints;
pub mod launch;
pub mod listing;
pub mod message;
pub mod naming;
pub mod request;
pub mod session;
pub mod stop;
pub mod transcript;
pub mod turns;

use crate::targs;
use crate::tmux::Arg;
use regex::Regex;

use crate::tmux::Tmux;

/// The visible screen of a pane (joined lines, no colours).
pub fn screen(tmux: &Tmux, pane: &str) -> String {
    tmux.run(&targs!["capture-pane", "-p", "-J", "-t", Arg::id(pane)])
        .unwrap_or_default()
}

pub fn any(patterns: &[String], text: &str) -> Option<String> {
    patterns.iter().find_map(|p| {
        Regex::new(p)
            .ok()
            .and_then(|re| re.find(text).map(|m| line_of(text, m.start())))
    })
}

/// Is the CLI at its prompt? A custom CLI's `--ready-regex` is matched against each
/// screen line, as drawn and with its trailing blanks trimmed (so `>>> ?$` finds a
/// `>>> ` prompt and `❯ ` still matches a drawn blank); the built-in adapters' patterns
/// against the whole screen.
pub fn ready(a: &adapters::Adapter, screen: &str) -> bool {
    if a.name != adapters::AdapterName::Custom {
        return all(&a.ready, screen);
    }
    !a.ready.is_empty()
        && a.ready.iter().all(|p| {
            Regex::new(p).is_ok_and(|re| {
                screen
                    .lines()
                    .any(|l| re.is_match(l) || re.is_match(l.trim_end()))
            })
        })
}

pub fn all(patterns: &[String], text: &str) -> bool {
    !patterns.is_empty()
        && patterns
            .iter()
            .all(|p| Regex::new(p).is_ok_and(|re| re.is_match(text)))
}

fn line_of(text: &str, at: usize) -> String {
    let start = text[..at].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let end = text[at..].find('\n').map(|i| at + i).unwrap_or(text.len());
    text[start..end].trim().chars().take(120).collect()
}
