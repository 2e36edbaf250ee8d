//! The command line: its definitions (clap derive). A command that is an operation
//! parses into its capability's request type (flattened, `--json` beside it: [`Json`], or
//! [`JsonActions`] for one with actions); handlers live in `cmd/`; nothing here prints.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "tmuxmate",
    version,
    about = "tmux as the reliable bus between AI coding agents and their terminals"
)]
pub struct Cli {
    /// tmux server socket name (as `tmux -L`).
    #[arg(short = 'L', long = "socket", global = true, value_name = "NAME")]
    pub socket: Option<String>,
    /// tmux server socket path (as `tmux -S`).
    #[arg(short = 'S', long = "socket-path", global = true, value_name = "PATH")]
    pub socket_path: Option<PathBuf>,
    /// On an error, also print the mechanics (the tmux command that failed, its stderr).
    #[arg(short = 'v', long = "verbose", global = true)]
    pub verbose: bool,
    /// tmux on another machine, through ssh (default: $TMUXMATE_HOST; '' = this machine).
    /// -L/-S then select the server on that host. watch, agent and side status/history/report
    /// need tmuxmate there: `tmuxmate remote install HOST`.
    #[arg(long = "host", global = true, value_name = "[USER@]HOST[:PORT]")]
    pub host: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

fn interval(s: &str) -> Result<u64, String> {
    crate::location::turn::parse_interval(s)
}

// `defer` (here and on every subcommand enum): a subcommand's arguments are built only
// when it is the one invoked (clap builds the whole tree otherwise: 1.1 ms CPU and 120
// page faults of a 3 ms remote call, measured). Help, usage errors and the man page are
// unchanged; completion scripts order options otherwise and do not complete
// `help <cmd> <sub>`.
#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum Command {
    /// Print the tmux location of the calling process (tty-verified).
    Where {
        /// Print one JSON document instead of text (shapes: docs/json.md).
        #[arg(long)]
        json: bool,
    },
    /// What the agent should be told at the start of this turn (empty when nothing).
    Turn {
        /// Agent address: the harness session id, or any stable id.
        #[arg(long)]
        agent: String,
        /// Turn number to print (default: the agent's own turn count).
        #[arg(long)]
        turn: Option<u64>,
        /// Suppress the tmux query and injection within MS of the last injection.
        #[arg(long, value_name = "MS", value_parser = interval, allow_hyphen_values = true)]
        refresh_interval_ms: Option<u64>,
        /// Character budget for the answer (at least enough for a truncation marker).
        #[arg(long, default_value_t = 9500)]
        max_chars: usize,
        /// Print one JSON document instead of text (shapes: docs/json.md).
        #[arg(long)]
        json: bool,
    },
    /// Harness hook entry point: reads the hook JSON on stdin, answers in the harness's shape.
    Hook {
        /// Which harness runs the hook: its hook JSON on stdin and the answer's shape.
        harness: Harness,
        /// Suppress the tmux query and injection within MS of the last injection
        /// (default: the pane's @tmuxmate-refresh-interval-ms, else 0).
        #[arg(long, value_name = "MS", value_parser = interval, allow_hyphen_values = true)]
        refresh_interval_ms: Option<u64>,
    },
    /// Sessions, windows (with layout) and panes, from one tmux call.
    List(Json<crate::control::list::Ask>),
    /// Type one line of literal text into a pane.
    Send(Json<crate::control::input::SendAsk>),
    /// Paste multi-line text as one bracketed paste.
    Paste(Json<crate::control::input::PasteAsk>),
    /// Press named keys (from a fixed list) in a pane.
    Keys(Json<crate::control::input::KeysAsk>),
    /// Capture a pane's screen or scrollback within a byte budget.
    Capture(Json<crate::control::capture::Ask>),
    /// Split a pane (new pane marked as created by tmuxmate).
    Split(Json<crate::control::split::SplitAsk>),
    /// Create a new window (its pane marked as created by tmuxmate).
    NewWindow(Json<crate::control::split::NewWindowAsk>),
    /// Swap two panes structurally.
    Swap(Json<crate::control::swap::SwapAsk>),
    /// Run a command and wait for its exit status and output.
    Run(Json<crate::control::run::RunAsk>),
    /// Kill a pane, window, session or server (needs --confirm and approval).
    Kill(Json<crate::control::kill::KillAsk>),
    /// Stored snapshots of captures and run results.
    Snapshots(
        JsonActions<
            crate::control::snapshot::SnapshotsAction,
            crate::control::snapshot::SnapshotsAsk,
        >,
    ),
    /// Every agent pane's state (working, needs-you, done, idle, exited), from its CLI's
    /// own events; needs-you first, longest waiting first.
    Agents(AgentsArgs),
    /// Background commands watched until they finish; results arrive at the next turn.
    Watch {
        #[command(subcommand)]
        action: WatchAction,
    },
    /// Hand tasks to another agent CLI running in its own managed tmux session.
    Agent {
        #[command(subcommand)]
        action: AgentAction,
    },
    /// Live digest of an agent session's transcript: turns, todos, tools, errors.
    Digest {
        #[command(subcommand)]
        action: DigestAction,
    },
    /// A read-only side conversation about a running agent session.
    Side {
        #[command(subcommand)]
        action: SideAction,
    },
    /// Run the demo on a private tmux server.
    Demo {
        /// Leave the demo server running and print how to attach.
        #[arg(long)]
        keep: bool,
    },
    /// Serve the tools over MCP on stdio (newline-delimited JSON-RPC; logs on stderr; ends at EOF).
    Mcp,
    /// Print integration snippets.
    Init {
        #[command(subcommand)]
        what: InitWhat,
    },
    /// Wire tmuxmate into the agent CLIs (hooks, MCP server, skill) and tmux (snippet).
    Install(InstallArgs),
    /// Take back exactly what `install` added.
    Uninstall(InstallArgs),
    /// Check the installation: what works, and the fix for each problem.
    Doctor {
        /// Print one JSON document instead of text (shapes: docs/json.md).
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script.
    Completions {
        /// The shell to complete for.
        shell: CompletionShell,
    },
    /// Print the man page (roff).
    Man,
    /// Run one operation given as JSON on stdin (`{"op": ..., "request": {...}}`) and
    /// answer its JSON: how another host's tmuxmate runs a `--host` command here.
    #[command(hide = true)]
    Call,
    /// tmuxmate on another host: `remote install HOST` copies this binary there.
    Remote {
        #[command(subcommand)]
        action: RemoteAction,
    },
}

#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum RemoteAction {
    /// Copy this binary to HOST (same OS and architecture) as
    /// ~/.local/share/tmuxmate/bin/tmuxmate, so watch, agent and side status/history/report work
    /// with --host HOST. A second install of the same binary says so and copies nothing.
    Install {
        /// [user@]host[:port], as for --host.
        #[arg(value_name = "HOST")]
        machine: String,
        /// Print one JSON document instead of text (shapes: docs/json.md).
        #[arg(long)]
        json: bool,
    },
    /// On the host: this binary's version and SHA-256 (what `remote install` compares).
    #[command(hide = true)]
    Id,
    /// On the host: the collector's finished results (not consumed) and the jobs' states.
    #[command(hide = true)]
    Results {
        /// The asking machine's collector address.
        #[arg(long)]
        collector: String,
        /// Jobs the asking machine waits for.
        #[arg(long = "job")]
        jobs: Vec<String>,
    },
    /// On the host: the asking machine has queued these results; they are done here.
    #[command(hide = true)]
    Ack {
        /// The asking machine's collector address.
        #[arg(long)]
        collector: String,
        /// The result keys (`watch:<job id>`).
        keys: Vec<String>,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstallTarget {
    /// Claude Code.
    Claude,
    /// Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
    /// The tmux.conf snippet.
    Tmux,
    /// Every CLI found (on PATH or with a config directory), and tmux.
    All,
}

#[derive(Args, Debug)]
pub struct InstallArgs {
    /// What to wire up.
    #[arg(default_value = "all")]
    pub target: InstallTarget,
    /// Write the project's config files in DIR instead of the user's.
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Print the changes as a diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionShell {
    /// GNU bash.
    Bash,
    /// Z shell.
    Zsh,
    /// fish.
    Fish,
}

#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum InitWhat {
    /// The tmux.conf snippet with this binary's path filled in.
    Tmux,
    /// Bind the snippet's keys from @tmuxmate-*-key (the snippet runs this; prints what
    /// it bound, logs refusals, always exits 0).
    Bind,
}

use crate::harness::Harness;

// A control command's arguments: its operation's request type (owned by the capability,
// and the MCP tool's argument type too) and the `--json` switch, after the request's
// flags in `--help` as each command had it. Derefs to the request. (A plain comment:
// clap would make a doc comment here every such command's `--help` text.)
#[derive(Args, Debug)]
pub struct Json<T: Args> {
    #[command(flatten)]
    pub ask: T,
    /// Print one JSON document instead of text (shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

impl<T: Args> std::ops::Deref for Json<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.ask
    }
}

// As `Json`, for a command whose request has actions (subcommands) beside its own flags
// (none: the command's own work): `--json` is taken after any action too. `--help` lists
// the actions, then `--json`, then the flags, as the command had them.
#[derive(Args, Debug)]
pub struct JsonActions<A: Subcommand, T: Args> {
    #[command(subcommand)]
    pub action: Option<A>,
    /// Print one JSON document instead of text (shapes: docs/json.md).
    #[arg(long, global = true)]
    pub json: bool,
    #[command(flatten)]
    pub ask: T,
}

#[derive(clap::Args, Debug)]
pub struct AgentsArgs {
    #[command(subcommand)]
    pub action: Option<AgentsAction>,
    /// Print one JSON document instead of text (shapes: docs/json.md).
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum AgentsAction {
    /// The snippet's hooks: the person looks at pane -t (a done turn becomes idle).
    #[command(hide = true)]
    Seen {
        #[arg(short = 't', value_name = "PANE_ID")]
        target: String,
    },
    /// The snippet's jump key: go to the agent that has needed you longest.
    #[command(hide = true)]
    Jump {
        /// The tmux client to switch.
        #[arg(long, value_name = "CLIENT")]
        client: String,
    },
    /// Runs @tmuxmate-notify-command for one alert (started by tmux).
    #[command(hide = true)]
    NotifyRun { file: std::path::PathBuf },
    /// A Gemini pane's title hook: what its title says now (started by tmux).
    #[command(hide = true)]
    Title {
        #[arg(short = 't', value_name = "PANE_ID")]
        target: String,
    },
    /// A Codex pane's output reader: its status sequences on stdin (started by pipe-pane).
    #[command(hide = true)]
    Osc {
        #[arg(short = 't', value_name = "PANE_ID")]
        target: String,
    },
    /// Keeps the agents of one @tmuxmate-hosts host here (started by tmux).
    #[command(hide = true)]
    FollowHost {
        #[arg(value_name = "HOST")]
        name: String,
    },
    /// Starts the followers of @tmuxmate-hosts where none runs (a tmux hook).
    #[command(hide = true)]
    FollowHosts,
    /// On a followed host: the agents, once they differ from --after or at --wait-ms.
    #[command(hide = true)]
    Changes {
        #[arg(long, default_value = "")]
        after: String,
        #[arg(long, default_value_t = 0)]
        wait_ms: u64,
    },
}

#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum WatchAction {
    /// Start a command (in a new window, or typed into an existing shell pane with -t).
    Start(Json<crate::watch::request::Start>),
    /// Jobs on every server, running and recently ended (restarts a dead poller).
    List {
        /// Print one JSON document instead of text (shapes: docs/json.md).
        #[arg(long)]
        json: bool,
    },
    /// One job's full state.
    Show(Json<crate::watch::request::Show>),
    /// Stop watching a job. The pane and its command are left alone.
    Stop(Json<crate::watch::request::Stop>),
    /// Restart pollers for servers with running jobs (the snippet's tmux hooks call this).
    Reattach,
    /// The per-server poller loop (started by tmuxmate through `tmux run-shell -b`).
    #[command(hide = true)]
    Poll,
    /// Called by the job wrapper when the command it launched exits.
    #[command(hide = true, name = "record-exit")]
    RecordExit {
        /// The job id.
        job: String,
        /// The command's exit status.
        status: i32,
    },
    /// The job wrapper's start gate: waits until `watch start` recorded the job.
    #[command(hide = true)]
    Gate {
        /// The job id.
        job: String,
        /// The pid of the `watch start` that launched the job.
        starter: i32,
        /// Its start time (procfs jiffies), so a reused pid is not taken for it.
        started: u64,
    },
}

#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum AgentAction {
    /// Start (or reuse) an agent CLI in its own session for this project and branch.
    Start(Json<crate::bridge::request::Start>),
    /// Send one message as one prompt (checked; refuses on anything ambiguous).
    Send(Json<crate::bridge::request::Send>),
    /// Wait until the turn started by the last message has finished (with --until: until
    /// the agent is in one of the states named).
    Wait(Json<crate::bridge::request::Wait>),
    /// The reply to the last message (marked incomplete if the turn has not finished).
    Reply(Json<crate::bridge::request::Reply>),
    /// Start if missing, send, wait and print the complete reply: one call.
    Ask(Json<crate::bridge::request::Ask>),
    /// Managed agent sessions on this server.
    List {
        /// Print one JSON document instead of text (shapes: docs/json.md).
        #[arg(long)]
        json: bool,
    },
    /// Attach to (or switch to) a managed agent session.
    Attach {
        /// The managed session's name.
        name: String,
    },
    /// Stop a managed agent session (kills its tmux session).
    Stop(Json<crate::bridge::request::Stop>),
    /// Print the session name tmuxmate would use.
    Name(crate::bridge::request::Name),
    /// Become the agent CLI described by a launch spec (used inside the new pane).
    #[command(hide = true, name = "_exec")]
    Exec {
        /// The launch spec file (argv, environment, directory).
        spec: PathBuf,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DigestFormat {
    /// Claude Code JSONL transcript.
    Claude,
    /// Codex rollout JSONL.
    Codex,
    /// DeepSeek Harness session log.
    Dsh,
    /// Generic events JSONL.
    Events,
}

#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum DigestAction {
    /// Print the digest of a pane's agent session (-t) or of a transcript file.
    Show(DigestShowArgs),
    /// Record the transcript of the agent in a pane and make sure a follower keeps the
    /// pane's @tmuxmate-status current (what the per-turn hook does).
    Attach {
        /// The pane the agent runs in.
        #[arg(short = 't', long = "target")]
        target: String,
        /// The agent's transcript file.
        #[arg(long, value_name = "FILE")]
        transcript: PathBuf,
        /// The transcript's format (default: detected from its lines).
        #[arg(long)]
        format: Option<DigestFormat>,
        /// Print one JSON document instead of text (shapes: docs/json.md).
        #[arg(long)]
        json: bool,
    },
    /// The per-pane follower loop (started by tmuxmate through `tmux run-shell -b`).
    #[command(hide = true)]
    Follow {
        /// The pane whose @tmuxmate-status to keep current.
        #[arg(short = 't', long = "target")]
        target: String,
    },
    /// Fold a transcript once and print the throughput (for scripts/bench-digest.sh).
    #[command(hide = true)]
    Bench {
        /// The transcript file to fold.
        #[arg(long, value_name = "FILE")]
        transcript: PathBuf,
        /// Its format (default: detected).
        #[arg(long)]
        format: Option<DigestFormat>,
    },
}

#[derive(Args, Debug)]
pub struct DigestShowArgs {
    /// The pane whose agent's transcript to digest (its @tmuxmate-transcript option).
    #[arg(short = 't', long = "target", conflicts_with = "transcript")]
    pub target: Option<String>,
    /// A transcript file to digest.
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
    /// The transcript's format (default: the pane option, else detected from its lines).
    #[arg(long)]
    pub format: Option<DigestFormat>,
    /// Finished turns to show, 4-60 (default: @tmuxmate-digest-turns, else 12).
    #[arg(long, value_name = "N")]
    pub turns: Option<String>,
    /// Print one JSON document instead of text (shapes: docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum SideAction {
    /// Open a side chat about the agent in pane -t (a popup; a split without a client).
    Open {
        /// The main agent's pane (required; the snippet's key binding passes the current one).
        #[arg(short = 't', long = "target")]
        target: Option<String>,
        /// Open the popup on this tmux client (the key binding passes the one that pressed
        /// the key); without it, a client attached to the main pane's session.
        #[arg(long, value_name = "CLIENT")]
        client: Option<String>,
    },
    /// The side agent itself, inside the popup (ends by deleting its session files).
    #[command(hide = true)]
    Run {
        /// The main agent's pane.
        #[arg(short = 't', long = "target")]
        target: String,
    },
    /// The main agent's live digest and whether it is running.
    Status(Json<crate::side::request::Status>),
    /// The main session's real transcript lines, summarised (bounded).
    History(Json<crate::side::request::History>),
    /// Queue a note for the main agent's next turn (never typed into its pane).
    Report(Json<crate::side::request::Report>),
    /// Codex's PostToolUse hook inside a side chat: queue a note that a sandboxed
    /// `side report` could only print (hook JSON on stdin; prints nothing).
    #[command(hide = true)]
    Relay,
    /// End the side chat of pane -t and delete its session files.
    Close {
        /// The main agent's pane whose side chat to end (default inside a side chat: its own).
        #[arg(short = 't', long = "target")]
        target: Option<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// clap checks a command's definition only when it is parsed: a clash in a hidden
    /// subcommand would panic there, at run time.
    #[test]
    fn every_command_is_well_defined() {
        Cli::command().debug_assert();
    }

    /// Every visible flag and positional of every visible subcommand, as `path: --flag`,
    /// that has no help text.
    fn undocumented(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for a in cmd.get_arguments() {
            let id = a.get_id().as_str();
            if a.is_hide_set() || id == "help" || id == "version" {
                continue;
            }
            if a.get_help().is_none() && a.get_long_help().is_none() {
                out.push(format!("{path}: {id}"));
            }
        }
        for sub in cmd.get_subcommands() {
            if sub.is_hide_set() || sub.get_name() == "help" {
                continue;
            }
            if sub.get_about().is_none() {
                out.push(format!("{path} {}: (no description)", sub.get_name()));
            }
            undocumented(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    #[test]
    fn every_flag_and_positional_has_help() {
        let mut missing = Vec::new();
        undocumented(&Cli::command(), "tmuxmate", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:#?}");
    }

    /// The values of a `ValueEnum` are documented too (they show in `--help` lists).
    #[test]
    fn every_possible_value_has_help() {
        let mut missing = Vec::new();
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
                for v in a.get_possible_values() {
                    if v.get_help().is_none()
                        && !v.is_hide_set()
                        && !matches!(v.get_name(), "true" | "false")
                        && a.get_id() != "stdin"
                    {
                        missing.push(format!("{path} {}={}", a.get_id(), v.get_name()));
                    }
                }
            }
            for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        walk(&Cli::command(), "tmuxmate", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:#?}");
    }

    /// The old spellings still parse (hidden), and cannot be mixed with the new one.
    #[test]
    fn old_spellings_are_hidden_aliases() {
        let p = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("tmuxmate").chain(args.iter().copied()))
        };
        // The timeout the run waits, as its request settles it.
        let waits = |args: &[&str]| {
            let Command::Run(r) = p(args).unwrap().command else {
                panic!()
            };
            r.request(&[], 0, None).timeout_ms
        };
        assert_eq!(waits(&["run", "--timeout-ms", "300", "--", "true"]), 300);
        assert_eq!(waits(&["run", "--timeout", "2s", "--", "true"]), 2000);
        assert!(p(&["run", "--timeout", "2s", "--timeout-ms", "3", "--", "true"]).is_err());
        assert!(p(&["agent", "wait", "x", "--timeout-s", "3"]).is_ok());
        assert!(p(&["watch", "start", "--timeout-min", "0.5", "--", "true"]).is_ok());
        for f in ["--file", "--message-file"] {
            let c = p(&["agent", "send", "x", f, "/m"]).unwrap().command;
            let Command::Agent {
                action: AgentAction::Send(a),
            } = c
            else {
                panic!()
            };
            assert_eq!(a.ask.msg.message_file, Some(PathBuf::from("/m")));
        }
        let help = Cli::command()
            .find_subcommand_mut("run")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(
            help.contains("--timeout <DURATION>") && !help.contains("--timeout-ms"),
            "{help}"
        );
    }

    #[test]
    fn swap_takes_flags_or_positionals() {
        let p = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("tmuxmate").chain(args.iter().copied()))
        };
        for args in [
            &["swap", "%1", "%2"][..],
            &["swap", "--src", "%1", "--dst", "%2"],
            &["swap", "-s", "%1", "-t", "%2"],
            &["swap", "-s", "%1", "%2"],
        ] {
            let Command::Swap(a) = p(args).unwrap().command else {
                panic!()
            };
            assert_eq!(
                a.pair(),
                Ok(("%1".to_string(), "%2".to_string())),
                "{args:?}"
            );
        }
        for args in [
            &["swap", "%1"][..],
            &["swap", "-s", "%1", "-t", "%2", "%3"],
            &["swap"],
        ] {
            let Command::Swap(a) = p(args).unwrap().command else {
                panic!()
            };
            assert!(a.pair().is_err(), "{args:?}");
        }
    }
}
