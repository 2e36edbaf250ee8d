//! One remote command over a running OpenSSH control master, spoken to its control socket
//! directly (OpenSSH's `PROTOCOL.mux`, version 4) instead of through an `ssh` client
//! process.
//!
//! Why: a warm call through `ssh -S master` starts an ssh client that reads its config,
//! connects to the master and relays three descriptors: measured here, that client is
//! most of what a remote call costs on this machine besides the host's own work, and the
//! raw `ssh -S master host tmux ...` a user would type pays it too. The master does the
//! same work either way (it opens a session channel on its one connection and relays the
//! command's streams into the descriptors it was given), so the answer is the same bytes
//! and the same exit status.
//!
//! Owns: the protocol exchange (hello, `MUX_C_NEW_SESSION` with our three pipe ends
//! passed as `SCM_RIGHTS`, then reading the session's exit message while its stdout and
//! stderr arrive on our pipes) and the deadline.
//!
//! Invariants:
//! - [`Outcome::NotOpened`] only when the command certainly did not start: the socket did
//!   not connect, the hello failed, or the master answered the session request with a
//!   refusal. Then the caller may run it through the ssh client instead (which repeats
//!   ssh's own handling and messages). A master that goes away after the request was
//!   sent may have started it: that is [`Outcome::Done`] with ssh's exit status 255 and
//!   ssh's own words (`read from master failed`), never retried.
//! - Nothing of the environment is sent (no `SendEnv`): the remote line is our fixed text
//!   with every variable it needs set explicitly, so a remote answer does not depend on
//!   this machine's locale.
//! - No terminal is requested and there is no escape character: the streams are bytes.
//! - As ssh's own mux client does, the call waits for the master to close the control
//!   connection after the exit message, and for both streams to end, so no output still
//!   in the master's buffers is lost.

