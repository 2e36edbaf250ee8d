//! The state directory and the log.
//!
//! Owns: where durable files live (`TMUXMATE_STATE_DIR`, else `$XDG_STATE_HOME/tmuxmate`,
//! else `~/.local/state/tmuxmate`), who may read them, atomic writes, and the append-only
//! log that unattended paths write their reasons to. Invariants: logging never fails the
//! caller; what lives here (captured screens, run output, ledgers, launch specs) is the
//! user's alone: every directory we create under the state directory is 0700 and every
//! file 0600 (`private_dir`, `open_private`, `write_atomic`), and a state directory found
//! readable by others is closed (0700, and everything in it group/other bits removed)
//! the first time a process touches it.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Mode of every directory under the state directory (and of the directory itself).
pub const DIR_MODE: u32 = 0o700;
/// Mode of every file we create there.
pub const FILE_MODE: u32 = 0o600;

/// A state directory this process uses instead of the configured one (the demo's own).
static OVERRIDE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Make this process keep its state in `dir` (first call wins; for the demo, whose
/// process must leave nothing in the user's state directory).
pub fn use_dir_for_this_process(dir: PathBuf) {
    let _ = OVERRIDE.set(dir);
}

pub fn state_dir() -> PathBuf {
    if let Some(d) = OVERRIDE.get() {
        return d.clone();
    }
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

/// Close the state directory once per process if it exists and others can read it:
/// 0700 on it, and group/other bits removed from everything below it (an older tmuxmate,
/// or a umask of 022, left captured screens world-readable). Cheap when nothing is wrong:
/// one `stat`. Symlinks are not followed below the root; errors are logged, not fatal.
pub fn secure_existing() {
    // A flag, not a OnceLock: the log line below re-enters through `open_private`.
    static DONE: AtomicBool = AtomicBool::new(false);
    if DONE.swap(true, Ordering::SeqCst) {
        return;
    }
    let root = state_dir();
    let Ok(m) = std::fs::metadata(&root) else {
        return;
    };
    // Another user's directory is not ours to change (and is refused: `root_is_ours`).
    if !m.is_dir() || m.permissions().mode() & 0o077 == 0 || root_is_ours(&root).is_err() {
        return;
    }
    let mut fixed = 0usize;
    let mut failed = Vec::new();
    tighten(&root, &mut fixed, &mut failed, 0);
    // Logged after the walk, so the log file itself was already tightened.
    log(&format!(
        "state directory {} was readable by others: closed {fixed} entries to 0700/0600{}",
        root.display(),
        if failed.is_empty() {
            String::new()
        } else {
            format!("; could not change {}", failed.join(", "))
        }
    ));
}

fn tighten(path: &Path, fixed: &mut usize, failed: &mut Vec<String>, depth: usize) {
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return;
    };
    if m.file_type().is_symlink() && depth > 0 {
        return;
    }
    let m = if depth == 0 {
        std::fs::metadata(path).unwrap_or(m)
    } else {
        m
    };
    let mode = m.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        let want = if m.is_dir() { DIR_MODE } else { mode & 0o700 };
        match std::fs::set_permissions(path, std::fs::Permissions::from_mode(want)) {
            Ok(()) => *fixed += 1,
            Err(e) => failed.push(format!("{} ({e})", path.display())),
        }
    }
    // Deep trees are not ours: the layout is a few levels (run/<id>/file, jobs/pipes/x).
    if m.is_dir()
        && depth < 6
        && let Ok(rd) = std::fs::read_dir(path)
    {
        for e in rd.flatten() {
            tighten(&e.path(), fixed, failed, depth + 1);
        }
    }
}

/// The state directory, when it exists, must belong to this user: one of another user's
/// (say root's tmuxmate pointed at a user's directory) could hold their symlinks and
/// FIFOs, and what we write there would be theirs to read. Asked once per process.
fn root_is_ours(root: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    static VERDICT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let verdict = VERDICT.get_or_init(|| {
        let m = std::fs::metadata(root).ok()?;
        let me = nix::unistd::geteuid().as_raw();
        (m.uid() != me).then(|| {
            format!(
                "the state directory {} belongs to uid {}, not to you (uid {me}): set \
                 TMUXMATE_STATE_DIR to a directory of your own, or give it back to you \
                 (chown)",
                root.display(),
                m.uid()
            )
        })
    });
    match verdict {
        Some(msg) => Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            msg.clone(),
        )),
        None => Ok(()),
    }
}

