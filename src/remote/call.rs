//! Running the tmuxmate installed on a host, over that host's ssh master.
//!
//! Owns: where tmuxmate lives on a host ([`REL_PATH`] under the login's `$HOME`: a
//! directory of ours, never a user's own `~/.local/bin`), the one remote shell line that
//! runs it, one operation sent to it as JSON ([`op`]: its request on stdin to the hidden
//! `tmuxmate call`, its answer or error document read back), the "not installed" and
//! "another version" refusals that name the fix, and the local note of which hosts have
//! it (so `capture`/`send` pick their route without asking first).
//!
//! Invariants: the line is our fixed text plus words quoted one by one
//! (`crate::sys::shell::quote`); a missing binary is detected by our own marker before
//! anything runs (exit [`MISSING_STATUS`]), never guessed from a message of the shell's;
//! a failed operation says how far it got (`crate::op::Reached`): nothing ran, the host's
//! own error document, or not known, never a guess.

/// Set by another host's tmuxmate that runs us over ssh: how long it waits for our
/// answer (milliseconds).
pub const WITHIN_ENV: &str = "TMUXMATE_WITHIN_MS";

use std::time::Duration;

use crate::error::{Error, Kind};
use crate::op::{self, Failed, Failure, Operation, Reached};
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
        return Err(Missing::Other(other_version(
            &remote.host.to_string(),
            what,
            &stderr,
        )));
    }
    Ok(out)
}

/// The hidden entry of tmuxmate that runs one operation given as JSON on stdin
/// (`cmd::call`).
pub const ENTRY: &str = "call";
/// Bound on one request: a message is at most 16 MiB, and JSON may write a byte of it
/// as six (`\u001b`).
pub const REQUEST_MAX: usize = 100 << 20;

/// A host's answer to one operation, and what its tmuxmate said on stderr beside it
/// (made printable).
pub struct Answered<A> {
    pub answer: A,
    pub said: String,
}

/// The name of an operation for people: `agent.ask` is `agent ask`.
fn what_of(name: &str) -> String {
    name.replace('.', " ")
}

/// Run operation `req` on the host's tmuxmate (`tmuxmate call`, the request as JSON on
/// stdin); its answer, or how far it got. Once: never retried.
pub fn op<R: Operation>(
    remote: &Remote,
    socket: &Socket,
    req: R,
) -> Result<Answered<R::Answer>, Failed> {
    let within = req.waits().saturating_add(op::MARGIN);
    op_within(remote, socket, req, within)
}

/// [`op`] given at most `within` (a look that must not keep its caller waiting).
pub fn op_within<R: Operation>(
    remote: &Remote,
    socket: &Socket,
    req: R,
    within: std::time::Duration,
) -> Result<Answered<R::Answer>, Failed> {
    req.for_host().map_err(Failure::nothing)?;
    let req = req.read_in().map_err(Failure::nothing)?;
    let what = what_of(R::NAME);
    let body =
        serde_json::to_vec(&serde_json::json!({"op": R::NAME, "request": &req})).map_err(|e| {
            Failure::nothing(Error::new(format!("cannot write the {what} request: {e}")))
        })?;
    if body.len() > REQUEST_MAX {
        return Err(Failure::nothing(Error::usage(format!(
            "refused: the {what} request is larger than {} MiB; nothing was sent",
            REQUEST_MAX >> 20
        ))));
    }
    let out = run(
        remote,
        socket,
        &[],
        &[ENTRY.to_string()],
        Some(&body),
        within,
        &what,
    );
    let out = match out {
        Ok(out) => out,
        Err(Missing::NotInstalled(e)) => return Err(Failure::nothing(e)),
        Err(Missing::Other(e)) if e.kind == Kind::Tmux(OTHER_VERSION) => {
            return Err(Failure::nothing(e));
        }
        Err(Missing::Other(e)) => {
            return Err(Box::new(Failure {
                error: e,
                reached: Reached::Unknown,
                said: String::new(),
            }));
        }
    };
    read(&remote.host.to_string(), &what, out)
}

/// What a host's `tmuxmate call` printed: the answer (exit 0), its error document, or
/// neither.
fn read<A: serde::de::DeserializeOwned>(
    host: &str,
    what: &str,
    out: Finished,
) -> Result<Answered<A>, Failed> {
    let said = shown(&out.stderr).trim_end().to_string();
    let unknown = |error: Error, said: String| {
        Box::new(Failure {
            error,
            reached: Reached::Unknown,
            said,
        })
    };
    if out.status.success() {
        return match serde_json::from_slice::<A>(&out.stdout) {
            Ok(answer) => Ok(Answered { answer, said }),
            Err(e) => Err(unknown(
                Error::new(format!(
                    "host {host} answered {what} with something that is not tmuxmate's answer ({e}): {}",
                    shown(&out.stdout[..out.stdout.len().min(400)]).trim()
                ))
                .with_hint(format!(
                    "if its tmuxmate is not this one, `tmuxmate remote install {host}` updates it"
                )),
                said,
            )),
        };
    }
    let doc = serde_json::from_slice::<serde_json::Value>(&out.stdout).ok();
    match doc.as_ref().and_then(Error::from_json) {
        // The host's `call` did not know the operation or one of its fields.
        Some(e) if e.kind == Kind::Tmux(OTHER_VERSION) => Err(Box::new(Failure {
            error: other_version(host, what, &e.msg),
            reached: Reached::Nothing,
            said,
        })),
        Some(error) => Err(Box::new(Failure {
            error,
            reached: Reached::Host(doc.unwrap_or_default()),
            said,
        })),
        None => {
            let code = out
                .status
                .code()
                .map_or("on a signal".to_string(), |c| format!("with status {c}"));
            // What it said is the message (so it is not shown twice).
            let msg = match said.trim() {
                "" => format!("host {host}: its tmuxmate ended {code} without answering {what}"),
                s => s.strip_prefix("tmuxmate: ").unwrap_or(s).to_string(),
            };
            Err(unknown(Error::new(msg), String::new()))
        }
    }
}

/// What a host printed, as it may reach a terminal or a model: an ESC or another control
/// byte came from something that is not our JSON, and is shown, not obeyed.
pub fn shown(bytes: &[u8]) -> String {
    crate::sys::printable::visible(&String::from_utf8_lossy(bytes)).0
}

/// The refusal for a host whose tmuxmate does not know a command or operation as this
/// one sends it.
fn other_version(host: &str, what: &str, said: &str) -> Error {
    Error::of(
        Kind::Tmux(OTHER_VERSION),
        format!(
            "the tmuxmate on host {host} does not know {what} as this one sends it (another version: {}); \
             run `tmuxmate remote install {host}` to update it",
            said.trim().lines().next().unwrap_or("")
        ),
    )
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