use std::io::{IoSlice, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use nix::poll::PollFlags;

use crate::sys::process::{Finished, keep_end, poll_ready, read_some};

const MUX_MSG_HELLO: u32 = 0x0000_0001;
const MUX_C_NEW_SESSION: u32 = 0x1000_0002;
const MUX_S_PERMISSION_DENIED: u32 = 0x8000_0002;
const MUX_S_FAILURE: u32 = 0x8000_0003;
const MUX_S_EXIT_MESSAGE: u32 = 0x8000_0004;
const MUX_S_SESSION_OPENED: u32 = 0x8000_0006;
const MUX_S_TTY_ALLOC_FAIL: u32 = 0x8000_0008;
const VERSION: u32 = 4;
/// No escape character (the streams are not a terminal's).
const NO_ESCAPE: u32 = 0xffff_ffff;
/// A packet larger than this is not from a master (its largest is an error string).
const MAX_PACKET: usize = 256 * 1024;

/// What one [`session`] came to.
pub enum Outcome {
    /// The command ran (or may have: see the module docs); its streams and status.
    Done(Finished),
    /// The command did not start; why (for the log).
    NotOpened(String),
    /// The deadline passed; the session was abandoned (the master closes it).
    TimedOut,
    /// The command printed more than the call's bound on stdout (bytes); the session was
    /// abandoned.
    TooLarge(usize),
}

/// Run the remote shell `line` as a session of the master at `control`, `input` on its
/// stdin, within `timeout`, keeping at most `max_stdout` bytes of its stdout.
pub fn session(
    control: &Path,
    line: &str,
    input: Option<&[u8]>,
    timeout: Duration,
    max_stdout: usize,
) -> Outcome {
    let deadline = Instant::now() + timeout;
    let sock = match UnixStream::connect(control) {
        Ok(s) => s,
        Err(e) => return Outcome::NotOpened(format!("control socket: {e}")),
    };
    // Our writes are small, but a master that stopped reading must not hold the call
    // past its deadline.
    if let Err(e) = sock.set_write_timeout(Some(timeout.max(Duration::from_millis(1)))) {
        return Outcome::NotOpened(format!("control socket: {e}"));
    }
    if let Err(why) = hello(&sock, deadline) {
        return Outcome::NotOpened(why);
    }
    let pipes = match Pipes::new(input.is_some()) {
        Ok(p) => p,
        Err(e) => return Outcome::NotOpened(format!("pipes: {e}")),
    };
    if let Err(why) = request(&sock, line, &pipes) {
        return Outcome::NotOpened(why);
    }
    // The master holds its copies now; ours would keep the streams open after it closes.
    let Pipes {
        stdin_theirs,
        stdout_theirs,
        stderr_theirs,
        stdin_ours,
        stdout_ours,
        stderr_ours,
    } = pipes;
    drop((stdin_theirs, stdout_theirs, stderr_theirs));
    match reply(&sock, deadline) {
        Reply::Opened(sid) => {
            let running = Running::new(sock, sid, stdin_ours.zip(input), stdout_ours, stderr_ours);
            relay(running, deadline, max_stdout)
        }
        Reply::Refused(why) => Outcome::NotOpened(why),
        Reply::Lost(why) => Outcome::Done(lost(why, Vec::new(), Vec::new())),
        Reply::TimedOut => Outcome::TimedOut,
    }
}

/// ssh's exit status and words for a master lost after the session was requested.
fn lost(why: String, stdout: Vec<u8>, mut stderr: Vec<u8>) -> Finished {
    stderr.extend_from_slice(
        format!("mux_client_request_session: read from master failed: {why}\n").as_bytes(),
    );
    Finished {
        status: ExitStatus::from_raw(255 << 8),
        stdout,
        stderr,
    }
}

/// Our ends and theirs (passed to the master) of the session's three streams.
struct Pipes {
    stdin_theirs: OwnedFd,
    stdout_theirs: OwnedFd,
    stderr_theirs: OwnedFd,
    stdin_ours: Option<OwnedFd>,
    stdout_ours: OwnedFd,
    stderr_ours: OwnedFd,
}

impl Pipes {
    fn new(with_input: bool) -> std::io::Result<Pipes> {
        use nix::fcntl::OFlag;
        let pipe = || nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(std::io::Error::from);
        let (stdin_theirs, stdin_ours) = if with_input {
            let (r, w) = pipe()?;
            (r, Some(w))
        } else {
            (OwnedFd::from(std::fs::File::open("/dev/null")?), None)
        };
        let (stdout_ours, stdout_theirs) = pipe()?;
        let (stderr_ours, stderr_theirs) = pipe()?;
        if let Some(w) = &stdin_ours {
            set_nonblocking(w)?;
        }
        Ok(Pipes {
            stdin_theirs,
            stdout_theirs,
            stderr_theirs,
            stdin_ours,
            stdout_ours,
            stderr_ours,
        })
    }
}

fn set_nonblocking(fd: &OwnedFd) -> std::io::Result<()> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let flags = fcntl(fd.as_raw_fd(), FcntlArg::F_GETFL).map_err(std::io::Error::from)?;
    let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
    fcntl(fd.as_raw_fd(), FcntlArg::F_SETFL(flags)).map_err(std::io::Error::from)?;
    Ok(())
}

/// A packet: its length, then the body.
fn packet(body: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(4 + body.len());
    p.extend_from_slice(&(body.len() as u32).to_be_bytes());
    p.extend_from_slice(body);
    p
}

fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_be_bytes());
}

fn put_str(b: &mut Vec<u8>, s: &[u8]) {
    put_u32(b, s.len() as u32);
    b.extend_from_slice(s);
}

/// A packet body being read.
struct Body<'a>(&'a [u8]);

impl Body<'_> {
    fn u32(&mut self) -> Option<u32> {
        let (v, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_be_bytes(*v))
    }
    fn string(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        let s = self.0.get(..n)?;
        self.0 = &self.0[n..];
        Some(String::from_utf8_lossy(s).into_owned())
    }
}

