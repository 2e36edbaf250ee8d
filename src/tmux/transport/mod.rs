//! How a [`crate::tmux::Tmux`] handle's calls reach its server: the [`Transport`], chosen
//! once when the handle is made.
//!
//! - [`Transport::Client`]: a server on this machine, every call through the `tmux` client
//!   (`TMUXMATE_TMUX` names the program, or `TMUXMATE_DIRECT=0`).
//! - [`Transport::Direct`]: a server on this machine, spoken to on its socket ([`direct`]:
//!   tmux's client protocol, only for a verified release, docs/tmux-versions.md) when a
//!   call qualifies, else through the `tmux` client as above.
//! - [`Transport::Ssh`]: a server on another host, through one OpenSSH master connection
//!   ([`ssh`]; a warm call hands its session to the master's socket, [`ssh_mux`]): the argv
//!   is quoted word by word into one `exec tmux ...` line (`crate::sys::shell`), stdin
//!   still carries the bulk text, and there is no local socket (docs/ssh.md).
//!
//! Owns: the choice, running one call's process the transport's way ([`spawn`]), the
//! version gate's question and the errors only a transport has (ssh's own failures, no
//! tmux on the host), and what the transport can do, asked by domain code instead of
//! "is it remote": [`Transport::sees_processes`], [`Transport::shares_files`],
//! [`Transport::may_run_its_commands`], and where a question about a new pane's start
//! (its program on PATH, its directory) is answered: [`Transport::ask_where_panes_start`].
//! Invariants: a handle's transport never changes (its clones share it); the direct path
//! is only an accelerator in front of the client (`direct`'s own invariants); each answer
//! is a fact of the transport, the same for every call; what the transport runs on a
//! host is tmux or a fixed script of ours, every value for either a quoted word.

pub mod direct;
pub mod spawn;
pub mod ssh;
pub mod ssh_mux;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::error::TmuxError;
use super::socket::{Socket, socket_dir, tmux_env_socket};
use crate::sys::process::Finished;
use ssh::{Host, Remote};

#[derive(Debug, Clone)]
pub enum Transport {
    /// The `tmux` client on this machine runs every call; `why` the direct path is off.
    Client { why: &'static str },
    /// The server's socket on this machine where a call qualifies, else the client.
    Direct(DirectPath),
    /// A server on another host, reached through ssh (`--host`).
    Ssh(Arc<Remote>),
}

/// What the direct socket path learns once per handle (and its clones).
#[derive(Debug, Clone, Default)]
pub struct DirectPath {
    /// The binary on PATH as the direct path knows it ([`direct::Peer`]); `None`: not a
    /// tested release (each server is then asked).
    peer: Arc<OnceLock<Option<direct::Peer>>>,
    /// `program` on PATH and its `-V` text ([`super::version::found`]), looked up once
    /// for the gate and the peer both: each lookup walks PATH and reads the version cache.
    found: Arc<OnceLock<Result<(PathBuf, String), TmuxError>>>,
}

impl DirectPath {
    /// The `program` on PATH as a [`direct::Peer`], found once: a server started from it
    /// is known without asking (`direct` checks every server it talks to).
    pub fn peer(&self, program: &str, timeout: Duration) -> Option<direct::Peer> {
        *self.peer.get_or_init(|| {
            let (bin, text) = self.found(program, timeout).as_ref().ok()?;
            direct::Peer::of(bin, text)
        })
    }

    fn found(&self, program: &str, timeout: Duration) -> &Result<(PathBuf, String), TmuxError> {
        self.found
            .get_or_init(|| super::version::found(program, timeout))
    }
}

impl Transport {
    /// The transport to this machine's server: the client alone when `TMUXMATE_TMUX`
    /// named the program (`explicit_program`: tests count or fake it) or
    /// `TMUXMATE_DIRECT=0`, else the direct path in front of it.
    pub fn local(explicit_program: bool) -> Transport {
        if explicit_program {
            Transport::Client {
                why: "TMUXMATE_TMUX names the tmux program",
            }
        } else if std::env::var_os("TMUXMATE_DIRECT").is_some_and(|v| v == "0") {
            Transport::Client {
                why: "TMUXMATE_DIRECT=0",
            }
        } else {
            Transport::Direct(DirectPath::default())
        }
    }

    /// The transport to a server on the host `remote` reaches.
    pub fn ssh(remote: Remote) -> Transport {
        Transport::Ssh(Arc::new(remote))
    }

    /// The host the server runs on, when it is not this machine (for messages).
    pub fn host(&self) -> Option<&Host> {
        match self {
            Transport::Ssh(r) => Some(&r.host),
            Transport::Client { .. } | Transport::Direct(_) => None,
        }
    }

    /// The server's panes run on this machine: their processes are in our `/proc`
    /// (foreground programs, an idle shell, the server's children) and their terminals
    /// are our devices. Else tmux's own `pane_current_command` is all there is.
    pub fn sees_processes(&self) -> bool {
        self.host().is_none()
    }

    /// The server's panes see this machine's files: a script or a result file in our
    /// state directory reaches them, and they can write there.
    pub fn shares_files(&self) -> bool {
        self.host().is_none()
    }

    /// A command found in the server's options may run on this machine: whoever set it
    /// could run it here anyway. A server on another host is another machine's text.
    pub fn may_run_its_commands(&self) -> bool {
        self.host().is_none()
    }

