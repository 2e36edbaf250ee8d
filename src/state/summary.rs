//! What the status line and the window list show of one server's agents.
//!
//! Owns: the effective state of each agent pane (its record checked against the pane:
//! a dead pane's agent has exited; an agent no longer in its pane's foreground, killed
//! or suspended, is unknown, not what it last said), the counts text
//! (`@tmuxmate-agents-status`, at most [`WIDTH`] columns) and each window's most urgent
//! state and marker. Invariants: computed from the panes' options in one `list-panes`,
//! never from a counter a process keeps; an option is written only when its value
//! changes, so an event that changes no count costs one tmux call.

use std::collections::BTreeMap;

use super::machine::State;
use crate::targs;
use crate::tmux::options;
use crate::tmux::{Arg, Tmux, TmuxError};

/// The counts text's widest form, in columns.
pub const WIDTH: usize = 40;

/// One agent pane as `list-panes` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pane {
    pub pane: String,
    pub window: String,
    pub state: State,
    pub since_s: u64,
    pub why: String,
    /// The window's current marker state option (to write only changes).
    pub window_state: String,
}

/// The `list-panes` format [`parse`] reads (the reason last: it may hold a tab).
pub fn format() -> String {
    format!(
        "#{{pane_id}}\t#{{window_id}}\t#{{{}}}\t#{{{}}}\t#{{pane_dead}}\t#{{pane_current_command}}\t#{{{}}}\t#{{{}}}",
        options::STATE.name,
        options::STATE_SINCE.name,
        options::WINDOW_STATE.name,
        options::STATE_WHY.name
    )
}

/// The state a pane's record means now, given the pane.
pub fn effective(recorded: State, dead: bool, foreground: &str, shells: &[&str]) -> State {
    if recorded == State::Exited {
        return State::Exited;
    }
    if dead {
        return State::Exited;
    }
    if shells.contains(&foreground) {
        return State::Unknown;
    }
    recorded
}

/// Every pane of the server (agent or not: a window whose agent left needs its marker
/// cleared), from `list-panes -a -F` [`format`] output.
pub fn parse(out: &str, shells: &[&str]) -> Vec<(String, String, Option<Pane>)> {
    out.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            if f.len() < 8 {
                return None;
            }
            let (pane, window) = (f[0].to_string(), f[1].to_string());
            let agent = State::parse(f[2]).map(|st| Pane {
                pane: pane.clone(),
                window: window.clone(),
                state: effective(st, f[4] == "1", f[5], shells),
                since_s: f[3].parse().unwrap_or(0),
                why: f[7..].join("\t"),
                window_state: f[6].to_string(),
            });
            Some((pane, window, agent))
        })
        .collect()
}

/// "2 need you · 3 working · 1 done" (empty when no agent needs counting).
pub fn text(agents: &[Pane]) -> String {
    let n = |s: State| agents.iter().filter(|a| a.state == s).count();
    let mut parts = Vec::new();
    let (need, work, done, unk) = (
        n(State::NeedsYou),
        n(State::Working),
        n(State::Done),
        n(State::Unknown),
    );
    if need > 0 {
        parts.push(format!(
            "{need} need{} you",
            if need == 1 { "s" } else { "" }
        ));
    }
    if work > 0 {
        parts.push(format!("{work} working"));
    }
    if done > 0 {
        parts.push(format!("{done} done"));
    }
    if unk > 0 {
        parts.push(format!("{unk} unknown"));
    }
    // The least urgent counts go first when the line would be cut.
    while parts.len() > 1 && parts.join(" · ").chars().count() > WIDTH {
        parts.pop();
    }
    parts.join(" · ")
}

/// The most urgent of states, for a window: needs-you, done, working, unknown, idle,
/// exited.
pub fn most_urgent(states: impl Iterator<Item = State>) -> Option<State> {
    let rank = |s: &State| match s {
        State::NeedsYou => 0,
        State::Done => 1,
        State::Working => 2,
        State::Unknown => 3,
        State::Idle => 4,
        State::Exited => 5,
    };
    states.min_by_key(rank)
}

pub fn marker(s: Option<State>) -> &'static str {
    match s {
        Some(State::NeedsYou) => "!",
        Some(State::Done) => "+",
        Some(State::Working) => "~",
        Some(State::Unknown) => "?",
        _ => "",
    }
}

