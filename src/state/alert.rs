//! Telling the person, once per transition, that an agent needs them or is done.
//!
//! Owns: the alert files (`<state>/agents/<server>/p<pane>-<seq>`, the text, and a
//! `.sent` mark beside it), delivery (display-message on every attached client, the bell
//! and a desktop notification written to the clients' terminals, the person's own
//! command), and redelivery of alerts a killed process left unsent. Invariants:
//! - an alert is claimed (its file written) before the record that makes it is written,
//!   and marked sent after delivery: a kill before the mark leaves an unsent file that
//!   the next state event on that server delivers, if the pane is still at that seq
//!   (an answered permission is not announced late);
//! - a `.sent` mark is never undone, so no transition is announced twice;
//! - the text is data everywhere: `Arg::drawn` for display-message, one printable line for
//!   the terminals, an argv word for the person's command (run by a tmuxmate child of
//!   tmux, never through a shell with the text in it);
//! - the terminals get one `write` each of at most a few hundred bytes, to a character
//!   device under `/dev` only.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::store::{self, Client};
use crate::sys::state;
use crate::targs;
use crate::tmux::options;
use crate::tmux::{Arg, Tmux};

/// How long a claimed alert may stay unsent before another process delivers it.
const STALE_MS: u64 = 2_000;
/// Unsent alerts older than this are dropped, not delivered (the moment has passed).
const TOO_OLD_MS: u64 = 10 * 60 * 1000;

/// One alert's file.
pub fn path(server: &str, pane: &str, seq: u64) -> Option<PathBuf> {
    let p = store::pane_file(pane)?;
    Some(store::server_dir(server).join(format!("{p}-{seq}")))
}

fn sent_mark(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(".sent");
    PathBuf::from(s)
}

/// Claim the alert for (pane, seq): write its text. `false` when it was sent already.
pub fn claim(server: &str, pane: &str, seq: u64, text: &str) -> std::io::Result<bool> {
    let p = path(server, pane, seq).ok_or_else(|| std::io::Error::other("not a pane id"))?;
    if sent_mark(&p).exists() {
        return Ok(false);
    }
    // The pane's lock is held: an unsent file of the same seq is an earlier attempt whose
    // record never got written; this transition replaces it.
    state::write_private(&p, text.as_bytes())?;
    Ok(true)
}

pub fn mark_sent(server: &str, pane: &str, seq: u64) -> std::io::Result<()> {
    let p = path(server, pane, seq).ok_or_else(|| std::io::Error::other("not a pane id"))?;
    state::write_private(&sent_mark(&p), b"")
}

/// The person's choices of how to be told, read from the server's options.
#[derive(Debug, Clone, Default)]
pub struct How {
    pub message: bool,
    pub bell: bool,
    /// `9` or `777` (OSC number), or `None`.
    pub osc: Option<u32>,
    pub command: Vec<String>,
    pub cooldown_ms: u64,
}

impl How {
    pub fn read(tmux: &Tmux) -> How {
        let flag = |o: &options::Opt| {
            let raw = o.global(tmux);
            o.flag(&raw).unwrap_or_else(|e| {
                state::log(&format!("agents: {e}; using the default"));
                o.flag(o.default_text()).unwrap_or(false)
            })
        };
        let osc = match options::NOTIFY_OSC.global(tmux).trim() {
            "9" => Some(9),
            "777" => Some(777),
            "" | "off" => None,
            other => {
                state::log(&format!(
                    "agents: {} is {other:?}; it takes off, 9 or 777",
                    options::NOTIFY_OSC.name
                ));
                None
            }
        };
        How {
            message: flag(&options::NOTIFY),
            bell: flag(&options::NOTIFY_BELL),
            osc,
            command: options::NOTIFY_COMMAND
                .global(tmux)
                .split_whitespace()
                .map(String::from)
                .collect(),
            cooldown_ms: options::NOTIFY_COOLDOWN_S
                .number_or_default(&options::NOTIFY_COOLDOWN_S.global(tmux))
                * 1000,
        }
    }
}

/// Deliver `text` to `clients` as `how` says; `attached` is how many clients the server
/// has in all. Errors are logged: one client that left does not stop the others.
///
/// tmux 3.2 cannot name the client of a message (docs/tmux-versions.md), and unnamed it
/// goes to the client tmux finds best: there the message is shown only when the server has
/// exactly one client and it is one to tell, never on a client that looks at the pane.
pub fn deliver(
    tmux: &Tmux,
    how: &How,
    clients: &[Client],
    attached: usize,
    text: &str,
    file: &Path,
) {
    let named = tmux.version().is_none_or(|v| v.message_names_its_client());
    let unnamed_ok = attached == 1 && clients.len() == 1;
    if how.message && !named && !unnamed_ok && !clients.is_empty() {
        state::log(
            "agents: alert message skipped: this tmux (3.2) cannot show a message on one client of several",
        );
    }
    for c in clients {
        let shown = if !how.message || c.name.chars().any(char::is_control) {
            Ok(String::new())
        } else if named {
            tmux.run(&targs![
                "display-message",
                "-c",
                Arg::literal(&c.name),
                "-d",
                "5000",
                Arg::drawn(text)
            ])
        } else if unnamed_ok {
            tmux.run(&targs!["display-message", "-d", "5000", Arg::drawn(text)])
        } else {
            Ok(String::new())
        };
        if let Err(e) = shown {
            state::log(&format!("agents: alert to client {}: {e}", c.name));
        }
        let mut bytes = Vec::new();
        if how.bell {
            bytes.push(0x07);
        }
        match how.osc {
            Some(9) => bytes.extend(format!("\x1b]9;{text}\x07").as_bytes()),
            Some(_) => bytes.extend(format!("\x1b]777;notify;tmuxmate;{text}\x07").as_bytes()),
            None => {}
        }
        if !bytes.is_empty()
            && let Err(e) = write_terminal(&c.tty, &bytes)
        {
            state::log(&format!("agents: alert to terminal {}: {e}", c.tty));
        }
    }
    if !how.command.is_empty() {
        run_command(tmux, file);
    }
}