/// Read one whole packet body before `deadline`. `Ok(None)`: the master closed the socket.
fn read_packet(sock: &UnixStream, deadline: Instant) -> Result<Option<Vec<u8>>, String> {
    let mut len = [0u8; 4];
    if !read_exact(sock, &mut len, deadline)? {
        return Ok(None);
    }
    let n = u32::from_be_bytes(len) as usize;
    if n > MAX_PACKET {
        return Err(format!("a packet of {n} bytes"));
    }
    let mut body = vec![0u8; n];
    if !read_exact(sock, &mut body, deadline)? {
        return Err("the master closed the socket inside a packet".into());
    }
    Ok(Some(body))
}

/// Fill `buf`; false when the socket ends before its first byte.
fn read_exact(mut sock: &UnixStream, buf: &mut [u8], deadline: Instant) -> Result<bool, String> {
    let mut have = 0;
    while have < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err("timed out".into());
        }
        sock.set_read_timeout(Some(left))
            .map_err(|e| e.to_string())?;
        match sock.read(&mut buf[have..]) {
            Ok(0) if have == 0 => return Ok(false),
            Ok(0) => return Err("the master closed the socket inside a packet".into()),
            Ok(n) => have += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err("timed out".into());
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(true)
}

fn hello(sock: &UnixStream, deadline: Instant) -> Result<(), String> {
    let mut b = Vec::new();
    put_u32(&mut b, MUX_MSG_HELLO);
    put_u32(&mut b, VERSION);
    (&*sock)
        .write_all(&packet(&b))
        .map_err(|e| format!("hello: {e}"))?;
    let body = read_packet(sock, deadline)
        .map_err(|e| format!("hello: {e}"))?
        .ok_or("hello: the master closed the socket")?;
    let mut r = Body(&body);
    match (r.u32(), r.u32()) {
        (Some(MUX_MSG_HELLO), Some(VERSION)) => Ok(()),
        (t, v) => Err(format!(
            "hello: expected version {VERSION}, got type {t:?} version {v:?}"
        )),
    }
}

/// Send the session request, then our three descriptors (one message each, as ssh does).
fn request(sock: &UnixStream, line: &str, p: &Pipes) -> Result<(), String> {
    let mut b = Vec::new();
    put_u32(&mut b, MUX_C_NEW_SESSION);
    put_u32(&mut b, 0); // request id
    put_str(&mut b, b""); // reserved
    for flag in [0, 0, 0, 0] {
        // tty, X11 forwarding, agent forwarding, subsystem
        put_u32(&mut b, flag);
    }
    put_u32(&mut b, NO_ESCAPE);
    put_str(&mut b, b""); // terminal type: no terminal
    put_str(&mut b, line.as_bytes());
    (&*sock)
        .write_all(&packet(&b))
        .map_err(|e| format!("session request: {e}"))?;
    for fd in [&p.stdin_theirs, &p.stdout_theirs, &p.stderr_theirs] {
        send_fd(sock, fd).map_err(|e| format!("passing a descriptor: {e}"))?;
    }
    Ok(())
}

fn send_fd(sock: &UnixStream, fd: &OwnedFd) -> Result<(), String> {
    use nix::sys::socket::{ControlMessage, MsgFlags, sendmsg};
    let one = [0u8];
    let iov = [IoSlice::new(&one)];
    let fds = [fd.as_raw_fd()];
    let cmsg = [ControlMessage::ScmRights(&fds)];
    match sendmsg::<()>(sock.as_raw_fd(), &iov, &cmsg, MsgFlags::empty(), None) {
        Ok(1) => Ok(()),
        Ok(n) => Err(format!("sent {n} bytes")),
        Err(e) => Err(e.to_string()),
    }
}

enum Reply {
    Opened(u32),
    Refused(String),
    Lost(String),
    TimedOut,
}

/// The master's answer to the session request.
fn reply(sock: &UnixStream, deadline: Instant) -> Reply {
    let body = match read_packet(sock, deadline) {
        Ok(Some(b)) => b,
        Ok(None) => return Reply::Lost("the master closed the socket".into()),
        Err(e) if e == "timed out" => return Reply::TimedOut,
        Err(e) => return Reply::Lost(e),
    };
    let mut r = Body(&body);
    let (kind, rid) = (r.u32(), r.u32());
    match (kind, rid) {
        (Some(MUX_S_SESSION_OPENED), Some(0)) => match r.u32() {
            Some(sid) => Reply::Opened(sid),
            None => Reply::Lost("a short session-opened message".into()),
        },
        (Some(MUX_S_PERMISSION_DENIED | MUX_S_FAILURE), Some(0)) => {
            Reply::Refused(r.string().unwrap_or_default())
        }
        (k, id) => Reply::Lost(format!("unexpected answer type {k:x?} id {id:?}")),
    }
}

