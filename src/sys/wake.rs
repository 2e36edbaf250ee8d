//! Waking this user's live views without inotify: a view (the dashboard) listens on a unix
//! datagram socket of its own in `<state>/wake/`, and every process that writes something a
//! view shows [`poke`]s them all once the write is done.
//!
//! Why not inotify: every digest follower holds an inotify instance and Linux gives a user
//! 128 (`fs.inotify.max_user_instances`), so with many agents a view got none and had to
//! look at its files on a timer. A datagram needs no kernel resource beyond the socket,
//! and a view asleep on it uses no CPU.
//!
//! Owns: the directory `<state>/wake/` (0700) and the `<token>.sock` files in it, one per
//! listening process (the token holds the process id and a part unique to the call:
//! `sys::unique`).
//!
//! Invariants:
//! - a poke costs one failed `read_dir` where no view ever listened (it runs on the
//!   per-turn and hook paths); it reads at most [`SCAN_MAX`] entries, sends only to
//!   sockets (as the directory lists them: a symlink is never followed), never blocks (a
//!   view whose queue is full is being woken anyway) and never fails its caller (an
//!   unexpected error is logged);
//! - a socket nobody listens on any more (its view was killed) is removed by the first poke
//!   it refuses, if it is still a socket then; nothing else in the directory is touched;
//! - a listener wakes its owner once per burst (what is queued when it wakes is read with
//!   the first datagram) and removes its socket file when it is dropped;
//! - a datagram's content means nothing: a poke says "look again", never what changed.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::sys::state;

/// How a listener's socket file ends; nothing else in the directory is sent to.
const SUFFIX: &str = ".sock";
/// The most entries a poke reads (each listening view is one; more is someone else's
/// mess, and the per-turn path must stay bounded).
pub const SCAN_MAX: usize = 64;
/// The most datagrams read at one wake: a sender that never stops must not keep the
/// listener from waking its owner.
const DRAIN_MAX: usize = 1024;
/// The longest path a socket address holds on Linux (`sun_path` is 108 bytes with its NUL).
const SUN_PATH_MAX: usize = 107;

/// `<state>/wake`.
pub fn dir() -> PathBuf {
    state::state_dir().join("wake")
}

/// The directory's sockets as `bind` and `send_to` can name them: by their path when it
/// fits a socket address, else through an open descriptor of the directory
/// (`/proc/self/fd/N/name`, resolved by the kernel like any path), so a long state
/// directory still works.
struct Names {
    dir: PathBuf,
    fd: Option<File>,
}

impl Names {
    fn new(dir: &Path) -> Names {
        Names {
            dir: dir.to_path_buf(),
            fd: None,
        }
    }

    fn addr(&mut self, name: &OsStr) -> io::Result<PathBuf> {
        let p = self.dir.join(name);
        if p.as_os_str().len() <= SUN_PATH_MAX {
            return Ok(p);
        }
        let fd = match &self.fd {
            Some(f) => f.as_raw_fd(),
            None => self.fd.insert(File::open(&self.dir)?).as_raw_fd(),
        };
        let p = Path::new(&format!("/proc/self/fd/{fd}")).join(name);
        if p.as_os_str().len() <= SUN_PATH_MAX {
            Ok(p)
        } else {
            Err(io::Error::other(format!(
                "{}: the name is too long for a socket",
                self.dir.join(name).display()
            )))
        }
    }
}

/// A listening view's socket; dropping it removes the file and ends its thread.
pub struct Listener {
    path: PathBuf,
    sock: UnixDatagram,
    stop: Arc<AtomicBool>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = std::fs::remove_file(&self.path);
        // Wakes the thread blocked in `recv` (it reads 0 bytes, sees `stop`, and ends).
        let _ = self.sock.shutdown(std::net::Shutdown::Read);
    }
}

/// Listen in `<state>/wake/` (created 0700): `on_wake` is called on a thread of its own
/// once per burst of pokes, until it returns false or the listener is dropped.
pub fn listen(on_wake: impl FnMut() -> bool + Send + 'static) -> io::Result<Listener> {
    let d = dir();
    state::private_dir(&d)?;
    listen_in(&d, on_wake)
}

