//! Creating panes that tmuxmate owns.
//!
//! Owns: where new work goes (a new window in the caller's session, else in a session
//! named `tmuxmate`; a split only of a pane named explicitly), `history-limit` being in
//! force before the pane exists, and the `@tmuxmate-created` mark. Invariants: sessions
//! are found by exact name through their `$N` id, never by tmux's prefix matching; the
//! user's session-level `history-limit` is restored after creation; a command to run is
//! passed to tmux as one argv element (tmux hands it to `sh -c`), never parsed by tmux.

use crate::error::CliError;
use crate::policy::{Caller, CreatedMark};
use crate::tmux::Tmux;
use crate::tmux::panes;

pub const DEFAULT_HISTORY_LIMIT: u64 = 50_000;
pub const OWN_SESSION: &str = "tmuxmate";

#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    pub pane_id: String,
    pub target: String,
}

/// Quote words for `sh` (single quotes; `'` becomes `'\''`).
pub fn sh_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

pub fn sh_join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| sh_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

fn history_limit(tmux: &Tmux) -> u64 {
    tmux.run(&["show-options", "-gqv", "@tmuxmate-history-limit"])
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_HISTORY_LIMIT)
}

/// The `$N` id of the session named exactly `name`, if any.
pub fn session_by_name(tmux: &Tmux, name: &str) -> Result<Option<String>, CliError> {
    let fmt = crate::tmux::format::record_format(&["session_id", "session_name"]);
    let out = match tmux.run_bytes(&["list-sessions", "-F", &fmt], None) {
        Ok(o) => o,
        Err(e) if e.is_no_server() => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let recs = crate::tmux::format::parse_records(&out, 2)
        .map_err(|d| CliError::new(format!("unreadable list-sessions output: {d}")))?;
    Ok(recs
        .into_iter()
        .find(|r| r[1] == name)
        .map(|r| r[0].clone()))
}

/// The session new work goes into: the caller's, else `tmuxmate` (created if missing).
/// A freshly created `tmuxmate` session comes with a placeholder window, returned second,
/// that the caller removes once its own window exists.
pub fn work_session(tmux: &Tmux, caller: &Caller) -> Result<(String, Option<String>), CliError> {
    if let Some(p) = &caller.pane_id {
        let rows = panes::list_all(tmux)?;
        if let Some(r) = rows.iter().find(|r| &r.pane_id == p) {
            return Ok((r.session_id.clone(), None));
        }
    }
    if let Some(id) = session_by_name(tmux, OWN_SESSION)? {
        return Ok((id, None));
    }
    let (sid, placeholder) = new_session(tmux, OWN_SESSION, None)?;
    Ok((sid, Some(placeholder)))
}

/// A detached session named exactly `name` with a placeholder window (`cat`): the caller
/// creates its own window with `history-limit` in force, then kills the placeholder.
/// Returns `($N, @placeholder)`.
pub fn new_session(
    tmux: &Tmux,
    name: &str,
    cwd: Option<&str>,
) -> Result<(String, String), CliError> {
    let mut args = vec!["new-session", "-d", "-s", name];
    if let Some(c) = cwd {
        args.extend(["-c", c]);
    }
    args.extend(["-P", "-F", "#{session_id} #{window_id}", "cat"]);
    let out = tmux.run(&args)?;
    let mut it = out.split_whitespace();
    let sid = it.next().unwrap_or_default().to_string();
    let placeholder = it.next().unwrap_or_default().to_string();
    if !sid.starts_with('$') || !placeholder.starts_with('@') {
        return Err(CliError::new(format!(
            "tmux created session {name} but did not report its ids (got {out:?})"
        )));
    }
    Ok((sid, placeholder))
}

/// A new window for new work: in the caller's session, else in the `tmuxmate` session.
pub fn new_work_window(
    tmux: &Tmux,
    caller: &Caller,
    name: Option<&str>,
    cwd: Option<&str>,
    cmd: &[String],
) -> Result<Created, CliError> {
    let (session, placeholder) = work_session(tmux, caller)?;
    let r = new_window(tmux, caller, &session, name, cwd, cmd);
    if let Some(w) = placeholder {
        let _ = tmux.run(&["kill-window", "-t", &w]);
    }
    r
}

/// Run `f` with the session's `history-limit` raised to ours, then put the old one back.
fn with_history_limit<T>(
    tmux: &Tmux,
    session_id: &str,
    f: impl FnOnce() -> Result<T, CliError>,
) -> Result<T, CliError> {
    let old = tmux
        .run(&["show-options", "-qv", "-t", session_id, "history-limit"])
        .unwrap_or_default();
    let limit = history_limit(tmux).to_string();
    tmux.run(&["set-option", "-t", session_id, "history-limit", &limit])?;
    let r = f();
    let old = old.trim();
    let _ = if old.is_empty() {
        tmux.run(&["set-option", "-u", "-t", session_id, "history-limit"])
    } else {
        tmux.run(&["set-option", "-t", session_id, "history-limit", old])
    };
    r
}

fn finish(tmux: &Tmux, out: &str, caller: &Caller) -> Result<Created, CliError> {
    let mut it = out.trim_end_matches('\n').splitn(2, ' ');
    let pane_id = it.next().unwrap_or("").to_string();
    let target = it.next().unwrap_or("").to_string();
    if !pane_id.starts_with('%') {
        return Err(CliError::new(format!(
            "tmux created a pane but did not report its id (got {out:?})"
        )));
    }
    mark(tmux, &pane_id, caller)?;
    Ok(Created { pane_id, target })
}

/// Mark a pane as ours (survives every tmuxmate and agent restart: it lives in tmux).
pub fn mark(tmux: &Tmux, pane_id: &str, caller: &Caller) -> Result<(), CliError> {
    let v = CreatedMark::new(&caller.agent).to_json();
    tmux.run(&[
        "set-option",
        "-p",
        "-t",
        pane_id,
        "--",
        "@tmuxmate-created",
        &v,
    ])?;
    Ok(())
}

const PRINT: &str = "#{pane_id} #{session_name}:#{window_index}.#{pane_index}";

/// A new window in `session_id`, running `cmd` (empty = the default shell).
pub fn new_window(
    tmux: &Tmux,
    caller: &Caller,
    session_id: &str,
    name: Option<&str>,
    cwd: Option<&str>,
    cmd: &[String],
) -> Result<Created, CliError> {
    let shell_cmd = sh_join(cmd);
    let out = with_history_limit(tmux, session_id, || {
        let target = format!("{session_id}:");
        let mut args = vec!["new-window", "-d", "-t", &target, "-P", "-F", PRINT];
        if let Some(n) = name {
            args.extend(["-n", n]);
        }
        if let Some(c) = cwd {
            args.extend(["-c", c]);
        }
        if !cmd.is_empty() {
            args.push(&shell_cmd);
        }
        Ok(tmux.run(&args)?)
    })?;
    finish(tmux, &out, caller)
}

/// How a split is laid out.
pub struct Placement<'a> {
    pub horizontal: bool,
    pub size: Option<&'a str>,
    pub cwd: Option<&'a str>,
}

