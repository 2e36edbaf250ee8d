//! Where an agent's state is kept: its pane's options, and the per-pane lock and alert
//! files in the state directory.
//!
//! Owns: reading the record and who looks at the pane in one tmux call, writing the
//! record (`@tmuxmate-state`, `-since`, `-why` for people and formats, `-state-record` for
//! us) in one tmux call, and the lock that makes read-decide-write one step per pane.
//! Invariants:
//! - every value reaches tmux as an option value (`Arg::literal`), never as a format;
//! - the lock and alert files of a pane are keyed by the server (socket path and start
//!   time, so a restarted server with reused pane ids starts fresh) and the pane id;
//! - a record that does not parse is no record (the next signal starts over), never an
//!   error that would stop the state from moving.

use std::fs::OpenOptions;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::machine::{Record, State};
use crate::targs;
use crate::tmux::options;
use crate::tmux::{Arg, Tmux, TmuxError};

/// The record as JSON in `@tmuxmate-state-record`.
#[derive(Serialize, Deserialize)]
struct Stored {
    state: String,
    since_ms: u64,
    #[serde(default)]
    why: String,
    seq: u64,
    #[serde(default)]
    harness: String,
    #[serde(default)]
    event: String,
    /// When this pane last alerted (unix ms), for the cooldown.
    #[serde(default)]
    alerted_ms: u64,
}

/// One attached client: its name, the pane it shows, its terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    pub name: String,
    pub pane: String,
    pub tty: String,
}

/// A pane's state as read, with the server's key and who looks.
#[derive(Debug, Clone)]
pub struct Read {
    pub server: String,
    /// The pane's `pipe-pane` is open (ours or someone else's).
    pub piped: bool,
    /// `@tmuxmate-state-source`: the source besides the hooks set up for the pane.
    pub source: String,
    /// `@tmuxmate-state-file`: the agent's state file being followed.
    pub state_file: String,
    /// `@tmuxmate-state-error`: a failed request's error seen while the agent retried.
    pub last_error: String,
    pub record: Option<Record>,
    pub alerted_ms: u64,
    pub clients: Vec<Client>,
}

impl Read {
    pub fn looking(&self, pane: &str) -> bool {
        self.clients.iter().any(|c| c.pane == pane)
    }
}

pub fn parse_record(json: &str) -> Option<(Record, u64)> {
    let s: Stored = serde_json::from_str(json.trim()).ok()?;
    Some((
        Record {
            state: State::parse(&s.state)?,
            since_ms: s.since_ms,
            why: s.why,
            seq: s.seq,
            harness: s.harness,
            event: s.event,
        },
        s.alerted_ms,
    ))
}

pub fn record_json(r: &Record, alerted_ms: u64) -> String {
    serde_json::to_string(&Stored {
        state: r.state.name().to_string(),
        since_ms: r.since_ms,
        why: r.why.clone(),
        seq: r.seq,
        harness: r.harness.clone(),
        event: r.event.clone(),
        alerted_ms,
    })
    .unwrap_or_default()
}

/// The pane's record, the server's key and the attached clients, in one tmux call.
pub fn read(tmux: &Tmux, pane: &str) -> Result<Read, TmuxError> {
    let fmt = format!(
        "#{{socket_path}}\t#{{start_time}}\t#{{pane_pipe}}\t#{{{}}}\t#{{{}}}\t#{{{}}}\t#{{{}}}",
        options::STATE_SOURCE.name,
        options::STATE_FILE.name,
        options::STATE_ERROR.name,
        options::STATE_RECORD.name
    );
    let out = tmux.run(&targs![
        "display-message",
        "-p",
        "-t",
        Arg::id(pane),
        Arg::ours(&fmt),
        Arg::SEP,
        "list-clients",
        "-F",
        "#{client_name}\t#{pane_id}\t#{client_tty}",
    ])?;
    let mut lines = out.lines();
    let first = lines.next().unwrap_or("");
    let mut f = first.splitn(7, '\t');
    let (sock, start, pipe, source, file, error, rec) = (
        f.next().unwrap_or(""),
        f.next().unwrap_or(""),
        f.next().unwrap_or(""),
        f.next().unwrap_or(""),
        f.next().unwrap_or(""),
        f.next().unwrap_or(""),
        f.next().unwrap_or(""),
    );
    let server =
        crate::sys::hash::sha256_hex(format!("{sock}\n{start}").as_bytes())[..16].to_string();
    let (record, alerted_ms) = match parse_record(rec) {
        Some((r, a)) => (Some(r), a),
        None => (None, 0),
    };
    let clients = lines.filter_map(parse_client).collect();
    Ok(Read {
        server,
        piped: pipe == "1",
        source: source.to_string(),
        state_file: file.to_string(),
        last_error: error.to_string(),
        record,
        alerted_ms,
        clients,
    })
}

