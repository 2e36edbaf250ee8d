//! The global snapshot log: every capture and every run result, kept durably.
//!
//! Owns: `<state_dir>/snapshots.jsonl` (one JSON object per line), its lock file, ids,
//! previews, the size bound, and `<state_dir>/snapshots/` (one file per entry too big to
//! share the log). Invariants:
//! - appends happen under an exclusive `flock`, so concurrent writers never interleave;
//!   a printed capture has a stored copy (written before the result is returned; not
//!   fsynced per append: that cost ~20 ms per store here, and the privacy invariant is
//!   "stored privately", not "durable across a power loss"; compaction's rewrite is
//!   fsynced before its rename, so a crash never leaves a torn log behind);
//! - an entry whose text is over `snapshot_file::LAZY` (64 KiB) goes to its own file as
//!   the text itself (`crate::control::snapshot_file`, which bounds that folder), and the
//!   log keeps a stub line (`inFile`, empty text): a few whole-history captures would
//!   otherwise make every store rewrite the log, and escaping megabytes into JSON cost
//!   more than the capture. A capture's file may be written while tmux sends it
//!   ([`streamed`]);
//! - `show` reads the stored payload, never the pane (the pane may be long gone);
//! - the file stays bounded: past `COMPACT_BYTES` it is rewritten atomically with at
//!   most `KEEP_ENTRIES` of the newest entries totalling at most `KEEP_BYTES` (the newest
//!   entry is always kept);
//! - a corrupt or half-written line is skipped, never fatal.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use serde::{Deserialize, Serialize};

use crate::control::snapshot_file;
use crate::sys::state;

const COMPACT_BYTES: u64 = 8 << 20;
const KEEP_BYTES: usize = 4 << 20;
const KEEP_ENTRIES: usize = 200;
const PREVIEW_LINES: usize = 3;
const PREVIEW_CHARS: usize = 160;

static SEQ: AtomicU32 = AtomicU32::new(0);

/// One stored snapshot, as it is written to the log (storage: `--json` prints `Summary`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub id: String,
    /// Milliseconds since the Unix epoch.
    pub time: u64,
    pub pane_id: String,
    pub target: String,
    pub line_count: usize,
    pub truncated: bool,
    pub preview: String,
    pub text: String,
    /// The text is in `snapshots/<id>.json` (a stub line of the log; see the module docs).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_file: bool,
}

/// A listing row: the snapshot without its full text (what `snapshots --json` prints:
/// docs/json.md; the id is `snapshotId` there, as jobs are `jobId`).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    #[serde(rename = "snapshotId")]
    pub id: String,
    pub time: u64,
    pub pane_id: String,
    pub target: String,
    pub line_count: usize,
    pub truncated: bool,
    pub preview: String,
}

impl From<Snapshot> for Summary {
    fn from(s: Snapshot) -> Summary {
        Summary {
            id: s.id,
            time: s.time,
            pane_id: s.pane_id,
            target: s.target,
            line_count: s.line_count,
            truncated: s.truncated,
            preview: s.preview,
        }
    }
}

// What `tmuxmate snapshots` asks for (`--json` aside): the listing's `--limit`, or one
// of the actions. The CLI's alone: the MCP server reads snapshots as resources. (A plain
// comment: clap would make a doc comment here the `snapshots --help` text.)
#[derive(clap::Args, Debug)]
pub struct SnapshotsAsk {
    /// How many of the most recent to list.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: usize,
    /// Under each snapshot's line, its last three non-blank lines (the popup shows them).
    #[arg(long)]
    pub preview: bool,
}

#[derive(clap::Subcommand, Debug)]
#[command(defer = true)]
pub enum SnapshotsAction {
    /// Print the full stored text of one snapshot.
    Show {
        /// The snapshot id (as `tmuxmate snapshots` lists it).
        id: String,
    },
    /// Delete every stored snapshot (`set -g @tmuxmate-snapshots off` stores none).
    Clear,
    /// The snippet's key binding: the listing in a popup on client --client.
    #[command(hide = true)]
    Popup {
        /// The tmux client to show the popup on.
        #[arg(long, value_name = "CLIENT")]
        client: String,
    },
}

