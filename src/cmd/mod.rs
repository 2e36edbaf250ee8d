//! Subcommand handlers: one file per subcommand group, each thin over the modules.
//!
//! Owns: dispatch and the shared output helpers. Invariants: output goes through `out`,
//! which treats a closed stdout (broken pipe) as success rather than panicking; once a
//! command runs on another host's tmuxmate (`at::At::Host`), what is printed is made
//! printable first (`shown`).

pub mod agent;
pub mod agents;
pub mod at;
pub mod call;
pub mod capture;
pub mod demo;
pub mod digest;
pub mod entry;
pub mod hook;
pub mod host;
pub mod init;
pub mod install;
pub mod keys;
pub mod kill;
pub mod list;
pub mod paste;
pub mod remote;
pub mod run;
pub mod send;
pub mod side;
pub mod snapshots;
pub mod split;
pub mod steps;
pub mod swap;
pub mod turn;
pub mod watch;
pub mod where_;

use std::io::Write;

use crate::cli::{Cli, Command};
use crate::error::CliResult;
use crate::tmux::{Socket, Tmux};

pub fn tmux_for(cli_socket: Option<&str>, cli_path: Option<&std::path::Path>) -> Tmux {
    Tmux::new(Socket::resolve(cli_socket, cli_path))
}

/// Set once this process prints what another host's tmuxmate answered.
static FROM_HOST: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From here on, what is printed came from another host: it is made printable (an ESC
/// or another control byte in it is shown, not obeyed).
fn from_host() {
    FROM_HOST.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// `text` as it may reach this terminal.
pub fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    if FROM_HOST.load(std::sync::atomic::Ordering::Relaxed) {
        std::borrow::Cow::Owned(crate::sys::printable::visible(text).0)
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Write to stdout; a closed pipe ends quietly.
pub fn out(text: &str) {
    let text = shown(text);
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(text.as_bytes());
    let _ = o.flush();
}

pub fn out_line(text: &str) {
    let text = shown(text);
    // Two writes under one lock, not a copy with the newline: a capture can be megabytes.
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = o.write_all(b"\n");
    }
    let _ = o.flush();
}

/// Write a line to stdout and report whether all of it got out (for deliveries, which
/// are confirmed only when printed).
pub fn try_out_line(text: &str) -> std::io::Result<()> {
    let mut line = text.to_string();
    if !line.ends_with('\n') {
        line.push('\n');
    }
    // One buffer ending in a newline: one write, so a kill cannot fall between pieces.
    let mut o = std::io::stdout().lock();
    o.write_all(line.as_bytes())?;
    o.flush()
}

pub fn out_json<T: serde::Serialize>(v: &T) {
    out_line(&serde_json::to_string_pretty(v).unwrap_or_else(|_| "null".into()));
}

/// `--json`: `v` as one document; else nothing (the command's effect is all it shows).
pub fn out_json_if<T: serde::Serialize>(json: bool, v: &T) {
    if json {
        out_json(v);
    }
}

/// `--json`: `v` as one document; else the line `text` makes of it.
pub fn out_json_or_line<T: serde::Serialize>(json: bool, v: &T, text: impl FnOnce(&T) -> String) {
    if json {
        out_json(v);
    } else {
        out_line(&text(v));
    }
}

pub fn dispatch(cli: Cli) -> CliResult {
    if matches!(cli.command, Command::Hook { .. })
        && cli.host.as_deref().is_some_and(|h| !h.is_empty())
    {
        // Unattended: a harness must never break because of us.
        crate::sys::state::log(
            "hook: --host given; the hook reads this machine's terminal only, nothing done",
        );
        return Ok(());
    }
    let (sock, path) = (cli.socket.as_deref(), cli.socket_path.as_deref());
    let chosen = sock.is_some() || path.is_some();
    let tmux = match host::route(cli.host.as_deref(), &cli.command)? {
        host::Route::Here => tmux_for(sock, path),
        host::Route::Tmux(h) => host::client(&h, sock, path)?,
        host::Route::Either(h) => {
            let remote_socket = Socket::resolve_remote(sock, path);
            if remote::fast(&h, &remote_socket, &cli.command)? {
                return Ok(());
            }
            host::client(&h, sock, path)?
        }
        host::Route::Tmuxmate(h) => {
            let socket = Socket::resolve_remote(sock, path);
            from_host();
            let at = at::At::Host {
                host: &h,
                socket: &socket,
            };
            return operation(&at, cli.command, chosen);
        }
    };
    match cli.command {
        c @ (Command::Watch { .. }
        | Command::Agent { .. }
        | Command::Side { .. }
        | Command::Agents(_)) => operation(&at::At::Here(&tmux), c, chosen),
        Command::Call => call::run(&tmux, chosen),
        c => local(&tmux, c),
    }
}

/// The commands whose operations also run on another host (`--host`: its tmuxmate).
fn operation(at: &at::At, cmd: Command, chosen: bool) -> CliResult {
    match cmd {
        Command::Watch { action } => watch::run(at, action),
        Command::Agent { action } => agent::run(at, action),
        Command::Side { action } => side::run(at, action),
        Command::Agents(a) => agents::run(at, a, chosen),
        _ => Err(crate::error::Error::usage(
            "refused: this command does not run on another host",
        )),
    }
}

/// The commands that run against `tmux` (this machine's server, or a host's over ssh).
fn local(tmux: &Tmux, cmd: Command) -> CliResult {
    match cmd {
        Command::Where { json } => where_::run(tmux, json),
        Command::Turn {
            agent,
            turn,
            refresh_interval_ms,
            max_chars,
            json,
        } => turn::run(tmux, &agent, turn, refresh_interval_ms, max_chars, json),
        Command::Hook {
            harness,
            refresh_interval_ms,
        } => {
            hook::run(tmux, harness, refresh_interval_ms);
            Ok(())
        }
        Command::List(a) => list::run(tmux, a.json),
        Command::Send(a) => send::run(tmux, a),
        Command::Paste(a) => paste::run(tmux, a),
        Command::Keys(a) => keys::run(tmux, a),
        Command::Capture(a) => capture::run(tmux, a),
        Command::Split(a) => split::run_split(tmux, a),
        Command::NewWindow(a) => split::run_new_window(tmux, a),
        Command::Swap(a) => swap::run(tmux, a),
        Command::Run(a) => run::run(tmux, a),
        Command::Kill(a) => kill::run(tmux, a),
        Command::Snapshots(a) => snapshots::run(tmux, a),
        Command::Digest { action } => digest::run(tmux, action),
        Command::Demo { keep } => demo::run(keep),
        Command::Init { what } => init::run(tmux, what),
        Command::Install(a) => install::install(a),
        Command::Uninstall(a) => install::uninstall(a),
        Command::Doctor { json } => install::doctor(tmux, json),
        Command::Completions { shell } => install::completions(shell),
        Command::Man => install::man(),
        Command::Mcp => crate::mcp::serve(tmux),
        Command::Remote { action } => remote::run(action),
        c => operation(&at::At::Here(tmux), c, false),
    }
}
