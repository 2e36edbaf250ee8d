//! Split and new-window behind `tmuxmate split|new-window` and the MCP `tmux_split` tool:
//! panes tmuxmate creates and marks as its own, returned as `create::Created`.
//!
//! Invariant: without `-t`, new work goes into a new window (in the caller's session, else
//! the `tmuxmate` session), never a split of the user's current window.

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

/// Where and how to split (the CLI's `split` flags, the MCP tool's arguments).
pub struct SplitRequest<'a> {
    pub target: Option<&'a str>,
    pub horizontal: bool,
    pub size: Option<&'a str>,
    pub cwd: Option<&'a std::path::Path>,
    pub cmd: &'a [String],
}

pub fn split(tmux: &Tmux, a: &SplitRequest) -> Result<Created, Error> {
    validate_size(a.size)?;
    check_program(a.cmd)?;
    let cwd = cwd_text(a.cwd)?;
    let caller = crate::location::address::caller(tmux);
    match a.target {
        None => create::new_work_window(tmux, &caller, None, cwd.as_ref(), a.cmd),
        Some(t) => {
            let p = policy::resolve(tmux, Some(t), &caller.agent)?;
            let place = Placement {
                horizontal: a.horizontal,
                size: a.size,
                cwd: cwd.as_ref(),
            };
            create::split(tmux, &caller, &p.session_id, &p.pane_id, &place, a.cmd)
        }
    }
}

pub fn new_window(
    tmux: &Tmux,
    target: Option<&str>,
    name: Option<&str>,
    cwd: Option<&std::path::Path>,
    cmd: &[String],
) -> Result<Created, Error> {
    check_program(cmd)?;
    let cwd = cwd_text(cwd)?;
    let name = match name {
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
