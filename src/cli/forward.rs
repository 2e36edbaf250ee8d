//! `--host` commands that run the tmuxmate on the host: a parsed command line turned back
//! into the host's command line, one remote call each, its answer (stdout, stderr, exit
//! status; JSON as is) handed to `cmd` to print unchanged. Part of the command-line layer
//! because its input is the parse (`crate::cli`); it prints nothing itself.
//!
//! Owns: the remote argv of each forwarded command, built from the parsed flags (never
//! from our own argv text), with `-L`/`-S` passed through so they select the server on
//! that host; text that is bulk or local (`--file`, `-`, a long `--message`) read here
//! and sent over stdin as `-`; `watch start`, which also records the job here so its
//! result reaches this machine's agents (`crate::watch::remote::pending`); and the one-call
//! route of `send -t TEXT` (the host's tmuxmate, when it has one), which falls back to
//! the several-call path.
//!
//! Invariants: a path the command reads on the host (`--project`) must be given: this
//! machine's current directory means nothing there, so it is refused rather than guessed.

use std::io::Read;
use std::time::Duration;

use crate::cli::{AgentAction, Command, MessageArgs, SideAction, WatchAction, WatchStartArgs};
use crate::error::Error;
use crate::remote::call::{self, Missing};
use crate::sys::process::Finished;
use crate::tmux::Socket;
use crate::tmux::transport::ssh::Remote;
use crate::watch::remote::pending;

/// A forwarded call's own time besides what the command waits for itself.
const MARGIN: Duration = Duration::from_secs(60);
/// Text longer than this goes over stdin instead of the command line.
const INLINE_MAX: usize = 16 * 1024;

/// What a forwarded command answered, for `cmd` to print.
pub enum Answer {
    /// The host's tmuxmate: its stdout, stderr and exit status, passed on as they came.
    Passed(Finished),
    /// `watch start --host`, recorded here: the job, and what the host said on stderr.
    Started {
        job: String,
        pane: String,
        host: String,
        stderr: Vec<u8>,
    },
}

/// Words of a remote command line, built flag by flag: values as `--flag=value` and the
/// positionals after a `--` (see [`W::words`]), so a value that starts with `-` is never
/// read as a flag over there.
#[derive(Default)]
struct W(Vec<String>, Vec<String>);

impl W {
    fn w(&mut self, s: impl Into<String>) -> &mut Self {
        self.0.push(s.into());
        self
    }
    /// A positional (a name, a job id, `-`).
    fn pos(&mut self, s: impl Into<String>) -> &mut Self {
        self.1.push(s.into());
        self
    }
    fn opt<T: ToString>(&mut self, flag: &str, v: Option<T>) -> &mut Self {
        if let Some(v) = v {
            self.0.push(format!("{flag}={}", v.to_string()));
        }
        self
    }
    /// The words: subcommand and flags, then `--` and the positionals.
    fn words(&self) -> Vec<String> {
        let mut v = self.0.clone();
        if !self.1.is_empty() {
            v.push("--".into());
            v.extend(self.1.iter().cloned());
        }
        v
    }
    fn flag(&mut self, flag: &str, on: bool) -> &mut Self {
        if on {
            self.0.push(flag.into());
        }
        self
    }
}

fn read_stdin() -> Result<Vec<u8>, Error> {
    let mut b = Vec::new();
    std::io::stdin()
        .read_to_end(&mut b)
        .map_err(|e| Error::new(format!("cannot read the text from stdin: {e}")))?;
    Ok(b)
}

fn read_file(p: &std::path::Path) -> Result<Vec<u8>, Error> {
    std::fs::read(p).map_err(|e| Error::new(format!("cannot read {}: {e}", p.display())))
}

/// The message flags for the host; the text itself over stdin when it is bulk or local.
fn message(w: &mut W, m: &MessageArgs) -> Result<Option<Vec<u8>>, Error> {
    if let Some(t) = &m.message {
        if t.len() <= INLINE_MAX {
            w.opt("--message", Some(t));
            return Ok(None);
        }
        w.pos("-");
        return Ok(Some(t.clone().into_bytes()));
    }
    if let Some(p) = &m.message_file {
        let b = read_file(p)?;
        w.pos("-");
        return Ok(Some(b));
    }
    if m.stdin.is_some() {
        w.pos("-");
        return Ok(Some(read_stdin()?));
    }
    Ok(None)
}

