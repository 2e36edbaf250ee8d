//! The state directory and the log.
//!
//! Owns: where durable files live (`TMUXMATE_STATE_DIR`, else `$XDG_STATE_HOME/tmuxmate`,
//! else `~/.local/state/tmuxmate`), atomic writes, and the append-only log that unattended
//! paths write their reasons to. Invariant: logging never fails the caller.

use std::io::Write;
use std::path::{Path, PathBuf};

pub fn state_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("TMUXMATE_STATE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("tmuxmate");
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into());
    PathBuf::from(home).join(".local/state/tmuxmate")
}

pub fn log_path() -> PathBuf {
    state_dir().join("log")
}

/// Append one line to the log; rotate at 1 MiB so it never grows without bound.
pub fn log(msg: &str) {
    let path = log_path();
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if std::fs::metadata(&path)
        .map(|m| m.len() > 1 << 20)
        .unwrap_or(false)
    {
        let _ = std::fs::rename(&path, path.with_extension("old"));
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let line = format!(
            "{} pid={} {}\n",
            now_ms(),
            std::process::id(),
            msg.replace('\n', "\\n")
        );
        let _ = f.write_all(line.as_bytes());
    }
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Write via a temp file and rename, so readers see the old or the new file, never half.
pub fn write_atomic(path: &Path, data: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    let r = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    // A full disk must not leave the half-written temp file behind.
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}
