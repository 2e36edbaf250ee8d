//! Kill policy and execution behind `tmuxmate kill pane|window|session|server` and the
//! MCP `tmux_kill` tool: the one destructive operation.
//!
//! Order of checks, each a refusal that kills nothing: the target's syntax (exit 2), then
//! `--confirm` (exit 1), then exact resolution (rules 1-2; kill always needs `-t`, even
//! where other commands may fall back to a pane we created), then the self-kill guard,
//! then approval for `kill-<scope>` (rule 3, `approval.rs`). Invariants: only an id
//! (`%N`, `@N`, `$N`) read from a fresh snapshot reaches tmux's `kill-*`; the caller's
//! own pane, the window and session holding it, and the server it runs on are never
//! killed; when approval made us wait, the guard is checked again on a fresh snapshot.
//!
//! JSON (docs/json.md): `{"scope": "pane"|"window"|"session"|"server", "target":
//! "session:window.pane"|"session:window"|"session"|null, "paneId": "%N"|null, "windowId":
//! "@N"|null, "sessionId": "$N"|null (the one of the scope set), "killed": true}`.

use crate::targs;
use crate::tmux::Arg;
use serde::{Deserialize, Serialize};

use crate::control::approval;
use crate::control::kill_scope::KillScope;
use crate::control::policy;
use crate::error::Error;
use crate::tmux::Tmux;
use crate::tmux::panes::{self, PaneInfo};
use crate::tmux::target::Target;

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct KillJson {
    pub scope: &'static str,
    /// The killed object's tmux address when it was killed (`session:window.pane`,
    /// `session:window`, `session`), for reading; `null` for the server.
    pub target: Option<String>,
    /// The killed object's id under the key of its kind (the other two `null`; all three
    /// for the server).
    pub pane_id: Option<String>,
    pub window_id: Option<String>,
    pub session_id: Option<String>,
    pub killed: bool,
    /// For text mode: what was killed, and how it was approved; not part of the JSON.
    #[serde(skip)]
    pub description: String,
    #[serde(skip)]
    pub approved: Option<String>,
}

impl KillJson {
    pub fn render(&self) -> String {
        let how = self
            .approved
            .as_ref()
            .map(|h| format!(" ({h})"))
            .unwrap_or_default();
        format!("killed: {}{how}", self.description)
    }
}

pub fn scope_name(s: KillScope) -> &'static str {
    match s {
        KillScope::Pane => "pane",
        KillScope::Window => "window",
        KillScope::Session => "session",
        KillScope::Server => "server",
    }
}

/// What will be killed: the id tmux gets, and a one-line description for people.
struct Victim {
    id: Option<String>,
    /// Its tmux address, for the JSON's `target`.
    address: Option<String>,
    session_id: Option<String>,
    description: String,
}

// What to kill: the CLI's `kill` arguments (`--json` aside) and the MCP `tmux_kill`
// tool's; the flags' help is the doc of each field. (A plain comment: clap would make a
// doc comment here the `kill --help` text.)
#[derive(clap::Args, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct KillAsk {
    /// What to kill.
    pub scope: KillScope,
    /// The pane: `%N`, `session:window.pane`, or another tmux target (see `tmuxmate list`).
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// Required: without it nothing is killed.
    #[arg(long)]
    #[serde(default)]
    pub confirm: bool,
}

