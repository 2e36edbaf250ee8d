//! The ssh transport: a tmux server on another machine, reached through OpenSSH.
//!
//! Owns: the `--host [user@]host[:port]` value (strictly validated: it is user data and
//! becomes ssh argv), the ssh command line for one remote tmux call, the private
//! directory of control sockets, the cross-process locks around them, and turning ssh's
//! own failures (exit 255) into errors that name the host and say what to do.
//!
//! Invariants:
//! - One connection per host: every call goes through an OpenSSH control master
//!   (`ControlMaster=auto`, `ControlPersist=600`) whose socket lives in a 0700 directory
//!   of ours. The socket's name is our own hash of (ssh config, user, host, port) rather
//!   than ssh's `%C`, so a call can tell a warm master from a cold one with one
//!   `connect()` instead of a second ssh process (`ssh -O check` would double the cost
//!   of every call).
//! - Cold master race: ssh's `ControlMaster=auto` alone lets N simultaneous first calls
//!   open N connections (measured: 20 calls, 15 connections, 5 reset by sshd's
//!   MaxStartups). The first caller that finds no live master takes `<key>.master`'s
//!   lock and makes the connection; the others wait until the socket answers.
//! - MaxSessions: sshd allows 10 sessions per connection by default; the 11th is refused
//!   and ssh then silently opens a connection of its own (measured: 20 calls over a warm
//!   master, 10 extra connections). Every call holds one of `SLOTS` lock files
//!   (`<key>.sN`) while it runs, so at most that many sessions share the master.
//! - Only the caller holding `<key>.master` ever opens a connection. ssh's own fallback
//!   would open others: a client whose master dies (or refuses it) between `connect()`
//!   and the session's start silently connects by itself, and since the dead master's
//!   socket file is still there it cannot become the new master, so that connection
//!   serves one call and the next call opens yet another (seen: a master killed during
//!   a remote run's polling, three connections instead of two). Every other call gets a
//!   `ProxyCommand` that cannot connect ([`NO_OWN_CONNECTION`]): the fallback fails
//!   instead, and the call is made once more through [`Remote::prepare`] (which then
//!   finds no master and takes the lock) when ssh's stderr shows the command never
//!   reached the master ([`fell_back`]).
//! - The call that makes the connection gets at least [`CONNECT_BUDGET`], not the short
//!   timeout of the call it carries (a poll's): killed while connecting, it would leave a
//!   half-made master behind and the next call would connect again.
//! - A call over a warm master starts no ssh client: it hands the session to the master's
//!   socket itself ([`super::ssh_mux`], OpenSSH's own mux protocol), and only a session the
//!   master certainly did not start goes the ssh client's way (`TMUXMATE_SSH_MUX=0`
//!   makes every call do so). The cold call, which makes the connection, is always ssh.
//! - `BatchMode=yes`: ssh never prompts (a hook or key binding has no one to answer).
//! - The remote command is tmux's argv, each word quoted by [`crate::sys::shell`]; bulk
//!   text goes on stdin. Nothing else is run on the remote host but lines of ours
//!   ([`Remote::run_line`]: a new pane's checks, `super::Transport::ask_where_panes_start`;
//!   the host's tmuxmate and its install, `crate::remote`), values in them quoted the same.

use std::fs::File;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};

use crate::sys::process::Finished;
use crate::tmux::error::{SshFailure, TmuxError};

/// Sessions one process tree may keep open on a master at once (sshd's default
/// MaxSessions is 10; two are left for the person's own use of the same master).
/// `TMUXMATE_SSH_SESSIONS` lowers or raises it for a server configured otherwise.
const SLOTS: usize = 8;

/// The least time a call waits for the first connection or a free slot.
const QUEUE_WAIT: Duration = Duration::from_secs(60);

/// How long a master that failed a call's hello may take to stop answering on its socket.
pub const DYING_MASTER: Duration = Duration::from_secs(1);
/// The least time the call that makes the connection may take: ssh's TCP connect alone
/// may take `ConnectTimeout` (10 s), then key exchange and login on a loaded host.
pub const CONNECT_BUDGET: Duration = Duration::from_secs(30);