    /// Run the fixed POSIX shell `script` (`$1`... are `args`) where the server's panes
    /// start, when that is another host: in the environment and working directory a tmux
    /// client of ours gets there, which are a new pane's `PATH` and the directory a
    /// relative start directory is taken from (tmux gives a pane the `PATH` of the
    /// unattached client that creates it). `None`: the panes start on this machine, where
    /// our own process is that place. The script is text of ours (`'static`); the values
    /// arrive as words quoted by `crate::sys::shell` (docs/ssh.md, "How a call reaches a
    /// host").
    pub fn ask_where_panes_start(
        &self,
        script: &'static str,
        args: &[&str],
        timeout: Duration,
    ) -> Option<Result<Finished, TmuxError>> {
        let Transport::Ssh(r) = self else {
            return None;
        };
        // `sh`, not the login shell: the script is POSIX whatever the account's shell
        // (zsh does not split `$PATH` on IFS), and it inherits the login's environment.
        let mut words = vec!["sh", "-c", script, "sh"];
        words.extend_from_slice(args);
        let line = format!("exec {}", crate::sys::shell::join(&words));
        Some(r.run_line(&line, None, timeout))
    }

    /// The server's socket file for `socket`, when it is on this machine and can be known
    /// without tmux.
    pub fn socket_file(&self, socket: &Socket) -> Option<PathBuf> {
        if self.host().is_some() {
            return None;
        }
        match socket {
            Socket::Path(p) => Some(p.clone()),
            Socket::Name(n) => Some(socket_dir().join(n)),
            Socket::Default => {
                Some(tmux_env_socket().unwrap_or_else(|| socket_dir().join("default")))
            }
        }
    }

    /// The direct socket path, when calls may try it.
    pub fn direct(&self) -> Option<&DirectPath> {
        match self {
            Transport::Direct(d) => Some(d),
            Transport::Client { .. } | Transport::Ssh(_) => None,
        }
    }

    /// Why the direct path is off whatever the server (`None`: it may be on).
    pub fn direct_off(&self) -> Option<&'static str> {
        match self {
            Transport::Ssh(_) => Some("the server is on another host"),
            Transport::Client { why } => Some(why),
            Transport::Direct(_) => None,
        }
    }

    /// The version gate's answer for `program`: asked of the binary here (cached per
    /// binary), or `ask`ed over the connection (cached per host for a while).
    pub fn gate(
        &self,
        program: &str,
        timeout: Duration,
        ask: impl FnOnce() -> Result<String, TmuxError>,
    ) -> Result<String, TmuxError> {
        match self {
            Transport::Ssh(r) => super::version::check_remote(r, program, ask),
            Transport::Direct(d) => d
                .found(program, timeout)
                .clone()
                .and_then(|(_, text)| super::version::gate(&text).map(|()| text)),
            Transport::Client { .. } => super::version::check(program, timeout),
        }
    }

    /// The argv of the process that runs tmux's own argv `tmux_argv`; over ssh
    /// `connects` says whether it may open the connection itself
    /// ([`ssh::NO_OWN_CONNECTION`]).
    pub fn argv(&self, tmux_argv: &[String], connects: bool) -> Vec<String> {
        match self {
            Transport::Ssh(r) => r.ssh_argv(remote_line(tmux_argv), connects),
            Transport::Client { .. } | Transport::Direct(_) => tmux_argv.to_vec(),
        }
    }

    /// Run the tmux call `args` (tmux's own argv `tmux_argv`) as a process under
    /// `timeout`: the client here, or ssh. A call over ssh holds a session slot (and,
    /// cold, the right to connect) while it runs, and is made once more when its master
    /// was gone (`Remote::with_master`). The bool: whether the process that answered
    /// was allowed to open the connection (always, here).
    pub fn spawned(
        &self,
        args: &[&str],
        tmux_argv: &[String],
        input: Option<&[u8]>,
        timeout: Duration,
        isolate_env: bool,
    ) -> Result<(Finished, bool), TmuxError> {
        let Transport::Ssh(r) = self else {
            let out = spawn::run(args, tmux_argv, input, timeout, isolate_env)?;
            return Ok((out, true));
        };
        let line = remote_line(tmux_argv);
        let max = crate::sys::process::MAX_STDOUT;
        r.with_master(&line, input, timeout, max, |connects, timeout| {
            let argv = r.ssh_argv(line.clone(), connects);
            spawn::run(args, &argv, input, timeout, isolate_env)
        })
    }

    /// The typed error of a call whose process exited unsuccessfully (`argv` for the
    /// message; `connects` as [`Transport::spawned`] said).
    pub fn failed(
        &self,
        argv: Vec<String>,
        out: &Finished,
        connects: bool,
        socket: &Socket,
    ) -> TmuxError {
        let stderr = String::from_utf8_lossy(&out.stderr).trim_end().to_string();
        let code = out.status.code();
        let Transport::Ssh(r) = self else {
            return TmuxError::classify_on(argv, code, stderr, socket, None);
        };
        let host = r.host.to_string();
        if code == Some(255) && !stderr.starts_with("no server running") {
            return TmuxError::Ssh {
                kind: ssh::classify_call(&stderr, connects),
                ssh: r.host.ssh_hint(),
                host,
                stderr,
            };
        }
        if ssh::no_tmux(code, &stderr) {
            return TmuxError::RemoteNoTmux { host, stderr };
        }
        TmuxError::classify_on(argv, code, stderr, socket, Some(&host))
    }
}

/// The remote shell line that runs `tmux_argv`. `exec`: the remote shell becomes tmux
/// (one process less, and tmux's exit status is the session's).
fn remote_line(tmux_argv: &[String]) -> String {
    format!("exec {}", crate::sys::shell::join(tmux_argv))
}