fn needs_project(what: &str) -> Error {
    Error::usage(format!(
        "refused: {what} with --host needs --project DIR (MCP: project), a directory on the host (this machine's current directory means nothing there)"
    ))
}

/// A forwarded command: its words, stdin, the time it may take and its name.
type Forwarded = (W, Option<Vec<u8>>, Duration, &'static str);

/// The remote argv, stdin, time allowed and name of a forwarded command (None: not one).
fn build(cmd: &Command) -> Result<Option<Forwarded>, Error> {
    let mut w = W::default();
    let mut input = None;
    let mut wait = Duration::from_secs(30);
    let what: &'static str = match cmd {
        Command::Watch { action } => match action {
            WatchAction::List { json } => {
                w.w("watch").w("list").flag("--json", *json);
                "watch list"
            }
            WatchAction::Show { job, json } => {
                w.w("watch")
                    .w("show")
                    .flag("--json", *json)
                    .pos(job.clone());
                "watch show"
            }
            WatchAction::Stop { job, json } => {
                w.w("watch")
                    .w("stop")
                    .flag("--json", *json)
                    .pos(job.clone());
                "watch stop"
            }
            WatchAction::Reattach => {
                w.w("watch").w("reattach");
                "watch reattach"
            }
            _ => return Ok(None),
        },
        Command::Agent { action } => match action {
            AgentAction::Start(a) => {
                let Some(p) = &a.project else {
                    return Err(needs_project("agent start"));
                };
                w.w("agent").w("start").pos(a.adapter.clone());
                w.opt("--project", Some(p.to_string_lossy()))
                    .opt("--permission-mode", a.permission_mode.as_ref())
                    .opt("--cli", a.cli.as_ref())
                    .opt("--ready-regex", a.ready_regex.as_ref())
                    .opt("--timeout", a.timeout.map(|t| format!("{t}ms")))
                    .opt("--timeout-s", a.timeout_s)
                    .flag("--json", a.json);
                wait = Duration::from_millis(crate::cli::timeout_or(
                    a.timeout,
                    a.timeout_s,
                    1000,
                    60_000,
                ));
                "agent start"
            }
            AgentAction::Send {
                name,
                msg,
                project,
                permission_mode,
                json,
            } => {
                // The session's contract is checked against the caller's project.
                let Some(p) = project else {
                    return Err(needs_project("agent send"));
                };
                w.w("agent").w("send").pos(name.clone());
                w.opt("--project", Some(p.to_string_lossy()))
                    .opt("--permission-mode", permission_mode.as_ref())
                    .flag("--json", *json);
                input = message(&mut w, msg)?;
                wait = Duration::from_secs(120);
                "agent send"
            }
            AgentAction::Wait {
                name,
                until,
                timeout,
                timeout_s,
                json,
            } => {
                w.w("agent").w("wait").pos(name.clone());
                w.opt("--until", until.as_ref())
                    .opt("--timeout", timeout.map(|t| format!("{t}ms")))
                    .opt("--timeout-s", *timeout_s)
                    .flag("--json", *json);
                wait = Duration::from_millis(crate::cli::timeout_or(
                    *timeout,
                    *timeout_s,
                    1000,
                    crate::bridge::turns::DEFAULT_WAIT_MS,
                ));
                "agent wait"
            }
            AgentAction::Reply { name, json } => {
                w.w("agent")
                    .w("reply")
                    .flag("--json", *json)
                    .pos(name.clone());
                "agent reply"
            }
            AgentAction::Ask {
                target,
                msg,
                project,
                permission_mode,
                timeout,
                timeout_s,
                json,
            } => {
                // An adapter starts there; a session's contract is checked against it.
                if project.is_none() {
                    return Err(needs_project("agent ask"));
                }
                w.w("agent").w("ask").pos(target.clone());
                w.opt("--project", project.as_ref().map(|p| p.to_string_lossy()))
                    .opt("--permission-mode", permission_mode.as_ref())
                    .opt("--timeout", timeout.map(|t| format!("{t}ms")))
                    .opt("--timeout-s", *timeout_s)
                    .flag("--json", *json);
                input = message(&mut w, msg)?;
                // Starting the CLI, then the turn.
                wait = Duration::from_millis(
                    crate::cli::timeout_or(
                        *timeout,
                        *timeout_s,
                        1000,
                        crate::bridge::turns::DEFAULT_WAIT_MS,
                    )
                    .saturating_add(60_000),
                );
                "agent ask"
            }
            AgentAction::List { json } => {
                w.w("agent").w("list").flag("--json", *json);
                "agent list"
            }
            AgentAction::Stop {
                name,
                confirm,
                json,
            } => {
                w.w("agent").w("stop").pos(name.clone());
                w.flag("--confirm", *confirm).flag("--json", *json);
                "agent stop"
            }
            AgentAction::Name { adapter, project } => {
                let Some(p) = project else {
                    return Err(needs_project("agent name"));
                };
                w.w("agent").w("name").pos(adapter.clone());
                w.opt("--project", Some(p.to_string_lossy()));
                "agent name"
            }
            AgentAction::Attach { .. } | AgentAction::Exec { .. } => return Ok(None),
        },
        Command::Side { action } => match action {
            SideAction::Status { target, json } => {
                w.w("side").w("status");
                w.opt("--target", target.as_ref()).flag("--json", *json);
                "side status"
            }
            SideAction::History {
                target,
                turn,
                contains,
                limit,
                json,
            } => {
                w.w("side").w("history");
                w.opt("--target", target.as_ref())
                    .opt("--turn", *turn)
                    .opt("--contains", contains.as_ref())
                    .opt("--limit", Some(*limit))
                    .flag("--json", *json);
                "side history"
            }
            SideAction::Report { target, text, json } => {
                // The host refuses a note over `REPORT_MAX` characters; longer than this
                // many bytes is always over it, so it is refused here with its words
                // instead of travelling on the command line.
                const _: () = assert!(crate::side::REPORT_MAX * 4 <= INLINE_MAX);
                if text.len() > INLINE_MAX {
                    return Err(Error::usage(format!(
                        "refused: the report is longer than {} characters; summarise it",
                        crate::side::REPORT_MAX
                    )));
                }
                w.w("side").w("report");
                w.opt("--target", target.as_ref())
                    .flag("--json", *json)
                    .pos(text.clone());
                "side report"
            }
            _ => return Ok(None),
        },
        Command::Agents(a) if a.action.is_none() => {
            w.w("agents").flag("--json", a.json);
            "agents"
        }
        _ => return Ok(None),
    };
    Ok(Some((w, input, wait + MARGIN, what)))
}

