//! Talking to the tmux server over its socket without spawning the tmux client.
//!
//! Owns: the client side of tmux's imsg protocol (version 8) for one command (list):
//! identify, send the command, answer the server's write requests, collect stdout/stderr
//! and the exit status. Why: the per-turn call is one process start plus one tmux query,
//! and a resident `tmuxmate mcp` pays no process start at all; spawning the tmux client is
//! most of the cost of either.
//!
//! Which releases: only those whose real client was traced message by message
//! (`crate::tmux::version::TESTED`, docs/tmux-versions.md). They share protocol version 8 but
//! not the message header: up to 3.5 it is `u16 len, u16 flags` with flag 1 for "an fd
//! rides along"; from 3.6 (tmux took OpenBSD's newer imsg code) it is one `u32 len` whose
//! top bit marks the fd. We pass no fd (the real client passes its stdin and stdout), so
//! what we send is the same bytes in either layout; the layout ([`Wire`]) is still known
//! per release, from the running server's own binary (`/proc/<pid>/exe`, [`server_of`]):
//! the one on PATH when it is that file, else that binary's own `tmux -V` (a server left
//! running by an older tmux after an upgrade speaks its own release's layout). An
//! untested release, another user's server or a system without `/proc` takes the real
//! client.
//!
//! One pass: the whole identify and the command go in one write, which the server reads
//! in one pass of its loop, and a ready for the server's output is sent only while more
//! output is awaited. A pass costs the server time that grows with its panes (it polls
//! every pane, and up to 3.5 it counts its own open files before each read: milliseconds
//! at 1000 panes, docs/tmux-versions.md), and the real client takes three before its
//! command runs.
//!
//! Invariants: it is only an accelerator - any surprise before a command is sent (no
//! socket, another server binary, a protocol version or message it does not know, a
//! command too large for one message) returns `None` and the caller runs the real tmux
//! client instead, which also produces every error message. A write is never sent twice:
//! once its command message is on the socket, a surprise is reported as a failed call
//! instead of falling back.
//! Only commands that need nothing of the client but its cwd use it: queries, the
//! server-only writes of ours (removing a pane, wait-for, options, typing and buffers:
//! `send-keys`, `set-buffer`, `paste-buffer`, `delete-buffer`) and creating windows and
//! sessions on a running server (`new-window`, `new-session`; a server that is not running
//! is started by the real client). A command list (`a ; b`) qualifies when each of its
//! commands does. `load-buffer -` (stdin) never does.
//!
//! Two uses besides a plain call: a query may have other work run while the
//! server answers ([`query_while`], given the server's pid from the socket's peer), and a
//! clean-up write of ours may be sent without waiting for its answer ([`send_only`]: the
//! server runs a closed client's buffered command before it reads any later client).
//!
//! Argv is data here exactly as it is for the tmux client: the server receives the same
//! argv in the same `MSG_COMMAND` message and splits it into commands only at arguments
//! ending in an unescaped `;` (cmd-parse.y `cmd_parse_from_arguments`; no re-tokenizing,
//! quoting or format expansion of an argument happens there), which [`crate::tmux::arg::Arg`]
//! escapes. So runtime text may travel as an argument (e.g. `set-buffer -- TEXT`): it is
//! bounded by the message size (16 KiB with every argument), and unlike the client's
//! argv it is never visible to other processes in `/proc/<pid>/cmdline`.
//! Creating a session sends the environment the real client would keep for a call that
//! may start a server (`crate::tmux::env::server_env_allowed`): the server copies its
//! `update-environment` variables into the new session, as it does for the client.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use crate::tmux::tap::{Tap, Untapped};

const PROTOCOL_VERSION: u32 = 8;
const HEADER: usize = 16;
/// tmux 3.6 and later: the length word's top bit says an fd rides along.
const IMSG_FD_MARK: u32 = 0x8000_0000;

/// The imsg header layout of a release (see the module header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// `u32 type, u16 len, u16 flags, u32 peerid, u32 pid` (tmux 3.2 to 3.5).
    Flags16,
    /// `u32 type, u32 len | fd mark, u32 peerid, u32 pid` (tmux 3.6 and later).
    Len32,
}

impl Wire {
    /// The layout of a tested release's `tmux -V` text; `None` for any other.
    pub fn of(version_text: &str) -> Option<Wire> {
        if !crate::tmux::version::is_tested(version_text) {
            return None;
        }
        let v = crate::tmux::version::parse(version_text)?;
        Some(if (v.major, v.minor) >= (3, 6) {
            Wire::Len32
        } else {
            Wire::Flags16
        })
    }
}

