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
//! payload cannot deadlock against a full stdout; stdout and stderr are read on threads
//! of their own, and a stream still held open by a grandchild after the child exited is
//! given up at the deadline instead of waited for (no stdout by then is a timeout).

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A command for `program`, to be given to [`run`], [`exec`] or [`spawn_supervised`].
#[allow(clippy::disallowed_methods)] // the one constructor of the binary
pub fn command(program: impl AsRef<OsStr>) -> Command {
    Command::new(program)
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
    /// Waiting for it failed.
    Wait(std::io::Error),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::NotFound => write!(f, "program not found"),
            Failure::Spawn(e) => write!(f, "could not start it: {e}"),
            Failure::TimedOut => write!(f, "no answer before the deadline; it was killed"),
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
}

impl Limits {
    pub fn within(timeout: Duration) -> Limits {
        Limits {
            timeout,
            group: false,
            stdout: true,
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
    let stdout = child.stdout.take().map(|r| drain(r, usize::MAX));
    let stderr = child.stderr.take().map(|r| drain(r, STDERR_KEEP));
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let group = limits.group;
    let watchdog = std::thread::spawn(move || {
        let left = deadline.saturating_duration_since(Instant::now());
        if done_rx.recv_timeout(left) == Err(mpsc::RecvTimeoutError::Timeout) {
            kill(pid, group);
            return true;
        }
        false
    });
    let waited = child.wait();
    let _ = done_tx.send(());
    let timed_out = watchdog.join().unwrap_or(false);
    if let Some(w) = writer {
        let _ = w.join();
    }
    if timed_out {
        return Err(Failure::TimedOut);
    }
    let status = waited.map_err(Failure::Wait)?;
    // The streams end when the last holder closes them: at the child's exit, unless a
    // grandchild kept them. Its stdout is the answer, so an unfinished one is no answer.
    let left = || deadline.saturating_duration_since(Instant::now());
    let stdout = match stdout {
        Some(rx) => match rx.recv_timeout(left()) {
            Ok(v) => v,
            Err(_) => {
                kill(pid, group);
                return Err(Failure::TimedOut);
            }
        },
        None => Vec::new(),
    };
    let stderr = stderr
        .and_then(|rx| rx.recv_timeout(left().min(STDERR_LINGER)).ok())
        .unwrap_or_default();
    Ok(Finished {
        status,
        stdout,
        stderr,
    })
}

/// How much of a stderr is kept (its end): enough for any message, bounded for a program
/// that writes without end.
const STDERR_KEEP: usize = 64 * 1024;

/// How long a stderr still open after the child's exit is waited for (a grandchild holds
/// it; what matters, the status and stdout, is known by then).
const STDERR_LINGER: Duration = Duration::from_millis(300);

/// Read a stream to its end on a thread of its own, keeping its last `keep` bytes; the
/// bytes arrive on the channel.
fn drain(mut r: impl Read + Send + 'static, keep: usize) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if keep == usize::MAX {
            let _ = r.read_to_end(&mut buf);
        } else {
            let mut chunk = [0u8; 8192];
            while let Ok(n) = r.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
                if buf.len() > 2 * keep {
                    buf.drain(..buf.len() - keep);
                }
            }
            if buf.len() > keep {
                buf.drain(..buf.len() - keep);
            }
        }
        let _ = tx.send(buf);
    });
    rx
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
        };
        // The grandchild holds stdout: only killing the group ends the read.
        let r = run_limited(sh("sleep 30 & sleep 30"), None, limits);
        assert!(matches!(r, Err(Failure::TimedOut)), "{r:?}");
        assert!(t.elapsed() < Duration::from_secs(10));
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
