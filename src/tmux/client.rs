//! The one place that runs the `tmux` binary.
//!
//! Owns: socket selection (`-L`/`-S`, else the server in `$TMUX`, else tmux's default),
//! the per-call timeout, stdin handling (closed unless given), and the typed errors that
//! carry argv, exit status and stderr. Invariants: no other module spawns tmux; every
//! argument is passed as one argv element (never through a shell) and is an
//! [`super::arg::Arg`] or a literal of ours, so user text reaches tmux only encoded for the
//! position it takes (bulk text such as send/paste payloads goes on stdin, or, under
//! 12 KiB, as a `set-buffer` argument over the socket only: [`Tmux::run_on_socket`],
//! `crate::control::pane_input`); a call that can
//! start a server (`new-session`) runs with `server_env` only, because a new server copies
//! its first client's whole environment into its global environment, where every later
//! pane, hook and `show-environment -g` would see the caller's secrets.
//!
//! A remote server (`--host`) is the same wrapper with another transport: the argv is
//! quoted word by word into one `ssh ... host -- exec tmux ...` line (`super::remote`,
//! `crate::sys::shell`), stdin still carries the bulk text, and the direct-socket fast
//! path is off (there is no local socket).

use std::path::PathBuf;
use std::time::Duration;

use super::arg::Args;
use super::error::TmuxError;
use super::remote::{self, Remote};
use super::socket::{Socket, socket_dir, tmux_env_socket};
use crate::sys::process;

/// `program` as an absolute path when PATH has it (cached per process), else as given.
fn resolve_program(program: &str) -> PathBuf {
    static CACHE: std::sync::OnceLock<std::sync::Mutex<Vec<(String, PathBuf)>>> =
        std::sync::OnceLock::new();
    if program.contains('/') {
        return PathBuf::from(program);
    }
    let cache = CACHE.get_or_init(Default::default);
    if let Ok(c) = cache.lock()
        && let Some((_, p)) = c.iter().find(|(n, _)| n == program)
    {
        return p.clone();
    }
    let found = crate::sys::which::which(program);
    let p = found.unwrap_or_else(|| PathBuf::from(program));
    if let Ok(mut c) = cache.lock() {
        c.push((program.to_string(), p.clone()));
    }
    p
}

/// True for a call that starts the server when none runs.
fn may_start_server(args: &[&str]) -> bool {
    matches!(
        args.first(),
        Some(&"new-session") | Some(&"new") | Some(&"start-server") | Some(&"start")
    )
}

/// Default timeout for one tmux call; generous because a loaded machine can take 100 ms.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub struct Tmux {
    pub socket: Socket,
    pub timeout: Duration,
    /// The binary to run; `TMUXMATE_TMUX` overrides it (tests use it to simulate "missing").
    pub program: String,
    /// Drop `TMUX`/`TMUX_PANE` from the child's environment (starting a private server).
    pub isolate_env: bool,
    /// `TMUXMATE_TMUX` named the program: always run it (tests count or fake it).
    pub explicit_program: bool,
    /// The server is on another host, reached through ssh (`--host`).
    pub remote: Option<std::sync::Arc<Remote>>,
    /// The version gate's answer, asked once per client (and its clones) before its first
    /// call: every command meets the same gate, whichever handler runs it.
    gate: std::sync::Arc<std::sync::OnceLock<Result<String, TmuxError>>>,
    /// The binary on PATH as the direct socket path knows it (`super::direct::Peer`),
    /// found once per client; `None`: not a tested release (each server is then asked).
    peer: std::sync::Arc<std::sync::OnceLock<Option<super::direct::Peer>>>,
}

/// What sees a call's stdout as it arrives ([`Tmux::run_tapped`]).
pub trait Tap {
    /// The next bytes of stdout.
    fn chunk(&mut self, b: &[u8]);
    /// The output is read again from its start: forget what came before.
    fn restart(&mut self);
}