/// An opened session while it runs: our ends of its streams, the control connection, and
/// what each has brought so far.
struct Running<'a> {
    sid: u32,
    /// Its stdout (0) and stderr (1) while they are open.
    streams: [Option<std::fs::File>; 2],
    bufs: [Vec<u8>; 2],
    /// Open until the master closes it (after the exit message) or it fails.
    control: Option<UnixStream>,
    /// Bytes of the control connection not yet a whole packet.
    pending: Vec<u8>,
    exit: Option<u32>,
    failure: Option<String>,
    /// Our end of its stdin and what is still to be written, until all of it is.
    input: Option<(std::fs::File, &'a [u8])>,
    written: usize,
    chunk: [u8; 16 * 1024],
}

/// Tags of the descriptors a [`Running`] session waits on.
const STDOUT: usize = 0;
const STDERR: usize = 1;
const CONTROL: usize = 2;
const STDIN: usize = 3;

impl<'a> Running<'a> {
    fn new(
        sock: UnixStream,
        sid: u32,
        input: Option<(OwnedFd, &'a [u8])>,
        stdout: OwnedFd,
        stderr: OwnedFd,
    ) -> Running<'a> {
        Running {
            sid,
            streams: [
                Some(std::fs::File::from(stdout)),
                Some(std::fs::File::from(stderr)),
            ],
            bufs: [Vec::new(), Vec::new()],
            control: Some(sock),
            pending: Vec::new(),
            exit: None,
            failure: None,
            input: input.map(|(w, data)| (std::fs::File::from(w), data)),
            written: 0,
            chunk: [0u8; 16 * 1024],
        }
    }

    /// Still something to wait for: the control connection or a stream.
    fn open(&self) -> bool {
        self.control.is_some() || self.streams.iter().any(Option::is_some)
    }

    /// What to wait for: the open streams and control connection readable, our end of
    /// stdin writable.
    fn watched(&self) -> Vec<(BorrowedFd<'_>, PollFlags, usize)> {
        let mut w = Vec::with_capacity(4);
        for (i, s) in self.streams.iter().enumerate() {
            if let Some(s) = s {
                w.push((s.as_fd(), PollFlags::POLLIN, i));
            }
        }
        if let Some(c) = &self.control {
            w.push((c.as_fd(), PollFlags::POLLIN, CONTROL));
        }
        if let Some((i, _)) = &self.input {
            w.push((i.as_fd(), PollFlags::POLLOUT, STDIN));
        }
        w
    }

    /// Read what stream `i` has ready (closed at its end): the stdout bytes so far.
    fn read_stream(&mut self, i: usize) -> usize {
        if let Some(s) = self.streams[i].as_mut()
            && !read_some(s, &mut self.chunk, &mut self.bufs[i], i == STDERR)
        {
            self.streams[i] = None;
        }
        self.bufs[STDOUT].len()
    }

    /// Read the control connection and take its whole messages (the exit message).
    fn read_control(&mut self) {
        let Some(c) = self.control.as_mut() else {
            return;
        };
        match c.read(&mut self.chunk) {
            Ok(0) => self.control = None,
            Ok(n) => self.pending.extend_from_slice(&self.chunk[..n]),
            Err(e) if retry(&e) => {}
            Err(e) => {
                self.failure.get_or_insert(e.to_string());
                self.control = None;
            }
        }
        if let Err(e) = messages(&mut self.pending, self.sid, &mut self.exit) {
            self.failure.get_or_insert(e);
            self.control = None;
        }
    }

