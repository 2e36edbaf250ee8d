//! The snapshots too big to share the log: `<state_dir>/snapshots/<id>.txt`, the stored
//! text itself (no JSON around it, so nothing is escaped), one file per entry; the log
//! keeps a stub line for each (`crate::control::snapshot`).
//!
//! Owns: writing such a file, whole or streamed while tmux is still sending the capture
//! (the write then overlaps the server's own formatting instead of following it: for a
//! whole-history capture the copy was most of the time over the raw client's), reading
//! one back, and the bound on the folder.
//!
//! Invariants:
//! - a file appears under its final name only whole: it is written under a temp name of
//!   this call (`.<id>.part`, created exclusively; ids are unique per call) and renamed;
//! - streamed bytes are kept only when the text returned is exactly their prefix (then
//!   the file is cut to it) and more than `LAZY` were fed; otherwise the caller stores the
//!   text afresh, and a dropped stream removes its temp file (also one made early, before
//!   any text, while tmux still formats a long capture);
//! - the folder keeps the newest `KEEP_FILES` files whatever their size, and older ones
//!   while all kept total at most `KEEP_TOTAL`; a temp file older than `STALE` is a
//!   crashed call's and goes too;
//! - [`bound`] (called under the log's lock after each new file) keeps that bound without
//!   a stat of every file per store: a ledger (`.bytes`, the total at the last scan plus
//!   what was added since) says when the total may pass it; a scan then cuts the older
//!   files to three quarters of it, so a full folder is scanned once per many stores, not
//!   on each; a missing or unreadable ledger, and every `RESCAN`th store, scan anyway;
//! - a read refuses a symlink or anything but a regular file, and is bounded.

use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::sys::state;

/// Files kept whatever their size (the newest).
pub const KEEP_FILES: usize = 2;
/// What older files may total besides.
pub const KEEP_TOTAL: u64 = 32 << 20;
/// A temp file this old belongs to a call that died.
const STALE: Duration = Duration::from_secs(600);
/// The largest file read back: the most a tmux answer may hold.
const MAX_READ: u64 = crate::sys::process::MAX_STDOUT as u64;
/// A stream opens its file only past this many bytes (or before any, when its caller
/// expects more: `Stream::open_early`): a smaller text goes to the log.
pub const LAZY: usize = 64 << 10;
/// Bytes buffered before a write to the open file.
const CHUNK: usize = 256 << 10;
/// The most one feed usually adds (tmux's largest message).
const MAX_FEED: usize = 16 << 10;
/// Stores between two scans of the folder when the ledger says there is room.
const RESCAN: u32 = 32;
/// The ledger of the folder's total (see the module docs).
const LEDGER: &str = ".bytes";

/// The folder beside the log at `log`.
pub fn dir(log: &Path) -> PathBuf {
    log.with_file_name("snapshots")
}

fn final_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.txt"))
}

fn part_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!(".{id}.part"))
}

/// Store `text` as entry `id`'s file.
pub fn write(dir: &Path, id: &str, text: &[u8]) -> std::io::Result<()> {
    let mut s = Stream::new(dir, id);
    s.open()?;
    if let Some((_, f)) = &mut s.file {
        f.write_all(text)?;
    }
    s.written = text.len() as u64;
    s.commit(s.written, s.written)
}

/// A file being written as the text arrives (see the module docs).
pub struct Stream {
    dir: PathBuf,
    id: String,
    /// Bytes fed and not yet in the file: before it opens at most `LAZY`, then less
    /// than `CHUNK` after each feed.
    pending: Vec<u8>,
    file: Option<(PathBuf, std::fs::File)>,
    /// Bytes fed in all (buffered or in the file).
    written: u64,
    /// A write failed: the stream is given up (the caller stores the text afresh).
    failed: bool,
}

impl Stream {
    pub fn new(dir: &Path, id: &str) -> Stream {
        Stream {
            dir: dir.to_path_buf(),
            id: id.to_string(),
            pending: Vec::new(),
            file: None,
            written: 0,
            failed: false,
        }
    }

