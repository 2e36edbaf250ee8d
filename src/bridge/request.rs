//! The bridge's operations as requests (`agent start|send|wait|reply|ask|list|stop|name`):
//! one type each, the command line's flags (`--json` aside), what `--host` sends to the
//! host's tmuxmate, and (`agent ask`) what the MCP tool hands on; and the function the
//! command line, a host's `tmuxmate call` and the MCP tool all run.
//!
//! Invariants: the message of `send`/`ask` is read where the command runs ([`Message`]:
//! a file or stdin is read here, bounded, and travels as text); a project directory is
//! required for a host (`crate::op::needs_project`); the time a host gets is the
//! command's own wait plus `crate::op::MARGIN`. (Plain comments on the structs: clap
//! would make a doc comment the command's `--help` text.)

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{adapters, ask, deliver, launch, listing, message, stop, turns};
use crate::error::Error;
use crate::op::{Operation, needs_project};
use crate::sys::duration::{duration_ms, timeout_or};
use crate::tmux::Tmux;

// The message a caller hands another agent: `--message`, `--file` or `-` (stdin). Only
// the text travels: a file or stdin is read where the command is given.
#[derive(clap::Args, Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// The message text.
    #[arg(long, conflicts_with_all = ["message_file", "stdin"])]
    pub message: Option<String>,
    /// Read the message from a file (old spelling: --message-file).
    #[arg(
        long = "file",
        alias = "message-file",
        value_name = "FILE",
        conflicts_with = "stdin"
    )]
    #[serde(skip)]
    pub message_file: Option<PathBuf>,
    /// `-` reads the message from stdin.
    #[arg(value_name = "-", value_parser = clap::builder::PossibleValuesParser::new(["-"]))]
    #[serde(skip)]
    pub stdin: Option<String>,
}

impl Message {
    /// The text, from wherever it was given (bounded and checked: `message::read`).
    pub fn read(&self) -> Result<String, Error> {
        message::read(
            self.message.as_deref(),
            self.message_file.as_deref(),
            self.stdin.is_some(),
        )
    }

    /// The message as text only: what a host is sent.
    fn read_in(self) -> Result<Message, Error> {
        Ok(Message {
            message: Some(self.read()?),
            ..Message::default()
        })
    }
}

/// `--timeout` (ms), else the old `--timeout-s` (seconds), else `default_ms`.
fn within(timeout: Option<u64>, timeout_s: Option<u64>, default_ms: u64) -> Duration {
    Duration::from_millis(timeout_or(timeout, timeout_s, 1000, default_ms))
}

fn project_dir(p: &Option<PathBuf>) -> Result<PathBuf, Error> {
    match p {
        Some(d) => Ok(d.clone()),
        None => Ok(std::env::current_dir()?),
    }
}

// `agent start`.
#[derive(clap::Args, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Start {
    /// claude, codex, gemini or custom.
    pub adapter: String,
    /// Project directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// The agent CLI's permission mode (its own names, e.g. Claude Code's `plan`).
    #[arg(long, value_name = "MODE")]
    pub permission_mode: Option<String>,
    /// For `custom`: the CLI to run.
    #[arg(long, value_name = "PATH")]
    pub cli: Option<String>,
    /// For `custom`: a regex that matches a line of its screen when it is ready for input
    /// (each line is matched as drawn and with its trailing blanks trimmed: `'>>> ?$'`
    /// finds `>>> `).
    #[arg(long, value_name = "RE")]
    pub ready_regex: Option<String>,
    /// How long to wait for the ready screen: 500ms, 30s, 2m, 1h (default 60s).
    #[arg(long, value_name = "DURATION", value_parser = duration_ms)]
    pub timeout: Option<u64>,
    /// Old spelling of --timeout, in seconds.
    #[arg(long, value_name = "S", hide = true, conflicts_with = "timeout")]
    pub timeout_s: Option<u64>,
}

impl Start {
    fn ready_within(&self) -> Duration {
        within(self.timeout, self.timeout_s, 60_000)
    }

    pub fn run(&self, tmux: &Tmux) -> Result<launch::Started, Error> {
        let ad = adapters::choose(
            &self.adapter,
            self.cli.as_deref(),
            self.ready_regex.as_deref(),
        )?;
        let caller = crate::location::address::caller(tmux);
        launch::start(
            tmux,
            &caller,
            &ad,
            &project_dir(&self.project)?,
            self.permission_mode.as_deref(),
            self.ready_within(),
        )
    }
}

impl Operation for Start {
    const NAME: &'static str = "agent.start";
    type Answer = launch::Started;
    fn waits(&self) -> Duration {
        self.ready_within()
    }
    fn for_host(&self) -> Result<(), Error> {
        needs_project("agent start", self.project.as_deref())
    }
}

// `agent send`.
#[derive(clap::Args, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Send {
    /// The managed session's name (as `agent start` or `agent list` print it).
    pub name: String,
    #[command(flatten)]
    pub msg: Message,
    /// The project the session must work on (default: the current directory; with
    /// --host, required: a directory on the host).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Require this permission mode.
    #[arg(long, value_name = "MODE")]
    pub permission_mode: Option<String>,
}

impl Send {
    pub fn run(&self, tmux: &Tmux) -> Result<deliver::Sent, Error> {
        let text = self.msg.read()?;
        deliver::send(
            tmux,
            &self.name,
            &text,
            &ask::caller_project(self.project.as_deref())?,
            self.permission_mode.as_deref(),
        )
    }
}