pub fn log_path() -> PathBuf {
    state::state_dir().join("snapshots.jsonl")
}

/// Where entries too big for the log are stored, one file each.
fn files_dir(log: &std::path::Path) -> PathBuf {
    snapshot_file::dir(log)
}

fn base36(n: u64) -> String {
    crate::sys::unique::base36(n, 1)
}

/// `s` + time (base 36, fixed width for centuries) + pid + a per-process counter, so two
/// processes or two records in one millisecond never collide.
fn new_id(now: u64) -> String {
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let mut id = format!("s{:0>8}{}", base36(now), base36(std::process::id() as u64));
    if seq > 0 {
        id.push('x');
        id.push_str(&base36(seq as u64));
    }
    id
}

/// The last few non-blank lines, escapes removed, each cut to a readable width.
pub fn preview(text: &str) -> String {
    let mut lines: Vec<String> = text
        .lines()
        .rev()
        .map(strip_escapes)
        .filter(|l| !l.trim().is_empty())
        .take(PREVIEW_LINES)
        .map(|l| {
            let l = l.trim_end();
            if l.chars().count() > PREVIEW_CHARS {
                let cut: String = l.chars().take(PREVIEW_CHARS).collect();
                format!("{cut}...")
            } else {
                l.to_string()
            }
        })
        .collect();
    lines.reverse();
    lines.join("\n")
}