/// The tmux binary this client would run (device, inode) and the layout its tested
/// release speaks: a server started from that very file needs no further question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    pub wire: Wire,
    pub dev: u64,
    pub ino: u64,
}

impl Peer {
    /// For the binary at `bin` whose `tmux -V` said `version_text`; `None` when that
    /// release is not a tested one or the binary cannot be looked at.
    pub fn of(bin: &Path, version_text: &str) -> Option<Peer> {
        use std::os::unix::fs::MetadataExt;
        let wire = Wire::of(version_text)?;
        let m = std::fs::metadata(bin).ok()?;
        Some(Peer {
            wire,
            dev: m.dev(),
            ino: m.ino(),
        })
    }
}

/// The running server's own release, as this process learnt it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Server {
    /// A tested release: the layout to speak.
    Tested(Wire, String),
    /// Its binary says another release (or nothing we can parse).
    Untested(String),
    /// Its binary cannot be looked at or asked (another user's server, no `/proc`, a
    /// binary that does not answer `-V`).
    Unknown,
}

/// Which layout the server at the other end of `sock` speaks, from the binary it runs
/// (`/proc/<pid>/exe`): `known`'s when it is that file, else that binary's own `tmux -V`
/// (asked once per binary, `crate::tmux::version::of_binary`). A server of another user is never
/// asked: its binary is not ours to run.
fn server_of(sock: &UnixStream, known: Option<Peer>, timeout: Duration) -> Server {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    use std::os::unix::fs::MetadataExt;
    let Ok(cred) = getsockopt(sock, PeerCredentials) else {
        return Server::Unknown;
    };
    if cred.uid() != nix::unistd::geteuid().as_raw() {
        return Server::Unknown;
    }
    let exe = std::path::PathBuf::from(format!("/proc/{}/exe", cred.pid()));
    let Ok(m) = std::fs::metadata(&exe) else {
        return Server::Unknown;
    };
    if let Some(k) = known
        && (k.dev, k.ino) == (m.dev(), m.ino())
    {
        return Server::Tested(k.wire, String::new());
    }
    // Only a file of ours or root's is run (the server's uid is ours, checked above).
    if m.uid() != 0 && m.uid() != cred.uid() {
        return Server::Unknown;
    }
    match crate::tmux::version::of_binary(&exe, &m, timeout) {
        Some(text) => match Wire::of(&text) {
            Some(w) => Server::Tested(w, text),
            None => Server::Untested(text),
        },
        None => Server::Unknown,
    }
}

/// The release of the server listening at `path` (for `doctor`); `None` when none answers.
pub fn server_at(path: &Path, known: Option<Peer>, timeout: Duration) -> Option<Server> {
    let sock = UnixStream::connect(path).ok()?;
    Some(server_of(&sock, known, timeout))
}

const MSG_VERSION: u32 = 12;
const MSG_IDENTIFY_FLAGS: u32 = 100;
const MSG_IDENTIFY_TERM: u32 = 101;
const MSG_IDENTIFY_TTYNAME: u32 = 102;
const MSG_IDENTIFY_STDIN: u32 = 104;
const MSG_IDENTIFY_ENVIRON: u32 = 105;
const MSG_IDENTIFY_DONE: u32 = 106;
const MSG_IDENTIFY_CLIENTPID: u32 = 107;
const MSG_IDENTIFY_CWD: u32 = 108;
const MSG_IDENTIFY_FEATURES: u32 = 109;
const MSG_IDENTIFY_STDOUT: u32 = 110;
const MSG_IDENTIFY_LONGFLAGS: u32 = 111;
const MSG_COMMAND: u32 = 200;
const MSG_EXIT: u32 = 203;
const MSG_WRITE_OPEN: u32 = 303;
const MSG_WRITE: u32 = 304;
const MSG_WRITE_READY: u32 = 305;
const MSG_WRITE_CLOSE: u32 = 306;

/// The identify flags the tmux 3.3a client sends for a non-interactive command.
const IDENTIFY_FLAGS: u32 = 0x0801_0000;

