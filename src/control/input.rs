//! Typing into panes: `send` (one literal line), `paste` (bracketed multi-line text),
//! `keys` (named keys from the allow-list), as typed requests and results shared by the
//! CLI (`tmuxmate send|paste|keys`) and the MCP tools.
//!
//! Invariants: the text goes through a buffer (never `send-keys` arguments, see
//! `crate::control::pane_input`); a pane in copy or view mode is refused unless the caller asks to
//! leave the mode (its keys would be eaten and a `q` would leave it); Enter is its own
//! key press; a paste's Enter comes after the settle delay (agent TUIs such as Codex turn
//! an Enter inside a paste burst into a newline); every key passes the allow-list before
//! a single key is sent.

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::control::pane_input;
use crate::control::policy;
use crate::error::Error;
use crate::op::Operation;
use crate::targs;
use crate::tmux::Arg;
use crate::tmux::Tmux;
use crate::tmux::panes::PaneInfo;

pub const DEFAULT_SETTLE_MS: u64 = crate::tmux::options::PASTE_SETTLE_MS.default_number();
/// Bound on text read from a file or stdin (a 16 MiB paste is surely a mistake).
const MAX_INPUT: u64 = 16 << 20;

// What `send` asks for: the CLI's `send` flags (`--json` aside) and the MCP
// `tmux_send_keys` tool's arguments; the flags' help is the doc of each field. `file` is
// the CLI's alone (a path on the caller's machine, read there); `keys` the tool's alone
// (the CLI presses keys with `keys`). (Plain comments on the request types: clap would
// make a doc comment here the command's `--help` text.)
#[derive(clap::Args, Serialize, Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SendAsk {
    /// The pane: `%N`, `session:window.pane`, or another tmux target (see `tmuxmate list`).
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// The text: one line, no control characters; `-` reads it from stdin. Text that
    /// starts with `-` goes after `--` (anything else starting with `-` is a flag, and an
    /// unknown flag is an error, never text).
    pub text: Option<String>,
    /// Key names instead of text (the MCP tool's; the CLI's `keys` command takes them).
    #[arg(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
    /// Press Enter (as a separate key) after the text.
    #[arg(long)]
    #[serde(default)]
    pub enter: bool,
    /// Leave copy/view mode first instead of refusing.
    #[arg(long)]
    #[serde(default)]
    pub cancel_mode: bool,
    /// Read the line from a file (`-` for stdin); one trailing newline is dropped.
    #[arg(long, value_name = "FILE", conflicts_with = "text")]
    #[serde(skip)]
    pub file: Option<PathBuf>,
}

// What `paste` asks for: the CLI's `paste` flags and the MCP `tmux_paste` tool's
// arguments. The tool requires `text`; the CLI can read it from `file` (its alone) or stdin.
#[derive(clap::Args, Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PasteAsk {
    /// The pane: `%N`, `session:window.pane`, or another tmux target (see `tmuxmate list`).
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// The text, or `-` for stdin. Text that starts with `-` goes after `--`.
    #[serde(deserialize_with = "super::request::required")]
    pub text: Option<String>,
    /// Send exactly one Enter after the settle delay.
    #[arg(long)]
    #[serde(default)]
    pub enter: bool,
    /// Delay before Enter (default: @tmuxmate-paste-settle-ms, else 150).
    #[arg(long, value_name = "MS")]
    pub settle_ms: Option<u64>,
    /// Read the text from a file (`-` for stdin).
    #[arg(long, value_name = "FILE", conflicts_with = "text")]
    #[serde(skip)]
    pub file: Option<PathBuf>,
}

// What `keys` asks for: the CLI's `keys` arguments (the MCP tool presses keys through
// `tmux_send_keys`, `SendAsk::keys`).
#[derive(clap::Args, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct KeysAsk {
    /// The pane: `%N`, `session:window.pane`, or another tmux target (see `tmuxmate list`).
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// Key names: Enter Escape Tab BTab Up Down Left Right Home End PageUp PageDown BSpace C-a..C-z F1..F12
    /// (none starts with `-`, so options are accepted anywhere on the line).
    #[arg(required = true)]
    pub keys: Vec<String>,
}

impl SendAsk {
    /// The line typed: a host's `call` runs it (`send -t TEXT --host`, the text inline).
    pub fn run(&self, tmux: &Tmux) -> Result<Sent, Error> {
        match (&self.text, &self.keys) {
            (Some(text), None) => send(
                tmux,
                self.target.as_deref(),
                text,
                self.enter,
                self.cancel_mode,
            ),
            _ => Err(Error::usage(
                "refused: send types one line of text (given inline; keys are pressed with `keys`)",
            )),
        }
    }
}

