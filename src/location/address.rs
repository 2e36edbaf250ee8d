//! Agent addresses: which ones exist, what `--notify` names, and where a cleared
//! conversation's items go.
//!
//! Owns: resolving a user-given address to one tmuxmate can deliver to, the list of known
//! agents for error messages, and the session-start bookkeeping of the hooks. An address
//! is *known* when its ledger records a per-turn call or a hook's session start.
//! Invariants: an address nobody reads is refused, never queued to; a pane id resolves
//! only through the agent recorded on that pane (`@tmuxmate-agent`, written by the agent's
//! own per-turn call) or the pane's own address when that made per-turn calls; on Claude's
//! `/clear` (a new session id in the same pane) the items queued for the pane's previous
//! address move to the new one once, and later ones follow (`Ledger::move_to`).

use crate::error::Error;
use crate::location::Reading;
use crate::location::ledger::{self, Ledger};
use crate::sys::state;
use crate::targs;
use crate::tmux::Arg;
use crate::tmux::Tmux;
use crate::tmux::panes;

/// How many known agents an error message lists.
const LIST_MAX: usize = 10;

/// The address `what` (e.g. "--notify") names, or a clear refusal listing known agents.
pub fn resolve(tmux: &Tmux, what: &str, addr: &str) -> Result<String, Error> {
    ledger::check_address(what, addr).map_err(Error::usage)?;
    if Ledger::for_agent(addr).peek().known() {
        return Ok(addr.to_string());
    }
    if is_pane_id(addr) {
        let rows = panes::list_all(tmux)?;
        let Some(p) = rows.iter().find(|p| p.pane_id == addr) else {
            return Err(Error::new(format!(
                "{what} {addr}: there is no pane {addr} on this tmux server{}",
                known_hint()
            )));
        };
        if !p.agent.is_empty() && Ledger::for_agent(&p.agent).peek().known() {
            return Ok(p.agent.clone());
        }
        // A hookless agent's per-turn calls use the pane's own address.
        let sock = tmux
            .run(&targs![
                "display-message",
                "-p",
                "-t",
                Arg::id(&p.pane_id),
                "#{socket_path}"
            ])
            .unwrap_or_default();
        let own = format!("pane:{}:{}", sock.trim_end(), p.pane_id);
        if Ledger::for_agent(&own).peek().known() {
            return Ok(own);
        }
        return Err(Error::new(format!(
            "{what} {addr}: no agent is known in pane {addr} (an agent becomes known at its first per-turn call through `tmuxmate hook` or `tmuxmate turn`){}",
            known_hint()
        )));
    }
    Err(Error::new(format!(
        "{what} {}: no agent with that address is known (an address is a harness session id or `turn --agent` name that made a per-turn call, or a pane id such as %3 whose agent did){}",
        shown(addr),
        known_hint()
    )))
}

/// For a `watch start` without `--notify`: a warning when the default address (the
/// calling pane's agent, else the caller's own id) has no reader yet.
pub fn default_notify_warning(agent: &str) -> Option<String> {
    if Ledger::for_agent(agent).peek().known() {
        return None;
    }
    Some(format!(
        "warning: no agent is known at the default address {} (no per-turn call came from it yet); \
         the result is queued there and kept for `tmuxmate watch show`. Name the agent with --notify to deliver it elsewhere{}",
        shown(agent),
        known_hint()
    ))
}

fn is_pane_id(s: &str) -> bool {
    s.len() > 1 && s.starts_with('%') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

/// An address as shown in a message: quoted, and cut when long.
fn shown(addr: &str) -> String {
    if addr.chars().count() > 80 {
        let head: String = addr.chars().take(60).collect();
        format!("{head:?}... ({} bytes)", addr.len())
    } else {
        format!("{addr:?}")
    }
}

/// "; known agents: ..." (newest first), or how to make one known.
fn known_hint() -> String {
    let known: Vec<String> = ledger::all_agents(200)
        .into_iter()
        .filter(|(_, st)| st.known() && st.moved_to.is_none())
        .map(|(a, _)| shown(&a))
        .take(LIST_MAX + 1)
        .collect();
    if known.is_empty() {
        "; no agent is known yet (run the agent's per-turn hook once, or `tmuxmate turn --agent NAME`)".into()
    } else {
        let more = if known.len() > LIST_MAX { ", ..." } else { "" };
        format!(
            "; known agents: {}{more}",
            known[..known.len().min(LIST_MAX)].join(", ")
        )
    }
}

/// A hook saw a session start (or a compaction): the address becomes known, the pane
/// remembers it, and after `/clear` the pane's previous address hands its items over.
/// `reading` is the tty-verified location when there is one.
pub fn session_started(
    tmux: &Tmux,
    agent: &str,
    source: Option<&str>,
    reading: Option<&Reading>,
) -> Result<(), String> {
    let l = Ledger::for_agent(agent);
    l.seen().map_err(|e| format!("ledger: {e}"))?;
    if matches!(source, Some("compact" | "clear")) {
        l.forget().map_err(|e| format!("ledger: {e}"))?;
    }
    let Some(r) = reading else {
        return Ok(());
    };
    let prev = r.agent_option.as_str();
    if source == Some("clear") && !prev.is_empty() && prev != agent {
        match Ledger::for_agent(prev).move_to(agent) {
            Ok(n) => state::log(&format!(
                "session {agent} replaced {prev} in pane {} (/clear): {n} queued item(s) moved",
                r.pane_id
            )),
            Err(e) => return Err(format!("moving the items of {prev} to {agent}: {e}")),
        }
    }
    if prev != agent && !agent.starts_with("pane:") {
        let _ = tmux.run(&targs![
            "set-option",
            "-p",
            "-t",
            Arg::id(&r.pane_id),
            "--",
            crate::tmux::options::AGENT.name,
            Arg::literal(agent),
        ]);
    }
    Ok(())
}

/// Who is calling: the tty-verified pane (if any) and the agent address.
#[derive(Debug, Clone)]
pub struct Caller {
    pub pane_id: Option<String>,
    pub agent: String,
}

/// The agent address: `TMUXMATE_AGENT`, else the harness session id the environment
/// carries (`CLAUDE_CODE_SESSION_ID`), else the one the per-turn hook recorded on the
/// tty-verified pane (`@tmuxmate-agent`), else the pane's own address, else "cli". This
/// is how a command an agent runs through its shell tool finds the ledger its hook reads.
pub fn caller(tmux: &Tmux) -> Caller {
    let loc = super::read(tmux).ok();
    let agent = agent_address(loc.as_ref());
    Caller {
        pane_id: loc.map(|r| r.pane_id),
        agent,
    }
}

/// The caller's agent address given its location (the chain `caller` documents).
pub fn agent_address(loc: Option<&Reading>) -> String {
    let env = |k: &str| std::env::var(k).ok().filter(|s| !s.is_empty());
    env("TMUXMATE_AGENT")
        .or_else(|| env("CLAUDE_CODE_SESSION_ID"))
        .or_else(|| {
            loc.map(|r| r.agent_option.clone())
                .filter(|s| !s.is_empty())
        })
        .or_else(|| loc.map(pane_address))
        .unwrap_or_else(|| "cli".to_string())
}

/// The address of an agent known only by its tty-verified pane.
pub fn pane_address(r: &Reading) -> String {
    format!("pane:{}:{}", r.socket_path, r.pane_id)
}