/// [`listen`] in `dir`, which must exist.
fn listen_in(dir: &Path, on_wake: impl FnMut() -> bool + Send + 'static) -> io::Result<Listener> {
    let mut names = Names::new(dir);
    let (_, (path, sock)) = crate::sys::unique::create_with(|t| {
        let name = format!("{t}{SUFFIX}");
        match UnixDatagram::bind(names.addr(name.as_ref())?) {
            Ok(s) => Ok((dir.join(&name), s)),
            // A name taken (a reused pid in a repeated millisecond): another token.
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => {
                Err(io::Error::from(io::ErrorKind::AlreadyExists))
            }
            Err(e) => Err(e),
        }
    })?;
    let stop = Arc::new(AtomicBool::new(false));
    let listener = Listener {
        path,
        sock: sock.try_clone()?,
        stop: stop.clone(),
    };
    std::thread::Builder::new()
        .name("wake".into())
        .spawn(move || serve(&sock, &stop, on_wake))?;
    Ok(listener)
}

/// The listener's thread: one `on_wake` per burst.
fn serve(sock: &UnixDatagram, stop: &AtomicBool, mut on_wake: impl FnMut() -> bool) {
    use nix::sys::socket::{MsgFlags, recv};
    let mut buf = [0u8; 16];
    loop {
        match sock.recv(&mut buf) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                if !stop.load(Ordering::SeqCst) {
                    state::log(&format!("wake: the listener stopped: {e}"));
                }
                return;
            }
        }
        if stop.load(Ordering::SeqCst) {
            return;
        }
        // A burst is one wake: what is queued by now came with the first.
        for _ in 0..DRAIN_MAX {
            if recv(sock.as_raw_fd(), &mut buf, MsgFlags::MSG_DONTWAIT).is_err() {
                break;
            }
        }
        if stop.load(Ordering::SeqCst) || !on_wake() {
            return;
        }
    }
}

/// `TMUXMATE_NO_INOTIFY=1`: behave as when the kernel has no inotify instance left (each
/// digest follower holds one of the user's 128 by default). For tests: exhausting the real
/// limit would starve every other process of the user.
pub fn no_inotify() -> bool {
    std::env::var_os("TMUXMATE_NO_INOTIFY").is_some_and(|v| v == "1")
}

/// Tell every listening view to look again (see the module docs: bounded, never blocks,
/// never fails).
pub fn poke() {
    poke_in(&dir());
}

/// [`poke`] the sockets in `dir`.
fn poke_in(dir: &Path) {
    // The common case, no view ever listened: one failed `open`, nothing else.
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut names = Names::new(dir);
    let mut sender: Option<UnixDatagram> = None;
    for e in rd.take(SCAN_MAX).flatten() {
        let name = e.file_name();
        // The type as the directory lists it: a symlink is a symlink, never its target.
        if !name.as_encoded_bytes().ends_with(SUFFIX.as_bytes())
            || !e.file_type().is_ok_and(|t| t.is_socket())
        {
            continue;
        }
        let s = match &sender {
            Some(s) => s,
            None => match UnixDatagram::unbound().and_then(|s| {
                s.set_nonblocking(true)?;
                Ok(s)
            }) {
                Ok(s) => sender.insert(s),
                Err(err) => {
                    state::log(&format!("wake: no socket to poke with: {err}"));
                    return;
                }
            },
        };
        match names.addr(&name).and_then(|a| s.send_to(&[1], a)) {
            Ok(_) => {}
            // Nobody listens: its view is gone without removing it.
            Err(err) if err.raw_os_error() == Some(nix::libc::ECONNREFUSED) => {
                remove_stale(&dir.join(&name));
            }
            // Removed meanwhile (its view ended), or a full queue (it is awake anyway).
            Err(err)
                if matches!(
                    err.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::WouldBlock
                ) => {}
            Err(err) => state::log(&format!("wake: {}: {err}", dir.join(&name).display())),
        }
    }
}

