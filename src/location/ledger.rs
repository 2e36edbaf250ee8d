//! The per-agent durable ledger: what was injected, what is queued, offered, delivered.
//!
//! Owns: one append-only JSONL file per agent address under `<state>/agents/`, an
//! exclusive `flock` around every read-modify-append, compaction, and where an address's
//! items go after the address moved (a cleared conversation). Invariants:
//! - an item key is queued at most once per ledger; it is *offered* (fsynced) before its
//!   text is printed, and after the print succeeded it is *delivered*, or, when the
//!   harness keeps a transcript, *printed*: then the next turn confirms it from the
//!   transcript (see `crate::location::delivered`). An offered item not confirmed is offered again,
//!   so a turn killed before printing loses nothing; one killed after printing can double
//!   an item at most once (never with a transcript); an item printed twice that the
//!   transcript does not show, where no context of ours was ever recorded, is held (not
//!   printed, not delivered) until the transcript shows one (then it is offered again):
//!   a harness that records no context costs one duplicate, one that dropped both prints
//!   loses nothing (see `crate::location::turn`);
//! - a batch of records is appended whole or not at all: a failed write (full disk, file
//!   size limit) is cut back to the previous length before the error is returned;
//! - a corrupt or half-written line is skipped and resets the remembered location (so
//!   the next turn re-injects rather than trusting a reading it cannot read);
//! - any address up to `MAX_ADDRESS` bytes has a file: short safe ones are spelled out
//!   (reversibly), others are named by their SHA-256 and the readable address is the
//!   file's first record (checked on every open);
//! - the file is rewritten compactly past `COMPACT_BYTES`, keeping what the state needs.

use crate::location::delivered::Offered;
use std::collections::{HashSet, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::sys::state;

const COMPACT_BYTES: u64 = 64 * 1024;
/// A ledger larger than this is not read (it is compacted long before; a file this big
/// was put there by someone else).
const READ_MAX: u64 = 16 << 20;
/// Delivered keys kept after compaction, so a late duplicate `queue` of a recent key is
/// still refused (keys are unique per job or note; duplicates come only from crash repair
/// seconds later). Small enough that a compacted ledger stays well under COMPACT_BYTES.
const KEEP_DELIVERED: usize = 200;
/// The longest agent address tmuxmate accepts, in bytes.
pub const MAX_ADDRESS: usize = 1024;
/// Spelled-out file names longer than this are replaced by a hash (255 is the usual
/// limit for a name; `.jsonl`, `.lock` and temp suffixes must still fit).
const MAX_SPELLED: usize = 80;
/// How many moves `queue` follows (a /clear chain); more means a loop or an attack.
const MAX_HOPS: usize = 16;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "t", rename_all = "camelCase")]
pub enum Record {
    /// The readable address this file belongs to (first record of a new file).
    Addr { agent: String },
    /// The agent began turn `n`.
    Turn { n: u64, at: u64 },
    /// A harness hook saw this address (a session start), before any turn.
    Seen { at: u64 },
    /// The location state (the compared lines) was injected.
    Inject {
        state: String,
        at: u64,
        #[serde(default)]
        interval_ms: u64,
    },
    /// Forget what was injected (compaction or /clear in the harness).
    Forget { at: u64 },
    /// A note waiting for the agent's next turn.
    Queue { key: String, text: String, at: u64 },
    /// A queued note is about to be printed (not yet known to be delivered).
    Offer {
        key: String,
        at: u64,
        /// The harness transcript of the offering turn and its length then: where the
        /// next turn looks for the text to learn whether the harness got it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        transcript: Option<String>,
        #[serde(default)]
        tpos: u64,
        /// The start of the text as printed.
        #[serde(default)]
        head: String,
    },
    /// An offered note was printed in full; the transcript will tell if it arrived.
    Printed { key: String, at: u64 },
    /// A queued note was handed to the agent.
    Deliver { key: String, at: u64 },
    /// The address moved (e.g. `/clear` gave the pane a new session id): `keys` went to
    /// `to`, and what is queued here from now on follows.
    Moved {
        to: String,
        #[serde(default)]
        keys: Vec<String>,
        at: u64,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub key: String,
    pub text: String,
    pub at: u64,
    pub offer: Option<Offered>,
    /// How many answers printed it in full (with a transcript, before it is confirmed).
    pub printed: u32,
}

#[derive(Debug, Clone, Default)]
pub struct LedgerState {
    pub addr: Option<String>,
    pub turns: u64,
    /// A per-turn call was recorded, whatever its number (`turn --turn 0` counts too).
    pub turned: bool,
    pub seen_at: Option<u64>,
    pub location: Option<(String, u64, u64)>,
    pub pending: Vec<Pending>,
    pub delivered: VecDeque<String>,
    pub seen: HashSet<String>,
    pub corrupt_lines: usize,
    pub moved_to: Option<String>,
}

impl LedgerState {
    /// Whether the address belongs to an agent tmuxmate has heard from (a turn or a hook).
    pub fn known(&self) -> bool {
        self.turned || self.turns > 0 || self.seen_at.is_some()
    }