impl Operation for SendAsk {
    const NAME: &'static str = "send";
    type Answer = Sent;
    fn waits(&self) -> Duration {
        crate::tmux::client::DEFAULT_TIMEOUT
    }
}

#[derive(Serialize, Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Sent {
    pub target: String,
    pub pane_id: String,
    pub sent: usize,
    pub enter: bool,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Pasted {
    pub target: String,
    pub pane_id: String,
    pub bytes: usize,
    pub lines: usize,
    pub sanitized: usize,
    pub enter: bool,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Pressed {
    pub target: String,
    pub pane_id: String,
    pub keys: Vec<String>,
    pub in_mode: bool,
}

/// The bytes of a file, or of stdin when the path is `-`, bounded.
pub fn read_source(f: &std::path::Path) -> Result<Vec<u8>, Error> {
    let mut b = Vec::new();
    if f == std::path::Path::new("-") {
        std::io::stdin()
            .take(MAX_INPUT + 1)
            .read_to_end(&mut b)
            .map_err(|e| Error::new(format!("cannot read stdin: {e}")))?;
    } else {
        std::fs::File::open(f)
            .and_then(|h| h.take(MAX_INPUT + 1).read_to_end(&mut b))
            .map_err(|e| Error::new(format!("cannot read --file {}: {e}", f.display())))?;
    }
    if b.len() as u64 > MAX_INPUT {
        return Err(Error::usage("refused: the text is larger than 16 MiB"));
    }
    Ok(b)
}

/// Refuse (or leave) copy/view mode before typing into a pane.
pub fn ensure_not_in_mode(tmux: &Tmux, p: &PaneInfo, cancel: bool) -> Result<(), Error> {
    if !p.in_mode {
        return Ok(());
    }
    if !cancel {
        return Err(Error::refused(format!(
            "refused: pane {} is in {} (typed keys would be eaten by the mode, and a 'q' would leave it); \
             pass --cancel-mode to leave the mode first",
            p.pane_id,
            if p.mode.is_empty() { "a mode" } else { &p.mode }
        )));
    }
    tmux.run(&targs![
        "send-keys",
        "-t",
        Arg::id(&p.pane_id),
        "-X",
        "cancel"
    ])?;
    Ok(())
}

fn refuse_dead(p: &PaneInfo) -> Result<(), Error> {
    if p.dead {
        return Err(Error::refused(format!(
            "refused: pane {} is dead (its program exited); nothing would read the text",
            p.pane_id
        )));
    }
    Ok(())
}

/// Type one line of literal text, byte-exact, then Enter if asked.
pub fn send(
    tmux: &Tmux,
    target: Option<&str>,
    text: &str,
    enter: bool,
    cancel_mode: bool,
) -> Result<Sent, Error> {
    if text.len() > MAX_SEND_BYTES {
        return Err(Error::usage(format!(
            "refused: {} bytes is over the {MAX_SEND_BYTES}-byte limit of one send; nothing was \
             typed (use `tmuxmate paste`, or a file)",
            text.len()
        )));
    }
    pane_input::validate_line(text)?;
    let p = policy::input_target(
        tmux,
        target,
        "send",
        &format!("type {} bytes of text", text.len()),
    )?;
    refuse_dead(&p)?;
    ensure_not_in_mode(tmux, &p, cancel_mode)?;
    // One tmux round trip either way: the line and its Enter as one command list.
    if enter {
        pane_input::paste_then_enter(tmux, &p.pane_id, text.as_bytes(), false)?;
    } else {
        pane_input::paste_bytes(tmux, &p.pane_id, text.as_bytes(), false)?;
    }
    Ok(Sent {
        target: p.target(),
        pane_id: p.pane_id,
        sent: text.len(),
        enter,
    })
}

/// The longest wait between a paste and its Enter (a flag above it is refused, an
/// option above it is taken as this): nothing a CLI needs comes near it, and a huge
/// value would hold the call, and an MCP worker, for ever.
pub const MAX_SETTLE_MS: u64 = 10_000;
/// The most keys one `keys` call presses (tmux works through each; 100 000 kept it busy
/// past every timeout).
pub const MAX_KEYS: usize = 1_000;
/// The most text one `send` types, and one `paste` pastes.
pub const MAX_SEND_BYTES: usize = 1 << 20;
pub const MAX_PASTE_BYTES: usize = 16 << 20;

pub fn settle_ms(tmux: &Tmux, flag: Option<u64>) -> u64 {
    if let Some(ms) = flag {
        return ms.min(MAX_SETTLE_MS);
    }
    let opt = tmux
        .run(&[
            "show-options",
            "-gqv",
            crate::tmux::options::PASTE_SETTLE_MS.name,
        ])
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok());
    match opt {
        Some(ms) if ms > MAX_SETTLE_MS => {
            crate::sys::state::log(&format!(
                "paste: {} is {ms} ms, over {MAX_SETTLE_MS}: waited {MAX_SETTLE_MS}",
                crate::tmux::options::PASTE_SETTLE_MS.name
            ));
            MAX_SETTLE_MS
        }
        Some(ms) => ms,
        None => DEFAULT_SETTLE_MS,
    }
}

