//! Split and new-window behind `tmuxmate split|new-window` and the MCP `tmux_split` tool:
//! panes tmuxmate creates and marks as its own, returned as `create::Created`.
//!
//! Invariants: without `-t`, new work goes into a new window (in the caller's session, else
//! the `tmuxmate` session), never a split of the user's current window. The program and
//! the start directory are checked where the pane will start, before anything is created:
//! here, or on the host a remote server's panes start on ([`HOST_CHECK`]).

use std::path::{Path, PathBuf};

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
    Err(not_found(prog, ""))
}

/// "command not found" for `prog`, looked up `where_` (empty: here).
fn not_found(prog: &str, where_: &str) -> Error {
    let mut e = Error::new(format!(
        "command not found: {prog:?} is not {}{where_} (nothing was created)",
        if prog.contains('/') {
            "an executable file"
        } else {
            "a program on PATH"
        }
    ))
    .with_hint("check the spelling, or give the program's full path");
    e.kind = crate::error::Kind::CommandNotFound;
    e
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

/// What tmux on the host is asked to start, checked there by one fixed script: `$1` the
/// start directory (empty: none), `$2` the program (empty: none to look up). The pane
/// runs its command in its start directory, so a program with a `/` (or a relative
/// `PATH` entry) is looked up from there, the way [`crate::sys::which`] looks here:
/// regular executable files, empty `PATH` entries skipped. It prints one word: `ok`,
/// `no-dir`, `no-entry` (tmux could not enter it either and would start the pane in
/// `HOME`) or `no-program`; after `ok` and a newline, the start directory made absolute
/// when one was given. tmux is given that one: releases differ in what a relative `-c`
/// is relative to (3.2a: not the client's directory).
pub const HOST_CHECK: &str = r#"d=$1 p=$2
if [ -n "$d" ]; then
  [ -d "$d" ] || { echo no-dir; exit 0; }
  CDPATH= cd -- "$d" 2>/dev/null || { echo no-entry; exit 0; }
fi
ok() { if [ -n "$d" ]; then printf 'ok\n%s' "$PWD"; else echo ok; fi; exit 0; }
if [ -n "$p" ]; then
  case $p in
  */*) [ -f "$p" ] && [ -x "$p" ] && ok ;;
  *) IFS=:; set -f
    for e in $PATH; do
      [ -n "$e" ] && [ -f "$e/$p" ] && [ -x "$e/$p" ] && ok
    done ;;
  esac
  echo no-program; exit 0
fi
ok"#;

/// The start directory as tmux takes it, after the program and the directory were found
/// where the pane will start: this machine's `PATH` and files when the server's panes see
/// them, else the host's ([`HOST_CHECK`], one call before anything is created).
fn checked_start(tmux: &Tmux, cmd: &[String], cwd: Option<&Path>) -> Result<Option<Text>, Error> {
    if tmux.transport().shares_files() {
        check_program(cmd)?;
        return cwd_text(cwd);
    }
    let host = tmux
        .transport()
        .host()
        .map_or_else(String::new, |h| h.to_string());
    let text = match cwd {
        // An empty one would be the script's "none", and tmux's client directory.
        Some(d) if d.as_os_str().is_empty() => return cwd_text(cwd),
        Some(d) => {
            Some(Text::from_os("--cwd", d.as_os_str()).map_err(|e| Error::usage(e.to_string()))?)
        }
        None => None,
    };
    let prog = match cmd.first() {
        Some(p) if p.is_empty() => return Err(not_found(p, &format!(" on host {host}"))),
        Some(p) if p.contains('/') || !SH_BUILTINS.contains(&p.as_str()) => p.as_str(),
        _ => "",
    };
    let dir = text.as_ref().map_or("", Text::as_str);
    if dir.is_empty() && prog.is_empty() {
        return Ok(text);
    }
    let Some(answer) =
        tmux.transport()
            .ask_where_panes_start(HOST_CHECK, &[dir, prog], tmux.timeout)
    else {
        check_program(cmd)?;
        return cwd_text(cwd);
    };
    let answer = answer?;
    // `ok` and the directory made absolute there: what tmux is given.
    if answer.status.success()
        && !dir.is_empty()
        && let Some(abs) = answer.stdout.strip_prefix(b"ok\n")
        && abs.starts_with(b"/")
    {
        use std::os::unix::ffi::OsStrExt;
        return Text::from_os("--cwd", std::ffi::OsStr::from_bytes(abs))
            .map(Some)
            .map_err(|e| Error::usage(e.to_string()));
    }
    let said = String::from_utf8_lossy(&answer.stdout);
    let shown = cwd.map_or_else(String::new, |d| d.display().to_string());
    match (answer.status.success(), said.trim_end_matches('\n')) {
        (true, "ok") => Ok(text),
        (true, "no-dir") => Err(Error::usage(format!(
            "--cwd {shown} is not a directory on host {host} (nothing was created)"
        ))),
        (true, "no-entry") => Err(Error::usage(format!(
            "--cwd {shown} is a directory on host {host} that its login cannot enter, so \
             tmux there would start the pane elsewhere (nothing was created)"
        ))),
        (true, "no-program") => Err(not_found(prog, &format!(" on host {host}"))),
        _ => Err(Error::new(format!(
            "cannot check the new pane's program and directory on host {host}: its shell \
             answered {:?} (exit {:?}, stderr {:?}); nothing was created",
            clipped(&said),
            answer.status.code(),
            clipped(&String::from_utf8_lossy(&answer.stderr))
        ))),
    }
}

/// At most 200 characters of what a host printed, for a message.
fn clipped(s: &str) -> String {
    s.trim().chars().take(200).collect()
}

pub fn split(tmux: &Tmux, a: &SplitAsk) -> Result<Created, Error> {
    validate_size(a.size.as_deref())?;
    let cwd = checked_start(tmux, &a.cmd, a.cwd.as_deref())?;
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
    let cwd = checked_start(tmux, cmd, a.cwd.as_deref())?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// What [`HOST_CHECK`] prints for `dir` and `prog`, run from `cwd` with `path`.
    fn host_says(cwd: &Path, path: &str, dir: &str, prog: &str) -> String {
        let mut cmd = crate::sys::process::command("/bin/sh");
        cmd.args(["-c", HOST_CHECK, "sh", dir, prog])
            .current_dir(cwd)
            .env("PATH", path)
            .env("CDPATH", cwd.join("sub"));
        let out = crate::sys::process::run(cmd, None, std::time::Duration::from_secs(10)).unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout)
            .unwrap()
            .trim_end()
            .to_string()
    }

    #[test]
    fn the_host_check_looks_as_tmux_will_start_the_pane() {
        let d = std::env::temp_dir().join(format!("tmuxmate-hostcheck-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let bin = d.join("bin");
        for x in [&bin, &d.join("sub/only-in-cdpath"), &d.join("data")] {
            std::fs::create_dir_all(x).unwrap();
        }
        let prog = bin.join("prog");
        std::fs::write(&prog, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(d.join("data/plain"), "not runnable").unwrap();
        std::fs::create_dir_all(d.join("data/adir")).unwrap();
        let path = format!(":{}::{}", d.join("data").display(), bin.display());
        let says = |dir: &str, prog: &str| host_says(&d, &path, dir, prog);
        assert_eq!(says("", ""), "ok");
        assert_eq!(says("bin", ""), format!("ok\n{}", bin.display()));
        assert_eq!(
            says(&d.display().to_string(), "prog"),
            format!("ok\n{}", d.display())
        );
        assert_eq!(says("missing", "prog"), "no-dir");
        // CDPATH is not where tmux looks.
        assert_eq!(says("only-in-cdpath", ""), "no-dir");
        assert_eq!(says("", "prog"), "ok");
        assert_eq!(says("", "missing"), "no-program");
        // Directories and data files of the name are skipped, as `which` skips them.
        assert_eq!(says("", "plain"), "no-program");
        assert_eq!(says("", "adir"), "no-program");
        // A path is taken from the start directory, where the pane runs it.
        assert_eq!(says("bin", "./prog"), format!("ok\n{}", bin.display()));
        assert_eq!(says("", "./prog"), "no-program");
        assert_eq!(says("", "bin/prog"), "ok");
        // Values are data: nothing in them runs, globs stay words.
        assert_eq!(says("$(touch NEVER)", "`touch NEVER`"), "no-dir");
        assert_eq!(says("", "$(touch NEVER)"), "no-program");
        assert_eq!(says("", "pro*"), "no-program");
        assert_eq!(says("-P", "-x"), "no-dir");
        assert!(!d.join("NEVER").exists());
        let _ = std::fs::remove_dir_all(&d);
    }
}
