//! The one place this binary starts another program.
//!
//! Owns: creating a [`Command`] ([`command`]), running it to completion under a deadline
//! ([`run`]), handing this process over to another program ([`exec`]), and starting a
//! child whose life a caller supervises itself ([`spawn_supervised`]). A clippy lint
//! (`clippy.toml`) refuses `Command::new`, `output`, `status`, `spawn` and `exec`
//! everywhere else, so a new call site cannot forget its timeout.
//! Invariants of [`run`]: it returns within its timeout plus the time to reap (the child,
//! or with [`Limits::group`] its whole process group, is SIGKILLed at the deadline); stdin
//! is closed unless input is given, and input is written on its own thread so a large
//! payload cannot deadlock against a full stdout; stdout, stderr and the child's exit
//! are waited for together on the calling thread (one `poll`), and a stream still held
//! open by a grandchild after the child exited is given up at the deadline instead of
//! waited for (no stdout by then is a timeout).

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

/// A command for `program`, to be given to [`run`], [`exec`] or [`spawn_supervised`].
#[allow(clippy::disallowed_methods)] // the one constructor of the binary
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut c = Command::new(program);
    super::fdlimit::restore_for_child(&mut c);
    c
}

/// What a finished program left.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Why [`run`] has no [`Finished`].
#[derive(Debug)]
pub enum Failure {
    /// The program does not exist (ENOENT at exec).
    NotFound,
    /// It could not be started for another reason.
    Spawn(std::io::Error),
    /// It ran past the deadline and was killed.
    TimedOut,
    /// It printed more than the limit on stdout (bytes) and was killed.
    TooLarge(usize),
    /// Waiting for it failed.
    Wait(std::io::Error),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::NotFound => write!(f, "program not found"),
            Failure::Spawn(e) => write!(f, "could not start it: {e}"),
            Failure::TimedOut => write!(f, "no answer before the deadline; it was killed"),
            Failure::TooLarge(n) => write!(
                f,
                "it printed more than {} MiB, more than any answer of ours; it was killed",
                n >> 20
            ),
            Failure::Wait(e) => write!(f, "waiting for it failed: {e}"),
        }
    }
}

/// How [`run`] bounds a program.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub timeout: Duration,
    /// Run it in a process group of its own and kill the group at the deadline (for a
    /// user's shell command that may start children of its own).
    pub group: bool,
    /// Capture stdout (else it goes to /dev/null: a program whose answer is its status).
    pub stdout: bool,
    /// The most stdout bytes kept; past it the program is killed ([`Failure::TooLarge`]).
    pub max_stdout: usize,
}

/// The default bound on a program's stdout: a whole 50 MB scrollback fits many times.
pub const MAX_STDOUT: usize = 1 << 30;

impl Limits {
    pub fn within(timeout: Duration) -> Limits {
        Limits {
            timeout,
            group: false,
            stdout: true,
            max_stdout: MAX_STDOUT,
        }
    }
}

/// Run `cmd` to completion (stdout and stderr captured), `input` on its stdin.
pub fn run(cmd: Command, input: Option<&[u8]>, timeout: Duration) -> Result<Finished, Failure> {
    run_limited(cmd, input, Limits::within(timeout))
}

/// [`run`] with every limit spelled out.
pub fn run_limited(
    mut cmd: Command,
    input: Option<&[u8]>,
    limits: Limits,
) -> Result<Finished, Failure> {
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(if limits.stdout {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stderr(Stdio::piped());
    if limits.group {
        cmd.process_group(0);
    }
    let deadline = Instant::now() + limits.timeout;
    #[allow(clippy::disallowed_methods)] // the wrapper itself
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Failure::NotFound),
        Err(e) => return Err(Failure::Spawn(e)),
    };
    let pid = child.id() as i32;
    let writer = match (input, child.stdin.take()) {
        (Some(data), Some(mut stdin)) => {
            let data = data.to_vec();
            Some(std::thread::spawn(move || {
                let _ = stdin.write_all(&data);
            }))
        }
        _ => None,
    };
    let r = collect(&mut child, pid, deadline, limits.group, limits.max_stdout);
    if let Some(w) = writer {
        let _ = w.join();
    }
    r
}

