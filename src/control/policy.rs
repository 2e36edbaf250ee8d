//! Safety rules shared by every pane-acting command.
//!
//! Owns: turning a `-t` argument (or its absence) into exactly one pane (rules 1 and 2),
//! the caller's identity (own pane, agent address) for self-kill guards and "created by
//! us" marks, and the refusal wording. Invariants: a user-supplied target never reaches
//! tmux's own `-t` matching; a missing `-t` never means "the current pane"; with
//! `@tmuxmate-require-explicit-target off` it means only the newest pane tmuxmate created
//! for this agent. (Approval, rule 3, lives in `approval.rs`.)

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::tmux::Tmux;
use crate::tmux::panes::{self, PaneInfo};
use crate::tmux::target::Target;

/// The value stored in a pane's `@tmuxmate-created` option.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CreatedMark {
    pub v: u32,
    pub agent: String,
    pub at: u64,
}

impl CreatedMark {
    pub fn new(agent: &str) -> CreatedMark {
        CreatedMark {
            v: 1,
            agent: agent.to_string(),
            at: crate::sys::time::now_ms(),
        }
    }
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Whether a missing `-t` may fall back to the newest pane we created for this agent.
fn explicit_required(tmux: &Tmux) -> bool {
    // Anything but a clear "off" keeps the safe rule.
    let o = crate::tmux::options::REQUIRE_EXPLICIT_TARGET;
    o.flag(&o.global(tmux)).unwrap_or(true)
}

/// Resolve `-t` to one pane, following rules 1 and 2. `rows` is a fresh snapshot.
pub fn resolve_in<'a>(
    tmux: &Tmux,
    rows: &'a [PaneInfo],
    target: Option<&str>,
    agent: &str,
) -> Result<&'a PaneInfo, Error> {
    // The option is read only when it matters: a given target never falls back.
    let explicit = target.is_none() && explicit_required(tmux);
    pick(rows, target, agent, explicit)
}

/// Rules 1 and 2 on a snapshot: a given target names exactly what it names; no target is
/// refused when `explicit` (the default), else means the newest pane we created for
/// `agent` and never any other pane.
pub fn pick<'a>(
    rows: &'a [PaneInfo],
    target: Option<&str>,
    agent: &str,
    explicit: bool,
) -> Result<&'a PaneInfo, Error> {
    match target {
        Some(t) => {
            let parsed = Target::parse(t).map_err(Error::usage)?;
            parsed.resolve(rows, t).map_err(Error::new)
        }
        None => {
            if explicit {
                return Err(Error::usage(
                    "refused: no target given. Name the pane with -t (e.g. -t %3; see `tmuxmate list`). \
                     A missing -t never means the current pane; `tmux set -g @tmuxmate-require-explicit-target off` \
                     lets it mean the pane tmuxmate created most recently for this agent",
                ));
            }
            rows.iter()
                .filter_map(|p| {
                    serde_json::from_str::<CreatedMark>(&p.created_by_us)
                        .ok()
                        .filter(|m| m.agent == agent)
                        .map(|m| (m.at, p))
                })
                .max_by_key(|(at, _)| *at)
                .map(|(_, p)| p)
                .ok_or_else(|| {
                    Error::usage(format!(
                        "refused: no target given and tmuxmate has created no pane for agent {agent}; name the pane with -t"
                    ))
                })
        }
    }
}