    fn apply(&mut self, r: Record) {
        match r {
            Record::Addr { agent } => self.addr = Some(agent),
            Record::Turn { n, .. } => {
                self.turns = self.turns.max(n);
                self.turned = true;
                // The agent is alive at this address again (e.g. a resumed session).
                self.moved_to = None;
            }
            Record::Seen { at } => {
                self.seen_at = Some(at);
                self.moved_to = None;
            }
            Record::Inject {
                state,
                at,
                interval_ms,
            } => self.location = Some((state, at, interval_ms)),
            Record::Forget { .. } => self.location = None,
            Record::Queue { key, text, at } => {
                if self.seen.insert(key.clone()) {
                    self.pending.push(Pending {
                        key,
                        text,
                        at,
                        offer: None,
                        printed: 0,
                    });
                }
            }
            Record::Offer {
                key,
                at,
                transcript,
                tpos,
                head,
            } => {
                if let Some(p) = self.pending.iter_mut().find(|p| p.key == key) {
                    p.offer = Some(Offered {
                        at,
                        transcript,
                        tpos,
                        head,
                    });
                }
            }
            Record::Printed { key, .. } => {
                if let Some(p) = self.pending.iter_mut().find(|p| p.key == key) {
                    p.printed += 1;
                }
            }
            Record::Deliver { key, .. } => {
                self.seen.insert(key.clone());
                self.pending.retain(|p| p.key != key);
                self.delivered.push_back(key);
                if self.delivered.len() > KEEP_DELIVERED {
                    self.delivered.pop_front();
                }
            }
            Record::Moved { to, keys, .. } => {
                self.pending.retain(|p| !keys.contains(&p.key));
                self.moved_to = Some(to);
            }
        }
    }

    fn parse(text: &str) -> LedgerState {
        let mut s = LedgerState::default();
        for line in text.split('\n') {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Record>(line) {
                Ok(r) => s.apply(r),
                Err(_) => {
                    s.corrupt_lines += 1;
                    s.location = None;
                }
            }
        }
        s
    }

    /// The records that reproduce this state, for compaction.
    fn compacted(&self) -> Vec<Record> {
        let mut out = Vec::new();
        if let Some(a) = &self.addr {
            out.push(Record::Addr { agent: a.clone() });
        }
        out.push(Record::Turn {
            n: self.turns,
            at: crate::sys::time::now_ms(),
        });
        if let Some(at) = self.seen_at {
            out.push(Record::Seen { at });
        }
        for key in &self.delivered {
            out.push(Record::Deliver {
                key: key.clone(),
                at: 0,
            });
        }
        for p in &self.pending {
            out.push(Record::Queue {
                key: p.key.clone(),
                text: p.text.clone(),
                at: p.at,
            });
            if let Some(o) = &p.offer {
                out.push(Record::Offer {
                    key: p.key.clone(),
                    at: o.at,
                    transcript: o.transcript.clone(),
                    tpos: o.tpos,
                    head: o.head.clone(),
                });
            }
            for _ in 0..p.printed {
                out.push(Record::Printed {
                    key: p.key.clone(),
                    at: 0,
                });
            }
        }
        if let Some((st, at, iv)) = &self.location {
            out.push(Record::Inject {
                state: st.clone(),
                at: *at,
                interval_ms: *iv,
            });
        }
        if let Some(to) = &self.moved_to {
            out.push(Record::Moved {
                to: to.clone(),
                keys: Vec::new(),
                at: 0,
            });
        }
        out
    }
}

/// The file name (without extension) for an address: spelled out when short and safe
/// (`[A-Za-z0-9_-]` as is, every other byte `%XX`, as before), else `~` and a SHA-256
/// prefix (`~` never appears in a spelled name, so the two kinds cannot meet).
pub fn file_name(agent: &str) -> String {
    let s = spelled(agent, MAX_SPELLED);
    // 40 hex digits = 160 bits: no accidental collision; a forged one is caught by the
    // address record inside.
    s.unwrap_or_else(|| format!("~{}", &crate::sys::hash::sha256_hex(agent.as_bytes())[..40]))
}

/// The `%XX` spelling of an address, if it is at most `max` bytes long.
fn spelled(agent: &str, max: usize) -> Option<String> {
    let mut s = String::new();
    for b in agent.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
        if s.len() > max {
            return None;
        }
    }
    Some(s)
}