/// How much of a stderr is kept (its end): enough for any message, bounded for a program
/// that writes without end.
const STDERR_KEEP: usize = 64 * 1024;

/// How long a stderr still open after the child's exit is waited for (a grandchild holds
/// it; what matters, the status and stdout, is known by then).
const STDERR_LINGER: Duration = Duration::from_millis(300);

/// Without a pidfd (kernels before 5.3), how often the child's exit is looked for while
/// its streams stay open or are closed before it exits.
const EXIT_LOOK: Duration = Duration::from_millis(2);

/// A descriptor that becomes readable when process `pid` exits (`pidfd_open`, Linux 5.3),
/// so one `poll` waits for the streams and the exit together; `None` where unsupported.
fn pidfd(pid: i32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: a plain syscall with integer arguments; a non-negative result is a new
    // descriptor that nothing else owns.
    let fd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid, 0) };
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// What the collecting loop does next, from where the child and its streams are.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    /// Everything that will come has come: the exit status and the streams.
    Done,
    /// The deadline passed first.
    TimedOut,
    /// Wait for the streams (and the exit) until this instant.
    Wait(Instant),
}

/// Where the child and its streams are at one look.
#[derive(Debug, Clone, Copy)]
struct Seen {
    exited: bool,
    stdout_open: bool,
    stderr_open: bool,
    /// Its exit wakes a `poll` (a pidfd), so it need not be looked for.
    exit_polled: bool,
}

/// The loop's next step: done once the child exited and stdout ended (a stderr still held
/// open by a grandchild is waited for [`STDERR_LINGER`] at most, counted from the first
/// look that found it so, in `linger`); past the deadline, timed out; else wait, looking
/// for the exit every [`EXIT_LOOK`] when nothing wakes us for it.
fn next_step(now: Instant, deadline: Instant, linger: &mut Option<Instant>, s: Seen) -> Next {
    if s.exited && !s.stdout_open {
        if !s.stderr_open {
            return Next::Done;
        }
        let until = *linger.get_or_insert_with(|| (now + STDERR_LINGER).min(deadline));
        if now >= until {
            return Next::Done;
        }
    }
    if now >= deadline {
        return Next::TimedOut;
    }
    let mut wake = linger.unwrap_or(deadline).min(deadline);
    if !s.exited && !s.exit_polled {
        wake = wake.min(now + EXIT_LOOK);
    }
    Next::Wait(wake)
}