    /// Make the file before any text is fed (while tmux works on the capture); a stream
    /// that is then fed no more than `LAZY` bytes is not kept, as one that opens lazily
    /// would have made no file. Only into a folder that is there already: one who never
    /// stored a long snapshot (or turned storing off before) gets no folder and no file
    /// from a capture. A failure here leaves the lazy open to try again.
    pub fn open_early(&mut self) {
        if self.file.is_none() && std::fs::symlink_metadata(&self.dir).is_ok_and(|m| m.is_dir()) {
            let _ = self.open();
        }
    }

    fn open(&mut self) -> std::io::Result<()> {
        state::private_dir(&self.dir)?;
        let p = part_path(&self.dir, &self.id);
        let f = state::open_private(&p, OpenOptions::new().write(true).create_new(true))?;
        self.file = Some((p, f));
        // One buffer for every chunk: grown by doubling it would copy itself into fresh
        // pages on the way to `CHUNK`.
        self.pending
            .reserve_exact((CHUNK + MAX_FEED).saturating_sub(self.pending.len()));
        Ok(())
    }

    /// The next bytes of the text.
    pub fn feed(&mut self, b: &[u8]) {
        if self.failed {
            return;
        }
        self.pending.extend_from_slice(b);
        self.written += b.len() as u64;
        let r: std::io::Result<()> = (|| {
            if self.file.is_none() {
                if self.pending.len() <= LAZY {
                    return Ok(());
                }
                self.open()?;
            }
            if self.pending.len() >= CHUNK {
                self.flush()?;
            }
            Ok(())
        })();
        if r.is_err() {
            self.failed = true;
        }
    }

    /// Write out what is buffered (tmux sends 16 KiB a message: a write each would be
    /// hundreds of system calls for a long history).
    fn flush(&mut self) -> std::io::Result<()> {
        if let Some((_, f)) = &mut self.file {
            f.write_all(&self.pending)?;
            self.pending.clear();
        }
        Ok(())
    }

    /// Start again from nothing (the answer is being read once more).
    pub fn reset(&mut self) {
        self.pending.clear();
        self.written = 0;
        if let Some((_, f)) = &mut self.file
            && (f.set_len(0).is_err() || f.seek(SeekFrom::Start(0)).is_err())
        {
            self.failed = true;
        }
    }

    /// Keep what was fed as the entry's file when `text` is a prefix of it and `fed` is
    /// all of it (the caller's copy of the same bytes); true when kept.
    #[cfg(test)]
    pub fn keep(self, text: &[u8], fed: &[u8]) -> bool {
        fed.starts_with(text) && self.keep_prefix(text.len() as u64, fed.len() as u64)
    }

    /// Keep the first `text_len` bytes of what was fed as the entry's file, when the
    /// caller knows them to be its text and `fed_len` is all it was handed (a stream
    /// that saw less or more was not fed the same answer); true when kept.
    pub fn keep_prefix(mut self, text_len: u64, fed_len: u64) -> bool {
        if self.failed
            || self.file.is_none()
            || self.written <= LAZY as u64
            || self.written != fed_len
            || text_len > fed_len
        {
            return false;
        }
        // Of what is still buffered only the kept bytes are written: the cut (the text
        // drops the answer's trailing newlines) is then made without a truncate.
        let on_disk = self.written - self.pending.len() as u64;
        if text_len >= on_disk {
            self.pending.truncate((text_len - on_disk) as usize);
        } else {
            self.pending.clear(); // all of it past the text: the file is cut below
        }
        let file_len = on_disk + self.pending.len() as u64;
        self.flush().is_ok() && self.commit(text_len, file_len).is_ok()
    }