/// Refuse an address no agent can have (the wording names the flag via `what`).
pub fn check_address(what: &str, agent: &str) -> Result<(), String> {
    if agent.is_empty() || agent.trim().is_empty() {
        return Err(format!("{what} needs a non-empty agent address"));
    }
    if agent.chars().any(|c| c.is_control()) {
        return Err(format!(
            "{what}: the agent address contains control characters"
        ));
    }
    if agent.len() > MAX_ADDRESS {
        return Err(format!(
            "{what}: the agent address is {} bytes; at most {MAX_ADDRESS} are accepted",
            agent.len()
        ));
    }
    Ok(())
}

pub struct Ledger {
    agent: String,
    path: PathBuf,
}

/// A locked view: read `state`, then `push` records; they are written on commit.
pub struct Txn {
    pub state: LedgerState,
    new: Vec<Record>,
}

impl Txn {
    pub fn push(&mut self, r: Record) {
        self.state.apply(r.clone());
        self.new.push(r);
    }
}

/// The ledger held under its exclusive lock (released on drop, or when the process dies).
pub struct Locked {
    agent: String,
    path: PathBuf,
    _lock: nix::fcntl::Flock<File>,
    file: File,
    /// Length of the file as we know it (everything up to here is ours and whole).
    len: u64,
    ends_nl: bool,
    pub state: LedgerState,
}

impl Locked {
    /// Durably append `recs` (fsync unless only turn counters), whole or not at all;
    /// `state` reflects them only on success.
    pub fn commit(&mut self, recs: &[Record]) -> std::io::Result<()> {
        let sync = recs
            .iter()
            .any(|r| !matches!(r, Record::Turn { .. } | Record::Addr { .. }));
        self.commit_with(recs, sync)
    }

    /// `commit`, choosing whether to fsync. A delivery confirmation needs none: lost in a
    /// machine crash, it only makes the next turn offer the item again (a duplicate, never
    /// a loss), and skipping it shrinks the print-to-confirm window a kill can fall into.
    pub fn commit_with(&mut self, recs: &[Record], sync: bool) -> std::io::Result<()> {
        let p = self.prepare(recs);
        self.write(p, sync)
    }

    /// Everything of a commit but the write: the next state and the bytes. Done before
    /// printing, so that after the print only one `write` is left to do.
    pub fn prepare(&self, recs: &[Record]) -> Prepared {
        if recs.is_empty() {
            return Prepared {
                next: None,
                body: Body::Append(String::new()),
            };
        }
        let mut recs = recs.to_vec();
        if self.len == 0 && self.state.addr.is_none() {
            recs.insert(
                0,
                Record::Addr {
                    agent: self.agent.clone(),
                },
            );
        }
        let mut next = self.state.clone();
        for r in &recs {
            next.apply(r.clone());
        }
        if self.len + 256 > COMPACT_BYTES {
            let mut body = String::new();
            for r in next.compacted() {
                body.push_str(&serde_json::to_string(&r).unwrap_or_default());
                body.push('\n');
            }
            // Rewrite only when it pays: large pending notes would otherwise make every
            // call rewrite (and fsync) the whole file; then it grows until they are read.
            if (body.len() as u64) < COMPACT_BYTES / 2 {
                return Prepared {
                    next: Some(next),
                    body: Body::Rewrite(body),
                };
            }
        }
        let mut buf = String::new();
        // A half-written last line must not swallow the first new record.
        if self.len > 0 && !self.ends_nl {
            buf.push('\n');
        }
        for r in &recs {
            buf.push_str(&serde_json::to_string(r).unwrap_or_default());
            buf.push('\n');
        }
        Prepared {
            next: Some(next),
            body: Body::Append(buf),
        }
    }