/// Wait until one of `watched` (a descriptor, the events to wait for, a tag) is ready or
/// `until` passes: the tags of the ready ones (none after a timeout or a signal).
pub fn poll_ready(
    watched: &[(BorrowedFd<'_>, PollFlags, usize)],
    until: Instant,
) -> nix::Result<Vec<usize>> {
    let mut fds: Vec<PollFd> = watched
        .iter()
        .map(|(fd, events, _)| PollFd::new(*fd, *events))
        .collect();
    // Half a millisecond over, so a timeout rounded to whole milliseconds is not early.
    let wait = until.saturating_duration_since(Instant::now()) + Duration::from_micros(500);
    let timeout = PollTimeout::try_from(wait).unwrap_or(PollTimeout::MAX);
    match poll(&mut fds, timeout) {
        Ok(_) => {}
        Err(nix::errno::Errno::EINTR) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    }
    Ok(fds
        .iter()
        .zip(watched)
        .filter(|(f, _)| f.revents().is_some_and(|r| !r.is_empty()))
        .map(|(_, (_, _, tag))| *tag)
        .collect())
}

/// The child's stdout (0) and stderr (1) while they are open, and what they brought.
struct Output {
    streams: [Option<Box<dyn ReadFd>>; 2],
    bufs: [Vec<u8>; 2],
    chunk: [u8; 16 * 1024],
}

impl Output {
    fn of(child: &mut Child) -> Output {
        Output {
            streams: [
                child.stdout.take().map(|s| Box::new(s) as Box<dyn ReadFd>),
                child.stderr.take().map(|s| Box::new(s) as Box<dyn ReadFd>),
            ],
            bufs: [Vec::new(), Vec::new()],
            chunk: [0u8; 16 * 1024],
        }
    }

    /// The open streams, for [`poll_ready`], tagged by their index.
    fn watched(&self) -> Vec<(BorrowedFd<'_>, PollFlags, usize)> {
        let mut w = Vec::with_capacity(3);
        for (i, s) in self.streams.iter().enumerate() {
            if let Some(s) = s {
                w.push((s.fd(), PollFlags::POLLIN, i));
            }
        }
        w
    }

    /// Read what stream `i` has ready (it is closed at its end): the stdout bytes so far.
    fn read(&mut self, i: usize) -> usize {
        if let Some(s) = self.streams[i].as_mut()
            && !read_some(s, &mut self.chunk, &mut self.bufs[i], i == 1)
        {
            self.streams[i] = None;
        }
        self.bufs[0].len()
    }
}

/// Kill the child (or its group) and reap it unless it already exited; `why` is the
/// answer.
fn abort(child: &mut Child, pid: i32, group: bool, exited: bool, why: Failure) -> Failure {
    kill(pid, group);
    if !exited {
        let _ = child.wait();
    }
    why
}

/// Read the child's stdout and stderr and wait for its exit, all on this thread (one
/// `poll` over the two pipes and the child's pidfd): no reader or watchdog thread, whose
/// start and wake-ups cost more than the call itself on a loaded machine (measured:
/// 5 ms between a remote call's ssh exit and its answer). The deadline kills the child
/// (or its group); a stdout still open after the exit is waited for until the deadline
/// (no stdout then is no answer), a stderr for [`STDERR_LINGER`] (see [`next_step`]).
fn collect(
    child: &mut Child,
    pid: i32,
    deadline: Instant,
    group: bool,
    max_stdout: usize,
) -> Result<Finished, Failure> {
    let mut out = Output::of(child);
    let exit_fd = pidfd(pid);
    let mut status: Option<ExitStatus> = None;
    let mut linger: Option<Instant> = None;
    loop {
        if status.is_none() {
            status = child
                .try_wait()
                .map_err(|e| abort(child, pid, group, false, Failure::Wait(e)))?;
        }
        let seen = Seen {
            exited: status.is_some(),
            stdout_open: out.streams[0].is_some(),
            stderr_open: out.streams[1].is_some(),
            exit_polled: exit_fd.is_some(),
        };
        let wake = match next_step(Instant::now(), deadline, &mut linger, seen) {
            Next::Done => break,
            Next::TimedOut => return Err(abort(child, pid, group, seen.exited, Failure::TimedOut)),
            Next::Wait(at) => at,
        };
        let mut watched = out.watched();
        if let (false, Some(p)) = (seen.exited, &exit_fd) {
            watched.push((p.as_fd(), PollFlags::POLLIN, 2));
        }
        let ready = poll_ready(&watched, wake).map_err(|e| {
            abort(
                child,
                pid,
                group,
                seen.exited,
                Failure::Wait(std::io::Error::from(e)),
            )
        })?;
        // The pidfd (2) only wakes us: the exit itself is read by `try_wait`.
        for i in ready.into_iter().filter(|i| *i < 2) {
            if out.read(i) > max_stdout {
                let why = Failure::TooLarge(max_stdout);
                return Err(abort(child, pid, group, seen.exited, why));
            }
        }
    }
    let [stdout, mut stderr] = out.bufs;
    keep_end(&mut stderr);
    Ok(Finished {
        // The loop ends only once the child has exited.
        status: status.ok_or_else(|| Failure::Wait(std::io::Error::other("no exit status")))?,
        stdout,
        stderr,
    })
}

/// Read what `s` has ready into `buf` (a stderr, `bounded`, keeps about its last
/// [`STDERR_KEEP`] bytes); false once the stream has ended or failed.
pub fn read_some(s: &mut impl Read, chunk: &mut [u8], buf: &mut Vec<u8>, bounded: bool) -> bool {
    match s.read(chunk) {
        Ok(0) => false,
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            if bounded && buf.len() > 2 * STDERR_KEEP {
                let cut = buf.len() - STDERR_KEEP;
                buf.drain(..cut);
            }
            true
        }
        Err(e) => e.kind() == std::io::ErrorKind::Interrupted,
    }
}

/// Keep the last [`STDERR_KEEP`] bytes of a stderr.
pub fn keep_end(stderr: &mut Vec<u8>) {
    if stderr.len() > STDERR_KEEP {
        let cut = stderr.len() - STDERR_KEEP;
        stderr.drain(..cut);
    }
}

/// A pipe from the child that `collect` polls and reads.
trait ReadFd: Read {
    fn fd(&self) -> std::os::fd::BorrowedFd<'_>;
}

impl ReadFd for std::process::ChildStdout {
    fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(self)
    }
}