/// Create `dir` (under the state directory) and its missing parents up to the state
/// directory with mode 0700; an existing one found wider is closed to 0700. Parents
/// above the state directory are created with the default mode.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    secure_existing();
    let root = state_dir();
    if !dir.starts_with(&root) {
        return std::fs::create_dir_all(dir);
    }
    root_is_ours(&root)?;
    // Already a real directory, closed: what goes in it is out of others' reach whatever
    // its parents' modes (and the root's were closed once by `secure_existing`), so one
    // `stat` instead of two `mkdir`s and a walk to the root; a store made that walk five
    // times. A symlink, a wider mode or anything missing takes the full path below.
    if let Ok(m) = std::fs::symlink_metadata(dir)
        && m.is_dir()
        && m.permissions().mode() & 0o077 == 0
    {
        return Ok(());
    }
    if let Some(above) = root.parent() {
        std::fs::create_dir_all(above)?;
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)?;
    // An existing directory keeps its mode through `create`: close it if it is wider.
    let mut d = dir;
    loop {
        if let Ok(m) = std::fs::metadata(d)
            && m.permissions().mode() & 0o077 != 0
        {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(DIR_MODE))?;
        }
        if d == root {
            break;
        }
        match d.parent() {
            Some(p) => d = p,
            None => break,
        }
    }
    Ok(())
}

/// Open (creating when `opts` says so) a file under the state directory as 0600: a new
/// file gets that mode, an existing wider one is narrowed to it. Its directory is made
/// with `private_dir` first. A symlink in the file's place is not followed (a hostile
/// one would have us append to whatever it names) and anything but a regular file (a
/// FIFO would block us in `open`, a device never end) is refused.
pub fn open_private(path: &Path, opts: &mut OpenOptions) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent() {
        private_dir(dir)?;
    }
    let f = opts
        .mode(FILE_MODE)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| refused_kind(path, e))?;
    let m = f.metadata()?;
    if !m.file_type().is_file() {
        return Err(not_regular(path));
    }
    if m.permissions().mode() & 0o077 != 0 {
        f.set_permissions(std::fs::Permissions::from_mode(
            m.permissions().mode() & 0o700,
        ))?;
    }
    Ok(f)
}

/// Make a new directory `parent/<prefix><token>` (0700) that no other call has: created
/// exclusively, a fresh token on `EEXIST`. Returns its name and path.
pub fn new_private_dir(parent: &Path, prefix: &str) -> std::io::Result<(String, PathBuf)> {
    private_dir(parent)?;
    let (t, dir) = crate::sys::unique::create_with(|t| {
        let name = format!("{prefix}{t}");
        let dir = parent.join(&name);
        std::fs::DirBuilder::new()
            .mode(DIR_MODE)
            .create(&dir)
            .map(|()| dir)
    })?;
    Ok((format!("{prefix}{t}"), dir))
}

/// Write a whole small file as 0600 (not atomic: for files that only we read once).
pub fn write_private(path: &Path, data: &[u8]) -> std::io::Result<()> {
    let mut f = open_private(
        path,
        OpenOptions::new().write(true).create(true).truncate(true),
    )?;
    f.write_all(data)
}

/// Read a small 0600 file (at most `max` bytes: `None` when missing, larger, or not
/// text) and write what `next` makes of it over its start, through one open file: no
/// truncation first, then what passes the new end is cut (nothing, when the writer keeps
/// a fixed width). Why: on ext4 an `O_TRUNC` of a file that holds data frees its block
/// and the write allocates one again, about 40 times the cost of an overwrite (167
/// against 3.8 us, measured), for a record rewritten on every store; and one open, not a
/// read's and a write's. Not atomic, as `write_private` is not: the caller serializes.
pub fn rewrite_small(
    path: &Path,
    max: u64,
    next: impl FnOnce(Option<&str>) -> Vec<u8>,
) -> std::io::Result<()> {
    use std::io::Read;
    use std::os::unix::fs::FileExt;
    let mut f = open_private(path, OpenOptions::new().read(true).write(true).create(true))?;
    let before = f.metadata()?.len();
    let mut old = Vec::new();
    if before <= max {
        (&mut f).take(max + 1).read_to_end(&mut old)?;
    }
    let old = std::str::from_utf8(&old)
        .ok()
        .filter(|_| before <= max && old.len() as u64 <= max);
    let data = next(old);
    f.write_all_at(&data, 0)?;
    if before > data.len() as u64 {
        f.set_len(data.len() as u64)?;
    }
    Ok(())
}

