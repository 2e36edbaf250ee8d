//! The one place that runs the `tmux` binary (through its [`Transport`]).
//!
//! Owns: socket selection (`-L`/`-S`, else the server in `$TMUX`, else tmux's default),
//! the per-call timeout, stdin handling (closed unless given), and the typed errors that
//! carry argv, exit status and stderr. Invariants: no other module spawns tmux; every
//! argument is passed as one argv element (never through a shell) and is an
//! [`super::arg::Arg`] or a literal of ours, so user text reaches tmux only encoded for the
//! position it takes (bulk text such as send/paste payloads goes on stdin, or, under
//! 12 KiB, as a `set-buffer` argument over the socket only: [`Tmux::run_on_socket`],
//! `crate::control::pane_input`); a call that can
//! start a server (`new-session`) runs with `server_env` only (`super::transport::spawn`
//! says why).
//!
//! How a call travels (the tmux client here, this machine's server socket directly, or
//! ssh to another host) is the handle's [`Transport`], chosen once when it is made; this
//! wrapper asks it, never which one it is.

use std::path::PathBuf;
use std::time::Duration;

use super::arg::Args;
use super::error::TmuxError;
use super::socket::Socket;
use super::tap::{Tap, Untapped};
use super::transport::{Transport, direct, ssh::Remote};

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
    /// How calls reach the server, chosen once (its clones share it).
    transport: Transport,
    /// The version gate's answer, asked once per client (and its clones) before its first
    /// call: every command meets the same gate, whichever handler runs it.
    gate: std::sync::Arc<std::sync::OnceLock<Result<String, TmuxError>>>,
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
            transport: Transport::local(explicit.is_some()),
            program: explicit.unwrap_or_else(|| "tmux".into()),
            isolate_env: false,
            gate: Default::default(),
        }
    }

    /// How this client's calls reach the server, and so what it can do (domain code asks
    /// it: [`Transport::sees_processes`], ...).
    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    /// `None`: every call goes through the real tmux client. Else the direct path may be
    /// tried, with the binary on PATH when it is a tested release (a server started from
    /// it is known without asking; `direct` checks every server it talks to).
    fn direct_peer(&self) -> Option<Option<direct::Peer>> {
        let d = self.transport.direct()?;
        Some(d.peer(&self.program, self.timeout))
    }

    /// What `--version` and `doctor` say of the tmux found and the direct path, in one
    /// phrase; `server`: also ask the running server's binary (doctor).
    pub fn describe_direct(&self, server: bool) -> String {
        use direct::Server;
        let tested = super::version::TESTED.join(", ");
        if let Some(why) = self.transport.direct_off() {
            return format!("direct socket path off ({why})");
        }
        let found = match super::version::found(&self.program, self.timeout) {
            Ok((_, text)) if direct::Wire::of(&text).is_some() => "a tested release".to_string(),
            Ok(_) => format!("not a release tmuxmate was tested on ({tested})"),
            Err(e) => e.to_string(),
        };
        let known = self.direct_peer().flatten();
        let running = if server {
            self.socket_file()
                .and_then(|p| direct::server_at(&p, known, self.timeout))
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
            .get_or_init(|| {
                self.transport
                    .gate(&self.program, self.timeout, || self.run(&["-V"]))
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
        t.transport = Transport::ssh(remote);
        t
    }

    /// The full argv for a call (program first), for errors and logs.
    pub fn argv<A: Args + ?Sized>(&self, args: &A) -> Vec<String> {
        self.argv_of(&args.argv())
    }

    fn argv_of(&self, args: &[&str]) -> Vec<String> {
        self.argv_connecting(args, true)
    }

    /// The argv; for a remote server `connects` says whether this ssh may open the
    /// connection itself (see `ssh::NO_OWN_CONNECTION`).
    fn argv_connecting(&self, args: &[&str], connects: bool) -> Vec<String> {
        self.transport.argv(&self.tmux_argv(args), connects)
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
        let mut cmd = crate::sys::process::command(&argv[0]);
        cmd.args(&argv[1..]);
        crate::sys::process::exec(cmd)
    }

    /// The socket file this client talks to, when it can be known without tmux.
    pub fn socket_file(&self) -> Option<PathBuf> {
        self.transport.socket_file(&self.socket)
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
        let out = match self.socket_argv(&argv, tap) {
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
        // The list with a capture is left alone before its text is looked at: a whole
        // scrollback is megabytes to search.
        if !escapes
            || argv
                .split(|a| *a == ";")
                .any(|c| c.first() == Some(&"capture-pane"))
            || !out.windows(2).any(|w| w == b"\\$")
        {
            return out;
        }
        super::version::undo_dollar_escapes(&out)
    }

    /// Run over the server's socket only (`direct`), never by starting the tmux
    /// client: `None` when that is not possible (remote, a program named by
    /// `TMUXMATE_TMUX`, a command the socket path does not take, no answering server)
    /// and nothing was sent. For text that must not appear in a client's argv.
    pub fn run_on_socket<A: Args + ?Sized>(&self, args: &A) -> Option<Result<Vec<u8>, TmuxError>> {
        if let Err(e) = self.check_version() {
            return Some(Err(e));
        }
        self.socket_argv(&args.argv(), &mut Untapped)
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
        let path = if direct::eligible(&argv) == direct::Use::Query {
            self.direct_peer().zip(self.socket_file())
        } else {
            None
        };
        let meanwhile = match path {
            Some((peer, p)) => {
                match direct::query_while(&p, peer, &argv, self.timeout, meanwhile) {
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
    /// when the direct socket can carry it (`direct::send_only`): the server runs
    /// it before anything a later call asks. Else (remote, `TMUXMATE_TMUX`, no socket)
    /// it runs as [`Tmux::run`] does; an error is only that path's.
    pub fn run_unanswered<A: Args + ?Sized>(&self, args: &A) -> Result<(), TmuxError> {
        let argv = args.argv();
        self.check_version()?;
        if direct::eligible(&argv) == direct::Use::Write
            && let Some(peer) = self.direct_peer()
            && let Some(p) = self.socket_file()
            && let Some(whole) = direct::send_only(&p, peer, &argv, self.timeout)
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

    fn socket_argv(&self, args: &[&str], tap: &mut dyn Tap) -> Option<Result<Vec<u8>, TmuxError>> {
        let how = direct::eligible(args);
        if how == direct::Use::No {
            return None;
        }
        let peer = self.direct_peer()?;
        let r = direct::run(&self.socket_file()?, peer, args, self.timeout, how, tap)?;
        Some(self.direct_answer(args, r))
    }

    /// A direct-socket reply as the wrapper's answer (a timeout and a failure typed as
    /// the client's would be).
    fn direct_answer(&self, args: &[&str], r: direct::Reply) -> Result<Vec<u8>, TmuxError> {
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
            && let Some(r) = self.socket_argv(args, &mut Untapped)
        {
            return r;
        }
        let (out, connects) = self.transport.spawned(
            args,
            &self.tmux_argv(args),
            input,
            self.timeout,
            self.isolate_env,
        )?;
        if out.status.success() {
            return Ok(out.stdout);
        }
        let argv = self.argv_of(args);
        Err(self.transport.failed(argv, &out, connects, &self.socket))
    }
}