/// Refuse a settle time over [`MAX_SETTLE_MS`] (CLI and MCP alike, before anything runs).
pub fn check_settle(flag: Option<u64>) -> Result<(), Error> {
    match flag {
        Some(ms) if ms > MAX_SETTLE_MS => Err(Error::usage(format!(
            "refused: a settle time of {ms} ms is over the {MAX_SETTLE_MS} ms limit; nothing was pasted"
        ))),
        _ => Ok(()),
    }
}

/// Paste text as one bracketed paste (sanitized), then exactly one Enter if asked.
pub fn paste(
    tmux: &Tmux,
    target: Option<&str>,
    text: &str,
    enter: bool,
    settle: Option<u64>,
) -> Result<Pasted, Error> {
    if text.is_empty() {
        return Err(Error::usage("refused: the text is empty; nothing to paste"));
    }
    if text.len() > MAX_PASTE_BYTES {
        return Err(Error::usage(format!(
            "refused: {} bytes is over the {MAX_PASTE_BYTES}-byte paste limit; nothing was pasted \
             (write it to a file and have the program read that)",
            text.len()
        )));
    }
    check_settle(settle)?;
    let (clean, sanitized) = pane_input::sanitize_paste(text);
    let p = policy::input_target(
        tmux,
        target,
        "paste",
        &format!("paste {} bytes", clean.len()),
    )?;
    refuse_dead(&p)?;
    // paste-buffer bypasses copy mode, but the Enter after it would not.
    if enter {
        ensure_not_in_mode(tmux, &p, false)?;
    }
    pane_input::paste_bytes(tmux, &p.pane_id, clean.as_bytes(), true)?;
    if enter {
        std::thread::sleep(Duration::from_millis(settle_ms(tmux, settle)));
        tmux.run(&targs!["send-keys", "-t", Arg::id(&p.pane_id), "Enter"])?;
    }
    Ok(Pasted {
        target: p.target(),
        pane_id: p.pane_id,
        bytes: clean.len(),
        lines: clean.lines().count(),
        sanitized,
        enter,
    })
}

/// Press named keys; any name outside the allow-list refuses the whole call.
pub fn keys(tmux: &Tmux, target: Option<&str>, keys: &[String]) -> Result<Pressed, Error> {
    if keys.is_empty() {
        return Err(Error::usage(
            "refused: no key names given; name at least one, e.g. Enter",
        ));
    }
    if keys.len() > MAX_KEYS {
        return Err(Error::usage(format!(
            "refused: {} keys is over the {MAX_KEYS}-key limit of one call; nothing was pressed",
            keys.len()
        )));
    }
    if let Some(bad) = keys.iter().find(|k| !pane_input::is_allowed_key(k)) {
        return Err(Error::usage(format!(
            "refused: {bad:?} is not an allowed key name. Allowed: Enter Escape Tab BTab Up Down Left Right \
             Home End PageUp PageDown BSpace C-a..C-z F1..F12. To type text use `tmuxmate send` or `paste`"
        )));
    }
    let p = policy::input_target(tmux, target, "keys", &format!("press {}", keys.join(" ")))?;
    let mut args: Vec<Arg> = targs!["send-keys", "-t", Arg::id(&p.pane_id), "--"].into();
    // Each key passed the allow-list above.
    args.extend(keys.iter().map(|k| Arg::literal(k)));
    tmux.run(&args)?;
    Ok(Pressed {
        target: p.target(),
        pane_id: p.pane_id.clone(),
        keys: keys.to_vec(),
        in_mode: p.in_mode,
    })
}
