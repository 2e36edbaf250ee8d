//! A managed agent session as the bridge finds it: its contract, its adapter, its pinned
//! pane, the CLI running there, and where its replies are recorded.
//!
//! Owns: resolving a name to exactly one managed session, checking the contract against
//! what is asked (adapter, project, permission mode), checking the pinned pane (exists,
//! alive, in the session, its foreground the CLI by real executable), and pinning the
//! transcript a send is recorded in. Invariant: every refusal names the check that failed.

use crate::targs;
use crate::tmux::Arg;

use super::adapters::{self, Adapter, ReplySource};
use super::contract::{self, Contract, SendMark};
use super::hints::{attach_line, tm_hint};
use super::transcript;
use crate::error::Error;
use crate::tmux::Tmux;
use crate::tmux::panes;

/// The adapter of a managed session (custom sessions carry their CLI path).
pub fn adapter_of(c: &Contract) -> Result<Adapter, Error> {
    if c.adapter == adapters::AdapterName::Custom.as_str() {
        return Ok(adapters::custom(&c.cli, ".")); // ready pattern is only used at start
    }
    adapters::by_name(&c.adapter).ok_or_else(|| {
        Error::refused(format!(
            "refused: session {} is not managed by a known adapter ({:?})",
            c.name, c.adapter
        ))
    })
}

/// Resolve a managed session by exact name.
pub fn resolve(tmux: &Tmux, name: &str) -> Result<(Contract, Adapter), Error> {
    let Some(sid) = contract::find(tmux, name)? else {
        return Err(Error::refused(format!(
            "refused: no tmux session is named exactly {name:?} (see `{}`)",
            tm_hint(tmux, &["agent", "list"])
        )));
    };
    let c = contract::read(tmux, &sid)?;
    if !c.managed {
        return Err(Error::refused(format!(
            "refused: session {name} is not managed by tmuxmate; it was not started with `tmuxmate agent start`"
        )));
    }
    let a = adapter_of(&c)?;
    if !c.name.starts_with(&format!("{}-", a.prefix)) {
        return Err(Error::refused(format!(
            "refused: session {name} is outside the {} adapter's namespace ({}-*)",
            a.name, a.prefix
        )));
    }
    Ok((c, a))
}

/// The pinned pane exists, is alive, belongs to the session, and runs the CLI; returns
/// the pane's process id.
pub fn check_pane(tmux: &Tmux, c: &Contract, a: &Adapter) -> Result<i32, Error> {
    let rows = panes::query(
        tmux,
        &targs!["list-panes", "-s", "-t", Arg::id(&c.session_id)],
    )?;
    let Some(p) = rows.iter().find(|p| p.pane_id == c.pane) else {
        return Err(Error::refused(format!(
            "refused: the pinned pane {} of session {} is gone (was it closed by hand?); stop the session with `{}` and start again",
            c.pane,
            c.name,
            tm_hint(tmux, &["agent", "stop", &c.name, "--confirm"])
        )));
    };
    if p.dead {
        return Err(Error::refused(format!(
            "refused: the {} CLI in pane {} of session {} has exited; inspect it ({}) and stop the session with `{}`",
            a.name,
            c.pane,
            c.name,
            attach_line(tmux, &c.name),
            tm_hint(tmux, &["agent", "stop", &c.name, "--confirm"])
        )));
    }
    let pid: i32 = p.pane_pid.parse().unwrap_or(0);
    let fg = crate::sys::procfs::stat(pid).map(|s| if s.tpgid > 0 { s.tpgid } else { pid });
    let held = fg.map_or(Err(vec![]), |g| crate::sys::procfs::group_holds(g, &a.exes));
    if let Err(exes) = held {
        return Err(Error::refused(format!(
            "refused: the foreground of pane {} is {:?}, not the {} CLI ({}); was the CLI restarted by hand? inspect: {}",
            c.pane,
            exes,
            a.name,
            a.exes.join("/"),
            attach_line(tmux, &c.name)
        )));
    }
    Ok(pid)
}

/// The session id a running Claude uses now. Claude 2.1.332 keeps
/// `~/.claude/sessions/<pid>.json` with the live `sessionId`, rewritten when `/clear`
/// starts a new session in the same process (the transcript moves to the new id's file).
pub fn claude_live_session(pid: i32) -> Option<String> {
    let p = transcript::claude_dir()
        .join("sessions")
        .join(format!("{pid}.json"));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).ok()?).ok()?;
    if v["pid"].as_i64() != Some(pid as i64) {
        return None;
    }
    v["sessionId"]
        .as_str()
        .filter(|s| !s.is_empty() && !s.contains(['/', '\0']))
        .map(str::to_string)
}

fn pane_pid(tmux: &Tmux, pane: &str) -> Option<i32> {
    tmux.run(&targs![
        "display-message",
        "-p",
        "-t",
        Arg::id(pane),
        "#{pane_pid}"
    ])
    .ok()?
    .trim()
    .parse()
    .ok()
}

