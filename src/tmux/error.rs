//! Typed tmux failures.
//!
//! Owns: turning an exit status plus stderr into a specific error, and the wording the
//! user sees. Invariant: every variant that comes from a run carries the full argv, and
//! every message says what to do next. The argv is mechanics, not a message: `detail`
//! hands it to the log and `--verbose`; `parts` and `Display` leave it out.

use std::fmt;
use std::time::Duration;

use super::socket::Socket;

#[derive(Debug, Clone)]
pub enum TmuxError {
    NotInstalled {
        program: String,
    },
    Spawn {
        argv: Vec<String>,
        reason: String,
    },
    NoServer {
        argv: Vec<String>,
        socket: String,
        /// The command that starts one there (over ssh for a server on a host).
        fix: String,
        stderr: String,
    },
    /// The socket exists but connecting is forbidden (permissions, or a sandbox).
    SocketDenied {
        argv: Vec<String>,
        socket: String,
        stderr: String,
    },
    TargetNotFound {
        argv: Vec<String>,
        target: String,
        stderr: String,
    },
    TooOld {
        found: String,
    },
    Timeout {
        argv: Vec<String>,
        after: Duration,
    },
    Failed {
        argv: Vec<String>,
        status: Option<i32>,
        stderr: String,
    },
    /// tmux answered, but not in the shape we asked for (a field count or length mismatch).
    BadOutput {
        argv: Vec<String>,
        detail: String,
    },
    /// A host printed more than a call's bound (bytes).
    TooLarge {
        host: String,
        limit: usize,
    },
    /// ssh itself failed (exit 255, or our side of the transport).
    Ssh {
        host: String,
        /// The plain ssh command for this host, for the "try this" part of the message.
        ssh: String,
        kind: SshFailure,
        stderr: String,
    },
    /// The remote shell found no tmux to run.
    RemoteNoTmux {
        host: String,
        stderr: String,
    },
    RemoteTooOld {
        host: String,
        found: String,
    },
}

impl TmuxError {
    pub fn classify(
        argv: Vec<String>,
        status: Option<i32>,
        stderr: String,
        socket: &Socket,
    ) -> TmuxError {
        Self::classify_on(argv, status, stderr, socket, None)
    }

    /// As [`classify`](Self::classify), for the server on `socket` of `host` (this machine
    /// when `None`).
    pub fn classify_on(
        argv: Vec<String>,
        status: Option<i32>,
        stderr: String,
        socket: &Socket,
        host: Option<&str>,
    ) -> TmuxError {
        let server = match host {
            Some(h) => format!("{} on host {h}", socket.describe()),
            None => socket.describe(),
        };
        if stderr.starts_with("error connecting to")
            && (stderr.contains("Operation not permitted") || stderr.contains("Permission denied"))
        {
            return TmuxError::SocketDenied {
                argv,
                socket: server,
                stderr,
            };
        }
        if stderr.starts_with("no server running on") || stderr.starts_with("error connecting to") {
            let mut fix = new_session_advice(&socket.describe());
            if let Some(h) = host {
                fix = format!("ssh {} {fix}", crate::sys::shell::readable(h));
            }
            return TmuxError::NoServer {
                argv,
                socket: server,
                fix,
                stderr,
            };
        }
        if let Some(rest) = stderr.strip_prefix("can't find ") {
            let target = rest
                .split_once(": ")
                .map(|x| x.1)
                .unwrap_or(rest)
                .to_string();
            return TmuxError::TargetNotFound {
                argv,
                target,
                stderr,
            };
        }
        TmuxError::Failed {
            argv,
            status,
            stderr,
        }
    }

    pub fn is_no_server(&self) -> bool {
        matches!(self, TmuxError::NoServer { .. })
    }
}