    /// Write what stdin takes now; once all is written our end closes (the remote stdin
    /// ends).
    fn write_input(&mut self) {
        let Some((w, data)) = self.input.as_mut() else {
            return;
        };
        match w.write(&data[self.written..]) {
            Ok(n) => self.written += n,
            Err(e) if retry(&e) => {}
            // The remote side stopped reading (it exited): the rest is not needed.
            Err(_) => self.written = data.len(),
        }
        if self.written >= data.len() {
            self.input = None;
        }
    }
}

/// An error that only means "not now".
fn retry(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
    )
}

/// What a session that ran to its end came to: its exit status, else ssh's answer for a
/// master lost (`failure`, or closed without an exit message).
fn ended(exit: Option<u32>, failure: Option<String>, stdout: Vec<u8>, stderr: Vec<u8>) -> Outcome {
    match (exit, failure) {
        (Some(code), _) => Outcome::Done(Finished {
            status: ExitStatus::from_raw(((code & 0xff) as i32) << 8),
            stdout,
            stderr,
        }),
        (None, why) => Outcome::Done(lost(
            why.unwrap_or_else(|| "the master closed the session without an exit status".into()),
            stdout,
            stderr,
        )),
    }
}

/// After the session opened: write the input, collect stdout and stderr, read the exit
/// message, until the master closes the control socket and both streams have ended.
fn relay(mut s: Running, deadline: Instant, max_stdout: usize) -> Outcome {
    if let Some(c) = &s.control
        && c.set_nonblocking(true).is_err()
    {
        return Outcome::Done(lost("the control socket".into(), Vec::new(), Vec::new()));
    }
    // A master that closed the control socket without an exit message is lost; one that
    // sent it keeps the socket open until the session is cleaned up.
    while s.open() {
        if Instant::now() >= deadline {
            return Outcome::TimedOut;
        }
        let ready = match poll_ready(&s.watched(), deadline) {
            Ok(r) => r,
            Err(e) => {
                return Outcome::Done(lost(format!("poll: {e}"), Vec::new(), Vec::new()));
            }
        };
        for i in ready {
            match i {
                STDOUT | STDERR => {
                    if s.read_stream(i) > max_stdout {
                        return Outcome::TooLarge(max_stdout);
                    }
                }
                CONTROL => s.read_control(),
                _ => s.write_input(),
            }
        }
    }
    let [stdout, mut stderr] = s.bufs;
    keep_end(&mut stderr);
    ended(s.exit, s.failure, stdout, stderr)
}

