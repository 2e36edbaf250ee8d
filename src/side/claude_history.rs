//! Claude Code's prompt history (`~/.claude/history.jsonl`, one JSON object per prompt
//! typed or pasted, each with the `sessionId` it was sent in): removing exactly the lines
//! of given sessions, for a side chat that must leave nothing behind.
//!
//! Invariants: a line is removed only when it parses as a JSON object whose `sessionId`
//! is one of the given ids (a person's prompts, other sessions' lines, lines that do not
//! parse and the file's final-newline state are kept byte for byte); nothing is written
//! when no line matches; the rewrite is atomic (a temp file beside it with the same mode,
//! fsynced, renamed over it) and is redone from the start when the file changed while we
//! worked (Claude appends to it at every prompt of every session), so a line appended
//! meanwhile is never lost; a symlinked history is refused, not replaced by a file.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// How often a rewrite is retried when the file keeps changing under it.
const ATTEMPTS: usize = 8;

/// The history file of the Claude home `claude_dir` (`CLAUDE_CONFIG_DIR` or `~/.claude`).
pub fn path(claude_dir: &Path) -> PathBuf {
    claude_dir.join("history.jsonl")
}

/// Whether one history line belongs to one of `sessions`.
fn is_of(line: &[u8], sessions: &[String]) -> bool {
    serde_json::from_slice::<serde_json::Value>(line)
        .ok()
        .and_then(|v| v.get("sessionId")?.as_str().map(str::to_string))
        .is_some_and(|id| sessions.contains(&id))
}

/// `data` without the lines of `sessions`, and how many were removed.
pub fn without_sessions(data: &[u8], sessions: &[String]) -> (Vec<u8>, usize) {
    let mut out = Vec::with_capacity(data.len());
    let mut removed = 0;
    for chunk in data.split_inclusive(|b| *b == b'\n') {
        let line = chunk.strip_suffix(b"\n").unwrap_or(chunk);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if is_of(line, sessions) {
            removed += 1;
        } else {
            out.extend_from_slice(chunk);
        }
    }
    (out, removed)
}

/// What identifies the file's state: a change to any of these means someone wrote.
fn stamp(m: &std::fs::Metadata) -> (u64, u64, i64, i64) {
    (m.ino(), m.len(), m.mtime(), m.mtime_nsec())
}

/// Remove the lines of `sessions` from the history at `file`. `Ok(n)`: n lines removed
/// (0 also when there is no history file). Ids that are empty are ignored.
pub fn remove_sessions(file: &Path, sessions: &[String]) -> Result<usize, String> {
    let sessions: Vec<String> = sessions.iter().filter(|s| !s.is_empty()).cloned().collect();
    if sessions.is_empty() {
        return Ok(0);
    }
    for _ in 0..ATTEMPTS {
        let before = match std::fs::symlink_metadata(file) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
        };
        if !before.file_type().is_file() {
            return Err(format!(
                "{} is not a regular file (a symlink?); left as it is",
                file.display()
            ));
        }
        let data =
            std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let (kept, removed) = without_sessions(&data, &sessions);
        if removed == 0 {
            return Ok(0);
        }
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = file.with_file_name(format!(".{name}.tmuxmate.{}", crate::sys::unique::token()));
        let written = (|| {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(before.permissions().mode() & 0o7777)
                .open(&tmp)?;
            f.write_all(&kept)?;
            f.sync_all()
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(format!("cannot write beside {}: {e}", file.display()));
        }
        // Someone appended (or replaced it) while we read and wrote: start again from
        // what is there now rather than drop their line.
        let unchanged = std::fs::symlink_metadata(file)
            .map(|m| stamp(&m) == stamp(&before))
            .unwrap_or(false);
        if !unchanged {
            let _ = std::fs::remove_file(&tmp);
            std::thread::sleep(std::time::Duration::from_millis(20));
            continue;
        }
        if let Err(e) = std::fs::rename(&tmp, file) {
            let _ = std::fs::remove_file(&tmp);
            return Err(format!("cannot replace {}: {e}", file.display()));
        }
        return Ok(removed);
    }
    Err(format!(
        "{} kept changing while it was rewritten ({ATTEMPTS} attempts); left as it is",
        file.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(sid: &str, text: &str) -> String {
        format!(
            "{{\"display\":{},\"pastedContents\":{{}},\"timestamp\":1796118133382,\"project\":\"/p\",\"sessionId\":\"{sid}\"}}\n",
            serde_json::to_string(text).unwrap()
        )
    }

    #[test]
    fn removes_exactly_the_sessions_lines_and_keeps_every_other_byte() {
        let side = "5704b07d-c2dc-407c-843b-5b7381f223b0".to_string();
        let mut data = String::new();
        let mut want = String::new();
        for i in 0..30 {
            let l = match i % 3 {
                0 => line(&side, &format!("side question {i}")),
                1 => line(
                    "11111111-2222-3333-4444-555555555555",
                    &format!("person {i}"),
                ),
                // A person's prompt that only mentions the side session's id.
                _ => line("aaaaaaaa-2222-3333-4444-555555555555", &side),
            };
            if i % 3 != 0 {
                want.push_str(&l);
            }
            data.push_str(&l);
        }
        data.push_str("not json\n");
        want.push_str("not json\n");
        // The last line without its newline is kept without one.
        let last = line("11111111-2222-3333-4444-555555555555", "tail");
        data.push_str(last.trim_end());
        want.push_str(last.trim_end());
        let (out, n) = without_sessions(data.as_bytes(), std::slice::from_ref(&side));
        assert_eq!(n, 10);
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    #[test]
    fn rewrite_is_atomic_keeps_the_mode_and_counts() {
        let d = std::env::temp_dir().join(format!("tm-hist-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let f = path(&d);
        let s = "side-1".to_string();
        let text = format!("{}{}{}", line("p", "a"), line(&s, "b"), line("p", "c"));
        std::fs::write(&f, &text).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(remove_sessions(&f, std::slice::from_ref(&s)), Ok(1));
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            format!("{}{}", line("p", "a"), line("p", "c"))
        );
        assert_eq!(
            std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o600
        );
        // Nothing of ours left: a second run removes nothing and writes nothing.
        let ino = std::fs::metadata(&f).unwrap().ino();
        assert_eq!(remove_sessions(&f, &[s]), Ok(0));
        assert_eq!(std::fs::metadata(&f).unwrap().ino(), ino);
        let left: Vec<_> = std::fs::read_dir(&d).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "no temp file left");
        assert_eq!(
            remove_sessions(&d.join("absent.jsonl"), &["x".into()]),
            Ok(0)
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
