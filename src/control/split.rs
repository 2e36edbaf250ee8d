//! Split and new-window behind `tmuxmate split|new-window` and the MCP `tmux_split` tool:
//! panes tmuxmate creates and marks as its own, returned as `create::Created`.
//!
//! Invariant: without `-t`, new work goes into a new window (in the caller's session, else
//! the `tmuxmate` session), never a split of the user's current window.

use std::path::PathBuf;

use serde::Deserialize;

use crate::control::create::{self, Created, Placement};
use crate::control::policy;
use crate::error::Error;
use crate::tmux::target::Target;
use crate::tmux::{Text, Tmux};

fn cwd_text(p: Option<&std::path::Path>) -> Result<Option<Text>, Error> {
    match p {
        None => Ok(None),
        Some(d) if d.is_dir() => Text::from_os("--cwd", d.as_os_str())
            .map(Some)
            .map_err(|e| Error::usage(e.to_string())),
        Some(d) => Err(Error::usage(format!(
            "--cwd {} is not a directory",
            d.display()
        ))),
    }
}

/// Words `sh -c` runs without looking for a program.
const SH_BUILTINS: &[&str] = &[
    "exec", "cd", "exit", ".", ":", "eval", "set", "export", "unset", "ulimit", "umask", "trap",
    "wait", "command", "builtin", "true", "false", "read", "test", "[", "echo", "printf", "times",
];

/// The program of a pane's command must exist before the pane does: tmux would create the
/// pane anyway and it would die at once, leaving the caller with a dead pane id. New
/// panes get the PATH of the client that creates them (ours), so ours is the one to search.
pub fn check_program(cmd: &[String]) -> Result<(), Error> {
    let Some(prog) = cmd.first() else {
        return Ok(());
    };
    let found = (!prog.contains('/') && SH_BUILTINS.contains(&prog.as_str()))
        || crate::sys::which::which(prog).is_some();
    if found {
        return Ok(());
    }
    let mut e = Error::new(format!(
        "command not found: {prog:?} is not {} (nothing was created)",
        if prog.contains('/') {
            "an executable file"
        } else {
            "a program on PATH"
        }
    ))
    .with_hint("check the spelling, or give the program's full path");
    e.kind = crate::error::Kind::CommandNotFound;
    Err(e)
}

fn validate_size(s: Option<&str>) -> Result<(), Error> {
    if let Some(s) = s {
        let n = s.strip_suffix('%').unwrap_or(s);
        if !n
            .parse::<u32>()
            .is_ok_and(|v| v > 0 && (!s.ends_with('%') || v < 100))
        {
            return Err(Error::usage(format!(
                "--size {s:?} is not a size: use cells (e.g. 20) or a percentage (e.g. 30%)"
            )));
        }
    }
    Ok(())
}

// Where and how to split: the CLI's `split` flags (`--json` aside) and the MCP
// `tmux_split` tool's arguments; the flags' help is the doc of each field. `vertical` is
// the CLI's alone (stacked is the default either way). (Plain comments on the request
// types: clap would make a doc comment here the command's `--help` text.)
#[derive(clap::Args, Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SplitAsk {
    /// The pane: `%N`, `session:window.pane`, or another tmux target (see `tmuxmate list`).
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// Side by side.
    #[arg(long, conflicts_with = "vertical")]
    #[serde(default)]
    pub horizontal: bool,
    /// Stacked (the default).
    #[arg(long)]
    #[serde(skip)]
    pub vertical: bool,
    /// Size of the new pane, e.g. 30%.
    #[arg(long, value_name = "N%")]
    pub size: Option<String>,
    /// Working directory of the new pane (default: the caller's).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Command to run in the new pane (after --; default: your shell).
    #[arg(last = true)]
    #[serde(default)]
    pub cmd: Vec<String>,
}

// What `new-window` asks for (the CLI's flags, `--json` aside; the MCP tool makes a
// window through `tmux_split` without a target).
#[derive(clap::Args, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct NewWindowAsk {
    /// Session to create the window in (default: the caller's, else a `tmuxmate` session).
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// Name of the new window.
    #[arg(long)]
    pub name: Option<String>,
    /// Working directory of the new pane (default: the caller's).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Command to run in the new window (after --; default: your shell).
    #[arg(last = true)]
    #[serde(default)]
    pub cmd: Vec<String>,
}

pub fn split(tmux: &Tmux, a: &SplitAsk) -> Result<Created, Error> {
    validate_size(a.size.as_deref())?;
    check_program(&a.cmd)?;
    let cwd = cwd_text(a.cwd.as_deref())?;
    let caller = crate::location::address::caller(tmux);
    match a.target.as_deref() {
        None => create::new_work_window(tmux, &caller, None, cwd.as_ref(), &a.cmd),
        Some(t) => {
            let p = policy::resolve(tmux, Some(t), &caller.agent)?;
            let place = Placement {
                horizontal: a.horizontal,
                size: a.size.as_deref(),
                cwd: cwd.as_ref(),
            };
            create::split(tmux, &caller, &p.session_id, &p.pane_id, &place, &a.cmd)
        }
    }
}

pub fn new_window(tmux: &Tmux, a: &NewWindowAsk) -> Result<Created, Error> {
    let (target, cmd) = (a.target.as_deref(), &a.cmd);
    check_program(cmd)?;
    let cwd = cwd_text(a.cwd.as_deref())?;
    let name = match a.name.as_deref() {
        Some("") => return Err(Error::usage("--name must not be empty")),
        Some(n) => Some(Text::new("--name", n).map_err(|e| Error::usage(e.to_string()))?),
        None => None,
    };
    let caller = crate::location::address::caller(tmux);
    let (name, cwd) = (name.as_ref(), cwd.as_ref());
    match target {
        None => create::new_work_window(tmux, &caller, name, cwd, cmd),
        Some(t) => {
            let parsed = Target::parse(t).map_err(Error::usage)?;
            let rows = crate::tmux::panes::list_all(tmux)?;
            let session = parsed
                .resolve(&rows, t)
                .map_err(Error::new)?
                .session_id
                .clone();
            create::new_window(tmux, &caller, &session, name, cwd, cmd)
        }
    }
}