/// Pin the record the reply is read from: Codex's rollout once it appears; Claude's
/// live session after a `/clear`; Gemini's new chat file after a `/clear` (with `mark`,
/// once it holds that message's prompt). With `mark`, Claude's new session is taken only when
/// it holds that message's prompt (and the mark then reads it from the start).
pub fn pin_record(
    tmux: &Tmux,
    c: &mut Contract,
    a: &Adapter,
    mark: Option<&SendMark>,
) -> Result<(), Error> {
    match a.reply {
        ReplySource::CodexRollout if c.rollout.is_empty() => {
            let since = mark.map(|m| m.at).unwrap_or(0);
            if let Some(p) = transcript::find_rollout(&c.project, since) {
                c.rollout = p.to_string_lossy().into_owned();
                contract::set(
                    tmux,
                    &c.session_id,
                    crate::tmux::options::ROLLOUT.name,
                    &c.rollout,
                )?;
            }
        }
        ReplySource::ClaudeTranscript => {
            let Some(live) = pane_pid(tmux, &c.pane).and_then(claude_live_session) else {
                return Ok(());
            };
            if live == c.cli_session {
                return Ok(());
            }
            if let Some(m) = mark {
                let Some(f) = transcript::claude_transcript(&c.project, &live) else {
                    return Ok(());
                };
                if !transcript::claude_turn(&f, 0, &m.head).submitted {
                    return Ok(());
                }
                let m2 = SendMark {
                    offset: 0,
                    ..m.clone()
                };
                set_last_send(tmux, c, m2)?;
            }
            set_cli_session(tmux, c, live)?;
        }
        ReplySource::GeminiChat => {
            // Our prompt is not in the session's chat file: a `/clear` may have moved the
            // conversation to a new session (a new file beside it).
            let (Some(m), Some(f)) = (mark, reply_file(c, a)) else {
                return Ok(());
            };
            if super::gemini_chat::chat_turn(&f, m.offset, m.ino, m.at, &m.head).submitted {
                return Ok(());
            }
            let Some((sid, _)) = super::gemini_chat::moved_to(&f, m.at, &m.head) else {
                return Ok(());
            };
            let m2 = SendMark {
                offset: 0,
                ino: 0,
                ..m.clone()
            };
            set_last_send(tmux, c, m2)?;
            set_cli_session(tmux, c, sid)?;
        }
        _ => {}
    }
    Ok(())
}

/// The send mark, re-pinned to the record file the conversation moved to.
fn set_last_send(tmux: &Tmux, c: &mut Contract, m: SendMark) -> Result<(), Error> {
    contract::set(
        tmux,
        &c.session_id,
        crate::tmux::options::LAST_SEND.name,
        &serde_json::to_string(&m).unwrap_or_default(),
    )?;
    c.last_send = Some(m);
    Ok(())
}

/// The CLI's own session id, after a `/clear` gave it a new one.
fn set_cli_session(tmux: &Tmux, c: &mut Contract, sid: String) -> Result<(), Error> {
    c.cli_session = sid;
    contract::set(
        tmux,
        &c.session_id,
        crate::tmux::options::CLI_SESSION.name,
        &c.cli_session,
    )
}

/// The file the reply is read from, if known now.
pub fn reply_file(c: &Contract, a: &Adapter) -> Option<std::path::PathBuf> {
    match a.reply {
        ReplySource::ClaudeTranscript if !c.cli_session.is_empty() => {
            transcript::claude_transcript(&c.project, &c.cli_session)
        }
        ReplySource::CodexRollout if !c.rollout.is_empty() => Some(c.rollout.clone().into()),
        ReplySource::GeminiChat if !c.cli_session.is_empty() => {
            super::gemini_chat::chat_file(&c.cli_session)
        }
        _ => None,
    }
}

/// Check an existing session's contract against what the caller asks for.
pub fn check_contract(
    tmux: &Tmux,
    c: &Contract,
    adapter: &Adapter,
    project: &str,
    mode: Option<&str>,
) -> Result<(), Error> {
    let name = &c.name;
    if !c.managed {
        return Err(Error::refused(format!(
            "refused: a tmux session named {name} exists but tmuxmate does not manage it; rename or remove it yourself, or work from another project"
        )));
    }
    if c.adapter != adapter.name.as_str() {
        return Err(Error::refused(format!(
            "refused: session {name} is managed for the {} adapter, not {}",
            c.adapter, adapter.name
        )));
    }
    if !name.starts_with(&format!("{}-", adapter.prefix)) {
        return Err(Error::refused(format!(
            "refused: session {name} is outside the {} namespace ({}-*)",
            adapter.name, adapter.prefix
        )));
    }
    if c.project != project {
        return Err(Error::refused(format!(
            "refused: session {name} works on project {}, but you are in {project}",
            c.project
        )));
    }
    if let Some(m) = mode
        && c.mode != m
    {
        return Err(Error::refused(format!(
            "refused: session {name} runs with permission mode {}, you asked for {m}; stop it (`{}`) to change the mode",
            c.mode,
            tm_hint(tmux, &["agent", "stop", name, "--confirm"])
        )));
    }
    Ok(())
}