/// The `ProxyCommand` of a call that must not open a connection of its own (see the
/// module docs): a program that cannot exist, so it fails in every login shell ssh may
/// run it with. (Its complaint does not reach us: with ControlPersist ssh sends a proxy's
/// stderr to /dev/null; ssh's own words name the peer `UNKNOWN port 65535`.)
pub const NO_OWN_CONNECTION: &str = "/nonexistent/tmuxmate-makes-no-second-ssh-connection";

/// A validated `[user@]host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

impl Host {
    /// Parse strictly: a user and host of letters, digits, `.`, `_`, `-` (not first),
    /// an IPv6 address in brackets, a port 1-65535. Anything else is refused.
    pub fn parse(s: &str) -> Result<Host, String> {
        let refuse = |why: &str| {
            Err(format!(
                "refused: --host {s:?} {why}; give [user@]host[:port], e.g. dev@build1:2222 \
                 (letters, digits, '.', '_' and '-' only; an IPv6 address in brackets)"
            ))
        };
        if s.is_empty() {
            return refuse("is empty");
        }
        if s.starts_with('-') {
            return refuse("starts with '-' (ssh would read it as an option)");
        }
        if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return refuse("contains whitespace or a control character");
        }
        let (user, rest) = match s.split_once('@') {
            Some((u, r)) => (Some(u), r),
            None => (None, s),
        };
        if let Some(u) = user
            && !plain_name(u, 64)
        {
            return refuse("has a user name that is not a plain name");
        }
        let bracketed = rest.starts_with('[');
        let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
            let Some((addr, after)) = inner.split_once(']') else {
                return refuse("has an unclosed '['");
            };
            if !addr.contains(':')
                || !addr
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || ":.".contains(c))
            {
                return refuse("has something other than an IPv6 address in brackets");
            }
            match after {
                "" => (addr, None),
                p => match p.strip_prefix(':') {
                    Some(p) => (addr, Some(p)),
                    None => return refuse("has text after ']' that is not :port"),
                },
            }
        } else {
            match rest.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (rest, None),
            }
        };
        if !bracketed && !plain_name(host, 253) {
            return refuse("has a host name that is not a plain name");
        }
        let port = match port {
            None => None,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => Some(n),
                _ => return refuse("has a port that is not a number from 1 to 65535"),
            },
        };
        Ok(Host {
            user: user.map(String::from),
            host: host.to_string(),
            port,
        })
    }
}

impl std::fmt::Display for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(u) = &self.user {
            write!(f, "{u}@")?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            write!(f, "{}", self.host)?;
        }
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        Ok(())
    }
}

impl Host {
    /// The plain ssh command line that reaches this host, for messages (`ssh -p 2222 dev@box`).
    pub fn ssh_hint(&self) -> String {
        let mut s = String::from("ssh ");
        if let Some(p) = self.port {
            s.push_str(&format!("-p {p} "));
        }
        if let Some(u) = &self.user {
            s.push_str(&format!("{u}@"));
        }
        s.push_str(&self.host);
        s
    }
}