    /// Write a prepared commit (made from this lock's current state), whole or not at all.
    pub fn write(&mut self, p: Prepared, sync: bool) -> std::io::Result<()> {
        let Some(next) = p.next else {
            return Ok(());
        };
        let buf = match p.body {
            Body::Rewrite(body) => {
                state::write_atomic(&self.path, body.as_bytes())?;
                // The rename replaced the file: later appends must go to the new one.
                self.file = open_data(&self.path)?;
                self.len = body.len() as u64;
                self.ends_nl = true;
                self.state = next;
                crate::sys::wake::poke();
                return Ok(());
            }
            Body::Append(buf) => buf,
        };
        let written = self
            .file
            .seek(SeekFrom::Start(self.len))
            .and_then(|_| self.file.write_all(buf.as_bytes()))
            .and_then(|_| {
                // Durability matters for what was offered or queued; a lost turn
                // counter only shifts the number shown, so it costs no fsync.
                if sync { self.file.sync_data() } else { Ok(()) }
            });
        if let Err(e) = written {
            // Whole or nothing: cut off what part of the batch reached the file (a full
            // disk or a size limit stops a write midway). Shrinking needs no space.
            let _ = self.file.set_len(self.len);
            let _ = self.file.sync_data();
            return Err(e);
        }
        self.len += buf.len() as u64;
        self.ends_nl = true;
        self.state = next;
        // The live views show what is queued and delivered (`sys::wake`).
        crate::sys::wake::poke();
        Ok(())
    }
}

/// A commit computed but not yet written (see `Locked::prepare`).
pub struct Prepared {
    next: Option<LedgerState>,
    body: Body,
}

enum Body {
    Append(String),
    Rewrite(String),
}

fn open_data(path: &Path) -> std::io::Result<File> {
    state::open_private(
        path,
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true),
    )
}

/// Where `queue` put an item.
#[derive(Debug, PartialEq, Eq)]
pub enum Queued {
    /// Queued for this address (the final one, after following moves).
    Yes(String),
    /// The key was queued there before.
    Already(String),
}

impl Ledger {
    pub fn for_agent(agent: &str) -> Ledger {
        let dir = state::state_dir().join("agents");
        let name = file_name(agent);
        // Versions before hashed names spelled out every address that fit a file name:
        // such a ledger keeps being used, so nothing queued there is stranded.
        let legacy = name
            .starts_with('~')
            .then(|| spelled(agent, 240))
            .flatten()
            .map(|n| dir.join(format!("{n}.jsonl")))
            .filter(|p| p.exists());
        Ledger {
            agent: agent.to_string(),
            path: legacy.unwrap_or_else(|| dir.join(format!("{name}.jsonl"))),
        }
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Read without locking (for cheap pre-checks; decisions are re-made under the lock).
    pub fn peek(&self) -> LedgerState {
        state::read_private(&self.path, READ_MAX)
            .map(|b| LedgerState::parse(&String::from_utf8_lossy(&b)))
            .unwrap_or_default()
    }

    /// Take the agent's exclusive lock and read the ledger.
    pub fn lock(&self) -> std::io::Result<Locked> {
        if let Some(dir) = self.path.parent() {
            state::private_dir(dir)?;
        }
        let lock_file = state::open_private(
            &self.path.with_extension("lock"),
            OpenOptions::new().create(true).truncate(false).write(true),
        )?;
        let lock = nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| std::io::Error::from(e))?;
        let mut file = open_data(&self.path)?;
        // Bytes, not a String: a torn write can split a UTF-8 character, and that must
        // cost one corrupt line, not the whole ledger.
        let mut raw = Vec::new();
        (&mut file).take(READ_MAX + 1).read_to_end(&mut raw)?;
        if raw.len() as u64 > READ_MAX {
            return Err(std::io::Error::other(format!(
                "{} is larger than {READ_MAX} bytes, which no ledger of tmuxmate's becomes: move it away",
                self.path.display()
            )));
        }
        let text = String::from_utf8_lossy(&raw);
        let st = LedgerState::parse(&text);
        if let Some(a) = st.addr.as_deref().filter(|a| *a != self.agent) {
            return Err(std::io::Error::other(format!(
                "{} belongs to agent address {a:?}, not {:?} (a hash collision or a hand-edited file); move it away",
                self.path.display(),
                self.agent
            )));
        }
        Ok(Locked {
            agent: self.agent.clone(),
            path: self.path.clone(),
            _lock: lock,
            file,
            len: raw.len() as u64,
            ends_nl: raw.is_empty() || raw.ends_with(b"\n"),
            state: st,
        })
    }