fn show_argv(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if a.is_empty()
                || a.chars()
                    .any(|c| c.is_whitespace() || "'\"\\$;#".contains(c))
            {
                format!("{a:?}")
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The command that starts a server on `socket` (as `Socket::describe` wrote it).
fn new_session_advice(socket: &str) -> String {
    let q = crate::sys::shell::readable;
    if let Some(n) = socket.strip_prefix("-L ") {
        format!("tmux -L {} new-session", q(n))
    } else if let Some(p) = socket.strip_prefix("-S ") {
        format!("tmux -S {} new-session", q(p))
    } else {
        "tmux new-session".to_string()
    }
}

impl TmuxError {
    /// What went wrong (for people) and what to do about it. The argv is not in either:
    /// it is `detail`, for the log and `--verbose`.
    /// The message of an ssh or remote-host failure (each names the host and what to do).
    fn remote_text(&self) -> String {
        match self {
            TmuxError::Ssh {
                host,
                ssh,
                kind,
                stderr,
            } => {
                let what = match kind {
                    SshFailure::Unreachable => format!(
                        "cannot reach host {host} over ssh; check the host name and port, that sshd runs there and that the network allows it (try `{ssh} true`)"
                    ),
                    SshFailure::Auth => format!(
                        "ssh could not log in to {host}; tmuxmate never prompts (BatchMode): load a key into ssh-agent or name one with IdentityFile in ~/.ssh/config (or the file TMUXMATE_SSH_CONFIG names), make sure it is in the remote ~/.ssh/authorized_keys, then check with `{ssh} -o BatchMode=yes true`"
                    ),
                    SshFailure::HostKeyUnknown => format!(
                        "the host key of {host} is not in known_hosts, and tmuxmate never accepts a key by itself; verify it and add it: `ssh-keyscan [-p PORT] HOST >> ~/.ssh/known_hosts` (compare the fingerprint with the host's own `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub`), or log in once interactively with `{ssh}` and answer yes"
                    ),
                    SshFailure::HostKeyChanged => format!(
                        "the host key of {host} has CHANGED since it was recorded in known_hosts (a reinstalled host, or someone in the middle); nothing was sent. If the change is expected, remove the old key with `ssh-keygen -R HOST` (with [HOST]:PORT for a port) and add the new one after checking its fingerprint"
                    ),
                    SshFailure::Dropped => format!(
                        "the ssh connection to {host} dropped during the call; the command may or may not have reached tmux there: check (e.g. `tmuxmate --host {host} list`) and run it again; the next call reconnects"
                    ),
                    SshFailure::MasterLost => format!(
                        "the shared ssh connection to {host} went away (or refused a session) before the command started, so nothing ran; tmuxmate does not open a second connection behind it: run it again, the next call reconnects (if ssh says the session was refused, that sshd allows fewer sessions per connection than tmuxmate uses: lower TMUXMATE_SSH_SESSIONS; sessions of calls that timed out end at their own deadline)"
                    ),
                    SshFailure::Busy => format!(
                        "no ssh session to {host} became free in time; the host is slow or many tmuxmate calls are running at once: try again, or raise TMUXMATE_TIMEOUT_MS"
                    ),
                    SshFailure::Local => {
                        format!("tmuxmate could not prepare the ssh connection to {host}")
                    }
                    SshFailure::Other => format!(
                        "ssh to {host} failed; run `{ssh} -o BatchMode=yes true` to see why"
                    ),
                };
                format!(
                    "{what} (ssh said: {})",
                    if stderr.is_empty() {
                        "nothing"
                    } else {
                        stderr.trim()
                    }
                )
            }
            TmuxError::RemoteNoTmux { host, stderr } => format!(
                "host {host} has no tmux on the PATH of its login shell ({stderr}); install tmux 3.2 or newer there (e.g. `apt-get install tmux` on that host), or set TMUXMATE_REMOTE_TMUX to its absolute path"
            ),
            TmuxError::RemoteTooOld { host, found } => format!(
                "tmux on host {host} is too old: found '{found}', tmuxmate needs tmux 3.2 or newer; upgrade tmux there"
            ),
            _ => String::new(),
        }
    }

    pub fn parts(&self) -> (String, Option<String>) {
        match self {
            TmuxError::Ssh { .. }
            | TmuxError::RemoteNoTmux { .. }
            | TmuxError::RemoteTooOld { .. } => (self.remote_text(), None),
            TmuxError::NotInstalled { program } => (
                format!("tmux is not installed ('{program}' not found on PATH)"),
                Some("install tmux 3.2 or newer (e.g. apt-get install tmux)".into()),
            ),
            TmuxError::Spawn { argv, reason } => (
                format!(
                    "could not run {}: {reason}",
                    argv.first().map(String::as_str).unwrap_or("tmux")
                ),
                Some("check that tmux is installed and executable".into()),
            ),
            TmuxError::SocketDenied { socket, stderr, .. } => (
                format!(
                    "tmux server socket {socket} refused the connection ({stderr}); this process may not use it"
                ),
                Some(
                    "check the socket's owner and permissions, or whether a sandbox forbids sockets \
                     (Codex's workspace-write sandbox does: give that agent full access to use tmuxmate)"
                        .into(),
                ),
            ),
            TmuxError::NoServer { socket, fix, .. } => (
                format!("no tmux server is running on socket {socket}"),
                Some(format!("start one with `{fix}`, or pick another with -L/-S")),
            ),
            TmuxError::TargetNotFound { target, .. } => (
                format!("tmux target {target} does not exist"),
                Some("run `tmuxmate list` to see the panes".into()),
            ),
            TmuxError::TooOld { found } => (
                format!("tmux is too old: found '{found}', tmuxmate needs tmux 3.2 or newer"),
                Some("upgrade tmux".into()),
            ),
            TmuxError::Timeout { after, .. } => (
                format!(
                    "tmux did not answer within {} ms and was killed",
                    after.as_millis()
                ),
                Some(
                    "is the server hung? (TMUXMATE_TIMEOUT_MS sets how long one tmux call may take)"
                        .into(),
                ),
            ),
            TmuxError::Failed { status, stderr, .. } => (
                format!(
                    "tmux failed (exit {}): {}",
                    status
                        .map(|s| s.to_string())
                        .unwrap_or_else(|| "by signal".into()),
                    if stderr.is_empty() {
                        "no message"
                    } else {
                        stderr
                    }
                ),
                None,
            ),
            TmuxError::BadOutput { detail, .. } => (
                format!("tmux gave output tmuxmate cannot read safely ({detail})"),
                Some("please report this".into()),
            ),
            TmuxError::TooLarge { host, limit } => (
                format!(
                    "host {host} answered more than {} MiB, more than any answer of tmuxmate's; the call was ended and nothing of it kept",
                    limit >> 20
                ),
                Some(format!(
                    "check that the tmuxmate on {host} is this one (`tmuxmate remote install {host}`)"
                )),
            ),
        }
    }

    /// A short class for `--json` errors.
    pub fn kind(&self) -> &'static str {
        match self {
            TmuxError::NotInstalled { .. } => "tmux-not-installed",
            TmuxError::Spawn { .. } => "tmux-spawn",
            TmuxError::SocketDenied { .. } => "socket-denied",
            TmuxError::NoServer { .. } => "no-server",
            TmuxError::TargetNotFound { .. } => "target-not-found",
            TmuxError::TooOld { .. } => "tmux-too-old",
            TmuxError::Timeout { .. } => "tmux-timeout",
            TmuxError::Failed { .. } => "tmux",
            TmuxError::BadOutput { .. } => "tmux-bad-output",
            TmuxError::TooLarge { .. } => "too-large",
            TmuxError::Ssh { .. } => "ssh",
            TmuxError::RemoteNoTmux { .. } => "remote-no-tmux",
            TmuxError::RemoteTooOld { .. } => "remote-tmux-too-old",
        }
    }

    /// The mechanics: the argv that failed and tmux's own words.
    pub fn detail(&self) -> Option<String> {
        let (argv, stderr) = match self {
            TmuxError::NotInstalled { .. }
            | TmuxError::TooOld { .. }
            | TmuxError::RemoteNoTmux { .. }
            | TmuxError::RemoteTooOld { .. }
            | TmuxError::TooLarge { .. } => return None,
            TmuxError::Ssh { ssh, .. } => return Some(format!("ssh: {ssh}")),
            TmuxError::Spawn { argv, .. }
            | TmuxError::Timeout { argv, .. }
            | TmuxError::BadOutput { argv, .. } => (argv, ""),
            TmuxError::NoServer { argv, stderr, .. }
            | TmuxError::SocketDenied { argv, stderr, .. }
            | TmuxError::TargetNotFound { argv, stderr, .. }
            | TmuxError::Failed { argv, stderr, .. } => (argv, stderr.as_str()),
        };
        Some(if stderr.is_empty() {
            format!("argv: {}", show_argv(argv))
        } else {
            format!("argv: {}; tmux said: {stderr}", show_argv(argv))
        })
    }
}

impl fmt::Display for TmuxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.parts() {
            (m, Some(h)) => write!(f, "{m}; {h}"),
            (m, None) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for TmuxError {}

/// What kind of ssh failure (ssh itself exits 255; the remote command's status otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SshFailure {
    Unreachable,
    Auth,
    HostKeyUnknown,
    HostKeyChanged,
    /// The connection (or the master) went away during the call.
    Dropped,
    /// The master went away (or refused) before the command started: nothing ran.
    MasterLost,
    /// No session slot or first connection within the call's timeout.
    Busy,
    /// Our own side: locks, the control dir.
    Local,
    Other,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_stderr() {
        let s = Socket::Name("x".into());
        let c = |e: &str| TmuxError::classify(vec!["tmux".into()], Some(1), e.into(), &s);
        assert!(c("no server running on /tmp/tmux-0/x").is_no_server());
        assert!(c("error connecting to /tmp/x (No such file or directory)").is_no_server());
        let d = c("error connecting to /tmp/x (Operation not permitted)");
        assert!(matches!(d, TmuxError::SocketDenied { .. }));
        assert!(d.to_string().contains("sandbox"));
        assert!(matches!(
            c("can't find pane: %9"),
            TmuxError::TargetNotFound { .. }
        ));
        assert!(c("can't find pane: %9").to_string().contains("%9"));
        let f = c("unknown command: nope");
        assert!(f.to_string().contains("exit 1") && !f.to_string().contains("argv"));
        assert!(f.detail().unwrap().contains("argv: tmux"));
        let n = c("no server running on /tmp/tmux-0/x");
        assert!(n.to_string().contains("`tmux -L x new-session`"), "{n}");
    }

    #[test]
    fn the_fix_for_a_missing_server_on_a_host_runs_there_with_the_socket_name_alone() {
        let n = TmuxError::classify_on(
            vec!["ssh".into()],
            Some(1),
            "no server running on /tmp/tmux-0/work".into(),
            &Socket::Name("work".into()),
            Some("dev box"),
        );
        let t = n.to_string();
        assert!(
            t.contains("no tmux server is running on socket -L work on host dev box"),
            "{t}"
        );
        assert!(
            t.contains("`ssh 'dev box' tmux -L work new-session`"),
            "{t}"
        );
    }
}