/// Take the whole packets out of `pending`: the exit message sets `exit`.
fn messages(pending: &mut Vec<u8>, sid: u32, exit: &mut Option<u32>) -> Result<(), String> {
    loop {
        let Some(len) = pending
            .first_chunk::<4>()
            .map(|l| u32::from_be_bytes(*l) as usize)
        else {
            return Ok(());
        };
        if len > MAX_PACKET {
            return Err(format!("a packet of {len} bytes"));
        }
        if pending.len() < 4 + len {
            return Ok(());
        }
        let body: Vec<u8> = pending.drain(..4 + len).skip(4).collect();
        let mut r = Body(&body);
        match (r.u32(), r.u32()) {
            (Some(MUX_S_EXIT_MESSAGE), Some(s)) if s == sid => {
                *exit = Some(r.u32().ok_or("a short exit message")?);
            }
            (Some(MUX_S_TTY_ALLOC_FAIL), _) => {}
            (k, _) => return Err(format!("unexpected message type {k:x?} during the session")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_cut_at_packet_bounds() {
        let mut exit = None;
        let mut b = Vec::new();
        put_u32(&mut b, MUX_S_EXIT_MESSAGE);
        put_u32(&mut b, 7);
        put_u32(&mut b, 3);
        let p = packet(&b);
        let mut pending = p[..5].to_vec();
        messages(&mut pending, 7, &mut exit).unwrap();
        assert_eq!(exit, None);
        pending.extend_from_slice(&p[5..]);
        messages(&mut pending, 7, &mut exit).unwrap();
        assert_eq!(exit, Some(3));
        assert!(pending.is_empty());
        let mut other = Vec::new();
        put_u32(&mut other, 0x8000_0001);
        put_u32(&mut other, 0);
        let mut pending = packet(&other);
        assert!(messages(&mut pending, 7, &mut exit).is_err());
    }

    fn exit_message(sid: u32, code: u32) -> Vec<u8> {
        let mut b = Vec::new();
        put_u32(&mut b, MUX_S_EXIT_MESSAGE);
        put_u32(&mut b, sid);
        put_u32(&mut b, code);
        packet(&b)
    }

    /// A session as the master would run it: our ends, and the master's ends to play it.
    fn session_pair(
        input: Option<&[u8]>,
    ) -> (Running<'_>, UnixStream, OwnedFd, OwnedFd, Option<OwnedFd>) {
        let (ours, master) = UnixStream::pair().unwrap();
        let (out_r, out_w) = nix::unistd::pipe().unwrap();
        let (err_r, err_w) = nix::unistd::pipe().unwrap();
        let (stdin, their_stdin) = match input {
            Some(data) => {
                let (r, w) = nix::unistd::pipe().unwrap();
                set_nonblocking(&w).unwrap();
                (Some((w, data)), Some(r))
            }
            None => (None, None),
        };
        let running = Running::new(ours, 7, stdin, out_r, err_r);
        (running, master, out_w, err_w, their_stdin)
    }

    #[test]
    fn a_session_ends_with_its_exit_status_and_both_streams() {
        let (running, mut master, out_w, err_w, their_stdin) = session_pair(Some(b"in"));
        std::fs::File::from(out_w).write_all(b"out").unwrap();
        std::fs::File::from(err_w).write_all(b"err").unwrap();
        master.write_all(&exit_message(7, 3)).unwrap();
        drop(master);
        let deadline = Instant::now() + Duration::from_secs(10);
        let Outcome::Done(f) = relay(running, deadline, 1 << 20) else {
            panic!("not done");
        };
        assert_eq!(f.status.code(), Some(3));
        assert_eq!((&f.stdout[..], &f.stderr[..]), (&b"out"[..], &b"err"[..]));
        // The input was written whole, and our end closed after it.
        let mut got = Vec::new();
        std::fs::File::from(their_stdin.unwrap())
            .read_to_end(&mut got)
            .unwrap();
        assert_eq!(got, b"in");
    }

    #[test]
    fn a_master_gone_without_an_exit_message_is_ssh_s_255() {
        let (running, master, out_w, err_w, _) = session_pair(None);
        drop((master, out_w, err_w));
        let deadline = Instant::now() + Duration::from_secs(10);
        let Outcome::Done(f) = relay(running, deadline, 1 << 20) else {
            panic!("not done");
        };
        assert_eq!(f.status.code(), Some(255));
        let said = String::from_utf8_lossy(&f.stderr).into_owned();
        assert!(said.contains("read from master failed"), "{said}");
    }

    #[test]
    fn a_session_is_bounded_by_its_deadline_and_its_stdout() {
        let (running, _master, _out_w, _err_w, _) = session_pair(None);
        let soon = Instant::now() + Duration::from_millis(50);
        assert!(matches!(relay(running, soon, 1 << 20), Outcome::TimedOut));
        let (running, _master, out_w, _err_w, _) = session_pair(None);
        std::fs::File::from(out_w).write_all(&[b'x'; 100]).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        assert!(matches!(
            relay(running, deadline, 10),
            Outcome::TooLarge(10)
        ));
    }

    #[test]
    fn an_exit_code_is_the_status_s_low_byte() {
        let Outcome::Done(f) = ended(Some(0x101), None, Vec::new(), Vec::new()) else {
            panic!("not done");
        };
        assert_eq!(f.status.code(), Some(1));
        let Outcome::Done(f) = ended(None, Some("reset".into()), b"o".to_vec(), Vec::new()) else {
            panic!("not done");
        };
        assert_eq!((f.status.code(), &f.stdout[..]), (Some(255), &b"o"[..]));
        assert!(String::from_utf8_lossy(&f.stderr).contains("reset"));
    }
}
