//! `--host`: which commands reach a tmux server on another machine, and the client for it.
//!
//! Owns: the host default (`--host`, else `$TMUXMATE_HOST`; an empty `--host ''` means
//! this machine), the table of commands that work remotely, and the refusal for the
//! others. Invariants: a command that needs this machine's `/proc`, files or terminal
//! never silently runs against a remote server: with an explicit `--host` it is refused
//! (the hook fails soft instead), and `$TMUXMATE_HOST` only applies to commands that
//! work remotely. Remote commands use tmux only (no tmuxmate on the host).

use crate::cli::{AgentAction, Command, SideAction, WatchAction};
use crate::error::CliError;
use crate::tmux::remote::Remote;
use crate::tmux::{Socket, Tmux};

/// Why a command cannot run against a remote server (None: it can).
fn local_only(cmd: &Command) -> Option<&'static str> {
    match cmd {
        Command::List { .. }
        | Command::Send(_)
        | Command::Paste(_)
        | Command::Keys(_)
        | Command::Capture(_)
        | Command::Split(_)
        | Command::NewWindow(_)
        | Command::Swap(_)
        | Command::Run(_)
        | Command::Kill(_) => None,
        Command::Where { .. } | Command::Turn { .. } | Command::Hook { .. } => Some(
            "it reads the calling process's own terminal, which is on this machine, never in a pane on another host",
        ),
        Command::Watch { action } => Some(match action {
            WatchAction::Start(_) => {
                "watch jobs are kept by a poller that runs next to the tmux server and records results in this machine's state directory; a remote watch needs that poller on the host (not built yet)"
            }
            _ => "watch jobs live on the machine whose tmux runs them",
        }),
        Command::Agent { action } => Some(match action {
            AgentAction::Attach { .. } => "attaching needs a terminal on the host",
            _ => {
                "managed agents are launched from this machine's files (exec spec, project directory) and their replies read from transcripts on the machine that runs them"
            }
        }),
        Command::Side { action } => Some(match action {
            SideAction::Status { .. } | SideAction::History { .. } => {
                "the digest and history are read from the agent's transcript file, which is on the host, not here"
            }
            _ => "the side chat runs next to the agent it talks about",
        }),
        Command::Digest { .. } => Some("transcripts are files on the machine that runs the agent"),
        Command::Snapshots(_) => {
            Some("snapshots are stored on this machine; list them without --host")
        }
        Command::Demo { .. } => Some("the demo starts a private server on this machine"),
        Command::Init { .. } => Some("the snippet is for this machine's tmux.conf"),
        Command::Mcp => Some(
            "the MCP server also serves this machine's watch jobs, agents and side chat; run it without --host",
        ),
        Command::Install(_)
        | Command::Uninstall(_)
        | Command::Doctor { .. }
        | Command::Completions { .. }
        | Command::Man => Some("it configures and checks tmuxmate on this machine"),
    }
}

/// The host this invocation talks to, if any (`Ok(None)`: this machine).
pub fn selected(cli_host: Option<&str>, cmd: &Command) -> Result<Option<String>, CliError> {
    match cli_host {
        Some("") => Ok(None),
        Some(h) => {
            if let Some(why) = local_only(cmd) {
                return Err(CliError::usage(format!(
                    "refused: this command does not work with --host ({why}); run it without --host, \
                     or on the host itself (`ssh {h} tmuxmate ...`). With --host: list, send, paste, \
                     keys, capture, split, new-window, swap, run, kill"
                )));
            }
            Ok(Some(h.to_string()))
        }
        None => {
            let env = std::env::var("TMUXMATE_HOST")
                .ok()
                .filter(|h| !h.is_empty());
            Ok(env.filter(|_| local_only(cmd).is_none()))
        }
    }
}

/// The client for `host`'s server, after checking its tmux (cached for a while).
pub fn client(
    host: &str,
    socket: Option<&str>,
    path: Option<&std::path::Path>,
) -> Result<Tmux, CliError> {
    let r = Remote::new(host).map_err(CliError::usage)?;
    let tmux = Tmux::remote(Socket::resolve_remote(socket, path), r);
    Ok(tmux)
}