fn open(host: &str) -> Result<Remote, Error> {
    Remote::new(host).map_err(Error::usage)
}

/// Run a forwarded command on `host`; its answer.
pub fn run(host: &str, socket: Socket, cmd: Command) -> Result<Answer, Error> {
    let local = crate::tmux::Tmux::new(Socket::resolve(None, None));
    run_from(&local, host, socket, cmd)
}

/// [`run`] for a caller whose own tmux server is `local` (the MCP server's): a remote
/// watch's addressees are resolved there and its status line counts the job.
pub fn run_from(
    local: &crate::tmux::Tmux,
    host: &str,
    socket: Socket,
    cmd: Command,
) -> Result<Answer, Error> {
    let remote = open(host)?;
    if let Command::Watch {
        action: WatchAction::Start(a),
    } = cmd
    {
        return watch_start(local, &remote, &socket, a);
    }
    let Some((w, input, wait, what)) = build(&cmd)? else {
        return Err(Error::usage(
            "refused: this command does not run on another host",
        ));
    };
    let out = call::run(
        &remote,
        &socket,
        &[],
        &w.words(),
        input.as_deref(),
        wait,
        what,
    )?;
    Ok(Answer::Passed(out))
}

/// `watch start --host`: the job starts on the host with its result kept for this
/// machine's collector, and is recorded here for the agents it notifies.
fn watch_start(
    local: &crate::tmux::Tmux,
    remote: &Remote,
    socket: &Socket,
    a: WatchStartArgs,
) -> Result<Answer, Error> {
    // The addressees are this machine's agents: resolved here, as a local start does.
    let notify = match a.notify.as_deref() {
        Some(n) => crate::location::address::resolve(local, "--notify", n)?,
        None => {
            let me = crate::location::address::caller(local).agent;
            if let Some(w) = crate::location::address::default_notify_warning(&me) {
                eprintln!("tmuxmate: {w}");
            }
            me
        }
    };
    let mut to = vec![notify];
    for f in &a.forward {
        to.push(crate::location::address::resolve(local, "--forward", f)?);
    }
    to.sort();
    to.dedup();
    let collector = pending::collector();
    let mut w = W::default();
    w.w("remote")
        .w("watch-start")
        .w("--collector")
        .w(collector.clone());
    w.opt("--target", a.target.as_ref())
        .opt("--done-regex", a.done_regex.as_ref())
        .opt("--timeout", a.timeout.map(|t| format!("{t}ms")))
        .opt("--timeout-min", a.timeout_min.as_ref())
        .flag("--cancel-mode", a.cancel_mode)
        .w("--json")
        .w("--");
    for c in &a.cmd {
        w.w(c.clone());
    }
    let out = call::run(
        remote,
        socket,
        &[],
        &w.0,
        None,
        Duration::from_secs(60),
        "watch start",
    )?;
    if !out.status.success() {
        return Ok(Answer::Passed(out));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        Error::new(format!(
            "host {}: watch start answered something that is not its JSON ({e}): {}",
            remote.host,
            String::from_utf8_lossy(&out.stdout).trim()
        ))
    })?;
    let (Some(job), Some(pane)) = (v["jobId"].as_str(), v["paneId"].as_str()) else {
        return Err(Error::new(format!(
            "host {}: watch start's answer has no jobId/paneId: {v}",
            remote.host
        )));
    };
    let host = remote.host.to_string();
    // The local server whose status line counts the job (none: outside tmux).
    let local_socket = crate::side::digest::follower::socket_path(local).ok();
    let shown = pending::Shown {
        pane_id: pane,
        command: &crate::watch::start::command_line(&a.cmd),
        local_socket,
    };
    let recorded = pending::record(&host, socket, job, &to, &collector, shown);
    if let Ok(Some(local)) = &recorded {
        crate::watch::status::refresh(local);
    }
    if let Err(e) = recorded {
        // Nothing here would ever fetch its result: take the job back.
        let stop = vec!["watch".into(), "stop".into(), "--".into(), job.to_string()];
        let _ = call::run(
            remote,
            socket,
            &[],
            &stop,
            None,
            Duration::from_secs(30),
            "watch stop",
        );
        // A window the start made goes too (a pane given with -t is the user's).
        if a.target.is_none() {
            let t = crate::tmux::Tmux::remote(socket.clone(), remote.clone());
            let _ = t.run(&crate::targs![
                "kill-pane",
                "-t",
                crate::tmux::Arg::id(pane)
            ]);
        }
        return Err(crate::error::state_io(
            "record the remote watch job in",
            &pending::dir(),
            e,
        ));
    }
    Ok(Answer::Started {
        job: job.to_string(),
        pane: pane.to_string(),
        host,
        stderr: out.stderr,
    })
}