impl ReadFd for std::process::ChildStderr {
    fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(self)
    }
}

/// Replace this process with `cmd` (the terminal goes with it); returns only on error.
pub fn exec(mut cmd: Command) -> std::io::Error {
    #[allow(clippy::disallowed_methods)] // the wrapper itself
    cmd.exec()
}

/// Start `cmd` as a child that the caller supervises (waits for, signals, outlives): the
/// side agent in its popup. No deadline, because its life is the person's conversation.
pub fn spawn_supervised(mut cmd: Command) -> std::io::Result<Child> {
    #[allow(clippy::disallowed_methods)] // the wrapper itself
    cmd.spawn()
}

fn kill(pid: i32, group: bool) {
    use nix::sys::signal::{Signal, kill, killpg};
    use nix::unistd::Pid;
    let pid = Pid::from_raw(pid);
    if group {
        let _ = killpg(pid, Signal::SIGKILL);
    } else {
        let _ = kill(pid, Signal::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = command("/bin/sh");
        c.arg("-c").arg(script);
        c
    }

    fn seen(exited: bool, stdout_open: bool, stderr_open: bool) -> Seen {
        Seen {
            exited,
            stdout_open,
            stderr_open,
            exit_polled: true,
        }
    }

    #[test]
    fn the_loop_ends_once_the_exit_and_stdout_are_in() {
        let now = Instant::now();
        let deadline = now + Duration::from_secs(10);
        let mut linger = None;
        assert_eq!(
            next_step(now, deadline, &mut linger, seen(true, false, false)),
            Next::Done
        );
        // Still running, or stdout still open after the exit: wait up to the deadline.
        for s in [seen(false, true, true), seen(true, true, false)] {
            assert_eq!(
                next_step(now, deadline, &mut linger, s),
                Next::Wait(deadline)
            );
        }
        assert_eq!(linger, None);
        let late = deadline + Duration::from_millis(1);
        assert_eq!(
            next_step(late, deadline, &mut linger, seen(true, true, false)),
            Next::TimedOut
        );
    }

    #[test]
    fn a_stderr_open_after_the_exit_is_given_its_linger_only() {
        let now = Instant::now();
        let deadline = now + Duration::from_secs(10);
        let mut linger = None;
        let s = seen(true, false, true);
        assert_eq!(
            next_step(now, deadline, &mut linger, s),
            Next::Wait(now + STDERR_LINGER)
        );
        // Counted from the first look, not from each.
        let later = now + STDERR_LINGER / 2;
        assert_eq!(
            next_step(later, deadline, &mut linger, s),
            Next::Wait(now + STDERR_LINGER)
        );
        assert_eq!(
            next_step(now + STDERR_LINGER, deadline, &mut linger, s),
            Next::Done
        );
        // Never past the deadline.
        let mut linger = None;
        let near = now + Duration::from_millis(10);
        assert_eq!(next_step(now, near, &mut linger, s), Next::Wait(near));
    }

    #[test]
    fn without_a_pidfd_the_exit_is_looked_for_often() {
        let now = Instant::now();
        let deadline = now + Duration::from_secs(10);
        let s = Seen {
            exit_polled: false,
            ..seen(false, true, true)
        };
        assert_eq!(
            next_step(now, deadline, &mut None, s),
            Next::Wait(now + EXIT_LOOK)
        );
    }

    #[test]
    fn poll_ready_names_the_ready_descriptors() {
        let (r, w) = nix::unistd::pipe().unwrap();
        let (r2, _w2) = nix::unistd::pipe().unwrap();
        nix::unistd::write(&w, b"x").unwrap();
        let watched = [
            (r.as_fd(), PollFlags::POLLIN, 7),
            (r2.as_fd(), PollFlags::POLLIN, 8),
        ];
        let soon = Instant::now() + Duration::from_millis(50);
        assert_eq!(poll_ready(&watched, soon).unwrap(), vec![7]);
        assert_eq!(
            poll_ready(&watched[1..], soon).unwrap(),
            Vec::<usize>::new()
        );
    }

    #[test]
    fn captures_both_streams_and_the_status() {
        let f = run(
            sh("printf out; printf err >&2; exit 3"),
            None,
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(f.stdout, b"out");
        assert_eq!(f.stderr, b"err");
        assert_eq!(f.status.code(), Some(3));
    }

    #[test]
    fn input_reaches_stdin_even_when_larger_than_a_pipe() {
        let data = vec![b'x'; 1 << 20];
        let f = run(command("cat"), Some(&data), Duration::from_secs(10)).unwrap();
        assert_eq!(f.stdout.len(), data.len());
    }

    #[test]
    fn a_program_that_prints_past_its_bound_is_killed_without_holding_it() {
        let limits = Limits {
            max_stdout: 1 << 20,
            ..Limits::within(Duration::from_secs(30))
        };
        let r = run_limited(command("yes"), None, limits);
        assert!(
            matches!(r, Err(Failure::TooLarge(n)) if n == 1 << 20),
            "{r:?}"
        );
    }

    #[test]
    fn a_program_past_its_deadline_is_killed() {
        let t = Instant::now();
        let r = run(sh("sleep 30"), None, Duration::from_millis(200));
        assert!(matches!(r, Err(Failure::TimedOut)), "{r:?}");
        assert!(t.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_group_is_killed_whole() {
        let t = Instant::now();
        let limits = Limits {
            timeout: Duration::from_millis(300),
            group: true,
            stdout: true,
            max_stdout: MAX_STDOUT,
        };
        // The grandchild holds stdout: only killing the group ends the read.
        let r = run_limited(sh("sleep 30 & sleep 30"), None, limits);
        assert!(matches!(r, Err(Failure::TimedOut)), "{r:?}");
        assert!(t.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_grandchild_holding_stdout_is_no_answer_by_the_deadline() {
        let t = Instant::now();
        let f = run(
            sh("(sleep 3 &) ; printf partial"),
            None,
            Duration::from_millis(400),
        );
        assert!(matches!(f, Err(Failure::TimedOut)), "{f:?}");
        assert!(t.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn a_program_that_closes_its_streams_is_still_bounded() {
        let t = Instant::now();
        let f = run(
            sh("exec >/dev/null 2>/dev/null; sleep 3"),
            None,
            Duration::from_millis(400),
        );
        assert!(matches!(f, Err(Failure::TimedOut)), "{f:?}");
        assert!(t.elapsed() < Duration::from_secs(2));
        // And one that closes them, then exits: its status.
        let f = run(
            sh("exec >/dev/null 2>/dev/null; sleep 0.1; exit 4"),
            None,
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(f.status.code(), Some(4));
    }

    #[test]
    fn a_grandchild_holding_stderr_does_not_hold_the_answer() {
        let t = Instant::now();
        let f = run(
            sh("(sleep 3 >/dev/null &) ; printf ok"),
            None,
            Duration::from_millis(500),
        );
        // The sleeper holds stderr: the answer comes without waiting for it.
        let f = f.unwrap();
        assert_eq!(f.stdout, b"ok");
        assert!(t.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn an_endless_stderr_keeps_its_end_only() {
        let f = run(
            sh("head -c 1000000 /dev/zero >&2; printf END >&2"),
            None,
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(f.stderr.len(), STDERR_KEEP);
        assert!(f.stderr.ends_with(b"END"));
    }

    #[test]
    fn a_missing_program_is_not_found() {
        let r = run(
            command("/nonexistent/tmuxmate-nothing"),
            None,
            Duration::from_secs(5),
        );
        assert!(matches!(r, Err(Failure::NotFound)), "{r:?}");
    }
}