/// Commands that only read state and need nothing from the client's environment.
fn is_query(cmd: &str) -> bool {
    matches!(
        cmd,
        "display-message"
            | "capture-pane"
            | "list-panes"
            | "list-sessions"
            | "list-windows"
            | "show-options"
            | "list-clients"
    )
}

/// Writes that act on the server only (no client environment, stdin or terminal; a new
/// window or session takes the client's cwd, which we send as the real client does).
fn is_server_write(cmd: &str) -> bool {
    matches!(
        cmd,
        "kill-pane"
            | "kill-window"
            | "wait-for"
            | "set-option"
            | "send-keys"
            | "set-buffer"
            | "paste-buffer"
            | "delete-buffer"
            | "new-window"
            | "new-session"
    )
}

/// A list that creates a session: the server reads the client's environment for it.
fn creates_session(args: &[&str]) -> bool {
    commands(args).any(|c| c == "new-session")
}

/// The largest message tmux accepts (`MAX_IMSGSIZE`), header included.
pub const MAX_MESSAGE: usize = 16384;

/// The first word of each command of a list (`;` elements separate; a `;` inside an
/// argument of ours is always written `\;`, see `crate::tmux::arg`).
fn commands<'a>(args: &'a [&'a str]) -> impl Iterator<Item = &'a str> + 'a {
    args.split(|a| *a == ";")
        .map(|c| c.first().copied().unwrap_or(""))
}

/// How a call may use the socket: not at all, as a query (any surprise re-runs it with
/// the client), or as a write (sent at most once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    No,
    Query,
    Write,
}

pub fn eligible(args: &[&str]) -> Use {
    if args.is_empty() {
        return Use::No;
    }
    let mut any_write = false;
    for c in commands(args) {
        if is_server_write(c) {
            any_write = true;
        } else if !is_query(c) {
            return Use::No;
        }
    }
    if any_write { Use::Write } else { Use::Query }
}