impl Operation for Send {
    const NAME: &'static str = "agent.send";
    type Answer = deliver::Sent;
    fn waits(&self) -> Duration {
        Duration::from_secs(120)
    }
    // The session's contract is checked against the caller's project.
    fn for_host(&self) -> Result<(), Error> {
        needs_project("agent send", self.project.as_deref())
    }
    fn read_in(self) -> Result<Send, Error> {
        Ok(Send {
            msg: self.msg.read_in()?,
            ..self
        })
    }
}

// `agent wait` (its answer is the composition layer's: the reply, or with `--until` the
// agent's state from `crate::state::wait`).
#[derive(clap::Args, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Wait {
    /// The managed session's name (with --until also a pane: %N or session:window.pane).
    pub name: String,
    /// Wait for the agent's state, not its reply: one or more of needs-you, done, idle,
    /// working, exited, unknown, comma-separated (e.g. --until needs-you,done). Any
    /// agent pane whose hooks report, started by hand or by `agent start`.
    #[arg(long, value_name = "STATES")]
    pub until: Option<String>,
    /// Give up after this long: 500ms, 30s, 2m, 1h (default 10m).
    #[arg(long, value_name = "DURATION", value_parser = duration_ms)]
    pub timeout: Option<u64>,
    /// Old spelling of --timeout, in seconds.
    #[arg(long, value_name = "S", hide = true, conflicts_with = "timeout")]
    pub timeout_s: Option<u64>,
}

impl Wait {
    pub fn within(&self) -> Duration {
        within(self.timeout, self.timeout_s, turns::DEFAULT_WAIT_MS)
    }
}

// `agent reply`.
#[derive(clap::Args, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// The managed session's name.
    pub name: String,
}

impl Reply {
    pub fn run(&self, tmux: &Tmux) -> Result<turns::Reply, Error> {
        turns::reply(tmux, &self.name)
    }
}

impl Operation for Reply {
    const NAME: &'static str = "agent.reply";
    type Answer = turns::Reply;
}

// `agent ask`, and what MCP `agent_ask` hands a host.
#[derive(clap::Args, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Ask {
    /// A session name, or an adapter (claude, codex, gemini) for this project.
    pub target: String,
    #[command(flatten)]
    pub msg: Message,
    /// Project directory for an adapter target (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Require (or start with) this permission mode.
    #[arg(long, value_name = "MODE")]
    pub permission_mode: Option<String>,
    /// Give up waiting for the reply after this long: 500ms, 30s, 2m, 1h (default 10m).
    #[arg(long, value_name = "DURATION", value_parser = duration_ms)]
    pub timeout: Option<u64>,
    /// Old spelling of --timeout, in seconds.
    #[arg(long, value_name = "S", hide = true, conflicts_with = "timeout")]
    pub timeout_s: Option<u64>,
}

impl Ask {
    fn within(&self) -> Duration {
        within(self.timeout, self.timeout_s, turns::DEFAULT_WAIT_MS)
    }

    /// Start if missing, send once, wait: the reply, or how far the message got.
    pub fn run(
        &self,
        tmux: &Tmux,
        progress: crate::control::settle::Progress,
    ) -> Result<turns::Reply, ask::Failed> {
        let text = self.msg.read()?;
        ask::ask(
            tmux,
            &ask::Request {
                target: &self.target,
                message: &text,
                project: self.project.as_deref(),
                permission_mode: self.permission_mode.as_deref(),
                timeout: self.within(),
                progress,
            },
        )
    }
}

impl Operation for Ask {
    const NAME: &'static str = "agent.ask";
    type Answer = turns::Reply;
    // Starting the CLI, then the turn.
    fn waits(&self) -> Duration {
        self.within().saturating_add(Duration::from_secs(60))
    }
    // An adapter starts there; a session's contract is checked against it.
    fn for_host(&self) -> Result<(), Error> {
        needs_project("agent ask", self.project.as_deref())
    }
    fn read_in(self) -> Result<Ask, Error> {
        Ok(Ask {
            msg: self.msg.read_in()?,
            ..self
        })
    }
}

// `agent list`.
#[derive(clap::Args, Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct List {}

impl List {
    pub fn run(&self, tmux: &Tmux) -> Result<Vec<listing::Listed>, Error> {
        listing::list(tmux)
    }
}

impl Operation for List {
    const NAME: &'static str = "agent.list";
    type Answer = Vec<listing::Listed>;
}

// `agent stop`.
#[derive(clap::Args, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Stop {
    /// The managed session's name.
    pub name: String,
    /// Required: without it nothing is stopped.
    #[arg(long)]
    #[serde(default)]
    pub confirm: bool,
}

impl Stop {
    pub fn run(&self, tmux: &Tmux) -> Result<stop::Stopped, Error> {
        stop::stop_agent(tmux, &self.name, self.confirm)
    }
}

impl Operation for Stop {
    const NAME: &'static str = "agent.stop";
    type Answer = stop::Stopped;
}

// `agent name`.
#[derive(clap::Args, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Name {
    /// claude, codex, gemini or custom.
    pub adapter: String,
    /// Project directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

impl Name {
    pub fn run(&self) -> Result<String, Error> {
        super::attach::name_for(&self.adapter, &project_dir(&self.project)?)
    }
}

impl Operation for Name {
    const NAME: &'static str = "agent.name";
    type Answer = String;
    fn for_host(&self) -> Result<(), Error> {
        needs_project("agent name", self.project.as_deref())
    }
}