    /// Run `f` under the agent's exclusive lock and durably append what it pushed.
    pub fn transact<T>(&self, f: impl FnOnce(&mut Txn) -> T) -> std::io::Result<T> {
        let mut l = self.lock()?;
        let mut txn = Txn {
            state: l.state.clone(),
            new: Vec::new(),
        };
        let out = f(&mut txn);
        l.commit(&txn.new)?;
        Ok(out)
    }

    /// Queue a note under `key` unless that key was queued there before, following the
    /// address's moves (a cleared conversation) to where its agent is now.
    pub fn queue(&self, key: &str, text: &str) -> std::io::Result<Queued> {
        let mut here = Ledger::for_agent(&self.agent);
        for _ in 0..MAX_HOPS {
            // Decided under this ledger's lock: a move made concurrently is either seen
            // here (follow it) or happens after our record (and carries it along).
            let next = here.transact(|t| {
                if let Some(to) = t.state.moved_to.clone() {
                    return Err(to);
                }
                if t.state.seen.contains(key) {
                    return Ok(false);
                }
                t.push(Record::Queue {
                    key: key.to_string(),
                    text: text.to_string(),
                    at: crate::sys::time::now_ms(),
                });
                Ok(true)
            })?;
            match next {
                Ok(true) => return Ok(Queued::Yes(here.agent)),
                Ok(false) => return Ok(Queued::Already(here.agent)),
                Err(to) => here = Ledger::for_agent(&to),
            }
        }
        Err(std::io::Error::other(format!(
            "agent address {:?} moved more than {MAX_HOPS} times (a loop?); not queued",
            self.agent
        )))
    }

    /// Move what is queued here to `to`, once, and make later items follow (the pane's
    /// conversation got a new address). Returns how many items moved.
    pub fn move_to(&self, to: &str) -> std::io::Result<usize> {
        if to == self.agent {
            return Ok(0);
        }
        let target = Ledger::for_agent(to);
        let mut l = self.lock()?;
        if l.state.moved_to.as_deref() == Some(to) && l.state.pending.is_empty() {
            return Ok(0);
        }
        // An item the old conversation was shown (its transcript says so) stays delivered
        // there; the rest go.
        let (shown, items): (Vec<Pending>, Vec<Pending>) =
            l.state.pending.clone().into_iter().partition(|p| {
                p.offer
                    .as_ref()
                    .is_some_and(crate::location::delivered::in_transcript)
            });
        if !shown.is_empty() {
            let recs: Vec<Record> = shown
                .iter()
                .map(|p| Record::Deliver {
                    key: p.key.clone(),
                    at: crate::sys::time::now_ms(),
                })
                .collect();
            l.commit(&recs)?;
        }
        // Into the new ledger first (durably), then marked moved here: a crash in between
        // moves them again, and the new ledger refuses keys it already has.
        if !items.is_empty() {
            target.transact(|t| {
                for p in &items {
                    if !t.state.seen.contains(&p.key) {
                        t.push(Record::Queue {
                            key: p.key.clone(),
                            text: p.text.clone(),
                            at: p.at,
                        });
                    }
                }
            })?;
        }
        l.commit(&[Record::Moved {
            to: to.to_string(),
            keys: items.iter().map(|p| p.key.clone()).collect(),
            at: crate::sys::time::now_ms(),
        }])?;
        Ok(items.len())
    }

    /// Note that a hook saw this address (so `--notify` may name it before its first turn).
    pub fn seen(&self) -> std::io::Result<()> {
        self.transact(|t| {
            if t.state.seen_at.is_none() || t.state.moved_to.is_some() {
                t.push(Record::Seen {
                    at: crate::sys::time::now_ms(),
                });
            }
        })
    }

    /// Forget the injected location (the model no longer sees it).
    pub fn forget(&self) -> std::io::Result<()> {
        self.transact(|t| {
            t.push(Record::Forget {
                at: crate::sys::time::now_ms(),
            })
        })
    }
}

