//! Running the tmuxmate installed on a host, over that host's ssh master.
//!
//! Owns: where tmuxmate lives on a host ([`REL_PATH`] under the login's `$HOME`: a
//! directory of ours, never a user's own `~/.local/bin`), the one remote shell line that
//! runs it, the "not installed" refusal that names what still works, and the local note
//! of which hosts have it (so `capture`/`send` pick their route without asking first).
//!
//! Invariants: the line is our fixed text plus words quoted one by one
//! (`crate::sys::shell::quote`); a missing binary is detected by our own marker before
//! anything runs (exit [`MISSING_STATUS`]), never guessed from a message of the shell's.

/// Set by another host's tmuxmate that runs us over ssh: how long it waits for our
/// answer (milliseconds).
pub const WITHIN_ENV: &str = "TMUXMATE_WITHIN_MS";

use std::time::Duration;

use crate::error::Error;
use crate::sys::process::Finished;
use crate::sys::shell;
use crate::sys::state;
use crate::tmux::Socket;
use crate::tmux::transport::ssh::Remote;

/// tmuxmate's place on a host, relative to the remote login's home.
pub const REL_PATH: &str = ".local/share/tmuxmate/bin/tmuxmate";
/// What the remote line prints (stderr) and its exit status when the binary is missing.
const MISSING: &str = "tmuxmate-remote: not installed";
pub const MISSING_STATUS: i32 = 127;
/// The error kind of a host whose tmuxmate refused our flags (another version): like
/// "not installed", the command did not run there.
pub const OTHER_VERSION: &str = "remote-tmuxmate-version";
/// The error kind of "not installed" ([`not_installed`]).
pub const NOT_INSTALLED: &str = "remote-no-tmuxmate";

/// Commands that work with plain tmux on the host (no tmuxmate there).
pub const PLAIN_TMUX: &str = "list, send, paste, keys, capture, split, new-window, swap, run, kill";
/// Commands that run the tmuxmate on the host.
pub const NEEDS_TMUXMATE: &str =
    "watch, agent (all but attach), agents (the list), side status, side history, side report";

/// The most a host's tmuxmate may print for one call: its largest answers (a side history
/// of 64 MiB is cut to its newest lines before printing) are far below.
const ANSWER_MAX: usize = 64 << 20;

/// The remote shell line: `env` assignments and the words after the program, quoted.
pub fn line(socket: &Socket, env: &[(&str, &str)], args: &[String]) -> String {
    let mut words: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let assigns = words.len();
    words.extend(socket.args());
    words.extend(args.iter().cloned());
    let (a, rest) = words.split_at(assigns);
    // `env` only when there is something to set: one exec less on every call.
    let env = if a.is_empty() {
        String::new()
    } else {
        format!("env {} ", shell::join(a))
    };
    format!(
        "P=\"$HOME\"/{REL_PATH}; [ -x \"$P\" ] || {{ echo '{MISSING}' >&2; exit {MISSING_STATUS}; }}; exec {env}\"$P\" {}",
        shell::join(rest)
    )
}

