//! File I/O for install/uninstall: read a config as text, write it atomically, delete it.
//!
//! Invariants: a write goes to a temp file in the same directory and is renamed over the
//! target, so a harness reading concurrently sees the old or the new file, never half; the
//! new file keeps the old one's permission bits (`~/.claude.json` is private); a symlinked
//! config (dotfile managers) is written through to its target, never replaced by a file.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The largest config file read (a settings.json of megabytes is someone else's).
const READ_MAX: u64 = 16 << 20;

/// The file's text, `None` when it does not exist. Not UTF-8 is an error naming the file;
/// so is one that is not a regular file (a FIFO would hang us, a link to `/dev/zero`
/// never end) or is larger than 16 MiB.
pub fn read_text(path: &Path) -> Result<Option<String>, String> {
    let read = |path: &Path| -> std::io::Result<Vec<u8>> {
        use std::io::Read;
        let f = crate::sys::files::open_regular(path)?;
        let mut b = Vec::new();
        f.take(READ_MAX + 1).read_to_end(&mut b)?;
        if b.len() as u64 > READ_MAX {
            return Err(std::io::Error::other("larger than 16 MiB"));
        }
        Ok(b)
    };
    match read(path) {
        Ok(b) => String::from_utf8(b).map(Some).map_err(|_| {
            format!(
                "{} is not UTF-8 text; fix or move it away, then rerun",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!(
            "cannot read {}: {e}; fix or move it away, then rerun (nothing was changed)",
            path.display()
        )),
    }
}

/// Where a write to `path` really lands: the symlink's target when it is one.
pub fn real_target(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// The directories `create_dir_all(dir)` would create, outermost first.
pub fn missing_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut d = Some(dir);
    while let Some(p) = d {
        if p.as_os_str().is_empty() || p.exists() {
            break;
        }
        out.push(p.to_path_buf());
        d = p.parent();
    }
    out.reverse();
    out
}

/// Atomic write, keeping the old file's mode (new files: 0644, or `new_mode`).
pub fn write_atomic(path: &Path, data: &[u8], new_mode: u32) -> Result<(), String> {
    let target = real_target(path);
    let fail = |what: &str, e: std::io::Error| format!("cannot {what} {}: {e}", target.display());
    let dir = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| fail("create the directory of", e))?;
    let mode = std::fs::metadata(&target)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(new_mode);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.tmuxmate-{}.tmp",
        crate::sys::unique::token()
    ));
    let res = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        f.write_all(data)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail("write", e));
    }
    Ok(())
}

/// The mode of an existing `path` (the file a symlink names) that nobody may write:
/// no write bit at all.
pub fn read_only_mode(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o7777;
    (mode & 0o222 == 0).then_some(mode)
}

pub fn remove(path: &Path) -> Result<(), String> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot remove {}: {e}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn atomic_write_keeps_mode_and_writes_through_symlinks() {
        let d = std::env::temp_dir().join(format!("tmuxmate-fsio-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let real = d.join("real.json");
        std::fs::write(&real, "old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = d.join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        super::write_atomic(&link, b"new", 0o644).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            2,
            "no temp file left"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