fn plain_name(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && !s.starts_with('-')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// How to reach one host: its validated address, the ssh config to use, the control dir.
#[derive(Debug, Clone)]
pub struct Remote {
    pub host: Host,
    /// `TMUXMATE_SSH_CONFIG`: passed as `ssh -F` (tests use a config of their own).
    config: Option<PathBuf>,
    dir: PathBuf,
    key: String,
    slots: usize,
}

impl Remote {
    /// Validate `spec` and make sure the private control directory exists.
    pub fn new(spec: &str) -> Result<Remote, String> {
        let host = Host::parse(spec)?;
        let config = std::env::var_os("TMUXMATE_SSH_CONFIG")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        if let Some(c) = &config
            && !c.is_file()
        {
            return Err(format!(
                "TMUXMATE_SSH_CONFIG names {}, which is not a file; point it at an ssh config or unset it",
                c.display()
            ));
        }
        let dir = control_dir()?;
        let mut h = Fnv::new();
        if let Some(c) = &config {
            h.feed(c.to_string_lossy().as_bytes());
        }
        h.feed(b"\0");
        h.feed(host.to_string().as_bytes());
        let slots = std::env::var("TMUXMATE_SSH_SESSIONS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|n| (1..=64).contains(n))
            .unwrap_or(SLOTS);
        Ok(Remote {
            host,
            config,
            dir,
            key: format!("{:016x}", h.0),
            slots,
        })
    }

    /// The control socket of this host's master.
    pub fn control_path(&self) -> PathBuf {
        self.dir.join(&self.key)
    }

    /// ssh's argv for one remote command line (already quoted words). `connects`: this
    /// call may open the connection (it holds the cold-master lock, or it is `attach`);
    /// otherwise it can only use the running master (see [`NO_OWN_CONNECTION`]).
    pub fn ssh_argv(&self, line: String, connects: bool) -> Vec<String> {
        let mut v: Vec<String> = vec!["ssh".into()];
        if let Some(c) = &self.config {
            v.push("-F".into());
            v.push(c.to_string_lossy().into_owned());
        }
        for o in [
            "BatchMode=yes",
            "ControlMaster=auto",
            "ControlPersist=600",
            "ConnectTimeout=10",
            // A master on a dead network notices within 45 s instead of hanging calls.
            "ServerAliveInterval=15",
            "ServerAliveCountMax=3",
        ] {
            v.push("-o".into());
            v.push(o.into());
        }
        if !connects {
            v.push("-o".into());
            v.push(format!("ProxyCommand={NO_OWN_CONNECTION}"));
        }
        v.push("-o".into());
        // The directory holds only plain characters (control_dir); `%` cannot occur.
        v.push(format!("ControlPath={}", self.control_path().display()));
        if let Some(p) = self.host.port {
            v.push("-p".into());
            v.push(p.to_string());
        }
        if let Some(u) = &self.host.user {
            v.push("-l".into());
            v.push(u.clone());
        }
        v.push(self.host.host.clone());
        v.push("--".into());
        v.push(line);
        v
    }

    /// Whether a master answers on the control socket (one connect, no ssh process).
    pub fn master_alive(&self) -> bool {
        UnixStream::connect(self.control_path()).is_ok()
    }

    /// Wait up to `limit` for the master's socket to stop answering.
    pub fn wait_master_gone(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        while self.master_alive() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Take what one call needs before ssh runs: a session slot and, when no master is
    /// running yet, the right to be the one that starts it. Held until dropped.
    pub fn prepare(&self, timeout: Duration) -> Result<Held, TmuxError> {
        // Waiting for a slot is queueing behind other calls, not the host being slow: on
        // a loaded machine 20 calls at once take longer than one call's timeout.
        let timeout = timeout.max(QUEUE_WAIT);
        let deadline = Instant::now() + timeout;
        let mut held = Held::default();
        // Cold master: exactly one caller connects; the others wait for its socket.
        if !self.master_alive() {
            let path = self.dir.join(format!("{}.master", self.key));
            loop {
                if self.master_alive() {
                    break;
                }
                match try_lock(&path) {
                    Ok(Some(l)) => {
                        if !self.master_alive() {
                            held.locks.push(l);
                            held.connects = true;
                        }
                        break;
                    }
                    Ok(None) => {}
                    Err(e) => return Err(self.lock_error(&path, e)),
                }
                if Instant::now() >= deadline {
                    return Err(self.busy_error(timeout, "the first connection"));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let start = std::process::id() as usize % self.slots;
        loop {
            for i in 0..self.slots {
                let n = (start + i) % self.slots;
                let path = self.dir.join(format!("{}.s{n}", self.key));
                match try_lock(&path) {
                    Ok(Some(l)) => {
                        held.locks.push(l);
                        return Ok(held);
                    }
                    Ok(None) => {}
                    Err(e) => return Err(self.lock_error(&path, e)),
                }
            }
            if Instant::now() >= deadline {
                return Err(self.busy_error(timeout, "a free ssh session"));
            }
            std::thread::sleep(Duration::from_millis(3));
        }
    }

    /// Make one call over this host's master: take a slot (and, cold, the right to
    /// connect) with [`prepare`](Self::prepare), run `attempt(connects, timeout)` (the
    /// ssh process), and make it once more when ssh's stderr shows the command never
    /// reached the master ([`fell_back`]). Returns the output and whether the last
    /// attempt was allowed to connect (for [`classify_call`]).
    pub fn with_master(
        &self,
        line: &str,
        input: Option<&[u8]>,
        timeout: Duration,
        max_stdout: usize,
        mut attempt: impl FnMut(bool, Duration) -> Result<Finished, TmuxError>,
    ) -> Result<(Finished, bool), TmuxError> {
        let mut again = true;
        loop {
            let held = self.prepare(timeout)?;
            let connects = held.connects();
            let budget = if connects {
                timeout.max(CONNECT_BUDGET)
            } else {
                timeout
            };
            // A warm master takes the session straight from us (no ssh client process);
            // anything short of a session that started goes the ssh client's way below.
            if !connects && mux_enabled() {
                match super::ssh_mux::session(&self.control_path(), line, input, budget, max_stdout)
                {
                    super::ssh_mux::Outcome::Done(out) => return Ok((out, false)),
                    super::ssh_mux::Outcome::TooLarge(limit) => {
                        return Err(TmuxError::TooLarge {
                            host: self.host.to_string(),
                            limit,
                        });
                    }
                    super::ssh_mux::Outcome::TimedOut => {
                        return Err(TmuxError::Timeout {
                            argv: self.ssh_argv(line.to_string(), false),
                            after: budget,
                        });
                    }
                    super::ssh_mux::Outcome::NotOpened(why) => crate::sys::state::log(&format!(
                        "ssh {}: the master did not take the session ({why}); running ssh",
                        self.host
                    )),
                }
            }
            let out = attempt(connects, budget)?;
            drop(held);
            if again
                && !connects
                && out.status.code() == Some(255)
                && fell_back(&String::from_utf8_lossy(&out.stderr)) == Some(true)
            {
                again = false;
                // A master that failed a hello is going away: give its socket a moment to
                // stop answering, so the second `prepare` sees it cold and reconnects.
                self.wait_master_gone(DYING_MASTER);
                continue;
            }
            return Ok((out, connects));
        }
    }

    /// Run one remote shell `line` of ours (every runtime word already quoted with
    /// [`crate::sys::shell`]) over the master, `input` on its stdin. An ssh failure
    /// (exit 255) is the typed [`TmuxError::Ssh`]; any other exit is the caller's to read.
    pub fn run_line(
        &self,
        line: &str,
        input: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<Finished, TmuxError> {
        self.run_line_bounded(line, input, timeout, crate::sys::process::MAX_STDOUT)
    }

    /// [`Remote::run_line`] keeping at most `max_stdout` bytes of the host's answer: past
    /// it the call ends ([`TmuxError::TooLarge`]).
    pub fn run_line_bounded(
        &self,
        line: &str,
        input: Option<&[u8]>,
        timeout: Duration,
        max_stdout: usize,
    ) -> Result<Finished, TmuxError> {
        let (out, connects) =
            self.with_master(line, input, timeout, max_stdout, |connects, budget| {
                let argv = self.ssh_argv(line.to_string(), connects);
                let mut cmd = crate::sys::process::command(&argv[0]);
                cmd.args(&argv[1..]);
                let limits = crate::sys::process::Limits {
                    max_stdout,
                    ..crate::sys::process::Limits::within(budget)
                };
                crate::sys::process::run_limited(cmd, input, limits).map_err(|e| match e {
                    crate::sys::process::Failure::TimedOut => TmuxError::Timeout {
                        argv: argv.clone(),
                        after: budget,
                    },
                    crate::sys::process::Failure::TooLarge(limit) => TmuxError::TooLarge {
                        host: self.host.to_string(),
                        limit,
                    },
                    e => TmuxError::Spawn {
                        argv: argv.clone(),
                        reason: e.to_string(),
                    },
                })
            })?;
        if out.status.code() == Some(255) {
            let stderr = String::from_utf8_lossy(&out.stderr).trim_end().to_string();
            return Err(TmuxError::Ssh {
                host: self.host.to_string(),
                ssh: self.host.ssh_hint(),
                kind: classify_call(&stderr, connects),
                stderr,
            });
        }
        Ok(out)
    }

    /// Run `f` holding this host's lock `name` (others with the same name wait): one
    /// process does a piece of first-time work (the version check) while the rest wait
    /// for its result instead of repeating it.
    pub fn exclusive<T>(
        &self,
        name: &str,
        f: impl FnOnce() -> Result<T, TmuxError>,
    ) -> Result<T, TmuxError> {
        let path = self.dir.join(format!("{}.{name}", self.key));
        let deadline = Instant::now() + QUEUE_WAIT;
        let _lock = loop {
            match try_lock(&path) {
                Ok(Some(l)) => break l,
                Ok(None) => {}
                Err(e) => return Err(self.lock_error(&path, e)),
            }
            if Instant::now() >= deadline {
                return Err(self.busy_error(QUEUE_WAIT, name));
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        f()
    }

    fn lock_error(&self, path: &Path, e: std::io::Error) -> TmuxError {
        TmuxError::Ssh {
            host: self.host.to_string(),
            ssh: self.host.ssh_hint(),
            kind: SshFailure::Local,
            stderr: format!("cannot lock {}: {e}", path.display()),
        }
    }

    fn busy_error(&self, timeout: Duration, what: &str) -> TmuxError {
        TmuxError::Ssh {
            host: self.host.to_string(),
            ssh: self.host.ssh_hint(),
            kind: SshFailure::Busy,
            stderr: format!(
                "waited {} ms for {what} to {}",
                timeout.as_millis(),
                self.host
            ),
        }
    }
}

/// Whether warm calls speak to the master's socket themselves ([`super::ssh_mux`]);
/// `TMUXMATE_SSH_MUX=0` makes every call start an ssh client, as before.
fn mux_enabled() -> bool {
    std::env::var_os("TMUXMATE_SSH_MUX").is_none_or(|v| v != "0")
}

/// Locks a call holds while its ssh runs (released on drop).
#[derive(Default)]
pub struct Held {
    locks: Vec<Flock<File>>,
    connects: bool,
}

impl Held {
    /// This call holds the cold-master lock: it is the one that opens the connection.
    pub fn connects(&self) -> bool {
        self.connects
    }
}

/// After an ssh exit 255 of a call that could not connect by itself: `None` when ssh did
/// not try to (the master was there), else whether the command certainly never ran: the
/// master was gone at `connect()`, failed the hello or the alive check, or refused the
/// session. A master lost after the session request was sent may have started the
/// command (`read from master failed`), so that call is not made again.
pub fn fell_back(stderr: &str) -> Option<bool> {
    // ssh names a ProxyCommand's peer "UNKNOWN port 65535" (`banner exchange: Connection
    // to UNKNOWN port 65535: Broken pipe`, `Connection closed by UNKNOWN port 65535`); a
    // call of ours has no other proxy (the command line's ProxyCommand wins over the
    // config's ProxyCommand and ProxyJump).
    if !stderr.contains("UNKNOWN port 65535") && !stderr.contains(NO_OWN_CONNECTION) {
        return None;
    }
    Some(!stderr.contains("read from master failed"))
}

fn try_lock(path: &Path) -> std::io::Result<Option<Flock<File>>> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    match Flock::lock(f, FlockArg::LockExclusiveNonblock) {
        Ok(l) => Ok(Some(l)),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, e)) => Err(std::io::Error::from(e)),
    }
}

/// The longest control dir that still leaves room for `/<16 hex>` plus ssh's temporary
/// `.<16 random>` suffix inside the 108-byte `sun_path` (with a margin).
const MAX_DIR: usize = 100 - 1 - 16 - 17;

/// The private directory for control sockets: `$XDG_RUNTIME_DIR/tmuxmate/ssh`, else the
/// state dir's `ssh/`, else `/tmp/tmuxmate-<uid>/ssh`: the first that is short enough and
/// of plain characters (the path goes into `-o ControlPath=`, which ssh splits on spaces
/// and expands `%` and `~` in). Created 0700; refused if someone else owns it or it is
/// open to others.
pub fn control_dir() -> Result<PathBuf, String> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(r) = std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        candidates.push(PathBuf::from(r).join("tmuxmate").join("ssh"));
    }
    candidates.push(crate::sys::state::state_dir().join("ssh"));
    candidates.push(PathBuf::from(format!(
        "/tmp/tmuxmate-{}/ssh",
        nix::unistd::getuid()
    )));
    let dir = candidates
        .into_iter()
        .find(|d| {
            let s = d.to_string_lossy();
            d.is_absolute()
                && s.len() <= MAX_DIR
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"/._-+".contains(&b))
        })
        .ok_or_else(|| {
            "no usable directory for ssh control sockets (each candidate was too long or held \
             unusual characters); set XDG_RUNTIME_DIR to a short private directory"
                .to_string()
        })?;
    private_dir(&dir)?;
    Ok(dir)
}

fn private_dir(dir: &Path) -> Result<(), String> {
    let fail = |e: String| {
        format!(
            "the ssh control directory {} is not usable: {e}; remove it or set XDG_RUNTIME_DIR \
             to a private directory of your own",
            dir.display()
        )
    };
    if !dir.is_dir() {
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent).map_err(|e| fail(e.to_string()))?;
            // The parent of the /tmp fallback is ours alone (the owner check below refuses
            // one someone else made first); the other parents are the user's own dirs.
            if parent.starts_with("/tmp") {
                let _ = std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o700));
            }
        }
        // Created 0700 in the one mkdir: a create-then-chmod would show a racing caller
        // (20 cold calls at once) a 0755 directory for a moment, which it must refuse.
        use std::os::unix::fs::DirBuilderExt;
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(fail(e.to_string())),
        }
    }
    let me = nix::unistd::getuid().as_raw();
    for d in [Some(dir), dir.parent()].into_iter().flatten() {
        let m = std::fs::symlink_metadata(d).map_err(|e| fail(e.to_string()))?;
        if m.uid() != me {
            return Err(fail(format!("{} is owned by uid {}", d.display(), m.uid())));
        }
    }
    let m = std::fs::symlink_metadata(dir).map_err(|e| fail(e.to_string()))?;
    if !m.is_dir() || m.mode() & 0o077 != 0 {
        return Err(fail(format!(
            "it is {} (mode {:o}), not a directory only its owner can enter",
            if m.is_dir() {
                "open to others"
            } else {
                "not a directory"
            },
            m.mode() & 0o777
        )));
    }
    Ok(())
}

