//! Command-line definitions only (clap derive). Handlers live in `cmd/`.

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
    /// -L/-S then select the server on that host.
    #[arg(long = "host", global = true, value_name = "[USER@]HOST[:PORT]")]
    pub host: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

fn interval(s: &str) -> Result<u64, String> {
    crate::turn::parse_interval(s)
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the tmux location of the calling process (tty-verified).
    Where {
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
        /// Character budget for the answer.
        #[arg(long, default_value_t = 9500)]
        max_chars: usize,
        #[arg(long)]
        json: bool,
    },
    /// Harness hook entry point: reads the hook JSON on stdin, answers in the harness's shape.
    Hook {
        harness: Harness,
        #[arg(long, value_name = "MS", value_parser = interval, allow_hyphen_values = true)]
        refresh_interval_ms: Option<u64>,
    },
    /// Sessions, windows (with layout) and panes, from one tmux call.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Type one line of literal text into a pane.
    Send(SendArgs),
    /// Paste multi-line text as one bracketed paste.
    Paste(PasteArgs),
    /// Press named keys (from a fixed list) in a pane.
    Keys(KeysArgs),
    /// Capture a pane's screen or scrollback within a byte budget.
    Capture(CaptureArgs),
    /// Split a pane (new pane marked as created by tmuxmate).
    Split(SplitArgs),
    /// Create a new window (its pane marked as created by tmuxmate).
    NewWindow(NewWindowArgs),
    /// Swap two panes structurally.
    Swap(SwapArgs),
    /// Run a command and wait for its exit status and output.
    Run(RunArgs),
    /// Kill a pane, window, session or server (needs --confirm and approval).
    Kill(KillArgs),
    /// Stored snapshots of captures and run results.
    Snapshots(SnapshotsArgs),
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
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script.
    Completions { shell: CompletionShell },
    /// Print the man page (roff).
    Man,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstallTarget {
    Claude,
    Codex,
    Gemini,
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
    Bash,
    Zsh,
    Fish,
}

#[derive(Subcommand, Debug)]
pub enum InitWhat {
    /// The tmux.conf snippet with this binary's path filled in.
    Tmux,
    /// Bind the snippet's keys from @tmuxmate-*-key (the snippet runs this; prints what
    /// it bound, logs refusals, always exits 0).
    Bind,
}

use crate::harness::Harness;

#[derive(Args, Debug)]
pub struct SendArgs {
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// Press Enter (as a separate key) after the text.
    #[arg(long)]
    pub enter: bool,
    /// Leave copy/view mode first instead of refusing.
    #[arg(long)]
    pub cancel_mode: bool,
    /// Read the line from a file (`-` for stdin); one trailing newline is dropped.
    #[arg(long, value_name = "F", conflicts_with = "text")]
    pub file: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
    /// The text: one line, no control characters; `-` reads it from stdin. Text that
    /// starts with `-` goes after `--` (anything else starting with `-` is a flag, and an
    /// unknown flag is an error, never text).
    pub text: Option<String>,
}

#[derive(Args, Debug)]
pub struct PasteArgs {
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// Send exactly one Enter after the settle delay.
    #[arg(long)]
    pub enter: bool,
    /// Delay before Enter (default: @tmuxmate-paste-settle-ms, else 150).
    #[arg(long, value_name = "MS")]
    pub settle_ms: Option<u64>,
    /// Read the text from a file (`-` for stdin).
    #[arg(long, value_name = "F", conflicts_with = "text")]
    pub file: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
    /// The text, or `-` for stdin. Text that starts with `-` goes after `--`.
    pub text: Option<String>,
}

#[derive(Args, Debug)]
pub struct KeysArgs {
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    #[arg(long)]
    pub json: bool,
    /// Key names: Enter Escape Tab BTab Up Down Left Right Home End PageUp PageDown BSpace C-a..C-z F1..F12
    /// (none starts with `-`, so options are accepted anywhere on the line).
    #[arg(required = true)]
    pub keys: Vec<String>,
}

#[derive(Args, Debug)]
pub struct CaptureArgs {
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// The last N lines of scrollback plus the screen.
    #[arg(long, conflicts_with = "all")]
    pub lines: Option<u64>,
    /// All of the scrollback.
    #[arg(long)]
    pub all: bool,
    /// Byte budget (default: @tmuxmate-capture-max-bytes, else 100000); keeps the newest text.
    #[arg(long, value_name = "B")]
    pub max_bytes: Option<usize>,
    /// Keep colours and attributes as escape sequences.
    #[arg(long)]
    pub ansi: bool,
    /// Join wrapped lines.
    #[arg(long)]
    pub join: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct SplitArgs {
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// Side by side.
    #[arg(long, conflicts_with = "vertical")]
    pub horizontal: bool,
    /// Stacked (the default).
    #[arg(long)]
    pub vertical: bool,
    /// Size of the new pane, e.g. 30%.
    #[arg(long, value_name = "N%")]
    pub size: Option<String>,
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
    /// Command to run in the new pane (after --).
    #[arg(last = true)]
    pub cmd: Vec<String>,
}

#[derive(Args, Debug)]
pub struct NewWindowArgs {
    /// Session to create the window in (default: the caller's, else a `tmuxmate` session).
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    #[arg(long)]
    pub name: Option<String>,
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
    #[arg(last = true)]
    pub cmd: Vec<String>,
}

#[derive(Args, Debug)]
pub struct SwapArgs {
    pub src: String,
    pub dst: String,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// An existing shell pane to type the command into (default: a new pane of our own).
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    #[arg(long, value_name = "MS", default_value_t = 120_000)]
    pub timeout_ms: u64,
    /// Fallback for REPLs and TUIs: done when output is unchanged for MS.
    #[arg(long, value_name = "MS")]
    pub until_stable: Option<u64>,
    #[arg(long, value_name = "B")]
    pub max_bytes: Option<usize>,
    /// Keep the new window once the result is read (default: it is removed; a timed-out
    /// command always keeps its window, since it is still running there).
    #[arg(long, conflicts_with = "target")]
    pub keep: bool,
    #[arg(long)]
    pub json: bool,
    #[arg(last = true, required = true)]
    pub cmd: Vec<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum KillScope {
    Pane,
    Window,
    Session,
    Server,
}

#[derive(Args, Debug)]
pub struct KillArgs {
    pub scope: KillScope,
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// Required: without it nothing is killed.
    #[arg(long)]
    pub confirm: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct SnapshotsArgs {
    #[command(subcommand)]
    pub action: Option<SnapshotsAction>,
    #[arg(long, global = true)]
    pub json: bool,
    /// How many of the most recent to list.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
}

#[derive(Subcommand, Debug)]
pub enum SnapshotsAction {
    /// Print the full stored text of one snapshot.
    Show { id: String },
    /// Delete every stored snapshot (`set -g @tmuxmate-snapshots off` stores none).
    Clear,
    /// The snippet's key binding: the listing in a popup on client --client.
    #[command(hide = true)]
    Popup {
        #[arg(long, value_name = "CLIENT")]
        client: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum WatchAction {
    /// Start a command (in a new window, or typed into an existing shell pane with -t).
    Start(WatchStartArgs),
    /// Jobs on every server, running and recently ended (restarts a dead poller).
    List {
        #[arg(long)]
        json: bool,
    },
    /// One job's full state.
    Show {
        job: String,
        #[arg(long)]
        json: bool,
    },
    /// Stop watching a job. The pane and its command are left alone.
    Stop {
        job: String,
        #[arg(long)]
        json: bool,
    },
    /// Restart pollers for servers with running jobs (the snippet's tmux hooks call this).
    Reattach,
    /// The per-server poller loop (started by tmuxmate through `tmux run-shell -b`).
    #[command(hide = true)]
    Poll,
    /// Called by the job wrapper when the command it launched exits.
    #[command(hide = true, name = "record-exit")]
    RecordExit { job: String, status: i32 },
    /// The job wrapper's start gate: waits until `watch start` recorded the job.
    #[command(hide = true)]
    Gate {
        job: String,
        starter: i32,
        started: u64,
    },
}

#[derive(Args, Debug)]
pub struct WatchStartArgs {
    /// An existing shell pane to type the command into (default: a new window).
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// Done when output produced after the start matches this regex (Rust regex syntax,
    /// multi-line mode: `^` and `$` match at the start and end of every output line, so
    /// `GO1$` matches a line `GO1`). With -t, the shell's echo of the typed command is not
    /// searched.
    #[arg(long, value_name = "RE")]
    pub done_regex: Option<String>,
    /// Give up after M minutes (default @tmuxmate-watch-timeout-min, else 120); the pane stays.
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
    pub timeout_min: Option<String>,
    /// Agent whose next turn gets the result: a known address (a session id or `turn
    /// --agent` name that made a per-turn call) or a pane id %N whose agent did (default:
    /// the agent of the calling pane).
    #[arg(long, value_name = "AGENT")]
    pub notify: Option<String>,
    /// Also queue the result for this agent (same addresses as --notify).
    #[arg(long, value_name = "AGENT")]
    pub forward: Vec<String>,
    /// With -t: leave copy or view mode first (else a pane in a mode is refused).
    #[arg(long)]
    pub cancel_mode: bool,
    #[arg(long)]
    pub json: bool,
    /// The command: one argument is a shell command line; several are quoted words.
    #[arg(last = true)]
    pub cmd: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct MessageArgs {
    /// The message text.
    #[arg(long, conflicts_with_all = ["message_file", "stdin"])]
    pub message: Option<String>,
    /// Read the message from a file.
    #[arg(long, value_name = "F", conflicts_with = "stdin")]
    pub message_file: Option<PathBuf>,
    /// `-` reads the message from stdin.
    #[arg(value_name = "-", value_parser = clap::builder::PossibleValuesParser::new(["-"]))]
    pub stdin: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct AgentStartArgs {
    /// claude, codex, gemini or custom.
    pub adapter: String,
    /// Project directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
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
    /// How long to wait for the ready screen.
    #[arg(long, value_name = "S", default_value_t = 60)]
    pub timeout_s: u64,
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum AgentAction {
    /// Start (or reuse) an agent CLI in its own session for this project and branch.
    Start(AgentStartArgs),
    /// Send one message as one prompt (checked; refuses on anything ambiguous).
    Send {
        name: String,
        #[command(flatten)]
        msg: MessageArgs,
        /// Require this permission mode.
        #[arg(long, value_name = "MODE")]
        permission_mode: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Wait until the turn started by the last message has finished.
    Wait {
        name: String,
        #[arg(long, value_name = "S", default_value_t = 600)]
        timeout_s: u64,
        #[arg(long)]
        json: bool,
    },
    /// The reply to the last message (marked incomplete if the turn has not finished).
    Reply {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Start if missing, send, wait and print the complete reply: one call.
    Ask {
        /// A session name, or an adapter (claude, codex, gemini) for this project.
        target: String,
        #[command(flatten)]
        msg: MessageArgs,
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        #[arg(long, value_name = "MODE")]
        permission_mode: Option<String>,
        #[arg(long, value_name = "S", default_value_t = 600)]
        timeout_s: u64,
        #[arg(long)]
        json: bool,
    },
    /// Managed agent sessions on this server.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Attach to (or switch to) a managed agent session.
    Attach { name: String },
    /// Stop a managed agent session (kills its tmux session).
    Stop {
        name: String,
        #[arg(long)]
        confirm: bool,
        #[arg(long)]
        json: bool,
    },
    /// Print the session name tmuxmate would use.
    Name {
        adapter: String,
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// Become the agent CLI described by a launch spec (used inside the new pane).
    #[command(hide = true, name = "_exec")]
    Exec { spec: PathBuf },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DigestFormat {
    Claude,
    Codex,
    Dsh,
    Events,
}

#[derive(Subcommand, Debug)]
pub enum DigestAction {
    /// Print the digest of a pane's agent session (-t) or of a transcript file.
    Show(DigestShowArgs),
    /// Record the transcript of the agent in a pane and make sure a follower keeps the
    /// pane's @tmuxmate-status current (what the per-turn hook does).
    Attach {
        #[arg(short = 't', long = "target")]
        target: String,
        #[arg(long, value_name = "FILE")]
        transcript: PathBuf,
        #[arg(long)]
        format: Option<DigestFormat>,
        #[arg(long)]
        json: bool,
    },
    /// The per-pane follower loop (started by tmuxmate through `tmux run-shell -b`).
    #[command(hide = true)]
    Follow {
        #[arg(short = 't', long = "target")]
        target: String,
    },
    /// Fold a transcript once and print the throughput (for scripts/bench-digest.sh).
    #[command(hide = true)]
    Bench {
        #[arg(long, value_name = "FILE")]
        transcript: PathBuf,
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
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum SideAction {
    /// Open a side chat about the agent in pane -t (a popup; a split without a client).
    Open {
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
        #[arg(short = 't', long = "target")]
        target: String,
    },
    /// The main agent's live digest and whether it is running.
    Status {
        #[arg(short = 't', long = "target")]
        target: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The main session's real transcript lines, summarised (bounded).
    History {
        #[arg(short = 't', long = "target")]
        target: Option<String>,
        /// Only this turn.
        #[arg(long)]
        turn: Option<u64>,
        /// Only lines containing this text (case-insensitive).
        #[arg(long)]
        contains: Option<String>,
        /// At most K lines, newest last (default 40, max 200).
        #[arg(long, default_value_t = crate::side::HISTORY_DEFAULT)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Queue a note for the main agent's next turn (never typed into its pane).
    Report {
        #[arg(short = 't', long = "target")]
        target: Option<String>,
        /// The note (text that starts with `-` goes after `--`).
        text: String,
        #[arg(long)]
        json: bool,
    },
    /// Codex's PostToolUse hook inside a side chat: queue a note that a sandboxed
    /// `side report` could only print (hook JSON on stdin; prints nothing).
    #[command(hide = true)]
    Relay,
    /// End the side chat of pane -t and delete its session files.
    Close {
        #[arg(short = 't', long = "target")]
        target: Option<String>,
    },
}