/// `send -t TEXT` in one call to the host's tmuxmate (its tmux calls then stay on the
/// host). `Ok(None)`: not this route (no tmuxmate there, or a form that must go the plain
/// way); the caller then takes the several-call path over ssh. (`capture -t %N` is one
/// call on its own: `crate::control::capture_list`.)
pub fn fast(host: &str, socket: &Socket, cmd: &Command) -> Result<Option<Answer>, Error> {
    let mut w = W::default();
    match cmd {
        // Inline text only: text read from stdin or a file could not be read twice.
        Command::Send(a)
            if a.target.is_some()
                && a.file.is_none()
                && a.text
                    .as_deref()
                    .is_some_and(|t| t != "-" && t.len() <= INLINE_MAX) =>
        {
            w.w("send");
            w.opt("--target", a.target.as_ref())
                .flag("--enter", a.enter)
                .flag("--cancel-mode", a.cancel_mode)
                .flag("--json", a.json)
                .w("--")
                .w(a.text.clone().unwrap_or_default());
        }
        _ => return Ok(None),
    }
    let remote = open(host)?;
    if call::known(&remote.host.to_string()) == Some(false) {
        return Ok(None);
    }
    match call::run(
        &remote,
        socket,
        &[],
        &w.0,
        None,
        crate::tmux::client::DEFAULT_TIMEOUT,
        "capture/send",
    ) {
        Ok(out) => Ok(Some(Answer::Passed(out))),
        Err(Missing::NotInstalled(_)) => Ok(None),
        Err(Missing::Other(e)) => Err(e),
    }
}
