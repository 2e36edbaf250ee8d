//! The per-agent durable ledger: what was injected, what is queued, what was delivered.
//!
//! Owns: one append-only JSONL file per agent address under `<state>/agents/`, an
//! exclusive `flock` around every read-modify-append, and compaction. Invariants:
//! - an item key is queued at most once and delivered at most once (the delivery record
//!   is fsynced before the text is printed, so a crash never prints an item twice);
//! - a corrupt or half-written line is skipped and resets the remembered location (so
//!   the next turn re-injects rather than trusting a reading it cannot read);
//! - the file is rewritten compactly past `COMPACT_BYTES`, keeping pending items, the
//!   last location, the turn counter and the most recent delivered keys.

use std::collections::{HashSet, VecDeque};
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::state;

const COMPACT_BYTES: u64 = 64 * 1024;
/// Delivered keys kept after compaction, so a late duplicate `queue` of a recent key is
/// still refused (keys are unique per job or note; duplicates come only from crash repair
/// seconds later). Small enough that a compacted ledger stays well under COMPACT_BYTES.
const KEEP_DELIVERED: usize = 200;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "t", rename_all = "camelCase")]
pub enum Record {
    /// The agent began turn `n`.
    Turn { n: u64, at: u64 },
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
    /// A queued note was handed to the agent.
    Deliver { key: String, at: u64 },
}

#[derive(Debug, Clone, Default)]
pub struct LedgerState {
    pub turns: u64,
    pub location: Option<(String, u64, u64)>,
    pub pending: Vec<(String, String, u64)>,
    pub delivered: VecDeque<String>,
    pub seen: HashSet<String>,
    pub corrupt_lines: usize,
}

impl LedgerState {
    fn apply(&mut self, r: Record) {
        match r {
            Record::Turn { n, .. } => self.turns = self.turns.max(n),
            Record::Inject {
                state,
                at,
                interval_ms,
            } => self.location = Some((state, at, interval_ms)),
            Record::Forget { .. } => self.location = None,
            Record::Queue { key, text, at } => {
                if self.seen.insert(key.clone()) {
                    self.pending.push((key, text, at));
                }
            }
            Record::Deliver { key, .. } => {
                self.seen.insert(key.clone());
                self.pending.retain(|(k, _, _)| *k != key);
                self.delivered.push_back(key);
                if self.delivered.len() > KEEP_DELIVERED {
                    self.delivered.pop_front();
                }
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
        let mut out = vec![Record::Turn {
            n: self.turns,
            at: state::now_ms(),
        }];
        for key in &self.delivered {
            out.push(Record::Deliver {
                key: key.clone(),
                at: 0,
            });
        }
        for (key, text, at) in &self.pending {
            out.push(Record::Queue {
                key: key.clone(),
                text: text.clone(),
                at: *at,
            });
        }
        if let Some((st, at, iv)) = &self.location {
            out.push(Record::Inject {
                state: st.clone(),
                at: *at,
                interval_ms: *iv,
            });
        }
        out
    }
}

/// Encode an agent address as a file name, reversibly and without path tricks.
pub fn file_name(agent: &str) -> String {
    let mut s = String::new();
    for b in agent.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

pub struct Ledger {
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

impl Ledger {
    pub fn for_agent(agent: &str) -> Ledger {
        Ledger {
            path: state::state_dir()
                .join("agents")
                .join(format!("{}.jsonl", file_name(agent))),
        }
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Read without locking (for cheap pre-checks; decisions are re-made under the lock).
    pub fn peek(&self) -> LedgerState {
        std::fs::read(&self.path)
            .map(|b| LedgerState::parse(&String::from_utf8_lossy(&b)))
            .unwrap_or_default()
    }

    /// Run `f` under the agent's exclusive lock and durably append what it pushed.
    pub fn transact<T>(&self, f: impl FnOnce(&mut Txn) -> T) -> std::io::Result<T> {
        let lock_file = state::open_private(
            &self.path.with_extension("lock"),
            OpenOptions::new().create(true).truncate(false).write(true),
        )?;
        let _lock = nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| std::io::Error::from(e))?;
        let mut file = state::open_private(
            &self.path,
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .append(true),
        )?;
        // Bytes, not a String: a torn write can split a UTF-8 character, and that must
        // cost one corrupt line, not the whole ledger.
        let mut raw = Vec::new();
        file.read_to_end(&mut raw)?;
        let text = String::from_utf8_lossy(&raw).into_owned();
        let mut txn = Txn {
            state: LedgerState::parse(&text),
            new: Vec::new(),
        };
        let out = f(&mut txn);
        if txn.new.is_empty() {
            return Ok(out);
        }
        if text.len() as u64 + 256 > COMPACT_BYTES {
            let mut body = String::new();
            for r in txn.state.compacted() {
                body.push_str(&serde_json::to_string(&r).unwrap_or_default());
                body.push('\n');
            }
            // Rewrite only when it pays: large pending notes would otherwise make every
            // call rewrite (and fsync) the whole file; then it grows until they are read.
            if (body.len() as u64) < COMPACT_BYTES / 2 {
                state::write_atomic(&self.path, body.as_bytes())?;
                return Ok(out);
            }
        }
        let mut buf = String::new();
        // A half-written last line must not swallow the first new record.
        if !text.is_empty() && !text.ends_with('\n') {
            buf.push('\n');
        }
        for r in &txn.new {
            buf.push_str(&serde_json::to_string(r).unwrap_or_default());
            buf.push('\n');
        }
        file.seek(SeekFrom::End(0))?;
        file.write_all(buf.as_bytes())?;
        // Durability matters for what was delivered or queued (exactly once); a lost turn
        // counter only shifts the number shown, so an unchanged turn costs no fsync.
        if txn.new.iter().any(|r| !matches!(r, Record::Turn { .. })) {
            file.sync_data()?;
        }
        Ok(out)
    }

    /// Queue a note under `key` unless that key was ever queued before. True if queued.
    pub fn queue(&self, key: &str, text: &str) -> std::io::Result<bool> {
        self.transact(|t| {
            if t.state.seen.contains(key) {
                return false;
            }
            t.push(Record::Queue {
                key: key.to_string(),
                text: text.to_string(),
                at: state::now_ms(),
            });
            true
        })
    }

    /// Forget the injected location (the model no longer sees it).
    pub fn forget(&self) -> std::io::Result<()> {
        self.transact(|t| {
            t.push(Record::Forget {
                at: state::now_ms(),
            })
        })
    }
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
    }
}