/// One write to a client's terminal: a character device under /dev, opened without
/// becoming our controlling terminal and without blocking.
fn write_terminal(tty: &str, bytes: &[u8]) -> std::io::Result<()> {
    if !tty.starts_with("/dev/") || tty.contains("..") {
        return Err(std::io::Error::other(format!(
            "{tty:?} is not a terminal under /dev"
        )));
    }
    let mut f = OpenOptions::new()
        .write(true)
        .custom_flags(nix::libc::O_NOCTTY | nix::libc::O_NONBLOCK | nix::libc::O_NOFOLLOW)
        .open(tty)?;
    if !f.metadata()?.file_type().is_char_device() {
        return Err(std::io::Error::other(format!("{tty} is not a terminal")));
    }
    f.write_all(bytes)
}

/// The person's command runs in a tmuxmate that tmux starts (`run-shell -b`), so this
/// hook returns at once; that process reads the text from the alert file.
fn run_command(tmux: &Tmux, file: &Path) {
    let bin = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "tmuxmate".into());
    let q = crate::sys::shell::readable;
    let cmd = format!(
        "exec env TMUXMATE_STATE_DIR={} {} agents notify-run {} >/dev/null 2>&1",
        q(&state::state_dir().to_string_lossy()),
        q(&bin),
        q(&file.to_string_lossy())
    );
    if let Err(e) = tmux.run(&targs!["run-shell", "-b", Arg::expanded(&cmd)]) {
        state::log(&format!("agents: starting the notify command: {e}"));
    }
}

/// `tmuxmate agents notify-run FILE`: run the person's command with the alert's text.
pub fn notify_run(tmux: &Tmux, file: &Path) -> Result<(), String> {
    let dir = state::state_dir().join("agents");
    if !file.starts_with(&dir) {
        return Err(format!(
            "{} is not an alert file of tmuxmate's",
            file.display()
        ));
    }
    let raw = state::read_private(file, 4096).map_err(|e| format!("{}: {e}", file.display()))?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let how = How::read(tmux);
    let Some((prog, args)) = how.command.split_first() else {
        return Ok(());
    };
    let mut c = crate::sys::process::command(prog);
    c.args(args).arg(&text);
    let f = crate::sys::process::run(c, None, std::time::Duration::from_secs(30))
        .map_err(|e| format!("{}: {e}", options::NOTIFY_COMMAND.name))?;
    if !f.status.success() {
        state::log(&format!(
            "agents: {} {prog} ended with {}",
            options::NOTIFY_COMMAND.name,
            f.status
        ));
    }
    Ok(())
}

/// Alerts of this server that a killed process left unsent: deliver those whose pane is
/// still at that transition, drop the rest. Old files go.
pub fn redeliver(tmux: &Tmux, socket: &str, server: &str) {
    let dir = store::server_dir(server);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut unsent = Vec::new();
    for e in rd.flatten().take(10_000) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some((pane_part, seq)) = parse_name(&name) else {
            continue;
        };
        let age = e
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .map_or(0, |d| d.as_millis() as u64);
        let p = e.path();
        if age > 24 * 3600 * 1000 {
            let _ = std::fs::remove_file(&p);
            let _ = std::fs::remove_file(sent_mark(&p));
            continue;
        }
        if (STALE_MS..=TOO_OLD_MS).contains(&age) && !sent_mark(&p).exists() {
            unsent.push((format!("%{pane_part}"), seq, p));
        }
    }
    for (pane, seq, p) in unsent {
        // Held by a process at work on that pane: it will see to its own alert.
        let Ok(Some(_lock)) = store::lock(socket, &pane, false) else {
            continue;
        };
        let Ok(r) = store::read(tmux, &pane) else {
            // The pane is gone: nobody to tell about it.
            let _ = mark_sent(server, &pane, seq);
            continue;
        };
        if r.server != server || r.record.as_ref().map(|r| r.seq) != Some(seq) {
            let _ = mark_sent(server, &pane, seq);
            continue;
        }
        let Ok(raw) = state::read_private(&p, 4096) else {
            continue;
        };
        let text = String::from_utf8_lossy(&raw).into_owned();
        let how = How::read(tmux);
        let others: Vec<Client> = r
            .clients
            .iter()
            .filter(|c| c.pane != pane)
            .cloned()
            .collect();
        if !r.looking(&pane) {
            deliver(tmux, &how, &others, r.clients.len(), &text, &p);
        }
        let _ = mark_sent(server, &pane, seq);
    }
}

/// `p12-7` -> ("12", 7); marks and locks are not alerts.
fn parse_name(name: &str) -> Option<(&str, u64)> {
    let rest = name.strip_prefix('p')?;
    let (pane, seq) = rest.split_once('-')?;
    if pane.is_empty() || !pane.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((pane, seq.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alert_names() {
        assert_eq!(parse_name("p12-7"), Some(("12", 7)));
        assert_eq!(parse_name("p12-7.sent"), None);
        assert_eq!(parse_name("p12.lock"), None);
        assert_eq!(parse_name("px-1"), None);
    }

    #[test]
    fn terminals_only() {
        assert!(write_terminal("/etc/passwd", b"x").is_err());
        assert!(write_terminal("/dev/../etc/passwd", b"x").is_err());
        assert!(write_terminal("relative", b"x").is_err());
    }
}