/// Remove a dead view's socket file, if it is (still) a socket, not following a symlink.
fn remove_stale(p: &Path) {
    if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket()) {
        let _ = std::fs::remove_file(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::DirBuilderExt;
    use std::sync::mpsc;
    use std::time::Duration;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tmuxmate-wake-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::DirBuilder::new().mode(0o700).create(&d).unwrap();
        d
    }

    fn listener(d: &Path) -> (Listener, mpsc::Receiver<()>) {
        let (tx, rx) = mpsc::channel();
        let l = listen_in(d, move || tx.send(()).is_ok()).unwrap();
        (l, rx)
    }

    fn socks(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_listener_gets_a_poke_and_a_burst_is_one_wake() {
        let d = scratch("poke");
        let (l, rx) = listener(&d);
        assert!(l.path.starts_with(&d));
        let name = l.path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.ends_with(".sock"), "{name}");
        assert!(name.contains(&crate::sys::unique::base36(std::process::id() as u64, 5)));
        poke_in(&d);
        rx.recv_timeout(Duration::from_secs(5)).expect("a wake");
        // Pokes queued while the owner is busy with a wake are one next wake (the queue
        // holds a few; the rest are refused as full, which changes nothing).
        let (gate_tx, gate_rx) = mpsc::channel::<()>();
        let (tx2, rx2) = mpsc::channel();
        let l2 = listen_in(&d, move || {
            let more = tx2.send(()).is_ok();
            let _ = gate_rx.recv();
            more
        })
        .unwrap();
        poke_in(&d);
        rx2.recv_timeout(Duration::from_secs(5)).expect("a wake");
        for _ in 0..20 {
            poke_in(&d);
        }
        gate_tx.send(()).unwrap();
        rx2.recv_timeout(Duration::from_secs(5))
            .expect("the burst's wake");
        gate_tx.send(()).unwrap();
        assert!(
            rx2.recv_timeout(Duration::from_millis(300)).is_err(),
            "20 pokes in a burst woke more than once"
        );
        // Dropping removes the file and ends the thread (its closure, and sender, go).
        drop(l);
        drop(l2);
        drop(gate_tx);
        assert!(socks(&d).is_empty(), "{:?}", socks(&d));
        let end = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            match rx.recv_timeout(end.saturating_duration_since(std::time::Instant::now())) {
                Ok(()) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => panic!("the thread outlived its drop"),
            }
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_stale_socket_goes_and_other_files_stay_unsent_to() {
        let d = scratch("stale");
        // A view that died without removing its socket: bound, then closed.
        let stale = d.join("0dead.sock");
        drop(UnixDatagram::bind(&stale).unwrap());
        assert!(
            std::fs::symlink_metadata(&stale)
                .unwrap()
                .file_type()
                .is_socket()
        );
        // Not sockets, or not ours to send to: left alone.
        std::fs::write(d.join("plain.sock"), b"x").unwrap();
        std::fs::create_dir(d.join("dir.sock")).unwrap();
        // A symlink to a live socket elsewhere: never followed (no datagram reaches it).
        let elsewhere = scratch("stale-target");
        let (target, trx) = listener(&elsewhere);
        std::os::unix::fs::symlink(&target.path, d.join("link.sock")).unwrap();
        // A socket not named .sock: not sent to.
        let other = d.join("other");
        let other_sock = UnixDatagram::bind(&other).unwrap();
        other_sock.set_nonblocking(true).unwrap();
        let (live, rx) = listener(&d);
        poke_in(&d);
        rx.recv_timeout(Duration::from_secs(5))
            .expect("the live view wakes");
        let live_name = live
            .path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let mut want = vec![
            "dir.sock".to_string(),
            "link.sock".into(),
            "other".into(),
            "plain.sock".into(),
            live_name,
        ];
        want.sort();
        assert_eq!(socks(&d), want);
        assert_eq!(std::fs::read(d.join("plain.sock")).unwrap(), b"x");
        assert!(trx.recv_timeout(Duration::from_millis(200)).is_err());
        assert!(other_sock.recv(&mut [0u8; 4]).is_err(), "nothing sent");
        drop(live);
        drop(target);
        let _ = std::fs::remove_dir_all(&d);
        let _ = std::fs::remove_dir_all(&elsewhere);
    }

    #[test]
    fn no_directory_is_no_error_and_no_directory() {
        let d = std::env::temp_dir().join(format!("tmuxmate-wake-none-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        poke_in(&d);
        assert!(!d.exists());
    }

    #[test]
    fn a_directory_too_long_for_a_socket_address_still_works() {
        let mut d = scratch("long");
        let root = d.clone();
        while d.as_os_str().len() < 150 {
            d = d.join("a-long-directory-name");
        }
        std::fs::create_dir_all(&d).unwrap();
        let (l, rx) = listener(&d);
        assert!(l.path.as_os_str().len() > SUN_PATH_MAX);
        assert!(l.path.exists());
        poke_in(&d);
        rx.recv_timeout(Duration::from_secs(5)).expect("a wake");
        drop(l);
        assert!(socks(&d).is_empty());
        let _ = std::fs::remove_dir_all(&root);
    }
}