/// Run the host's tmuxmate with `args` (socket flags first), `input` on its stdin.
/// `what` names the command for the refusal when tmuxmate is not installed there.
pub fn run(
    remote: &Remote,
    socket: &Socket,
    env: &[(&str, &str)],
    args: &[String],
    input: Option<&[u8]>,
    timeout: Duration,
    what: &str,
) -> Result<Finished, Missing> {
    // The host's tmuxmate ends at our deadline (`cmd::entry`): a call we gave up on must
    // not keep its ssh session.
    let within = timeout.as_millis().to_string();
    let mut env = env.to_vec();
    env.push((WITHIN_ENV, &within));
    let out = remote
        .run_line_bounded(&line(socket, &env, args), input, timeout, ANSWER_MAX)
        .map_err(|e| Missing::Other(e.into()))?;
    if out.status.code() == Some(MISSING_STATUS)
        && String::from_utf8_lossy(&out.stderr).contains(MISSING)
    {
        note(&remote.host.to_string(), false);
        return Err(Missing::NotInstalled(not_installed(
            &remote.host.to_string(),
            what,
        )));
    }
    // The flags are ours, rebuilt from a parse that succeeded here: a host that does not
    // know them runs another version of tmuxmate.
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2)
        && (stderr.contains("unrecognized subcommand") || stderr.contains("unexpected argument"))
    {
        let host = remote.host.to_string();
        return Err(Missing::Other(Error::of(
            crate::error::Kind::Tmux(OTHER_VERSION),
            format!(
                "the tmuxmate on host {host} does not know {what} as this one sends it (another version: {}); \
             run `tmuxmate remote install {host}` to update it",
                stderr.trim().lines().next().unwrap_or("")
            ),
        )));
    }
    Ok(out)
}

/// Why [`run`] has no answer: tmuxmate is missing on the host, or anything else.
pub enum Missing {
    NotInstalled(Error),
    Other(Error),
}

impl From<Missing> for Error {
    fn from(m: Missing) -> Error {
        match m {
            Missing::NotInstalled(e) | Missing::Other(e) => e,
        }
    }
}

/// The refusal for a command that needs tmuxmate on `host`.
pub fn not_installed(host: &str, what: &str) -> Error {
    Error::of(
        crate::error::Kind::Tmux(NOT_INSTALLED),
        format!(
            "refused: {what} with --host runs tmuxmate on the host, and host {host} has none \
         (~/{REL_PATH}); run `tmuxmate remote install {host}` first. Without it these work \
         with plain tmux on that host: {PLAIN_TMUX}"
        ),
    )
}

/// How long a "not installed" note is trusted (an install elsewhere is then noticed).
const MISSING_TTL_MS: u64 = 10 * 60 * 1000;

fn notes_path() -> std::path::PathBuf {
    state::state_dir().join("ssh-tmuxmate")
}

/// What this machine last learned about tmuxmate on `host`: Some(true) installed (by us),
/// Some(false) missing (for a while), None unknown.
pub fn known(host: &str) -> Option<bool> {
    let text = std::fs::read_to_string(notes_path()).ok()?;
    let now = crate::sys::time::now_ms();
    text.lines().find_map(|l| {
        let mut f = l.splitn(3, '\t');
        let (h, v, at) = (f.next()?, f.next()?, f.next()?.parse::<u64>().ok()?);
        if h != host {
            return None;
        }
        match v {
            "yes" => Some(true),
            "no" if now.saturating_sub(at) < MISSING_TTL_MS => Some(false),
            _ => None,
        }
    })
}

/// Remember whether tmuxmate is on `host` (best effort: a lost note costs one call).
pub fn note(host: &str, installed: bool) {
    let path = notes_path();
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| l.split('\t').next() != Some(host))
        .map(String::from)
        .collect();
    lines.push(format!(
        "{host}\t{}\t{}",
        if installed { "yes" } else { "no" },
        crate::sys::time::now_ms()
    ));
    if let Err(e) = state::write_atomic(&path, format!("{}\n", lines.join("\n")).as_bytes()) {
        state::log(&format!("remote: cannot note tmuxmate on {host}: {e}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_quotes_every_word() {
        let l = line(
            &Socket::Path("/tmp/a b;c".into()),
            &[("TMUXMATE_AGENT", "x'y")],
            &["send".into(), "--".into(), "$(touch NEVER);`x`".into()],
        );
        assert!(l.contains("exec env 'TMUXMATE_AGENT=x'\\''y' \"$P\" '-S' '/tmp/a b;c' 'send' '--' '$(touch NEVER);`x`'"), "{l}");
        let l = line(&Socket::Default, &[], &["watch".into(), "list".into()]);
        assert!(l.ends_with("; exec \"$P\" 'watch' 'list'"), "{l}");
    }
}
