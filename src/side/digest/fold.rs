//! The incremental fold: a transcript file, read from where the last read stopped.
//!
//! Owns: the byte offset into the file, the file's identity, format detection, line
//! splitting, the zstd container of dsh session logs, and the per-format parser state.
//! Invariants:
//! - only complete lines are folded; `offset` is always just past the last complete line
//!   (for `.zstd`, just past the last complete frame), so a half-written last line is
//!   left unread and folded once its newline arrives;
//! - a file that was replaced (other device/inode), truncated (shorter than `offset`) or
//!   rewritten in place (the bytes just before `offset` differ from those remembered)
//!   starts a fresh fold, never a fold of mixed files;
//! - a line that is not JSON, or that no parser understands, is counted and skipped;
//!   a line longer than `MAX_LINE` is skipped whole; nothing here panics on input;
//! - the whole fold (digest, offset, parser state) serializes, so a cache of it resumes
//!   exactly where it stopped.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::model::Digest;
use super::{claude, codex, dsh, events};

/// Read this much at a time.
const CHUNK: usize = 4 << 20;
/// A line longer than this is skipped (counted in `counts.badLines`).
pub const MAX_LINE: usize = 64 << 20;
/// Bytes before `offset` remembered to notice an in-place rewrite.
const TAIL: usize = 64;
/// Lines looked at to detect the format before giving up on the file's head.
const DETECT_LINES: u64 = 50;

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Claude,
    Codex,
    Dsh,
    Events,
}

impl Format {
    /// The transcript format the live digest reads for a harness, when it can read it.
    pub fn of_harness(h: crate::harness::Harness) -> Option<Format> {
        use crate::harness::Harness;
        match h {
            Harness::Claude => Some(Format::Claude),
            Harness::Codex => Some(Format::Codex),
            Harness::Gemini => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Claude => "claude",
            Format::Codex => "codex",
            Format::Dsh => "dsh",
            Format::Events => "events",
        }
    }

    pub fn parse(s: &str) -> Option<Format> {
        match s.trim() {
            "claude" | "claude-code" => Some(Format::Claude),
            "codex" => Some(Format::Codex),
            "dsh" | "deepseek" | "deepseek-harness" => Some(Format::Dsh),
            "events" | "generic" => Some(Format::Events),
            _ => None,
        }
    }
}

const CODEX_KINDS: &[&str] = &[
    "session_meta",
    "turn_context",
    "response_item",
    "event_msg",
    "compacted",
];
const CLAUDE_KINDS: &[&str] = &[
    "user",
    "assistant",
    "system",
    "summary",
    "custom-title",
    "ai-title",
    "file-history-snapshot",
    "last-prompt",
    "permission-mode",
    "attachment",
    "queue-operation",
];

/// The format of one line, when it says.
pub fn detect_line(line: &[u8]) -> Option<Format> {
    let v: Value = serde_json::from_slice(line).ok()?;
    let o = v.as_object()?;
    let ty = o.get("type").and_then(Value::as_str).unwrap_or("");
    if o.contains_key("payload") && CODEX_KINDS.contains(&ty) {
        return Some(Format::Codex);
    }
    if (ty == "session" && o.contains_key("version"))
        || (ty.contains('/') && o.contains_key("seq"))
        || (ty.ends_with("-chunks") && o.contains_key("seq0"))
    {
        return Some(Format::Dsh);
    }
    if events::TYPES.contains(&ty) && !o.contains_key("message") && !o.contains_key("sessionId") {
        return Some(Format::Events);
    }
    if o.contains_key("sessionId") || o.contains_key("parentUuid") || CLAUDE_KINDS.contains(&ty) {
        return Some(Format::Claude);
    }
    None
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Parser {
    #[default]
    Undetected,
    Claude(claude::State),
    Codex(codex::State),
    Dsh(dsh::State),
    Events(events::State),
}

impl Parser {
    fn for_format(f: Format) -> Parser {
        match f {
            Format::Claude => Parser::Claude(Default::default()),
            Format::Codex => Parser::Codex(Default::default()),
            Format::Dsh => Parser::Dsh(Default::default()),
            Format::Events => Parser::Events(Default::default()),
        }
    }
}

/// What one `update` did.
#[derive(Serialize, Clone, Copy, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// Complete lines folded by this call.
    pub lines: u64,
    /// The file was replaced or truncated, and the fold started over.
    pub reset: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Fold {
    /// Given by the caller (`--format`, the pane option): never re-detected.
    pub format: Option<Format>,
    pub detected: Option<Format>,
    pub offset: u64,
    pub dev: u64,
    pub ino: u64,
    /// Up to `TAIL` bytes just before `offset`.
    pub tail: Vec<u8>,
    /// The file is a zstd container (dsh `session.jsonl.zstd`).
    pub compressed: bool,
    /// Decoded bytes after the last newline of the last complete zstd frame.
    pub carry: Vec<u8>,
    /// Inside a line longer than `MAX_LINE`: skip to its newline.
    pub skipping: bool,
    pub parser: Parser,
    pub digest: Digest,
}

fn is_zstd_name(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e == "zstd" || e == "zst")
}