/// Kill what `target` names at `scope`, after every check above; `confirm` is the
/// caller's explicit yes (`--confirm`, `confirm: true`).
pub fn kill(tmux: &Tmux, a: &KillAsk) -> Result<KillJson, Error> {
    let (scope_kind, target, confirm) = (a.scope, a.target.as_deref(), a.confirm);
    let scope = scope_name(scope_kind);
    match (scope_kind, target) {
        (KillScope::Server, Some(t)) => {
            return Err(Error::usage(format!(
                "refused: kill server takes no -t (got {t:?}); it kills the whole tmux server this \
                 command talks to, which -L/-S select. Nothing was killed"
            )));
        }
        (KillScope::Server, None) => {}
        (_, Some(t)) => {
            Target::parse(t).map_err(|e| {
                Error::usage(format!("refused: kill {scope}: {e}. Nothing was killed"))
            })?;
        }
        (_, None) => {
            return Err(Error::usage(format!(
                "refused: kill {scope} needs -t naming the {scope} (e.g. -t %3 for a pane, @2 for \
                 a window, $1 for a session; see `tmuxmate list`). kill never guesses a target. \
                 Nothing was killed"
            )));
        }
    }
    if !confirm {
        let what = match target {
            Some(t) => format!("{scope} {t}"),
            None => "the tmux server".to_string(),
        };
        return Err(Error::refused(format!(
            "refused: kill {what} without --confirm; nothing was killed. Add --confirm to kill it"
        )));
    }

    let caller = crate::location::address::caller(tmux);
    let rows = panes::list_all(tmux)?;
    let victim = pick(tmux, &rows, scope_kind, target, &caller.agent)?;
    guard(
        &rows,
        caller.pane_id.as_deref(),
        scope_kind,
        victim.id.as_deref(),
    )?;

    let op = format!("kill-{scope}");
    let approved =
        approval::authorize(tmux, &op, victim.session_id.as_deref(), &victim.description)?;
    if approved.is_some() {
        // Approval can take as long as a person needs: panes may have moved meanwhile.
        let rows = panes::list_all(tmux)?;
        guard(
            &rows,
            caller.pane_id.as_deref(),
            scope_kind,
            victim.id.as_deref(),
        )?;
    }

    match (scope_kind, victim.id.as_deref()) {
        (KillScope::Server, _) => tmux.run(&["kill-server"])?,
        // Never widen a lost id into something bigger (an empty -t is "current" to tmux).
        (_, None) => {
            return Err(Error::refused(format!(
                "refused: kill {scope}: the target resolved to no id (a tmuxmate bug, please \
                 report it); nothing was killed"
            )));
        }
        (KillScope::Pane, Some(id)) => tmux.run(&targs!["kill-pane", "-t", Arg::id(id)])?,
        (KillScope::Window, Some(id)) => tmux.run(&targs!["kill-window", "-t", Arg::id(id)])?,
        (KillScope::Session, Some(id)) => tmux.run(&targs!["kill-session", "-t", Arg::id(id)])?,
    };

    let id = |k: KillScope| victim.id.clone().filter(|_| k == scope_kind);
    Ok(KillJson {
        scope,
        target: victim.address,
        pane_id: id(KillScope::Pane),
        window_id: id(KillScope::Window),
        session_id: id(KillScope::Session),
        killed: true,
        description: victim.description,
        approved,
    })
}