impl Tmux {
    pub fn new(socket: Socket) -> Tmux {
        let explicit = std::env::var("TMUXMATE_TMUX").ok();
        // TMUXMATE_TIMEOUT_MS: how long one tmux call may take (tests use a short one).
        let timeout = std::env::var("TMUXMATE_TIMEOUT_MS")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&ms| ms > 0)
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_TIMEOUT);
        Tmux {
            socket,
            timeout,
            explicit_program: explicit.is_some(),
            program: explicit.unwrap_or_else(|| "tmux".into()),
            isolate_env: false,
            remote: None,
            gate: Default::default(),
            peer: Default::default(),
        }
    }

    /// `None`: every call goes through the real tmux client. Else the direct path may be
    /// tried, with the binary on PATH when it is a tested release (a server started from
    /// it is known without asking; `super::direct` checks every server it talks to).
    fn direct_peer(&self) -> Option<Option<super::direct::Peer>> {
        if self.direct_off().is_some() {
            return None;
        }
        Some(*self.peer.get_or_init(|| {
            let (bin, text) = super::version::found(&self.program, self.timeout).ok()?;
            super::direct::Peer::of(&bin, &text)
        }))
    }

    /// Why the direct path is off whatever the server (`None`: it may be on).
    fn direct_off(&self) -> Option<&'static str> {
        if self.remote.is_some() {
            Some("the server is on another host")
        } else if self.explicit_program {
            Some("TMUXMATE_TMUX names the tmux program")
        } else if std::env::var_os("TMUXMATE_DIRECT").is_some_and(|v| v == "0") {
            Some("TMUXMATE_DIRECT=0")
        } else {
            None
        }
    }

    /// What `--version` and `doctor` say of the tmux found and the direct path, in one
    /// phrase; `server`: also ask the running server's binary (doctor).
    pub fn describe_direct(&self, server: bool) -> String {
        use super::direct::Server;
        let tested = super::version::TESTED.join(", ");
        if let Some(why) = self.direct_off() {
            return format!("direct socket path off ({why})");
        }
        let found = match super::version::found(&self.program, self.timeout) {
            Ok((_, text)) if super::direct::Wire::of(&text).is_some() => {
                "a tested release".to_string()
            }
            Ok(_) => format!("not a release tmuxmate was tested on ({tested})"),
            Err(e) => e.to_string(),
        };
        let known = self.direct_peer().flatten();
        let running = if server {
            self.socket_file()
                .and_then(|p| super::direct::server_at(&p, known, self.timeout))
        } else {
            None
        };
        match (running, known) {
            (Some(Server::Tested(_, v)), _) if !v.is_empty() => format!(
                "{found}; the running server is {v} (another binary), direct socket path on for it"
            ),
            (Some(Server::Tested(..)), _) | (None, Some(_)) => {
                format!("{found}; direct socket path on")
            }
            (Some(Server::Untested(v)), _) => format!(
                "{found}; the running server is {v}, not a tested release: direct socket path \
                 off, every call runs the tmux client"
            ),
            (Some(Server::Unknown), _) => format!(
                "{found}; the running server's binary cannot be checked: direct socket path off"
            ),
            (None, None) => {
                format!("{found}; direct socket path off, every call runs the tmux client")
            }
        }
    }

    /// tmux is installed (on the host, for a remote client) and at least
    /// [`super::version::MINIMUM`]; cached per binary (per host for a while), so on the
    /// hot path this is a `PATH` lookup and one small file read.
    pub fn check_version(&self) -> Result<(), TmuxError> {
        self.version_text().map(|_| ())
    }

    /// The release of the tmux this client runs (on the host, for a remote one), for
    /// behaviour that differs between releases; `None` when the gate refused it.
    pub fn version(&self) -> Option<super::version::Version> {
        super::version::parse(&self.version_text().ok()?)
    }

    fn version_text(&self) -> Result<String, TmuxError> {
        self.gate
            .get_or_init(|| match &self.remote {
                Some(r) => super::version::check_remote(r, &self.program, || self.run(&["-V"])),
                None => super::version::check(&self.program, self.timeout),
            })
            .clone()
    }

    /// A client for the server selected by `socket` on the host `remote` reaches.
    /// `TMUXMATE_REMOTE_TMUX` names the tmux program there (default: `tmux` on its PATH).
    pub fn remote(socket: Socket, remote: Remote) -> Tmux {
        let mut t = Tmux::new(socket);
        t.program = std::env::var("TMUXMATE_REMOTE_TMUX")
            .ok()
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "tmux".into());
        t.explicit_program = false;
        t.remote = Some(std::sync::Arc::new(remote));
        t
    }

    pub fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// The full argv for a call (program first), for errors and logs.
    pub fn argv<A: Args + ?Sized>(&self, args: &A) -> Vec<String> {
        self.argv_of(&args.argv())
    }

    fn argv_of(&self, args: &[&str]) -> Vec<String> {
        self.argv_connecting(args, true)
    }

    /// The argv; for a remote server `connects` says whether this ssh may open the
    /// connection itself (see `remote::NO_OWN_CONNECTION`).
    fn argv_connecting(&self, args: &[&str], connects: bool) -> Vec<String> {
        match &self.remote {
            Some(r) => r.ssh_argv(self.remote_line(args), connects),
            None => self.tmux_argv(args),
        }
    }

    /// tmux's own argv for `args` (program, `-u`, the socket flags, then `args`).
    fn tmux_argv(&self, args: &[&str]) -> Vec<String> {
        // -u: without a UTF-8 locale tmux prints non-ASCII as '_' while #{n:} still counts
        // the original bytes, which would break the record framing.
        let mut v = vec![self.program.clone(), "-u".to_string()];
        v.extend(self.socket.args());
        v.extend(args.iter().map(|s| s.to_string()));
        v
    }

    /// The remote shell line that runs tmux with `args`. `exec`: the remote shell becomes
    /// tmux (one process less, and tmux's exit status is the session's).
    fn remote_line(&self, args: &[&str]) -> String {
        format!("exec {}", crate::sys::shell::join(&self.tmux_argv(args)))
    }

    /// Run tmux with `args`, stdin closed; stdout on success.
    pub fn run<A: Args + ?Sized>(&self, args: &A) -> Result<String, TmuxError> {
        let out = self.run_bytes(args, None)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// Replace this process with an interactive tmux (for `attach`); returns only on error.
    pub fn exec_interactive<A: Args + ?Sized>(&self, args: &A) -> std::io::Error {
        if let Err(e) = self.check_version() {
            return std::io::Error::other(e.to_string());
        }
        let argv = self.argv(args);
        let mut cmd = process::command(&argv[0]);
        cmd.args(&argv[1..]);
        process::exec(cmd)
    }

    /// The socket file this client talks to, when it can be known without tmux.
    pub fn socket_file(&self) -> Option<PathBuf> {
        if self.is_remote() {
            return None;
        }
        match &self.socket {
            Socket::Path(p) => Some(p.clone()),
            Socket::Name(n) => Some(socket_dir().join(n)),
            Socket::Default => {
                Some(tmux_env_socket().unwrap_or_else(|| socket_dir().join("default")))
            }
        }
    }

    /// Run and return raw stdout bytes.
    pub fn run_bytes<A: Args + ?Sized>(
        &self,
        args: &A,
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, TmuxError> {
        let argv = args.argv();
        let out = self.run_argv(&argv, input)?;
        Ok(self.unprinted(&argv, out))
    }

    /// [`Tmux::run_bytes`] of a query, with `tap` seeing its stdout while it arrives over
    /// the socket (a caller stores a long capture as it comes). Through the tmux client
    /// (another host, another version), `tap` is restarted and sees the whole output once
    /// it is in; a query that was cut off and asked again restarts it too.
    pub fn run_tapped<A: Args + ?Sized>(
        &self,
        args: &A,
        tap: &mut dyn Tap,
    ) -> Result<Vec<u8>, TmuxError> {
        let argv = args.argv();
        self.check_version()?;
        let out = match self.socket_argv(&argv, &mut |b| tap.chunk(b)) {
            Some(r) => r?,
            None => {
                tap.restart();
                let out = self.run_argv(&argv, None)?;
                tap.chunk(&out);
                out
            }
        };
        Ok(self.unprinted(&argv, out))
    }

    /// What a command printed, as the values it printed: tmux 3.4 writes a `$` that
    /// starts a variable name (`$HOME`, `$_x`, `${`) as `\$` in everything a command
    /// prints for a client (`display-message -p`, `list-*`, `show-options`; not
    /// `capture-pane`'s text), so a name or option holding `$HOME` read back longer than
    /// its `#{n:}` length. Every such `$` got exactly one `\` in front, so dropping the
    /// `\` of each `\$` + name start, left to right, gives the value back.
    /// docs/tmux-versions.md.
    fn unprinted(&self, argv: &[&str], out: Vec<u8>) -> Vec<u8> {
        // The gate's answer as it stands (every call but the gate's own `-V` has met it;
        // asking it here would re-enter its initialisation from inside it).
        let escapes = self
            .gate
            .get()
            .and_then(|r| r.as_ref().ok())
            .and_then(|t| super::version::parse(t))
            .is_some_and(|v| v.escapes_dollar_in_printed_output());
        if !escapes
            || !out.windows(2).any(|w| w == b"\\$")
            || argv
                .split(|a| *a == ";")
                .any(|c| c.first() == Some(&"capture-pane"))
        {
            return out;
        }
        super::version::undo_dollar_escapes(&out)
    }

    /// Run over the server's socket only (`super::direct`), never by starting the tmux
    /// client: `None` when that is not possible (remote, a program named by
    /// `TMUXMATE_TMUX`, a command the socket path does not take, no answering server)
    /// and nothing was sent. For text that must not appear in a client's argv.
    pub fn run_on_socket<A: Args + ?Sized>(&self, args: &A) -> Option<Result<Vec<u8>, TmuxError>> {
        if let Err(e) = self.check_version() {
            return Some(Err(e));
        }
        self.socket_argv(&args.argv(), &mut |_| {})
    }

    /// Run a query, with `meanwhile` running alongside while the server works on it:
    /// over the direct socket it starts once the query is sent and gets the server's pid
    /// (for reading the server's children in `/proc` meanwhile, `crate::control::list`);
    /// through the tmux client (remote, `TMUXMATE_TMUX`, a socket surprise) it runs after
    /// the answer, with `None`. The answer is exactly [`Tmux::run_bytes`]'s.
    pub fn query_while<A: Args + ?Sized, R: Send>(
        &self,
        args: &A,
        meanwhile: impl FnOnce(Option<i32>) -> R + Send,
    ) -> (Result<Vec<u8>, TmuxError>, R) {
        let argv = args.argv();
        if let Err(e) = self.check_version() {
            return (Err(e), meanwhile(None));
        }
        let direct = !self.explicit_program
            && self.remote.is_none()
            && super::direct::eligible(&argv) == super::direct::Use::Query;
        let path = if direct {
            self.direct_peer().zip(self.socket_file())
        } else {
            None
        };
        let meanwhile = match path {
            Some((peer, p)) => {
                match super::direct::query_while(&p, peer, &argv, self.timeout, meanwhile) {
                    Ok((Some(r), m)) => {
                        let out = self
                            .direct_answer(&argv, r)
                            .map(|o| self.unprinted(&argv, o));
                        return (out, m);
                    }
                    // The answer was lost: the client asks again (a query may be repeated).
                    Ok((None, m)) => {
                        let out = self.run_argv(&argv, None).map(|o| self.unprinted(&argv, o));
                        return (out, m);
                    }
                    Err(f) => f,
                }
            }
            None => meanwhile,
        };
        let out = self.run_argv(&argv, None).map(|o| self.unprinted(&argv, o));
        (out, meanwhile(None))
    }

    /// Run a server-only write (removing our own pane) without waiting for its answer
    /// when the direct socket can carry it (`super::direct::send_only`): the server runs
    /// it before anything a later call asks. Else (remote, `TMUXMATE_TMUX`, no socket)
    /// it runs as [`Tmux::run`] does; an error is only that path's.
    pub fn run_unanswered<A: Args + ?Sized>(&self, args: &A) -> Result<(), TmuxError> {
        let argv = args.argv();
        self.check_version()?;
        if !self.explicit_program
            && self.remote.is_none()
            && super::direct::eligible(&argv) == super::direct::Use::Write
            && let Some(peer) = self.direct_peer()
            && let Some(p) = self.socket_file()
            && let Some(whole) = super::direct::send_only(&p, peer, &argv, self.timeout)
        {
            return if whole {
                Ok(())
            } else {
                Err(TmuxError::Spawn {
                    argv: self.argv_of(&argv),
                    reason: "the connection to the tmux server broke while sending (the command may have run)".into(),
                })
            };
        }
        self.run_argv(&argv, None).map(|_| ())
    }

    fn socket_argv(
        &self,
        args: &[&str],
        tap: &mut dyn FnMut(&[u8]),
    ) -> Option<Result<Vec<u8>, TmuxError>> {
        let how = super::direct::eligible(args);
        if self.explicit_program || self.remote.is_some() || how == super::direct::Use::No {
            return None;
        }
        let peer = self.direct_peer()?;
        let r = super::direct::run(&self.socket_file()?, peer, args, self.timeout, how, tap)?;
        Some(self.direct_answer(args, r))
    }

    /// A direct-socket reply as the wrapper's answer (a timeout and a failure typed as
    /// the client's would be).
    fn direct_answer(&self, args: &[&str], r: super::direct::Reply) -> Result<Vec<u8>, TmuxError> {
        if r.timed_out {
            return Err(TmuxError::Timeout {
                argv: self.argv_of(args),
                after: self.timeout,
            });
        }
        if r.status == 0 {
            return Ok(r.stdout);
        }
        let stderr = String::from_utf8_lossy(&r.stderr).trim_end().to_string();
        Err(TmuxError::classify(
            self.argv_of(args),
            Some(r.status),
            stderr,
            &self.socket,
        ))
    }

    fn run_argv(&self, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, TmuxError> {
        // `-V` is the gate's own question (asked over ssh for a remote server).
        if args != ["-V"] {
            self.check_version()?;
        }
        // Queries and our server-only writes go straight to the server's socket when they
        // can (no client process); a surprise before a write is sent, or any surprise in
        // a query, falls through to the real tmux client below.
        if input.is_none()
            && let Some(r) = self.socket_argv(args, &mut |_| {})
        {
            return r;
        }
        let argv = self.argv_of(args);
        let Some(r) = &self.remote else {
            return self.finish(&argv, self.spawn(args, &argv, input, self.timeout)?, true);
        };
        // A remote call holds a session slot (and, cold, the right to connect) while ssh
        // runs, and is made once more when its master was gone (`Remote::with_master`).
        let line = self.remote_line(args);
        let max = crate::sys::process::MAX_STDOUT;
        let (out, connects) =
            r.with_master(&line, input, self.timeout, max, |connects, timeout| {
                self.spawn(args, &self.argv_connecting(args, connects), input, timeout)
            })?;
        self.finish(&argv, out, connects)
    }

    /// Run `argv` (the call `args`) once under `timeout`.
    fn spawn(
        &self,
        args: &[&str],
        argv: &[String],
        input: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<process::Finished, TmuxError> {
        // The absolute path, found once: the child then makes one execve, not one per PATH
        // entry (this is on the per-turn hot path).
        let program = resolve_program(&argv[0]);
        let mut cmd = process::command(&program);
        cmd.args(&argv[1..]);
        if may_start_server(args) {
            cmd.env_clear().envs(
                std::env::vars_os()
                    .filter(|(k, _)| k.to_str().is_some_and(super::env::server_env_allowed)),
            );
        }
        if self.isolate_env {
            cmd.env_remove("TMUX").env_remove("TMUX_PANE");
        }
        match process::run(cmd, input, timeout) {
            Ok(out) => Ok(out),
            Err(process::Failure::NotFound) => Err(TmuxError::NotInstalled {
                program: argv[0].clone(),
            }),
            Err(process::Failure::TimedOut) => Err(TmuxError::Timeout {
                argv: argv.to_vec(),
                after: timeout,
            }),
            Err(
                e @ (process::Failure::Spawn(_)
                | process::Failure::Wait(_)
                | process::Failure::TooLarge(_)),
            ) => Err(TmuxError::Spawn {
                argv: argv.to_vec(),
                reason: e.to_string(),
            }),
        }
    }

    /// The answer of a finished call, or its typed error (`argv` for messages; `connects`:
    /// a remote call that was allowed to open the connection).
    fn finish(
        &self,
        argv: &[String],
        out: process::Finished,
        connects: bool,
    ) -> Result<Vec<u8>, TmuxError> {
        if out.status.success() {
            return Ok(out.stdout);
        }
        let stderr = String::from_utf8_lossy(&out.stderr).trim_end().to_string();
        if let Some(r) = &self.remote {
            let host = r.host.to_string();
            if out.status.code() == Some(255) && !stderr.starts_with("no server running") {
                return Err(TmuxError::Ssh {
                    kind: remote::classify_call(&stderr, connects),
                    ssh: r.host.ssh_hint(),
                    host,
                    stderr,
                });
            }
            if remote::no_tmux(out.status.code(), &stderr) {
                return Err(TmuxError::RemoteNoTmux { host, stderr });
            }
        }
        let host = self.remote.as_ref().map(|r| r.host.to_string());
        Err(TmuxError::classify_on(
            argv.to_vec(),
            out.status.code(),
            stderr,
            &self.socket,
            host.as_deref(),
        ))
    }
}