impl Fold {
    pub fn new(format: Option<Format>) -> Fold {
        Fold {
            format,
            parser: format.map(Parser::for_format).unwrap_or_default(),
            ..Fold::default()
        }
    }

    /// The format in use (given or detected).
    pub fn current_format(&self) -> Option<Format> {
        self.format.or(self.detected)
    }

    fn restart(&mut self) {
        *self = Fold::new(self.format);
    }

    /// Fold one complete line (without its newline).
    fn line(&mut self, line: &[u8]) {
        self.digest.counts.lines += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        if matches!(self.parser, Parser::Undetected) {
            match detect_line(line) {
                Some(f) => {
                    self.detected = Some(f);
                    self.parser = Parser::for_format(f);
                }
                None => {
                    if self.digest.counts.lines > DETECT_LINES {
                        self.digest.counts.bad_lines += 1;
                    }
                    return;
                }
            }
        }
        let d = &mut self.digest;
        let r = match &mut self.parser {
            Parser::Claude(s) => claude::fold_line(s, d, line),
            Parser::Codex(s) => codex::fold_line(s, d, line),
            Parser::Dsh(s) => dsh::fold_line(s, d, line),
            Parser::Events(s) => events::fold_line(s, d, line),
            Parser::Undetected => Ok(()),
        };
        if r.is_err() {
            self.digest.counts.bad_lines += 1;
        }
    }

    /// Fold the complete lines of `data`; returns how many bytes were consumed (through
    /// the last newline). Bytes after it are left for the next call.
    pub fn feed(&mut self, data: &[u8]) -> usize {
        let mut start = 0;
        if self.skipping {
            match data.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    self.skipping = false;
                    start = i + 1;
                }
                None => return data.len(),
            }
        }
        let mut pos = start;
        while let Some(i) = data[pos..].iter().position(|&b| b == b'\n') {
            self.line(&data[pos..pos + i]);
            pos += i + 1;
        }
        pos
    }

    fn remember_tail(&mut self, consumed: &[u8]) {
        if consumed.len() >= TAIL {
            self.tail = consumed[consumed.len() - TAIL..].to_vec();
        } else {
            self.tail.extend_from_slice(consumed);
            let extra = self.tail.len().saturating_sub(TAIL);
            self.tail.drain(..extra);
        }
    }

    fn tail_matches(&self, f: &File) -> bool {
        if self.offset == 0 || self.tail.is_empty() {
            return true;
        }
        let n = self.tail.len() as u64;
        if self.offset < n {
            return false;
        }
        let mut buf = vec![0u8; self.tail.len()];
        f.read_exact_at(&mut buf, self.offset - n).is_ok() && buf == self.tail
    }

    /// Fold whatever complete lines were appended to `path` since the last call.
    pub fn update(&mut self, path: &Path) -> std::io::Result<Progress> {
        let mut f = crate::sys::files::open_regular(path)?;
        let md = f.metadata()?;
        let mut p = Progress::default();
        let same_file = self.ino == 0 || (md.dev(), md.ino()) == (self.dev, self.ino);
        if !same_file || md.len() < self.offset || !self.tail_matches(&f) {
            self.restart();
            p.reset = true;
        }
        self.dev = md.dev();
        self.ino = md.ino();
        if self.offset == 0 {
            let mut magic = [0u8; 4];
            let zstd_magic =
                f.read_exact_at(&mut magic, 0).is_ok() && u32::from_le_bytes(magic) == 0xFD2F_B528;
            self.compressed = zstd_magic || (is_zstd_name(path) && md.len() == 0);
        }
        if md.len() == self.offset {
            return Ok(p);
        }
        let before = self.digest.counts.lines;
        f.seek(SeekFrom::Start(self.offset))?;
        if self.compressed {
            self.read_frames(&mut f)?;
        } else {
            self.read_lines(&mut f)?;
        }
        p.lines = self.digest.counts.lines - before;
        Ok(p)
    }

    fn read_lines(&mut self, f: &mut File) -> std::io::Result<()> {
        let mut buf: Vec<u8> = Vec::new();
        loop {
            let have = buf.len();
            buf.resize(have + CHUNK, 0);
            let n = f.read(&mut buf[have..])?;
            buf.truncate(have + n);
            if n == 0 {
                return Ok(());
            }
            let used = self.feed(&buf);
            self.offset += used as u64;
            self.remember_tail(&buf[..used]);
            buf.drain(..used);
            if buf.len() > MAX_LINE {
                // An over-long line: skip it whole, resuming after its newline.
                self.offset += buf.len() as u64;
                self.remember_tail(&buf);
                buf.clear();
                self.skipping = true;
                self.digest.counts.bad_lines += 1;
            }
        }
    }

    /// Decode complete zstd frames; an incomplete (or damaged) frame stops the read at its
    /// start, to be tried again when the file grows.
    fn read_frames(&mut self, f: &mut File) -> std::io::Result<()> {
        let mut data = Vec::new();
        f.read_to_end(&mut data)?;
        let mut pos = 0;
        while pos < data.len() {
            let Some((used, out)) = decode_frame(&data[pos..]) else {
                break;
            };
            pos += used;
            self.offset += used as u64;
            let mut bytes = std::mem::take(&mut self.carry);
            bytes.extend_from_slice(&out);
            let consumed = self.feed(&bytes);
            let rest = &bytes[consumed..];
            if rest.len() > MAX_LINE {
                self.skipping = true;
                self.digest.counts.bad_lines += 1;
            } else {
                self.carry = rest.to_vec();
            }
        }
        self.remember_tail(&data[..pos]);
        Ok(())
    }
}