/// Every address that has a ledger, with its state (for "known agents"), newest first.
/// Reads at most `limit` ledgers.
pub fn all_agents(limit: usize) -> Vec<(String, LedgerState)> {
    let dir = state::state_dir().join("agents");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|p| {
            let m = std::fs::metadata(&p).and_then(|m| m.modified()).ok()?;
            Some((m, p))
        })
        .collect();
    // Times were read once above: a file renamed meanwhile cannot upset the order.
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    files
        .into_iter()
        .take(limit)
        .filter_map(|(_, p)| {
            let st = LedgerState::parse(&String::from_utf8_lossy(
                &state::read_private(&p, READ_MAX).ok()?,
            ));
            let addr = st
                .addr
                .clone()
                .or_else(|| decode_spelled(p.file_stem()?.to_str()?))?;
            Some((addr, st))
        })
        .collect()
}

/// The address a spelled-out file name stands for (`None` for hashed names).
fn decode_spelled(name: &str) -> Option<String> {
    let b = name.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(h, 16).ok()?);
            i += 3;
        } else if b[i].is_ascii_alphanumeric() || b[i] == b'-' || b[i] == b'_' {
            out.push(b[i]);
            i += 1;
        } else {
            return None;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_line_resets_location() {
        let s = LedgerState::parse(
            "{\"t\":\"inject\",\"state\":\"a\",\"at\":1,\"intervalMs\":0}\n{\"t\":\"inj",
        );
        assert!(s.location.is_none());
        assert_eq!(s.corrupt_lines, 1);
    }

    #[test]
    fn queue_deliver_once() {
        let mut s = LedgerState::default();
        s.apply(Record::Queue {
            key: "k".into(),
            text: "x".into(),
            at: 0,
        });
        s.apply(Record::Queue {
            key: "k".into(),
            text: "x".into(),
            at: 0,
        });
        assert_eq!(s.pending.len(), 1);
        s.apply(Record::Deliver {
            key: "k".into(),
            at: 0,
        });
        assert!(s.pending.is_empty());
    }

    #[test]
    fn names_are_safe() {
        assert_eq!(file_name("../a b"), "%2E%2E%2Fa%20b");
        assert_eq!(decode_spelled("%2E%2E%2Fa%20b").as_deref(), Some("../a b"));
        // Long or odd addresses (1 KB of dots, slashes, unicode) get a bounded hashed name.
        for a in [
            ".".repeat(1024),
            "/".repeat(1024),
            "é😀".repeat(170),
            ".".repeat(27),
        ] {
            let n = file_name(&a);
            assert!(n.len() <= MAX_SPELLED + 1, "{n}");
            assert!(n.starts_with('~'));
            assert!(decode_spelled(&n).is_none());
        }
        assert_ne!(file_name(&".".repeat(1024)), file_name(&".".repeat(1023)));
        assert_eq!(spelled("a/b", 80).as_deref(), Some("a%2Fb"));
        assert_eq!(spelled(&".".repeat(27), 80), None);
        // Safe short names are unchanged from the earlier versions.
        let uuid = "5eed0000-0000-4000-8000-00000000c1a1";
        assert_eq!(file_name(uuid), uuid);
        assert!(check_address("--notify", &"x".repeat(1024)).is_ok());
        assert!(check_address("--notify", &"x".repeat(1025)).is_err());
        assert!(check_address("--notify", "a\nb").is_err());
        assert!(check_address("--notify", "").is_err());
    }

    #[test]
    fn offered_items_stay_pending_until_delivered_and_moves_carry_keys() {
        let mut s = LedgerState::default();
        for k in ["a", "b"] {
            s.apply(Record::Queue {
                key: k.into(),
                text: k.into(),
                at: 0,
            });
        }
        s.apply(Record::Offer {
            key: "a".into(),
            at: 1,
            transcript: None,
            tpos: 0,
            head: "a".into(),
        });
        assert_eq!(s.pending.len(), 2);
        assert!(s.pending[0].offer.is_some());
        s.apply(Record::Printed {
            key: "a".into(),
            at: 1,
        });
        assert_eq!(s.pending[0].printed, 1);
        // Compaction keeps the offer.
        let mut c = LedgerState::default();
        for r in s.compacted() {
            c.apply(r);
        }
        assert_eq!(c.pending, s.pending);
        s.apply(Record::Moved {
            to: "new".into(),
            keys: vec!["a".into(), "b".into()],
            at: 2,
        });
        assert!(s.pending.is_empty());
        assert_eq!(s.moved_to.as_deref(), Some("new"));
        // The agent turning up again at this address ends the move.
        s.apply(Record::Turn { n: 2, at: 3 });
        assert!(s.moved_to.is_none());
    }
}