/// Split the resolved pane `pane_id` of session `session_id`.
pub fn split(
    tmux: &Tmux,
    caller: &Caller,
    session_id: &str,
    pane_id: &str,
    place: &Placement,
    cmd: &[String],
) -> Result<Created, CliError> {
    let (horizontal, size, cwd) = (place.horizontal, place.size, place.cwd);
    let shell_cmd = sh_join(cmd);
    let out = with_history_limit(tmux, session_id, || {
        let mut args = vec![
            "split-window",
            "-d",
            if horizontal { "-h" } else { "-v" },
            "-t",
            pane_id,
            "-P",
            "-F",
            PRINT,
        ];
        if let Some(s) = size {
            args.extend(["-l", s]);
        }
        if let Some(c) = cwd {
            args.extend(["-c", c]);
        }
        if !cmd.is_empty() {
            args.push(&shell_cmd);
        }
        Ok(tmux.run(&args)?)
    })?;
    finish(tmux, &out, caller)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(sh_quote("abc"), "abc");
        assert_eq!(sh_quote("a b"), "'a b'");
        assert_eq!(sh_quote("it's"), "'it'\\''s'");
        assert_eq!(sh_quote(""), "''");
        assert_eq!(sh_quote("$(x);"), "'$(x);'");
    }
}