/// Append one line to the log; rotate at 1 MiB so it never grows without bound.
pub fn log(msg: &str) {
    let path = log_path();
    if std::fs::metadata(&path)
        .map(|m| m.len() > 1 << 20)
        .unwrap_or(false)
    {
        let _ = std::fs::rename(&path, path.with_extension("old"));
    }
    if let Ok(mut f) = open_private(&path, OpenOptions::new().create(true).append(true)) {
        let line = format!(
            "{} pid={} {}\n",
            crate::sys::time::now_ms(),
            std::process::id(),
            msg.replace('\n', "\\n")
        );
        let _ = f.write_all(line.as_bytes());
    }
}

/// Write via a temp file and rename, so readers see the old or the new file, never half.
pub fn write_atomic(path: &Path, data: &[u8]) -> std::io::Result<()> {
    // A temp name of this call only, created exclusively: two threads (or processes)
    // writing one path each rename their own whole file.
    let (_, (tmp, mut f)) = crate::sys::unique::create_with(|t| {
        let tmp = path.with_extension(format!("tmp.{t}"));
        open_private(&tmp, OpenOptions::new().write(true).create_new(true)).map(|f| (tmp, f))
    })?;
    let r = (|| {
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

fn not_regular(path: &Path) -> std::io::Error {
    std::io::Error::other(format!(
        "{} is not a regular file (a FIFO, a device or a directory): move it away",
        path.display()
    ))
}

/// `ELOOP` from `O_NOFOLLOW` said as what it is.
fn refused_kind(path: &Path, e: std::io::Error) -> std::io::Error {
    if e.raw_os_error() == Some(nix::libc::ELOOP) {
        std::io::Error::other(format!(
            "{} is a symlink, which tmuxmate does not follow in its state directory: move it away",
            path.display()
        ))
    } else {
        e
    }
}

/// Read a file of ours whole, at most `max` bytes (an error past that), under the same
/// rules as [`open_private`]: no symlink followed, only a regular file.
pub fn read_private(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| refused_kind(path, e))?;
    let m = f.metadata()?;
    if !m.file_type().is_file() {
        return Err(not_regular(path));
    }
    let mut out = Vec::new();
    f.take(max + 1).read_to_end(&mut out)?;
    if out.len() as u64 > max {
        return Err(std::io::Error::other(format!(
            "{} is larger than {max} bytes: move it away",
            path.display()
        )));
    }
    Ok(out)
}

/// Read a small file of ours: at most `max` bytes, not following a symlink, and only a
/// regular file (a FIFO would block the caller, a device never end). `None` when it is
/// missing, not a regular file, or larger than `max`.
pub fn read_small(path: &Path, max: u64) -> Option<String> {
    use std::io::Read;
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let m = f.metadata().ok()?;
    if !m.file_type().is_file() || m.len() > max {
        return None;
    }
    let mut text = String::new();
    f.take(max + 1).read_to_string(&mut text).ok()?;
    (text.len() as u64 <= max).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_writing_one_path_at_once_each_succeed_and_leave_no_temp_file() {
        let dir = std::env::temp_dir().join(format!("tmuxmate-atomic-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("job.json");
        std::thread::scope(|s| {
            for t in 0..12 {
                let path = &path;
                s.spawn(move || {
                    for i in 0..40 {
                        let body = format!("{t}-{i}-").repeat(200);
                        write_atomic(path, body.as_bytes()).expect("every writer succeeds");
                    }
                });
            }
        });
        let text = std::fs::read_to_string(&path).unwrap();
        let unit = text.split_inclusive('-').take(2).collect::<String>();
        assert_eq!(text, unit.repeat(200), "one writer's whole file");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("job.json")]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn new_private_dirs_of_one_instant_are_all_different() {
        let dir = std::env::temp_dir().join(format!("tmuxmate-newdir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let made: Vec<String> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| {
                    let dir = &dir;
                    s.spawn(move || {
                        (0..50)
                            .map(|_| new_private_dir(dir, "r").unwrap().0)
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let set: std::collections::HashSet<_> = made.iter().collect();
        assert_eq!(set.len(), 400);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 400);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