pub fn parse_client(line: &str) -> Option<Client> {
    let mut f = line.split('\t');
    let c = Client {
        name: f.next()?.to_string(),
        pane: f.next()?.to_string(),
        tty: f.next().unwrap_or("").to_string(),
    };
    (!c.name.is_empty()).then_some(c)
}

/// Write `r` into the pane's options, in one tmux call.
pub fn write(tmux: &Tmux, pane: &str, r: &Record, alerted_ms: u64) -> Result<(), TmuxError> {
    let since = (r.since_ms / 1000).to_string();
    let json = record_json(r, alerted_ms);
    let set = |name: &'static str, v: &str| -> Vec<Arg<'static>> {
        vec![
            "set-option".into(),
            "-p".into(),
            "-t".into(),
            Arg::id(pane).into_owned(),
            "--".into(),
            name.into(),
            Arg::literal(v).into_owned(),
        ]
    };
    let mut args = set(options::STATE.name, r.state.name());
    for (n, v) in [
        (options::STATE_SINCE.name, since.as_str()),
        (options::STATE_WHY.name, r.why.as_str()),
        (options::STATE_RECORD.name, json.as_str()),
    ] {
        args.push(Arg::SEP);
        args.extend(set(n, v));
    }
    tmux.run(&args[..])?;
    // Hosts that follow this machine's agents hear of it now (`super::changes`).
    super::changes::mark();
    Ok(())
}

/// The directory of one server's lock and alert files.
pub fn server_dir(server: &str) -> PathBuf {
    crate::sys::state::state_dir().join("agents").join(server)
}

/// A pane id as a file name part (`%12` -> `p12`); `None` for anything else.
pub fn pane_file(pane: &str) -> Option<String> {
    let n = pane.strip_prefix('%')?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then(|| format!("p{n}"))
}

/// The exclusive lock of one pane's state (held while it lives).
pub struct Lock(#[allow(dead_code)] nix::fcntl::Flock<std::fs::File>);

/// Lock the state of `pane` on the server at `socket` (by path: known before any tmux
/// call); with `wait` false, `Ok(None)` when another process holds it.
pub fn lock(socket: &str, pane: &str, wait: bool) -> std::io::Result<Option<Lock>> {
    let name = pane_file(pane)
        .ok_or_else(|| std::io::Error::other(format!("{pane:?} is not a pane id")))?;
    let sock = &crate::sys::hash::sha256_hex(socket.as_bytes())[..16];
    let f = crate::sys::state::open_private(
        &crate::sys::state::state_dir()
            .join("agents")
            .join("locks")
            .join(format!("{sock}-{name}.lock")),
        OpenOptions::new().create(true).truncate(false).write(true),
    )?;
    let how = if wait {
        nix::fcntl::FlockArg::LockExclusive
    } else {
        nix::fcntl::FlockArg::LockExclusiveNonblock
    };
    match nix::fcntl::Flock::lock(f, how) {
        Ok(l) => Ok(Some(Lock(l))),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) if !wait => Ok(None),
        Err((_, e)) => Err(std::io::Error::from(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_junk_is_no_record() {
        let r = Record {
            state: State::NeedsYou,
            since_ms: 1_700_000_000_123,
            why: "permission: Bash: a\tb \"q\"".into(),
            seq: 7,
            harness: "claude".into(),
            event: "PermissionRequest".into(),
        };
        let j = record_json(&r, 5);
        assert!(!j.contains('\t') && !j.contains('\n'));
        assert_eq!(parse_record(&j), Some((r, 5)));
        assert_eq!(parse_record(""), None);
        assert_eq!(
            parse_record("{\"state\":\"busy\",\"since_ms\":1,\"seq\":1}"),
            None
        );
        assert_eq!(parse_record("not json"), None);
    }

    #[test]
    fn pane_files() {
        assert_eq!(pane_file("%12").as_deref(), Some("p12"));
        assert_eq!(pane_file("%"), None);
        assert_eq!(pane_file("%1/../x"), None);
        assert_eq!(pane_file("12"), None);
        assert_eq!(
            parse_client("/dev/pts/3\t%4\t/dev/pts/3"),
            Some(Client {
                name: "/dev/pts/3".into(),
                pane: "%4".into(),
                tty: "/dev/pts/3".into()
            })
        );
    }
}
