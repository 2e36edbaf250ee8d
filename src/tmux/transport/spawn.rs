//! One client process for one tmux call: the `tmux` client on this machine, or the `ssh`
//! that carries it to another host.
//!
//! Owns: finding the program once per process, the environment of a call that can start
//! a server, and the typed errors of a process that could not run or finish. Invariants:
//! every call has its deadline (`crate::sys::process::run`); a call that can start a
//! server (`new-session`) runs with `server_env` only, because a new server copies its
//! first client's whole environment into its global environment, where every later pane,
//! hook and `show-environment -g` would see the caller's secrets.

use std::path::PathBuf;
use std::time::Duration;

use crate::sys::process;
use crate::tmux::error::TmuxError;

/// `program` as an absolute path when PATH has it (cached per process), else as given.
fn resolve_program(program: &str) -> PathBuf {
    static CACHE: std::sync::OnceLock<std::sync::Mutex<Vec<(String, PathBuf)>>> =
        std::sync::OnceLock::new();
    if program.contains('/') {
        return PathBuf::from(program);
    }
    let cache = CACHE.get_or_init(Default::default);
    if let Ok(c) = cache.lock()
        && let Some((_, p)) = c.iter().find(|(n, _)| n == program)
    {
        return p.clone();
    }
    let found = crate::sys::which::which(program);
    let p = found.unwrap_or_else(|| PathBuf::from(program));
    if let Ok(mut c) = cache.lock() {
        c.push((program.to_string(), p.clone()));
    }
    p
}

/// True for a call that starts the server when none runs.
fn may_start_server(args: &[&str]) -> bool {
    matches!(
        args.first(),
        Some(&"new-session") | Some(&"new") | Some(&"start-server") | Some(&"start")
    )
}

/// Run `argv` (the process that carries the tmux call `args`) once under `timeout`;
/// `isolate_env`: without `TMUX`/`TMUX_PANE` (starting a private server).
pub fn run(
    args: &[&str],
    argv: &[String],
    input: Option<&[u8]>,
    timeout: Duration,
    isolate_env: bool,
) -> Result<process::Finished, TmuxError> {
    // The absolute path, found once: the child then makes one execve, not one per PATH
    // entry (this is on the per-turn hot path).
    let program = resolve_program(&argv[0]);
    let mut cmd = process::command(&program);
    cmd.args(&argv[1..]);
    if may_start_server(args) {
        cmd.env_clear().envs(
            std::env::vars_os()
                .filter(|(k, _)| k.to_str().is_some_and(crate::tmux::env::server_env_allowed)),
        );
    }
    if isolate_env {
        cmd.env_remove("TMUX").env_remove("TMUX_PANE");
    }
    match process::run(cmd, input, timeout) {
        Ok(out) => Ok(out),
        Err(process::Failure::NotFound) => Err(TmuxError::NotInstalled {
            program: argv[0].clone(),
        }),
        Err(process::Failure::TimedOut) => Err(TmuxError::Timeout {
            argv: argv.to_vec(),
            after: timeout,
        }),
        Err(
            e @ (process::Failure::Spawn(_)
            | process::Failure::Wait(_)
            | process::Failure::TooLarge(_)),
        ) => Err(TmuxError::Spawn {
            argv: argv.to_vec(),
            reason: e.to_string(),
        }),
    }
}