/// Snapshot the server and resolve one pane (owned copy). A `%N` target names exactly
/// one pane, so only its rows are asked for: `list-panes -t %N` reads that pane's window
/// alone (tmux finds a `%N` by its id, exactly), where `-a` with a filter makes tmux
/// evaluate the filter on every pane of the server. A pane that is gone is "not found"
/// either way (tmux's "can't find pane" is taken as no row). The answer must be the
/// whole listing's first row for the pane: a window linked into several sessions has a
/// row in each, and `-t` would give the one tmux thinks best (its latest active session)
/// instead of the first by name (or of its lowest index, for a window linked twice into
/// one session). So a window with more than one link is asked for as before, with `-a`:
/// the `-t` query's filter keeps no row of a linked window or a grouped session. Both
/// are needed because the variables changed in tmux 3.6: before it, `window_linked` is
/// false for a window shared only by a group; from it, `window_linked` is true for any
/// window with two links, and `window_linked_sessions` counts a group once.
pub fn resolve(tmux: &Tmux, target: Option<&str>, agent: &str) -> Result<PaneInfo, Error> {
    use crate::tmux::Arg;
    if let Some(t) = target
        && let Ok(Target::Pane(n)) = Target::parse(t)
    {
        // The id and the filters are ours: built from the parsed number, never from the
        // user's text.
        let id = format!("%{n}");
        let only = format!("#{{==:#{{pane_id}},{id}}}");
        let unlinked = format!(
            "#{{&&:#{{==:#{{window_linked}},0}},#{{&&:#{{==:#{{session_grouped}},0}},{only}}}}}"
        );
        let own = crate::targs!["list-panes", "-t", Arg::id(&id), "-f", Arg::ours(&unlinked)];
        let rows = match panes::query(tmux, &own) {
            Err(crate::tmux::TmuxError::TargetNotFound { .. }) => Vec::new(),
            Ok(rows) if rows.is_empty() => panes::query(
                tmux,
                &crate::targs!["list-panes", "-a", "-f", Arg::ours(&only)],
            )?,
            r => r?,
        };
        return resolve_in(tmux, &rows, target, agent).cloned();
    }
    let rows = panes::list_all(tmux)?;
    resolve_in(tmux, &rows, target, agent).cloned()
}

/// The pane an input command (`send`, `paste`, `keys`) acts on: resolved by rules 1-2,
/// then passed through the approval policy as `<verb>:%N`, described by `what`
/// (e.g. "type 12 bytes of text").
pub fn input_target(
    tmux: &Tmux,
    target: Option<&str>,
    verb: &str,
    what: &str,
) -> Result<PaneInfo, Error> {
    let caller = crate::location::address::caller(tmux);
    let p = resolve(tmux, target, &caller.agent)?;
    crate::control::approval::approve(
        tmux,
        &format!("{verb}:{}", p.pane_id),
        Some(&p.session_id),
        &format!("{what} in pane {} ({})", p.pane_id, p.target()),
    )?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pane(session: &str, id: &str, created: &str) -> PaneInfo {
        PaneInfo {
            session_id: "$0".into(),
            session_name: session.into(),
            window_id: "@0".into(),
            window_index: "0".into(),
            window_active: true,
            pane_id: id.into(),
            pane_index: id.trim_start_matches('%').into(),
            pane_active: id == "%0",
            created_by_us: created.into(),
            ..Default::default()
        }
    }

    fn mark(agent: &str, at: u64) -> String {
        format!(r#"{{"v":1,"agent":"{agent}","at":{at}}}"#)
    }

    fn rows() -> Vec<PaneInfo> {
        vec![
            pane("main", "%0", ""),
            pane("main", "%1", &mark("a1", 10)),
            pane("main", "%2", &mark("a1", 20)),
            pane("main", "%3", &mark("other", 30)),
        ]
    }

    #[test]
    fn no_target_is_refused_by_default_and_never_means_the_current_pane() {
        let r = rows();
        let e = pick(&r, None, "a1", true).unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Usage);
        assert!(e.msg.contains("never means the current pane"), "{}", e.msg);
    }

    #[test]
    fn no_target_with_the_rule_off_is_the_agents_newest_pane_only() {
        let r = rows();
        assert_eq!(pick(&r, None, "a1", false).unwrap().pane_id, "%2");
        assert_eq!(pick(&r, None, "other", false).unwrap().pane_id, "%3");
        let e = pick(&r, None, "nobody", false).unwrap_err();
        assert!(
            e.msg.contains("created no pane for agent nobody"),
            "{}",
            e.msg
        );
    }

    #[test]
    fn a_given_target_names_exactly_that_pane_or_is_refused() {
        let r = rows();
        assert_eq!(pick(&r, Some("%1"), "a1", true).unwrap().pane_id, "%1");
        assert_eq!(pick(&r, Some("%3"), "a1", false).unwrap().pane_id, "%3");
        let e = pick(&r, Some("%9"), "a1", false).unwrap_err();
        assert!(e.msg.contains("does not exist"), "{}", e.msg);
        assert!(pick(&r, Some("x;y"), "a1", false).is_err());
    }
}