pub struct Reply {
    /// The server did not answer within the timeout: running the client would only wait
    /// as long again, so the caller reports a timeout instead of falling back.
    pub timed_out: bool,
    pub status: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// One message in `wire`'s header layout, with no fd (`data` is at most [`MAX_MESSAGE`]
/// less the header, checked by the caller). Without an fd the two layouts are the same
/// bytes (a `u16` length and zero flags read as one `u32` length), so the layout matters
/// only for reading a header that carries one.
fn msg(wire: Wire, kind: u32, data: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(HEADER + data.len());
    m.extend_from_slice(&kind.to_le_bytes());
    let len = HEADER + data.len();
    match wire {
        Wire::Flags16 => {
            m.extend_from_slice(&(len as u16).to_le_bytes());
            m.extend_from_slice(&0u16.to_le_bytes());
        }
        Wire::Len32 => m.extend_from_slice(&(len as u32).to_le_bytes()),
    }
    m.extend_from_slice(&PROTOCOL_VERSION.to_le_bytes());
    m.extend_from_slice(&u32::MAX.to_le_bytes());
    m.extend_from_slice(data);
    m
}

fn cstr(s: &str) -> Vec<u8> {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    v
}

/// Run one eligible command (list) over the socket at `path`; `None` means "use the tmux
/// client" (for a write: only when the command was certainly not sent). `tap` hears once
/// the command is on its way (the caller may prepare while the server works on it), then
/// sees each piece of stdout as it arrives.
pub fn run(
    path: &Path,
    known: Option<Peer>,
    args: &[&str],
    timeout: Duration,
    how: Use,
    tap: &mut dyn Tap,
) -> Option<Reply> {
    let mut sent = false;
    let r = exchange(path, known, args, timeout, &mut sent, tap);
    if r.is_none() && sent && how == Use::Write {
        return Some(Reply {
            timed_out: false,
            status: 1,
            stdout: Vec::new(),
            stderr: b"lost the tmux server's answer (the command may have run)".to_vec(),
        });
    }
    r
}

/// Run one query (`eligible` gave `Use::Query`) over the socket at `path`, calling
/// `meanwhile` on another thread once the command is sent, with the server's pid (the
/// socket's peer), while this thread reads the answer: work that does not need the answer
/// overlaps the server's. `Err(meanwhile)` when nothing was sent (the caller runs the tmux
/// client, and `meanwhile` itself); `Ok((None, _))` when the answer was lost after the
/// query was sent (the caller may run the query again with the client).
pub fn query_while<R: Send, F: FnOnce(Option<i32>) -> R + Send>(
    path: &Path,
    known: Option<Peer>,
    args: &[&str],
    timeout: Duration,
    meanwhile: F,
) -> Result<(Option<Reply>, R), F> {
    let mut sent = false;
    let Some((mut sock, wire)) = send(path, known, args, timeout, &mut sent) else {
        return Err(meanwhile);
    };
    let pid = peer_pid(&sock);
    std::thread::scope(|sc| {
        let h = sc.spawn(move || meanwhile(pid));
        let reply = receive(&mut sock, wire, &mut sent, &mut Untapped);
        // A panic in `meanwhile` is its caller's bug; the answer is still good.
        match h.join() {
            Ok(r) => Ok((reply, r)),
            Err(p) => std::panic::resume_unwind(p),
        }
    })
}

/// Send one server-only write (`eligible` gave `Use::Write`) over the socket at `path`
/// without waiting for its answer: true once the whole command is in the server's socket
/// buffer. The server reads a closed client's buffered messages before it sees the end
/// of the stream, and runs the command in that same pass of its loop, before it reads
/// from any client it accepts later (so a later call sees the command done). Nothing
/// reports its outcome: for clean-ups whose failure is only logged anyway. `None` when
/// nothing was sent (the caller may use the client), `Some(false)` when the command may
/// or may not have arrived (it is never sent twice).
pub fn send_only(
    path: &Path,
    known: Option<Peer>,
    args: &[&str],
    timeout: Duration,
) -> Option<bool> {
    let mut sent = false;
    match send(path, known, args, timeout, &mut sent) {
        Some(_) => Some(true),
        None if sent => Some(false),
        None => None,
    }
}

/// The pid of the process at the other end of `sock` (the tmux server).
fn peer_pid(sock: &UnixStream) -> Option<i32> {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    getsockopt(sock, PeerCredentials).ok().map(|c| c.pid())
}

fn exchange(
    path: &Path,
    known: Option<Peer>,
    args: &[&str],
    timeout: Duration,
    sent: &mut bool,
    tap: &mut dyn Tap,
) -> Option<Reply> {
    let (mut sock, wire) = send(path, known, args, timeout, sent)?;
    tap.sent();
    receive(&mut sock, wire, sent, tap)
}

/// Connect, identify and send the command (list); `*sent` is set once the command may
/// have reached the server.
fn send(
    path: &Path,
    known: Option<Peer>,
    args: &[&str],
    timeout: Duration,
    sent: &mut bool,
) -> Option<(UnixStream, Wire)> {
    if args.iter().any(|a| a.contains('\0')) {
        return None;
    }
    let mut cmd = (args.len() as i32).to_le_bytes().to_vec();
    for a in args {
        cmd.extend(cstr(a));
    }
    if HEADER + cmd.len() > MAX_MESSAGE {
        return None; // the client's message size limit; let tmux say so
    }
    let mut sock = UnixStream::connect(path).ok()?;
    let Server::Tested(wire, _) = server_of(&sock, known, timeout) else {
        return None;
    };
    sock.set_read_timeout(Some(timeout)).ok()?;
    sock.set_write_timeout(Some(timeout)).ok()?;
    let cwd = std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/".into());
    // The real client's order (client.c `client_send_identify`, the same in every tested
    // release): flags, terminal, cwd, stdin, stdout, the pid, the environment and "done".
    // The real client passes its stdin and stdout as fds; we pass none. A command client's
    // fds end unused either way (the server keeps stdin only when it is a terminal, stdout
    // only for control mode), and without fds the server reads the whole identify and the
    // command in one pass of its loop, where each fd message took a pass of its own: on a
    // server of 1000 panes a pass costs milliseconds (docs/tmux-versions.md).
    let mut out = Vec::new();
    out.extend(msg(wire, MSG_IDENTIFY_FLAGS, &IDENTIFY_FLAGS.to_le_bytes()));
    out.extend(msg(
        wire,
        MSG_IDENTIFY_LONGFLAGS,
        &(IDENTIFY_FLAGS as u64).to_le_bytes(),
    ));
    out.extend(msg(
        wire,
        MSG_IDENTIFY_TERM,
        &cstr(&std::env::var("TERM").unwrap_or_default()),
    ));
    out.extend(msg(wire, MSG_IDENTIFY_FEATURES, &0u32.to_le_bytes()));
    out.extend(msg(wire, MSG_IDENTIFY_TTYNAME, &cstr("")));
    out.extend(msg(wire, MSG_IDENTIFY_CWD, &cstr(&cwd)));
    out.extend(msg(wire, MSG_IDENTIFY_STDIN, &[]));
    out.extend(msg(wire, MSG_IDENTIFY_STDOUT, &[]));
    out.extend(msg(
        wire,
        MSG_IDENTIFY_CLIENTPID,
        &(std::process::id() as i32).to_le_bytes(),
    ));
    if creates_session(args) {
        for (k, v) in std::env::vars_os() {
            let (Some(k), Some(v)) = (k.to_str(), v.to_str()) else {
                continue;
            };
            let kv = format!("{k}={v}");
            // The client skips what does not fit one message, and so do we.
            if crate::tmux::env::server_env_allowed(k)
                && !kv.contains('\0')
                && HEADER + kv.len() < MAX_MESSAGE
            {
                out.extend(msg(wire, MSG_IDENTIFY_ENVIRON, &cstr(&kv)));
            }
        }
    }
    out.extend(msg(wire, MSG_IDENTIFY_DONE, &[]));
    let command_at = out.len();
    out.extend(msg(wire, MSG_COMMAND, &cmd));
    write_counting(&mut sock, &out, command_at, sent)?;
    Some((sock, wire))
}

/// Write all of `out`; `*sent` is set once a byte past `command_at` (where the command's
/// message starts) may have reached the server: until then a failure leaves nothing run.
fn write_counting(
    sock: &mut UnixStream,
    out: &[u8],
    command_at: usize,
    sent: &mut bool,
) -> Option<()> {
    let mut done = 0;
    while done < out.len() {
        match sock.write(&out[done..]) {
            Ok(0) => return None,
            Ok(n) => {
                done += n;
                *sent |= done > command_at;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(())
}

/// Past this much of an answer, room for [`LONG_ANSWER`] is taken at once.
const LONG_AFTER: usize = 64 << 10;
/// Room taken for a long answer: far enough above the allocator's mapping threshold
/// that growing past it remaps pages instead of copying them.
const LONG_ANSWER: usize = 1 << 20;

/// Make room in `v` for `more` bytes. A long answer (a whole scrollback) would otherwise
/// grow by doubling through the heap, each step copying all of it into fresh pages:
/// measured on a 574 KB capture, that was a third of the call's page faults.
fn grow(v: &mut Vec<u8>, more: usize) {
    let need = v.len() + more;
    if need > v.capacity() && need > LONG_AFTER && v.capacity() < LONG_ANSWER {
        v.reserve_exact(LONG_ANSWER.max(need) - v.len());
    }
}

/// Read the server's answer to what `send` sent: stdout, stderr and the exit status.
/// `tap` sees each piece of stdout as it arrives (it is in the answer too).
fn receive(sock: &mut UnixStream, wire: Wire, sent: &mut bool, tap: &mut dyn Tap) -> Option<Reply> {
    // The socket is read straight into `buf[end..]`; messages are consumed from `at`, and
    // only a partial one (under MAX_MESSAGE) is moved to the front before the next read,
    // so a multi-megabyte capture is copied once, into `stdout`.
    let mut buf = vec![0u8; 1 << 17];
    let (mut at, mut end) = (0usize, 0usize);
    let mut owed = Vec::new();
    let mut out = Reply {
        timed_out: false,
        status: 0,
        stdout: Vec::new(),
        stderr: Vec::new(),
    };
    loop {
        // Handle every complete message in the buffer.
        while end - at >= HEADER {
            let m = &buf[at..end];
            let kind = u32::from_le_bytes(m[0..4].try_into().ok()?);
            let len = match wire {
                Wire::Flags16 => u16::from_le_bytes(m[4..6].try_into().ok()?) as usize,
                Wire::Len32 => {
                    let word = u32::from_le_bytes(m[4..8].try_into().ok()?);
                    // The server passes us no fd for a command: a surprise.
                    if word & IMSG_FD_MARK != 0 {
                        return None;
                    }
                    word as usize
                }
            };
            if !(HEADER..=MAX_MESSAGE).contains(&len) {
                return None;
            }
            if m.len() < len {
                break;
            }
            let data = &m[HEADER..len];
            at += len;
            let int = |i: usize| -> Option<i32> {
                Some(i32::from_le_bytes(
                    data.get(i * 4..i * 4 + 4)?.try_into().ok()?,
                ))
            };
            match kind {
                MSG_WRITE_OPEN => {
                    let stream = int(0)?;
                    if stream != 1 && stream != 2 {
                        return None;
                    }
                    let mut ready = stream.to_le_bytes().to_vec();
                    ready.extend(0i32.to_le_bytes());
                    owed.extend(msg(wire, MSG_WRITE_READY, &ready));
                }
                MSG_WRITE => match int(0)? {
                    1 => {
                        tap.chunk(&data[4..]);
                        grow(&mut out.stdout, data.len() - 4);
                        out.stdout.extend_from_slice(&data[4..]);
                    }
                    2 => out.stderr.extend_from_slice(&data[4..]),
                    _ => return None,
                },
                MSG_WRITE_CLOSE => {}
                MSG_EXIT => {
                    out.status = int(0).unwrap_or(0);
                    return Some(out);
                }
                // Another protocol version: the server ran nothing, the real client knows.
                MSG_VERSION => {
                    *sent = false;
                    return None;
                }
                _ => return None,
            }
        }
        // The server holds back a stream's first text until the client says it is ready
        // for it, and sends `MSG_EXIT` only once all of it went out: so a ready is owed
        // only while more is awaited. Sent with the exit already here, it would cost the
        // server one more pass of its loop after the answer.
        if !owed.is_empty() {
            sock.write_all(&owed).ok()?;
            owed.clear();
        }
        buf.copy_within(at..end, 0);
        end -= at;
        at = 0;
        let n = match sock.read(&mut buf[end..]) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                out.timed_out = true;
                return Some(out);
            }
            Err(_) => return None,
        };
        if n == 0 {
            return None;
        }
        end += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real clients pass fds with their stdin and stdout messages (traced with strace:
    /// tmux 3.3a and 3.5a `68 00 00 00 10 00 01 00 08 00 00 00 ff ff ff ff` for stdin,
    /// 3.6b and 3.7c `68 00 00 00 10 00 00 80 ...`); ours carry none, so its header has
    /// neither the flag nor the mark and is the same in both layouts.
    #[test]
    fn each_release_has_its_layout_and_our_messages_carry_no_fd() {
        let stdin = |w| msg(w, MSG_IDENTIFY_STDIN, &[]);
        let plain = [
            0x68, 0, 0, 0, 0x10, 0, 0, 0, 8, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
        ];
        assert_eq!(stdin(Wire::Flags16), plain);
        assert_eq!(stdin(Wire::Len32), plain);
        // Without an fd both layouts are the same bytes.
        let done = |w| msg(w, MSG_IDENTIFY_DONE, &[]);
        assert_eq!(done(Wire::Flags16), done(Wire::Len32));
        for (v, w) in [
            ("tmux 3.2a", Some(Wire::Flags16)),
            ("tmux 3.3a", Some(Wire::Flags16)),
            ("tmux 3.4", Some(Wire::Flags16)),
            ("tmux 3.5a", Some(Wire::Flags16)),
            ("tmux 3.6b", Some(Wire::Len32)),
            ("tmux 3.7c", Some(Wire::Len32)),
            // Not traced: the real client.
            ("tmux 3.6a", None),
            ("tmux 3.5", None),
            ("tmux next-3.8", None),
            ("tmux master", None),
        ] {
            assert_eq!(Wire::of(v), w, "{v}");
        }
    }

    #[test]
    fn a_long_answer_takes_its_room_once_and_a_short_one_stays_small() {
        let mut short = Vec::new();
        for _ in 0..3 {
            grow(&mut short, 1000);
            short.extend_from_slice(&[b'a'; 1000]);
        }
        assert!(short.capacity() < LONG_AFTER, "{}", short.capacity());
        let mut long = Vec::new();
        let mut moved = 0;
        for _ in 0..(LONG_ANSWER / MAX_MESSAGE - 1) {
            let before = long.as_ptr();
            grow(&mut long, MAX_MESSAGE);
            moved += usize::from(before != long.as_ptr() && !long.is_empty());
            long.extend_from_slice(&[b'b'; MAX_MESSAGE]);
        }
        assert!(long.capacity() >= LONG_ANSWER);
        // Doubling from empty would have moved it about six times on the way to 1 MiB.
        assert!(moved <= 3, "moved {moved} times");
    }

    #[test]
    fn a_reply_is_read_in_the_servers_layout() {
        // MSG_WRITE_OPEN for stdout, then MSG_EXIT with status 3, in each layout.
        for wire in [Wire::Flags16, Wire::Len32] {
            let (mut ours, mut server) = UnixStream::pair().unwrap();
            let mut open = 1i32.to_le_bytes().to_vec();
            open.extend([0u8; 8]);
            let mut out = msg(wire, MSG_WRITE_OPEN, &open);
            let mut write = 1i32.to_le_bytes().to_vec();
            write.extend(b"hi\n");
            out.extend(msg(wire, MSG_WRITE, &write));
            out.extend(msg(wire, MSG_EXIT, &3i32.to_le_bytes()));
            server.write_all(&out).unwrap();
            let mut sent = true;
            struct Seen(Vec<u8>);
            impl Tap for Seen {
                fn chunk(&mut self, b: &[u8]) {
                    self.0.extend_from_slice(b);
                }
                fn restart(&mut self) {}
            }
            let mut seen = Seen(Vec::new());
            let r = receive(&mut ours, wire, &mut sent, &mut seen).unwrap();
            assert_eq!(seen.0, r.stdout);
            assert_eq!((r.status, r.stdout.as_slice()), (3, &b"hi\n"[..]));
        }
        // A length over the message limit is a surprise, not a read past it.
        let (mut ours, mut server) = UnixStream::pair().unwrap();
        let mut bad = msg(Wire::Len32, MSG_EXIT, &0i32.to_le_bytes());
        bad[4..8].copy_from_slice(&0x0001_0014u32.to_le_bytes());
        server.write_all(&bad).unwrap();
        assert!(receive(&mut ours, Wire::Len32, &mut true, &mut Untapped).is_none());
    }

    /// A stand-in tmux server on a socket of its own, answered by `serve` on another
    /// thread; the client takes it for a tested release (3.3a's layout), because the
    /// process at the socket's other end runs this very binary.
    fn with_server(tag: &str, serve: impl FnOnce(UnixStream) + Send + 'static) -> Option<Reply> {
        let dir =
            std::env::temp_dir().join(format!("tmuxmate-direct-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sock");
        let _ = std::fs::remove_file(&path);
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let h = std::thread::spawn(move || serve(listener.accept().unwrap().0));
        let me = std::env::current_exe().unwrap();
        let peer = Peer::of(&me, "tmux 3.3a");
        assert!(peer.is_some());
        let r = run(
            &path,
            peer,
            &["display-message", "-p", "x"],
            Duration::from_secs(10),
            Use::Query,
            &mut Untapped,
        );
        h.join().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        r
    }

    /// The messages in `b`: (type, data).
    fn messages(mut b: &[u8]) -> Vec<(u32, Vec<u8>)> {
        let mut v = Vec::new();
        while b.len() >= HEADER {
            let kind = u32::from_le_bytes(b[0..4].try_into().unwrap());
            let len = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
            assert!(
                (HEADER..=b.len()).contains(&len),
                "header {len} of {}",
                b.len()
            );
            v.push((kind, b[HEADER..len].to_vec()));
            b = &b[len..];
        }
        assert!(b.is_empty(), "a partial message");
        v
    }

    fn write_open() -> Vec<u8> {
        let mut open = 1i32.to_le_bytes().to_vec();
        open.extend([0u8; 8]);
        msg(Wire::Flags16, MSG_WRITE_OPEN, &open)
    }

    fn write_then_exit(text: &[u8]) -> Vec<u8> {
        let mut w = 1i32.to_le_bytes().to_vec();
        w.extend(text);
        let mut out = msg(Wire::Flags16, MSG_WRITE, &w);
        out.extend(msg(Wire::Flags16, MSG_EXIT, &0i32.to_le_bytes()));
        out
    }

    /// One `recvmsg` (a read stops at a message carrying fds, so this is what the server
    /// reads in one pass): the bytes, and whether any fd came with them.
    fn recv_once(sock: &UnixStream) -> (Vec<u8>, bool) {
        use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
        use std::io::IoSliceMut;
        use std::os::fd::AsRawFd;
        let mut buf = vec![0u8; 65536];
        let mut space = nix::cmsg_space!([std::os::fd::RawFd; 4]);
        let mut iov = [IoSliceMut::new(&mut buf)];
        let m = recvmsg::<()>(
            sock.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::empty(),
        )
        .unwrap();
        let fds = m
            .cmsgs()
            .unwrap()
            .any(|c| matches!(c, ControlMessageOwned::ScmRights(_)));
        let n = m.bytes;
        (buf[..n].to_vec(), fds)
    }

    #[test]
    fn identify_and_command_reach_the_server_in_one_read_without_fds() {
        let r = with_server("one-read", |s| {
            let (got, fds) = recv_once(&s);
            assert!(!fds, "an fd was passed");
            let kinds: Vec<u32> = messages(&got).iter().map(|m| m.0).collect();
            assert_eq!(kinds.first(), Some(&MSG_IDENTIFY_FLAGS), "{kinds:?}");
            assert_eq!(kinds.last(), Some(&MSG_COMMAND), "{kinds:?}");
            for k in [MSG_IDENTIFY_STDIN, MSG_IDENTIFY_STDOUT, MSG_IDENTIFY_DONE] {
                assert!(kinds.contains(&k), "{k} missing from {kinds:?}");
            }
            let (_, cmd) = messages(&got).pop().unwrap();
            assert_eq!(&cmd[4..], b"display-message\0-p\0x\0");
            let mut out = write_open();
            out.extend(write_then_exit(b"x\n"));
            (&s).write_all(&out).unwrap();
            // The exit came with the text: the client owes no ready, only its close.
            let mut rest = Vec::new();
            (&s).read_to_end(&mut rest).unwrap();
            assert!(
                rest.is_empty(),
                "sent after the exit: {:?}",
                messages(&rest)
            );
        })
        .unwrap();
        assert_eq!((r.status, r.stdout.as_slice()), (0, &b"x\n"[..]));
    }

    #[test]
    fn a_stream_held_back_until_ready_gets_its_ready() {
        // tmux keeps a stream's first text until the client says it is ready for it.
        let r = with_server("ready", |s| {
            let (got, _) = recv_once(&s);
            assert_eq!(messages(&got).last().map(|m| m.0), Some(MSG_COMMAND));
            (&s).write_all(&write_open()).unwrap();
            let (ready, _) = recv_once(&s);
            let m = messages(&ready);
            assert_eq!(m.len(), 1, "{m:?}");
            assert_eq!(m[0].0, MSG_WRITE_READY);
            assert_eq!(m[0].1, [1, 0, 0, 0, 0, 0, 0, 0]);
            (&s).write_all(&write_then_exit(b"late\n")).unwrap();
        })
        .unwrap();
        assert_eq!(r.stdout, b"late\n");
    }

    #[test]
    fn a_list_uses_the_socket_only_when_every_command_may() {
        assert_eq!(eligible(&["list-panes", "-a"]), Use::Query);
        assert_eq!(
            eligible(&[
                "show-options",
                "-gv",
                "x",
                ";",
                "display-message",
                "-p",
                "y"
            ]),
            Use::Query
        );
        assert_eq!(eligible(&["kill-pane", "-t", "%1"]), Use::Write);
        assert_eq!(
            eligible(&["wait-for", "c", ";", "kill-pane", "-t", "%1"]),
            Use::Write
        );
        // Commands that need the client (stdin, environment, a new server) never do.
        assert_eq!(eligible(&["load-buffer", "-"]), Use::No);
        assert_eq!(
            eligible(&["set-buffer", "-b", "b", "--", "x", ";", "load-buffer", "-"]),
            Use::No
        );
        assert_eq!(
            eligible(&["start-server", ";", "new-session", "-d"]),
            Use::No
        );
        assert_eq!(eligible(&["split-window"]), Use::No);
        // Typing, buffers and creating on a running server are server-only writes.
        assert_eq!(
            eligible(&[
                "set-buffer",
                "-b",
                "b",
                "--",
                "x",
                ";",
                "paste-buffer",
                "-dr"
            ]),
            Use::Write
        );
        assert_eq!(
            eligible(&["set-option", "x", "y", ";", "new-window"]),
            Use::Write
        );
        assert_eq!(eligible(&["new-session", "-d"]), Use::Write);
        assert!(creates_session(&[
            "set-option",
            "a",
            ";",
            "new-session",
            "-d"
        ]));
        assert!(!creates_session(&["new-window", "-n", "new-session"]));
        // A `;` inside an argument is written `\;` and separates nothing.
        assert_eq!(
            eligible(&["set-option", "x", "a\\;", "send-keys"]),
            Use::Write
        );
        assert_eq!(eligible(&[]), Use::No);
    }
}