/// One zstd frame from the head of `data`: (bytes it used, decoded bytes). `None` when
/// the frame is incomplete or damaged (including a checksum mismatch). A decoder panic
/// on hostile bytes is contained here and counts as damage.
fn decode_frame(data: &[u8]) -> Option<(usize, Vec<u8>)> {
    std::panic::catch_unwind(|| decode_frame_inner(data)).unwrap_or(None)
}

fn decode_frame_inner(data: &[u8]) -> Option<(usize, Vec<u8>)> {
    use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
    // Skippable frames: magic 0x184D2A5? then a 4-byte length.
    if data.len() >= 8 {
        let magic = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
        if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
            let len = u32::from_le_bytes([data[4], data[5], data[6], data[7]]) as usize;
            let end = 8usize.checked_add(len)?;
            return (end <= data.len()).then(|| (end, Vec::new()));
        }
    }
    let mut cur = std::io::Cursor::new(data);
    let mut dec = FrameDecoder::new();
    dec.init(&mut cur).ok()?;
    let done = dec
        .decode_blocks(&mut cur, BlockDecodingStrategy::All)
        .ok()?;
    if !done {
        return None;
    }
    // The checksum is computed as the output is collected: collect first.
    let out = dec.collect().unwrap_or_default();
    if let (Some(a), Some(b)) = (dec.get_checksum_from_data(), dec.get_calculated_checksum())
        && a != b
    {
        return None;
    }
    Some((cur.position() as usize, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_formats() {
        assert_eq!(
            detect_line(br#"{"timestamp":"x","type":"session_meta","payload":{}}"#),
            Some(Format::Codex)
        );
        assert_eq!(
            detect_line(br#"{"type":"session","version":0,"id":"a"}"#),
            Some(Format::Dsh)
        );
        assert_eq!(
            detect_line(br#"{"type":"turn_start","prompt":"x"}"#),
            Some(Format::Events)
        );
        assert_eq!(
            detect_line(br#"{"type":"mode","mode":"normal","sessionId":"s"}"#),
            Some(Format::Claude)
        );
        assert_eq!(detect_line(b"not json"), None);
        assert_eq!(detect_line(br#"{"type":"whatever"}"#), None);
    }

    #[test]
    fn only_complete_lines_fold() {
        let mut f = Fold::new(Some(Format::Events));
        let a = br#"{"type":"turn_start","prompt":"one"}"#;
        let mut data = a.to_vec();
        data.extend_from_slice(b"\n{\"type\":\"tool_call\",\"na");
        let used = f.feed(&data);
        assert_eq!(used, a.len() + 1);
        assert_eq!(f.digest.counts.lines, 1);
        assert_eq!(f.digest.counts.tool_calls, 0);
        let used2 = f.feed(&data[used..]);
        assert_eq!(used2, 0);
    }

    #[test]
    fn garbage_is_counted_not_fatal() {
        let mut f = Fold::new(None);
        let data = b"\xff\xfe garbage\n{not json\n{\"type\":\"turn_start\",\"prompt\":\"p\"}\n[1,2]\n{\"type\":\"tool_call\",\"name\":7}\n";
        f.feed(data);
        assert_eq!(f.detected, Some(Format::Events));
        assert_eq!(f.digest.counts.lines, 5);
        assert_eq!(f.digest.counts.tool_calls, 1);
        assert!(f.digest.open_turn.is_some());
    }

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("tmuxmate-fold-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn append(p: &Path, data: &[u8]) {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .unwrap();
        f.write_all(data).unwrap();
    }

    const EV: &str = "{\"type\":\"turn_start\",\"prompt\":\"p\"}\n";

    #[test]
    fn update_reads_only_appended_and_restarts_on_replace_or_truncate() {
        let d = tmp("plain");
        let p = d.join("t.jsonl");
        append(&p, EV.repeat(3).as_bytes());
        append(&p, b"{\"type\":\"tool_ca");
        let mut f = Fold::new(None);
        assert_eq!(f.update(&p).unwrap().lines, 3);
        assert_eq!(f.update(&p).unwrap().lines, 0);
        append(&p, b"ll\",\"name\":\"Bash\"}\n");
        let pr = f.update(&p).unwrap();
        assert_eq!((pr.lines, pr.reset), (1, false));
        assert_eq!(f.digest.counts.tool_calls, 1);
        // Rewritten in place with the same length: noticed by the remembered tail.
        let len = std::fs::metadata(&p).unwrap().len() as usize;
        let mut other = EV.repeat(4).into_bytes();
        other.resize(len, b' ');
        *other.last_mut().unwrap() = b'\n';
        std::fs::write(&p, &other).unwrap();
        let pr = f.update(&p).unwrap();
        assert!(pr.reset);
        assert_eq!(f.digest.counts.turns, 4);
        // Truncated.
        std::fs::write(&p, EV).unwrap();
        let pr = f.update(&p).unwrap();
        assert!(pr.reset);
        assert_eq!(f.digest.counts.lines, 1);
        // Replaced by another file (new inode), even if longer.
        let q = d.join("t2.jsonl");
        std::fs::write(&q, EV.repeat(9)).unwrap();
        std::fs::rename(&q, &p).unwrap();
        let pr = f.update(&p).unwrap();
        assert!(pr.reset);
        assert_eq!(f.digest.counts.turns, 9);
        // The fold round-trips through serde (the follower's cache).
        let back: Fold = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(back, f);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn zstd_frames_fold_when_complete() {
        use ruzstd::encoding::{CompressionLevel, compress_to_vec};
        let d = tmp("zstd");
        let p = d.join("session.jsonl.zstd");
        let head = "{\"type\":\"session\",\"version\":0,\"id\":\"s\",\"createdAt\":1}\n";
        let batch = "{\"type\":\"turn/start\",\"seq\":0,\"time\":1795986154000,\"data\":{\"turn\":1}}\n{\"type\":\"tool/call\",\"seq\":1,\"time\":1795986154001,\"data\":{\"callId\":\"c\",\"name\":\"bash\",\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"}}\n";
        append(
            &p,
            &compress_to_vec(head.as_bytes(), CompressionLevel::Fastest),
        );
        let frame = compress_to_vec(batch.as_bytes(), CompressionLevel::Fastest);
        append(&p, &frame[..frame.len() / 2]);
        let mut f = Fold::new(None);
        assert_eq!(f.update(&p).unwrap().lines, 1);
        assert!(f.compressed);
        assert_eq!(f.detected, Some(Format::Dsh));
        append(&p, &frame[frame.len() / 2..]);
        assert_eq!(f.update(&p).unwrap().lines, 2);
        assert_eq!(f.digest.counts.tool_calls, 1);
        assert_eq!(f.offset, std::fs::metadata(&p).unwrap().len());
        let _ = std::fs::remove_dir_all(&d);
    }
}