/// Recompute and push the counts and the window markers of `tmux`'s server, writing only
/// what changed; returns the agent panes (for callers that list them).
pub fn refresh(tmux: &Tmux) -> Result<Vec<Pane>, TmuxError> {
    let shells_opt = options::SHELLS.global(tmux);
    let shells: Vec<&str> = options::SHELLS
        .text(&shells_opt)
        .split_whitespace()
        .collect();
    let fmt = format();
    // The socket last: the counts text is ours (no tab), a socket path may hold one.
    let have_fmt = format!("#{{{}}}\t#{{socket_path}}", options::AGENTS_STATUS.name);
    let out = tmux.run(&targs![
        "display-message",
        "-p",
        Arg::ours(&have_fmt),
        Arg::SEP,
        "list-panes",
        "-a",
        "-F",
        Arg::ours(&fmt),
    ])?;
    let (first, panes_out) = out.split_once('\n').unwrap_or((&out, ""));
    let (have, socket) = first.split_once('\t').unwrap_or((first, ""));
    let panes = parse(panes_out, &shells);
    let agents: Vec<Pane> = panes.iter().filter_map(|p| p.2.clone()).collect();
    // The hosts this server follows count too, from their snapshots (no ssh here).
    let far = super::hosts::seen(socket);
    if !far.stale.is_empty() {
        super::hosts::ensure(tmux, socket, &far.stale);
    }
    let counted: Vec<Pane> = agents
        .iter()
        .cloned()
        .chain(far.rows.iter().filter_map(|r| {
            Some(Pane {
                pane: r.pane_id.clone(),
                window: String::new(),
                state: State::parse(r.state)?,
                since_s: r.since_ms / 1000,
                why: r.why.clone(),
                window_state: String::new(),
            })
        }))
        .collect();
    let mut windows: BTreeMap<&str, (Option<State>, String)> = BTreeMap::new();
    for (_, w, a) in &panes {
        let e = windows.entry(w.as_str()).or_insert((None, String::new()));
        if let Some(a) = a {
            e.0 = most_urgent(e.0.into_iter().chain([a.state]));
            e.1 = a.window_state.clone();
        }
    }
    let mut args: Vec<Arg> = Vec::new();
    let want = text(&counted);
    if want != have {
        args.extend(targs![
            "set-option",
            "-g",
            options::AGENTS_STATUS.name,
            Arg::literal(&want).into_owned()
        ]);
    }
    for (w, (st, have_w)) in &windows {
        let want_w = st.map(State::name).unwrap_or("");
        // A window that never had an agent has no option to clear.
        if want_w == have_w.as_str() {
            continue;
        }
        if !args.is_empty() {
            args.push(Arg::SEP);
        }
        args.extend(targs![
            "set-option",
            "-w",
            "-t",
            Arg::id(w).into_owned(),
            "--",
            options::WINDOW_STATE.name,
            want_w,
            Arg::SEP,
            "set-option",
            "-w",
            "-t",
            Arg::id(w).into_owned(),
            "--",
            options::WINDOW_MARKER.name,
            marker(*st),
        ]);
    }
    if !args.is_empty() {
        tmux.run(&args[..])?;
    }
    Ok(agents)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SH: &[&str] = &["bash", "zsh"];

    fn p(state: State) -> Pane {
        Pane {
            pane: "%1".into(),
            window: "@1".into(),
            state,
            since_s: 0,
            why: String::new(),
            window_state: String::new(),
        }
    }

    #[test]
    fn counts_fit_the_status_line() {
        use State::*;
        let a = [
            p(NeedsYou),
            p(NeedsYou),
            p(Working),
            p(Done),
            p(Idle),
            p(Exited),
        ];
        assert_eq!(text(&a), "2 need you · 1 working · 1 done");
        assert_eq!(text(&[p(NeedsYou)]), "1 needs you");
        assert_eq!(text(&[p(Idle), p(Exited)]), "");
        let worst: Vec<Pane> = (0..1000)
            .map(|i| p([NeedsYou, Working, Done, Unknown][i % 4]))
            .collect();
        assert!(text(&worst).chars().count() <= WIDTH, "{}", text(&worst));
    }

    #[test]
    fn a_gone_agent_is_never_its_last_word() {
        use State::*;
        assert_eq!(effective(Working, true, "claude", SH), Exited);
        assert_eq!(effective(NeedsYou, false, "bash", SH), Unknown);
        assert_eq!(effective(Exited, false, "bash", SH), Exited);
        assert_eq!(effective(Done, false, "node", SH), Done);
    }

    #[test]
    fn parses_panes_and_windows() {
        let out = "%1\t@1\tneeds-you\t100\t0\tclaude\t\tpermission: a\tb\n%2\t@1\t\t\t0\tbash\tneeds-you\t\n%3\t@2\tdone\t5\t0\tzsh\t\t\n";
        let v = parse(out, SH);
        assert_eq!(v.len(), 3);
        let a = v[0].2.as_ref().unwrap();
        assert_eq!(
            (a.state, a.since_s, a.why.as_str()),
            (State::NeedsYou, 100, "permission: a\tb")
        );
        assert!(v[1].2.is_none());
        assert_eq!(v[2].2.as_ref().unwrap().state, State::Unknown);
        assert_eq!(
            most_urgent([State::Working, State::Done, State::Idle].into_iter()),
            Some(State::Done)
        );
    }
}