/// 64-bit FNV-1a: a stable name for a host's socket (not a security boundary: the
/// directory is private).
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn feed(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Read ssh's stderr after exit 255 of a call made with (`connects`) or without the right
/// to open the connection (only the latter can have been stopped by [`NO_OWN_CONNECTION`];
/// the former may have a proxy of the user's own).
pub fn classify_call(stderr: &str, connects: bool) -> SshFailure {
    match (connects, fell_back(stderr)) {
        (false, Some(true)) => SshFailure::MasterLost,
        (false, Some(false)) => SshFailure::Dropped,
        _ => classify(stderr),
    }
}

/// Read ssh's stderr after exit 255.
pub fn classify(stderr: &str) -> SshFailure {
    let has = |s: &str| stderr.contains(s);
    if has("REMOTE HOST IDENTIFICATION HAS CHANGED") || has("differs from the key for the IP") {
        SshFailure::HostKeyChanged
    } else if has("Host key verification failed") || has("No ED25519 host key is known") {
        SshFailure::HostKeyUnknown
    } else if has("Permission denied (") || has("Too many authentication failures") {
        SshFailure::Auth
    } else if has("Connection refused")
        || has("Could not resolve hostname")
        || has("No route to host")
        || has("Network is unreachable")
        || has("Connection timed out")
        || has("Operation timed out")
        || has("kex_exchange_identification")
    {
        SshFailure::Unreachable
    } else if has("closed by remote host")
        || has("Connection reset")
        || has("Broken pipe")
        || has("mux_client")
        || has("Control socket connect")
        || has("Timeout, server")
    {
        SshFailure::Dropped
    } else {
        SshFailure::Other
    }
}

/// Whether stderr after a remote exit 126/127 says the shell found no tmux program.
pub fn no_tmux(status: Option<i32>, stderr: &str) -> bool {
    matches!(status, Some(126 | 127))
        && (stderr.contains("not found")
            || stderr.contains("No such file")
            || stderr.contains("Permission denied"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_parse_strictly() {
        let h = Host::parse("dev@build1.example:2222").unwrap();
        assert_eq!(h.user.as_deref(), Some("dev"));
        assert_eq!(h.host, "build1.example");
        assert_eq!(h.port, Some(2222));
        assert_eq!(h.to_string(), "dev@build1.example:2222");
        assert_eq!(Host::parse("box").unwrap().port, None);
        let v6 = Host::parse("u@[::1]:22").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", Some(22)));
        assert_eq!(v6.to_string(), "u@[::1]:22");
        for bad in [
            "",
            "-oProxyCommand=touch NEVER",
            "host -p 1",
            "a\nb",
            "a\tb",
            "u@-host",
            "-u@host",
            "h:0",
            "h:65536",
            "h:+1",
            "h:",
            "@h",
            "u@",
            "h;touch NEVER",
            "h$(x)",
            "u@h@h",
            "[::1",
            "[x]:1",
            "[::1]x",
            "h/x",
            "h%x",
            "日本",
        ] {
            let e = Host::parse(bad).unwrap_err();
            assert!(
                e.contains("refused") && e.contains("[user@]host[:port]"),
                "{bad:?}: {e}"
            );
        }
    }

    #[test]
    fn the_control_dir_must_be_private() {
        let base = std::env::temp_dir().join(format!("tmuxmate-ctl-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let d = base.join("ssh");
        private_dir(&d).unwrap();
        let mode = std::fs::metadata(&d).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = private_dir(&d).unwrap_err();
        assert!(
            e.contains("open to others") && e.contains("XDG_RUNTIME_DIR"),
            "{e}"
        );
        std::fs::remove_dir(&d).unwrap();
        std::os::unix::fs::symlink("/tmp", &d).unwrap();
        assert!(private_dir(&d).is_err(), "a symlink is not our directory");
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn ssh_failures_are_told_apart() {
        assert_eq!(
            classify("ssh: connect to host 127.0.0.1 port 1: Connection refused"),
            SshFailure::Unreachable
        );
        assert_eq!(
            classify("root@127.0.0.1: Permission denied (publickey)."),
            SshFailure::Auth
        );
        assert_eq!(
            classify(
                "No ED25519 host key is known for [127.0.0.1]:2 and you have requested strict checking.\r\nHost key verification failed."
            ),
            SshFailure::HostKeyUnknown
        );
        assert_eq!(
            classify("@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@"),
            SshFailure::HostKeyChanged
        );
        // A call that may not connect by itself: ssh tried its fallback (our proxy).
        let hello = "muxclient: master hello exchange failed\r\nbanner exchange: Connection to UNKNOWN port 65535: Broken pipe";
        assert_eq!(classify_call(hello, false), SshFailure::MasterLost);
        let sent = "mux_client_request_session: read from master failed: Broken pipe\r\nConnection closed by UNKNOWN port 65535";
        assert_eq!(classify_call(sent, false), SshFailure::Dropped);
        assert_eq!(fell_back(sent), Some(false), "the command may have run");
        // The connecting call may have a proxy of the user's own: read as before.
        assert_eq!(classify_call(hello, true), classify(hello));
        assert_eq!(fell_back("Connection refused"), None);
        assert!(no_tmux(Some(127), "bash: line 1: tmux: command not found"));
        assert!(!no_tmux(Some(1), "no server running on /tmp/x"));
    }
}