fn strip_escapes(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == 0x1b {
            i = crate::control::budget::escape_end(b, i);
        } else {
            // Other control bytes would move a terminal's cursor in a listing.
            if b[i] >= 0x20 || b[i] == b'\t' {
                out.push(b[i]);
            }
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A snapshot log file and its bounds (one global log; tests use their own).
struct Log {
    path: PathBuf,
    compact_bytes: u64,
    keep_bytes: usize,
    keep_entries: usize,
    /// A text over this many bytes goes to its own file.
    file_bytes: usize,
    /// What the older files may total (`snapshot_file::prune`).
    files_total: u64,
}

impl Log {
    fn global() -> Log {
        Log {
            path: log_path(),
            compact_bytes: COMPACT_BYTES,
            keep_bytes: KEEP_BYTES,
            keep_entries: KEEP_ENTRIES,
            file_bytes: snapshot_file::LAZY,
            files_total: snapshot_file::KEEP_TOTAL,
        }
    }

    fn lock(&self) -> std::io::Result<nix::fcntl::Flock<std::fs::File>> {
        let f = state::open_private(
            &self.path.with_extension("lock"),
            OpenOptions::new().create(true).truncate(false).write(true),
        )?;
        nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| std::io::Error::from(e))
    }

    /// Store `meta` (its text empty) with `text`: in the log line, or, when the text is
    /// too big for it, in its own file with a stub line.
    fn append(&self, meta: &Snapshot, text: &str) -> std::io::Result<()> {
        if text.len() > self.file_bytes {
            let dir = files_dir(&self.path);
            snapshot_file::write(&dir, &meta.id, text.as_bytes())?;
            return self.append_stub(meta, text.len());
        }
        let mut full = meta.clone();
        full.text = text.to_string();
        let mut line = serde_json::to_string(&full).map_err(std::io::Error::other)?;
        line.push('\n');
        let _lock = self.lock()?;
        self.append_line(&line)
    }

    /// Append the stub line of an entry whose file is in place, and bound the files.
    fn append_stub(&self, meta: &Snapshot, file_bytes: usize) -> std::io::Result<()> {
        let mut stub = meta.clone();
        stub.text = String::new();
        stub.in_file = true;
        let mut line = serde_json::to_string(&stub).map_err(std::io::Error::other)?;
        line.push('\n');
        let _lock = self.lock()?;
        snapshot_file::bound(&files_dir(&self.path), self.files_total, file_bytes as u64);
        self.append_line(&line)
    }

    /// Append one line (under the lock), compacting first when it would pass the bound.
    fn append_line(&self, line: &str) -> std::io::Result<()> {
        // One open file for the size, the last byte and the append.
        let mut f = state::open_private(
            &self.path,
            OpenOptions::new().read(true).create(true).append(true),
        )?;
        let size = f.metadata()?.len();
        if size + line.len() as u64 > self.compact_bytes {
            drop(f);
            return self.compact_with(line);
        }
        let mut buf = String::new();
        // A crash mid-append leaves a partial line; the newline keeps ours readable.
        if size > 0 && !ends_with_newline(&f, size) {
            buf.push('\n');
        }
        buf.push_str(line);
        f.write_all(buf.as_bytes())
    }

    /// Rewrite the log as the newest readable entries that fit the bounds, then `line`.
    fn compact_with(&self, line: &str) -> std::io::Result<()> {
        let old = std::fs::read_to_string(&self.path).unwrap_or_default();
        let mut keep: Vec<&str> = Vec::new();
        let mut bytes = line.len();
        for l in old.lines().rev() {
            if keep.len() + 1 >= self.keep_entries || bytes + l.len() + 1 > self.keep_bytes {
                break;
            }
            if serde_json::from_str::<Snapshot>(l).is_ok() {
                bytes += l.len() + 1;
                keep.push(l);
            }
        }
        let mut body = String::with_capacity(bytes);
        for l in keep.iter().rev() {
            body.push_str(l);
            body.push('\n');
        }
        body.push_str(line);
        state::write_atomic(&self.path, body.as_bytes())
    }

    fn read_all(&self) -> Result<String, String> {
        match std::fs::read_to_string(&self.path) {
            Ok(t) => Ok(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(format!(
                "could not read the snapshot log {}: {e}",
                self.path.display()
            )),
        }
    }
}

/// The tmux option that turns storing off (`off`); unset or `on` stores.
pub const OPTION: &str = crate::tmux::options::SNAPSHOTS.name;

/// Whether snapshots are stored, from the option's value. Anything but `on`/`off` (or
/// unset) is refused as a reason: what is stored is private, so a typo stores nothing.
pub fn storing(value: &str) -> Result<bool, String> {
    match value.trim() {
        "" | "on" => Ok(true),
        "off" => Ok(false),
        other => Err(format!(
            "{OPTION} is {other:?}: use on or off (nothing was stored)"
        )),
    }
}

/// Store one snapshot durably and return its id; `None` when `@tmuxmate-snapshots` is
/// off (one option read on the server the capture came from).
pub fn record(
    tmux: &crate::tmux::Tmux,
    pane_id: &str,
    target: &str,
    text: &str,
    truncated: bool,
) -> Result<Option<String>, String> {
    let v = tmux
        .run(&["show-options", "-gqv", OPTION])
        .map_err(|e| format!("could not read {OPTION} (nothing was stored): {e}"))?;
    record_if(&v, pane_id, target, text, truncated)
}

/// [`record`] with `@tmuxmate-snapshots`' value already read (`value`, empty when unset).
pub fn record_if(
    value: &str,
    pane_id: &str,
    target: &str,
    text: &str,
    truncated: bool,
) -> Result<Option<String>, String> {
    if !storing(value)? {
        return Ok(None);
    }
    record_always(pane_id, target, text, truncated).map(Some)
}

pub fn record_always(
    pane_id: &str,
    target: &str,
    text: &str,
    truncated: bool,
) -> Result<String, String> {
    let now = crate::sys::time::now_ms();
    let meta = meta_of(new_id(now), now, pane_id, target, text, truncated);
    store(&Log::global(), &meta, text)
}

fn store(log: &Log, meta: &Snapshot, text: &str) -> Result<String, String> {
    log.append(meta, text).map_err(|e| {
        format!(
            "could not store the snapshot in {}: {e}; check that the state directory is writable (TMUXMATE_STATE_DIR or XDG_STATE_HOME)",
            log.path.display()
        )
    })?;
    Ok(meta.id.clone())
}

/// An entry's fields but its text (empty here; the caller stores the text).
fn meta_of(
    id: String,
    time: u64,
    pane_id: &str,
    target: &str,
    text: &str,
    truncated: bool,
) -> Snapshot {
    Snapshot {
        id,
        time,
        pane_id: pane_id.to_string(),
        target: target.to_string(),
        line_count: crate::control::budget::line_count(text),
        truncated,
        preview: preview(text),
        text: String::new(),
        in_file: false,
    }
}

/// A snapshot whose text is written to its file while it arrives ([`streamed`]).
pub struct Streamed {
    id: String,
    time: u64,
    stream: snapshot_file::Stream,
}

/// A new entry to stream: its id is taken now.
pub fn streamed() -> Streamed {
    let now = crate::sys::time::now_ms();
    let id = new_id(now);
    Streamed {
        stream: snapshot_file::Stream::new(&files_dir(&log_path()), &id),
        id,
        time: now,
    }
}

impl Streamed {
    /// The next bytes as tmux sent them.
    pub fn feed(&mut self, b: &[u8]) {
        self.stream.feed(b);
    }
    /// The answer is being read again from its start.
    pub fn reset(&mut self) {
        self.stream.reset();
    }
    /// Make the file now, before any text (`snapshot_file::Stream::open_early`).
    pub fn open_early(&mut self) {
        self.stream.open_early();
    }
    /// Store the entry: the streamed file when `prefix` says `text` is the start of
    /// what was fed, byte for byte, and `fed_len` is how much that was; else `text`
    /// afresh. Its id.
    pub fn finish(
        self,
        pane_id: &str,
        target: &str,
        text: &str,
        truncated: bool,
        (fed_len, prefix): (usize, bool),
    ) -> Result<String, String> {
        let log = Log::global();
        let meta = meta_of(self.id, self.time, pane_id, target, text, truncated);
        // A stream not kept is gone (its temp file removed) before the text is stored
        // afresh under the same id.
        let kept = match prefix {
            true => self.stream.keep_prefix(text.len() as u64, fed_len as u64),
            false => {
                drop(self.stream);
                false
            }
        };
        if kept {
            log.append_stub(&meta, text.len()).map_err(|e| {
                format!(
                    "could not store the snapshot in {}: {e}",
                    log.path.display()
                )
            })?;
            return Ok(meta.id);
        }
        store(&log, &meta, text)
    }
}

fn ends_with_newline(f: &std::fs::File, size: u64) -> bool {
    use std::os::unix::fs::FileExt;
    let mut last = [0u8; 1];
    f.read_exact_at(&mut last, size - 1).is_ok() && last[0] == b'\n'
}

/// Delete every stored snapshot (under the writers' lock); how many there were.
pub fn clear() -> Result<usize, String> {
    let log = Log::global();
    let fail = |e: std::io::Error| {
        format!(
            "could not clear the snapshot log {}: {e}",
            log.path.display()
        )
    };
    let _lock = log.lock().map_err(fail)?;
    let n = log
        .read_all()?
        .lines()
        .filter(|l| serde_json::from_str::<Snapshot>(l).is_ok())
        .count();
    match std::fs::remove_dir_all(files_dir(&log.path)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(fail(e)),
        _ => {}
    }
    match std::fs::remove_file(&log.path) {
        Ok(()) => Ok(n),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(fail(e)),
    }
}

/// The newest `limit` snapshots, newest first.
pub fn list(limit: usize) -> Result<Vec<Snapshot>, String> {
    let text = Log::global().read_all()?;
    Ok(text
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Snapshot>(l).ok())
        .take(limit)
        .collect())
}

/// The snapshot with this id, if stored (an entry in its own file read from there; one
/// whose file was dropped is no longer stored).
pub fn find(id: &str) -> Result<Option<Snapshot>, String> {
    Log::global().find(id)
}

impl Log {
    fn find(&self, id: &str) -> Result<Option<Snapshot>, String> {
        let text = self.read_all()?;
        let Some(s) = text
            .lines()
            .rev()
            .filter(|l| l.contains(id))
            .filter_map(|l| serde_json::from_str::<Snapshot>(l).ok())
            .find(|s| s.id == id)
        else {
            return Ok(None);
        };
        if !s.in_file {
            return Ok(Some(s));
        }
        let dir = files_dir(&self.path);
        match snapshot_file::read(&dir, &s.id) {
            Ok(Some(t)) => {
                let mut s = s;
                s.text = String::from_utf8_lossy(&t).into_owned();
                s.in_file = false;
                return Ok(Some(s));
            }
            Ok(None) => {}
            Err(e) => return Err(format!("could not read the snapshot {}: {e}", s.id)),
        }
        // Stored by an earlier version: the whole entry as JSON.
        let f = dir.join(format!("{}.json", s.id));
        match std::fs::read_to_string(&f) {
            Ok(t) => Ok(serde_json::from_str::<Snapshot>(t.trim_end())
                .ok()
                .filter(|full| full.id == s.id)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("could not read the snapshot {}: {e}", f.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry's fields and its text, as `record_always` makes them.
    fn new_snapshot(pane: &str, target: &str, text: &str, truncated: bool) -> (Snapshot, String) {
        let now = crate::sys::time::now_ms();
        (
            meta_of(new_id(now), now, pane, target, text, truncated),
            text.to_string(),
        )
    }

    #[test]
    fn ids_are_distinct_and_plain() {
        let a = new_id(1_700_000_000_000);
        let b = new_id(1_700_000_000_000);
        assert_ne!(a, b);
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric()), "{a}");
    }

    #[test]
    fn log_stays_bounded_and_keeps_the_newest() {
        let dir = std::env::temp_dir().join(format!("tmuxmate-snap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let log = Log {
            path: dir.join("snapshots.jsonl"),
            compact_bytes: 20_000,
            keep_bytes: 10_000,
            keep_entries: 5,
            file_bytes: 1 << 20,
            files_total: 0,
        };
        let mut ids = Vec::new();
        for i in 0..60 {
            let (s, t) = new_snapshot(
                "%1",
                "m:0.0",
                &format!("{i}\n{}", "x".repeat(i * 50)),
                false,
            );
            ids.push(s.id.clone());
            log.append(&s, &t).unwrap();
            let size = std::fs::metadata(&log.path).unwrap().len();
            assert!(size <= 20_000, "{i}: {size}");
        }
        // A torn last line is skipped, and the next append still lands on its own line.
        let mut f = OpenOptions::new().append(true).open(&log.path).unwrap();
        f.write_all(b"{\"id\":\"torn").unwrap();
        let (s, t) = new_snapshot("%1", "m:0.0", "after", false);
        log.append(&s, &t).unwrap();
        let text = log.read_all().unwrap();
        let got: Vec<Snapshot> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        assert!(got.len() >= 2 && got.len() < 61, "{}", got.len());
        assert_eq!(got.last().unwrap().text, "after");
        assert_eq!(got[got.len() - 2].id, ids[59]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_entry_too_big_for_the_log_gets_its_own_file() {
        let dir = std::env::temp_dir().join(format!("tmuxmate-snapbig-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let log = Log {
            path: dir.join("snapshots.jsonl"),
            compact_bytes: 20_000,
            keep_bytes: 10_000,
            keep_entries: 50,
            file_bytes: 10_000,
            files_total: 0,
        };
        std::fs::create_dir_all(&dir).unwrap();
        let (small, t) = new_snapshot("%1", "m:0.0", "small", false);
        log.append(&small, &t).unwrap();
        let mut big_ids = Vec::new();
        for i in 0..4 {
            let (s, t) = new_snapshot("%1", "m:0.0", &format!("{i}{}", "y".repeat(15_000)), false);
            big_ids.push(s.id.clone());
            log.append(&s, &t).unwrap();
            // The log holds stubs only: it never reaches the compaction size.
            let size = std::fs::metadata(&log.path).unwrap().len();
            assert!(size < 10_000, "{i}: {size}");
            assert_eq!(log.find(&s.id).unwrap().unwrap().text, t);
            // The file holds the text itself, not JSON around it.
            let f = files_dir(&log.path).join(format!("{}.txt", s.id));
            assert_eq!(std::fs::read_to_string(f).unwrap(), t);
        }
        // The small entry stayed; of the big ones only the newest two remain.
        assert_eq!(log.find(&small.id).unwrap().unwrap().text, "small");
        assert!(log.find(&big_ids[0]).unwrap().is_none());
        assert!(log.find(&big_ids[3]).unwrap().is_some());
        let files = std::fs::read_dir(files_dir(&log.path))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".txt"))
            .count();
        assert_eq!(files, snapshot_file::KEEP_FILES);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn preview_takes_last_visible_lines() {
        assert_eq!(
            preview("one\ntwo\n\n\x1b[31mthree\x1b[0m\nfour\n  \n"),
            "two\nthree\nfour"
        );
    }
}
