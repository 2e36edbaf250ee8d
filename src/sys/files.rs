//! Opening files that are not ours for reading: transcripts, chat files, rollouts, hook
//! inputs. Invariant: only a regular file is read (a FIFO put where a transcript belongs
//! would block the opener in `open(2)` for ever, a device never end), and every read of
//! one is bounded by its caller. The open itself never blocks: it is made non-blocking,
//! which changes nothing for a regular file.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Open `path` for reading if it is a regular file (symlinks to one are followed: a
/// transcript may live behind a linked directory or file).
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.file_type().is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file (a FIFO, a device or a directory)",
            path.display()
        )));
    }
    Ok(f)
}

/// The last `max` bytes of the regular file `path` (all of it when smaller), and whether
/// anything before them was left out.
pub fn read_tail(path: &Path, max: u64) -> std::io::Result<(Vec<u8>, bool)> {
    use std::io::{Seek, SeekFrom};
    let mut f = open_regular(path)?;
    let len = f.metadata()?.len();
    let start = len.saturating_sub(max);
    f.seek(SeekFrom::Start(start))?;
    let mut out = Vec::new();
    f.take(max).read_to_end(&mut out)?;
    Ok((out, start > 0))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_fifo_is_refused_at_once_and_a_tail_is_the_end() {
        let d = std::env::temp_dir().join(format!("tmuxmate-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let fifo = d.join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(super::open_regular(&fifo).is_err());
        assert!(super::open_regular(&d).is_err());
        let f = d.join("f");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(super::read_tail(&f, 4).unwrap(), (b"6789".to_vec(), true));
        assert_eq!(
            super::read_tail(&f, 40).unwrap(),
            (b"0123456789".to_vec(), false)
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