    /// Cut the file (`file_len` bytes) to `len` and give it its final name.
    fn commit(&mut self, len: u64, file_len: u64) -> std::io::Result<()> {
        let Some((p, f)) = self.file.take() else {
            return Err(std::io::Error::other("no file was opened"));
        };
        let r = (|| {
            if file_len != len {
                f.set_len(len)?;
            }
            drop(f);
            std::fs::rename(&p, final_path(&self.dir, &self.id))
        })();
        if r.is_err() {
            let _ = std::fs::remove_file(&p);
        }
        r
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Some((p, _)) = self.file.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Entry `id`'s text, `None` when it has no file here.
pub fn read(dir: &Path, id: &str) -> std::io::Result<Option<Vec<u8>>> {
    match state::read_private(&final_path(dir, id), MAX_READ) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Bound the folder after a new file of `added` bytes (see the module docs).
pub fn bound(dir: &Path, keep_total: u64, added: u64) {
    let ledger = dir.join(LEDGER);
    let r = state::rewrite_small(&ledger, 64, |text| {
        let known = text.and_then(|t| {
            let mut w = t.split_whitespace();
            let known = (
                w.next()?.parse::<u64>().ok()?,
                w.next()?.parse::<u32>().ok()?,
            );
            w.next().is_none().then_some(known)
        });
        let next = match known {
            // Checked: a ledger is a file anyone of ours may have written.
            Some((total, stores))
                if total.checked_add(added).is_some_and(|t| t <= keep_total)
                    && stores < RESCAN - 1 =>
            {
                (total + added, stores + 1)
            }
            _ => (scan(dir, keep_total - keep_total / 4), 0),
        };
        // A lost ledger only costs the next store a scan. One width always (a u64, a
        // space, a u32 fill 31 bytes), so each store overwrites the record in place.
        format!("{:<31}\n", format!("{} {}", next.0, next.1)).into_bytes()
    });
    // A ledger that cannot be opened (a FIFO or a symlink in its place) or written (a
    // full disk) keeps nothing, so every such store scans: the bound holds without it.
    if r.is_err() {
        scan(dir, keep_total - keep_total / 4);
    }
}

/// Remove what passes the bound (older files past `keep_total`, stale temp files);
/// returns what the files left total. `keep_total` is `KEEP_TOTAL` but in tests.
fn scan(dir: &Path, keep_total: u64) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    let now = SystemTime::now();
    let mut files: Vec<(SystemTime, std::ffi::OsString, u64)> = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name();
        let s = name.to_string_lossy();
        let Ok(m) = e.metadata() else { continue };
        let t = m.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        if s.ends_with(".part") {
            if now.duration_since(t).is_ok_and(|d| d > STALE) {
                let _ = std::fs::remove_file(e.path());
            }
        } else if s.ends_with(".txt") || s.ends_with(".json") {
            files.push((t, name, m.len()));
        }
    }
    // Newest first: by modification time, then id (ids start with the fixed-width time).
    files.sort();
    files.reverse();
    let mut total = 0u64;
    let mut kept = 0u64;
    for (i, (_, name, len)) in files.iter().enumerate() {
        total += len;
        if i >= KEEP_FILES && total > keep_total && std::fs::remove_file(dir.join(name)).is_ok() {
            continue;
        }
        kept += len;
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    fn tmp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("tmuxmate-snapfile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_stream_is_kept_only_when_the_text_is_what_was_fed() {
        let d = tmp("keep");
        let body = vec![b'x'; LAZY * 3];
        let mut s = Stream::new(&d, "a");
        for c in body.chunks(1000) {
            s.feed(c);
        }
        // A temp file while it streams, never the final name.
        assert!(part_path(&d, "a").exists() && !final_path(&d, "a").exists());
        assert!(s.keep(&body[..LAZY * 2], &body));
        assert_eq!(read(&d, "a").unwrap().unwrap(), &body[..LAZY * 2]);
        assert!(!part_path(&d, "a").exists());

        // Not a prefix (the text was changed on the way): nothing is left behind.
        let mut s = Stream::new(&d, "b");
        s.feed(&body);
        assert!(!s.keep(b"y", &body));
        assert!(read(&d, "b").unwrap().is_none() && !part_path(&d, "b").exists());

        // Read again from the start: what came before is gone.
        let mut s = Stream::new(&d, "c");
        s.feed(&body);
        s.reset();
        s.feed(b"fresh");
        s.feed(&body);
        let mut all = b"fresh".to_vec();
        all.extend_from_slice(&body);
        assert!(s.keep(&all, &all));
        assert_eq!(read(&d, "c").unwrap().unwrap(), all);

        // Past the write buffer: on disk while it streams, byte for byte in order.
        let long: Vec<u8> = (0..CHUNK * 2 + 777).map(|i| (i % 251) as u8).collect();
        let mut s = Stream::new(&d, "e");
        for c in long.chunks(16_364) {
            s.feed(c);
        }
        let on_disk = std::fs::metadata(part_path(&d, "e")).unwrap().len() as usize;
        assert!(on_disk >= CHUNK && on_disk <= long.len(), "{on_disk}");
        assert!(s.keep(&long[..CHUNK * 2 + 1], &long));
        assert_eq!(read(&d, "e").unwrap().unwrap(), &long[..CHUNK * 2 + 1]);
        // A text that ends inside what is already on disk: the file is cut back to it.
        let mut s = Stream::new(&d, "e2");
        for c in long.chunks(16_364) {
            s.feed(c);
        }
        assert!(s.keep(&long[..LAZY + 3], &long));
        assert_eq!(read(&d, "e2").unwrap().unwrap(), &long[..LAZY + 3]);

        // Small: no file at all (the log holds it).
        let mut s = Stream::new(&d, "d");
        s.feed(b"small");
        assert!(!s.keep(b"small", b"small"));
        assert!(!part_path(&d, "d").exists());

        // Made before any text: small is not kept, and its file goes; long is kept whole.
        let mut s = Stream::new(&d, "f");
        s.open_early();
        assert!(part_path(&d, "f").exists() && !final_path(&d, "f").exists());
        s.feed(b"small");
        assert!(!s.keep(b"small", b"small"));
        assert!(!part_path(&d, "f").exists() && !final_path(&d, "f").exists());
        let mut s = Stream::new(&d, "g");
        s.open_early();
        for c in body.chunks(16_364) {
            s.feed(c);
        }
        assert!(s.keep(&body, &body));
        assert_eq!(read(&d, "g").unwrap().unwrap(), body);
        // No folder yet: none is made early (the lazy open makes it once text is long).
        let missing = d.join("not-yet");
        let mut s = Stream::new(&missing, "m");
        s.open_early();
        assert!(!missing.exists());
        drop(s);
        // Dropped unkept (the snapshot option said off): nothing is left.
        let mut s = Stream::new(&d, "h");
        s.open_early();
        drop(s);
        assert!(!part_path(&d, "h").exists() && !final_path(&d, "h").exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    fn txt_total(d: &Path) -> (usize, u64) {
        let mut n = 0;
        let mut t = 0;
        for e in std::fs::read_dir(d).unwrap().flatten() {
            if e.file_name().to_string_lossy().ends_with(".txt") {
                n += 1;
                t += e.metadata().unwrap().len();
            }
        }
        (n, t)
    }

    #[test]
    fn the_ledger_bounds_the_folder_with_a_scan_only_when_it_may_pass() {
        let d = tmp("ledger");
        let mut scans = 0;
        for i in 0..40 {
            let id = format!("s{i:02}");
            write(&d, &id, &vec![b'a'; 1000]).unwrap();
            bound(&d, 10_000, 1000);
            let (n, total) = txt_total(&d);
            assert!(total <= 10_000, "store {i}: {total} bytes in {n} files");
            let ledger = std::fs::read_to_string(d.join(LEDGER)).unwrap();
            assert_eq!(ledger.len(), 32, "one width: {ledger:?}");
            let (t, stores) = ledger.trim_end().split_once(' ').unwrap();
            assert_eq!(
                t.parse::<u64>().unwrap(),
                total,
                "the ledger is the folder's total"
            );
            if stores == "0" {
                scans += 1;
            }
        }
        // The first store (no ledger yet), then one scan per four stores past the bound
        // (each cuts to 7,500 bytes), not one per store.
        assert!((7..=12).contains(&scans), "{scans} scans in 40 stores");
        assert!(final_path(&d, "s39").exists() && final_path(&d, "s38").exists());
        // A ledger that lies low (someone added files) is caught at the next RESCAN.
        std::fs::write(d.join(LEDGER), "0 0\n").unwrap();
        for i in 0..RESCAN {
            std::fs::write(final_path(&d, &format!("x{i:02}")), vec![b'b'; 1000]).unwrap();
            bound(&d, 10_000, 1000);
        }
        assert!(txt_total(&d).1 <= 10_000);
        // Garbage, or a FIFO where the ledger belongs: a scan, never a hang or an error;
        // garbage longer than a record is cut, none of it is left after the record.
        let huge = format!("{} {}", u64::MAX, u32::MAX);
        for junk in ["not a ledger", "1 2 3", &"9".repeat(50), &huge] {
            std::fs::write(d.join(LEDGER), junk).unwrap();
            bound(&d, 10_000, 1000);
            let ledger = std::fs::read_to_string(d.join(LEDGER)).unwrap();
            assert_eq!(ledger.len(), 32, "{junk}: {ledger:?}");
            assert_eq!(
                ledger.split_whitespace().nth(1),
                Some("0"),
                "{junk}: a scan"
            );
        }
        // The record of an older tmuxmate (no padding) is read as before.
        std::fs::write(d.join(LEDGER), "100 3\n").unwrap();
        bound(&d, 1_000_000, 1000);
        assert!(
            std::fs::read_to_string(d.join(LEDGER))
                .unwrap()
                .starts_with("1100 4 ")
        );
        std::fs::remove_file(d.join(LEDGER)).unwrap();
        nix::unistd::mkfifo(&d.join(LEDGER), nix::sys::stat::Mode::S_IRWXU).unwrap();
        // No ledger to keep: each store scans, so the bound holds store by store.
        for i in 0..15 {
            write(&d, &format!("f{i:02}"), &vec![b'c'; 1000]).unwrap();
            bound(&d, 10_000, 1000);
            assert!(txt_total(&d).1 <= 10_000, "store {i} beside a FIFO ledger");
        }
        assert!(d.join(LEDGER).metadata().unwrap().file_type().is_fifo());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn the_folder_keeps_the_newest_and_a_total() {
        let d = tmp("prune");
        for (i, id) in ["s1", "s2", "s3", "s4", "s5"].iter().enumerate() {
            write(&d, id, &vec![b'a'; 1000]).unwrap();
            let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 + i as u64);
            let f = std::fs::File::options()
                .write(true)
                .open(final_path(&d, id))
                .unwrap();
            f.set_modified(t).unwrap();
        }
        // A crashed call's temp file, long ago.
        let stale = part_path(&d, "s0");
        std::fs::write(&stale, b"half").unwrap();
        let f = std::fs::File::options().write(true).open(&stale).unwrap();
        f.set_modified(SystemTime::UNIX_EPOCH).unwrap();
        scan(&d, 3500);
        let left: Vec<bool> = ["s1", "s2", "s3", "s4", "s5"]
            .iter()
            .map(|id| final_path(&d, id).exists())
            .collect();
        assert_eq!(left, [false, false, true, true, true]);
        assert!(!stale.exists());
        // A symlink where the file belongs is refused, not followed.
        std::os::unix::fs::symlink("/etc/passwd", final_path(&d, "s9")).unwrap();
        assert!(read(&d, "s9").is_err());
        let _ = std::fs::remove_dir_all(&d);
    }
}