/// Resolve the target exactly, and lift a pane to its window or session by id.
fn pick(
    tmux: &Tmux,
    rows: &[PaneInfo],
    scope: KillScope,
    target: Option<&str>,
    agent: &str,
) -> Result<Victim, Error> {
    if scope == KillScope::Server {
        let sessions = distinct(rows.iter().map(|p| p.session_id.as_str()));
        let panes = distinct(rows.iter().map(|p| p.pane_id.as_str()));
        return Ok(Victim {
            id: None,
            address: None,
            session_id: None,
            description: format!(
                "kill the tmux server {} ({}, {})",
                tmux.socket.describe(),
                count(sessions, "session"),
                count(panes, "pane")
            ),
        });
    }
    // `run` has made sure a target is present; `resolve_in` would otherwise apply the
    // created-pane fallback, which kill never uses.
    let Some(t) = target else {
        return Err(Error::usage("refused: kill needs -t. Nothing was killed"));
    };
    let p = policy::resolve_in(tmux, rows, Some(t), agent)?;
    let victim = match scope {
        KillScope::Pane => Victim {
            id: Some(p.pane_id.clone()),
            address: Some(p.target()),
            session_id: Some(p.session_id.clone()),
            description: format!(
                "kill pane {} running {:?} in window {} {:?} of session {:?}",
                p.pane_id,
                if tmux.transport().sees_processes() {
                    p.pane_pid
                        .parse()
                        .ok()
                        .and_then(crate::sys::foreground::of)
                        .map(|f| f.0)
                        .unwrap_or_default()
                } else {
                    // The host's /proc is not ours: tmux's own name for it.
                    p.current_command.clone()
                },
                p.window_id,
                p.window_name,
                p.session_name
            ),
        },
        KillScope::Window => {
            let panes = distinct(
                rows.iter()
                    .filter(|r| r.window_id == p.window_id)
                    .map(|r| r.pane_id.as_str()),
            );
            Victim {
                id: Some(p.window_id.clone()),
                address: Some(format!("{}:{}", p.session_name, p.window_index)),
                session_id: Some(p.session_id.clone()),
                description: format!(
                    "kill window {} {:?} of session {:?} ({})",
                    p.window_id,
                    p.window_name,
                    p.session_name,
                    count(panes, "pane")
                ),
            }
        }
        KillScope::Session | KillScope::Server => {
            let mine = || rows.iter().filter(|r| r.session_id == p.session_id);
            let windows = distinct(mine().map(|r| r.window_id.as_str()));
            let panes = distinct(mine().map(|r| r.pane_id.as_str()));
            Victim {
                id: Some(p.session_id.clone()),
                address: Some(p.session_name.clone()),
                session_id: Some(p.session_id.clone()),
                description: format!(
                    "kill session {} {:?} ({}, {})",
                    p.session_id,
                    p.session_name,
                    count(windows, "window"),
                    count(panes, "pane")
                ),
            }
        }
    };
    Ok(victim)
}

/// "1 pane", "2 panes".
fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn distinct<'a>(it: impl Iterator<Item = &'a str>) -> usize {
    let mut v: Vec<&str> = it.collect();
    v.sort_unstable();
    v.dedup();
    v.len()
}

/// Refuse to kill the caller's own pane, or the window, session or server holding it.
fn guard(
    rows: &[PaneInfo],
    caller_pane: Option<&str>,
    scope: KillScope,
    id: Option<&str>,
) -> Result<(), Error> {
    let Some(me) = caller_pane else {
        return Ok(());
    };
    // A window linked into several sessions lists its panes once per session.
    let mine: Vec<&PaneInfo> = rows.iter().filter(|r| r.pane_id == me).collect();
    let Some(first) = mine.first() else {
        return Ok(());
    };
    let hit = match (scope, id) {
        (KillScope::Server, _) | (_, None) => true,
        (KillScope::Pane, Some(id)) => id == me,
        (KillScope::Window, Some(id)) => mine.iter().any(|r| r.window_id == id),
        (KillScope::Session, Some(id)) => mine.iter().any(|r| r.session_id == id),
    };
    if !hit {
        return Ok(());
    }
    let what = match scope {
        KillScope::Pane => format!("pane {me} is the pane this command runs in"),
        KillScope::Window => format!(
            "window {} holds pane {me}, where this command runs",
            id.unwrap_or(&first.window_id)
        ),
        KillScope::Session => format!(
            "session {} holds pane {me}, where this command runs",
            id.unwrap_or(&first.session_id)
        ),
        KillScope::Server => format!("this tmux server holds pane {me}, where this command runs"),
    };
    let from = match scope {
        KillScope::Server => "a terminal outside this tmux server".to_string(),
        other => format!("a pane outside that {}", scope_name(other)),
    };
    Err(Error::refused(format!(
        "refused: {what}, and tmuxmate kill never kills its caller's own pane, window, session or \
         server; nothing was killed. Run it from {from}"
    )))
}
