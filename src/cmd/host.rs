//! `--host`: which commands reach a tmux server on another machine, and how.
//!
//! Owns: the host default (`--host`, else `$TMUXMATE_HOST`; an empty `--host ''` means
//! this machine), the table of commands that work remotely and their route, and the
//! refusal for the others. Routes: plain tmux over ssh (list, send, paste, keys,
//! capture, split, new-window, swap, run, kill: nothing needed on the host but tmux), the
//! tmuxmate installed on the host (`tmuxmate remote install HOST`; watch, agents, agent but
//! attach, side status/history/report), and for `capture`/`send` one remote call when they can
//! (`capture -t %N`: one tmux command list; `send -t TEXT`: the host's tmuxmate when it
//! has one), else the several-call path over plain tmux. Invariants: a command that needs
//! this machine's `/proc`, files or terminal never silently runs against a remote
//! server: with an explicit `--host` it is refused (the hook fails soft instead), and
//! `$TMUXMATE_HOST` only applies to commands that work remotely.

use crate::cli::{AgentAction, Command, SideAction, WatchAction};
use crate::error::Error;
use crate::remote::call::{NEEDS_TMUXMATE, PLAIN_TMUX};
use crate::tmux::transport::ssh::Remote;
use crate::tmux::{Socket, Tmux};

/// How a command reaches another host.
enum Way {
    /// tmux over ssh, nothing else on the host.
    Tmux,
    /// The tmuxmate on the host, when it has one; else tmux over ssh.
    Either,
    /// The tmuxmate on the host.
    Tmuxmate,
    /// Not at all (why).
    No(&'static str),
}

fn way(cmd: &Command) -> Way {
    match cmd {
        Command::List { .. }
        | Command::Paste(_)
        | Command::Keys(_)
        | Command::Split(_)
        | Command::NewWindow(_)
        | Command::Swap(_)
        | Command::Run(_)
        | Command::Kill(_) => Way::Tmux,
        Command::Send(_) | Command::Capture(_) => Way::Either,
        Command::Where { .. } | Command::Turn { .. } | Command::Hook { .. } => Way::No(
            "it reads the calling process's own terminal, which is on this machine, never in a pane on another host",
        ),
        Command::Watch { action } => match action {
            WatchAction::Start(_)
            | WatchAction::List { .. }
            | WatchAction::Show(_)
            | WatchAction::Stop(_)
            | WatchAction::Reattach => Way::Tmuxmate,
            _ => Way::No("it is the watch machinery's own step on the machine that runs the job"),
        },
        Command::Agent { action } => match action {
            AgentAction::Attach { .. } => Way::No(
                "attaching needs a terminal on the host; use `ssh -t HOST tmux attach -t NAME`",
            ),
            AgentAction::Exec { .. } => Way::No("it runs inside the agent's own pane"),
            _ => Way::Tmuxmate,
        },
        Command::Side { action } => match action {
            SideAction::Status(_) | SideAction::History(_) | SideAction::Report(_) => Way::Tmuxmate,
            _ => Way::No("the side chat runs next to the agent it talks about"),
        },
        Command::Digest { .. } => {
            Way::No("transcripts are files on the machine that runs the agent")
        }
        Command::Agents(a) => match a.action {
            None => Way::Tmuxmate,
            Some(_) => Way::No("the snippet's keys and hooks act on this machine's tmux"),
        },
        Command::Dashboard(_) => Way::No(crate::dashboard::request::NOT_ON_HOST),
        Command::Snapshots(_) => {
            Way::No("snapshots are stored on this machine; list them without --host")
        }
        Command::Demo { .. } => Way::No("the demo starts a private server on this machine"),
        Command::Init { .. } => Way::No("the snippet is for this machine's tmux.conf"),
        Command::Mcp => Way::No(
            "the MCP server also serves this machine's watch jobs, agents and side chat; run it without --host",
        ),
        Command::Call => {
            Way::No("it is what another host's tmuxmate runs here for a --host command")
        }
        Command::Remote { .. } => {
            Way::No("`remote install` takes the host as its argument: tmuxmate remote install HOST")
        }
        Command::Install(_)
        | Command::Uninstall(_)
        | Command::Doctor { .. }
        | Command::Completions { .. }
        | Command::Man => Way::No("it configures and checks tmuxmate on this machine"),
    }
}

/// Where this invocation runs.
pub enum Route {
    /// This machine.
    Here,
    /// tmux on the host over ssh.
    Tmux(String),
    /// The host's tmuxmate if it has one, else tmux on the host.
    Either(String),
    /// The host's tmuxmate.
    Tmuxmate(String),
}

/// The route of this invocation.
pub fn route(cli_host: Option<&str>, cmd: &Command) -> Result<Route, Error> {
    let host = match cli_host {
        Some("") => return Ok(Route::Here),
        Some(h) => {
            if let Way::No(why) = way(cmd) {
                return Err(Error::usage(format!(
                    "refused: this command does not work with --host ({why}); run it without --host, \
                     or on the host itself (`ssh {h} tmuxmate ...`). With --host: {PLAIN_TMUX} \
                     (plain tmux on the host), and {NEEDS_TMUXMATE} (after `tmuxmate remote install {h}`)"
                )));
            }
            h.to_string()
        }
        None => match std::env::var("TMUXMATE_HOST")
            .ok()
            .filter(|h| !h.is_empty())
        {
            Some(h) if !matches!(way(cmd), Way::No(_)) => h,
            _ => return Ok(Route::Here),
        },
    };
    Ok(match way(cmd) {
        Way::Tmux => Route::Tmux(host),
        Way::Either => Route::Either(host),
        Way::Tmuxmate => Route::Tmuxmate(host),
        Way::No(_) => Route::Here,
    })
}

/// The client for `host`'s server, after checking its tmux (cached for a while).
pub fn client(
    host: &str,
    socket: Option<&str>,
    path: Option<&std::path::Path>,
) -> Result<Tmux, Error> {
    let r = Remote::new(host).map_err(Error::usage)?;
    let tmux = Tmux::remote(Socket::resolve_remote(socket, path), r);
    Ok(tmux)
}
