//! `tmuxmate agents`: every agent pane of a server with its state, and the jump order.
//!
//! Owns: the rows (pane, where, harness, state, since, why), their order (needs-you
//! first, longest waiting first; then done, working, unknown, idle, exited), the compact
//! text a model or a person reads, the JSON shape (docs/json.md#agent-state), and the jump
//! key's cycle. Invariants: the state shown is the effective one ([`super::summary`]),
//! never a dead agent's last word; reading writes nothing but changed counts.

use super::machine::State;
use super::summary::{self, Pane};
use crate::targs;
use crate::tmux::options;
use crate::tmux::{Arg, Tmux, TmuxError};

use super::row::Row;

fn rank(s: State) -> u8 {
    match s {
        State::NeedsYou => 0,
        State::Done => 1,
        State::Working => 2,
        State::Unknown => 3,
        State::Idle => 4,
        State::Exited => 5,
    }
}

/// Agents in the order a person wants them: most urgent state first, and within one,
/// the longest waiting first.
pub fn sort(agents: &mut [Pane]) {
    agents.sort_by(|a, b| {
        (rank(a.state), a.since_s, &a.pane).cmp(&(rank(b.state), b.since_s, &b.pane))
    });
}

/// Rows of several servers in the same order as [`sort`].
pub fn sort_rows(rows: &mut [Row]) {
    let key = |r: &Row| (State::parse(r.state).map_or(u8::MAX, rank), r.since_ms);
    rows.sort_by_key(key);
}

/// The panes the jump key visits, in order: needs-you, then done.
pub fn jump_order(agents: &[Pane]) -> Vec<String> {
    let mut v: Vec<Pane> = agents
        .iter()
        .filter(|a| matches!(a.state, State::NeedsYou | State::Done))
        .cloned()
        .collect();
    sort(&mut v);
    v.into_iter().map(|a| a.pane).collect()
}

/// The pane after `last` in `order` (the first when `last` is not in it), cycling.
pub fn next_after(order: &[String], last: &str) -> Option<String> {
    let i = order.iter().position(|p| p == last).map_or(0, |i| i + 1);
    order.get(i % order.len().max(1)).cloned()
}

/// The rows as docs/json.md#agent-state has them.
pub fn json(rows: &[Row]) -> Vec<serde_json::Value> {
    rows.iter()
        .map(|r| {
            let mut v = serde_json::json!({
                "paneId": r.pane_id,
                "target": r.target,
                "harness": r.harness,
                "state": r.state,
                "since": r.since_ms,
                "why": r.why,
            });
            if !r.socket.is_empty() {
                v["socket"] = r.socket.clone().into();
            }
            if !r.host.is_empty() {
                v["host"] = r.host.clone().into();
            }
            v
        })
        .collect()
}

/// The server's agents as rows, sorted.
pub fn rows(tmux: &Tmux) -> Result<Vec<Row>, TmuxError> {
    let mut agents = summary::refresh(tmux)?;
    sort(&mut agents);
    let fmt = format!(
        "#{{pane_id}}\t#{{session_name}}:#{{window_index}}.#{{pane_index}}\t#{{{}}}",
        options::STATE_RECORD.name
    );
    let out = tmux.run(&targs!["list-panes", "-a", "-F", Arg::ours(&fmt)])?;
    let mut info = std::collections::HashMap::new();
    for l in out.lines() {
        let mut f = l.splitn(3, '\t');
        if let (Some(p), Some(t), Some(rec)) = (f.next(), f.next(), f.next()) {
            let (harness, since_ms) = super::store::parse_record(rec)
                .map(|(r, _)| (r.harness, r.since_ms))
                .unwrap_or_default();
            info.insert(p.to_string(), (t.to_string(), harness, since_ms));
        }
    }
    Ok(agents
        .into_iter()
        .map(|a| {
            let (target, harness, since_ms) = info.remove(&a.pane).unwrap_or_default();
            Row {
                target,
                harness,
                state: a.state.name(),
                since_ms: if since_ms > 0 {
                    since_ms
                } else {
                    a.since_s * 1000
                },
                why: crate::sys::printable::visible(&a.why).0,
                pane_id: a.pane,
                socket: String::new(),
                host: String::new(),
            }
        })
        .collect())
}

/// The rows of the current server (if one runs) and of every other server agents were
/// seen on; a server that does not answer is left out and logged.
pub fn every_server(tmux: &Tmux) -> Result<Vec<Row>, TmuxError> {
    let here = super::socket_of(tmux).ok();
    let mut others = super::servers::known();
    others.retain(|s| Some(s) != here.as_ref());
    if here.is_none() && others.is_empty() {
        // No server at all: the usual error says so.
        return rows(tmux);
    }
    let several = others.len() + usize::from(here.is_some()) > 1;
    let mut out = Vec::new();
    if let Some(h) = &here {
        let mut r = rows(tmux)?;
        if several {
            r.iter_mut().for_each(|x| x.socket = h.clone());
        }
        out.extend(r);
    }
    for s in others {
        let t = Tmux::new(crate::tmux::Socket::Path(s.clone().into()));
        match rows(&t) {
            Ok(mut r) => {
                r.iter_mut().for_each(|x| x.socket = s.clone());
                out.extend(r);
            }
            Err(e) => crate::sys::state::log(&format!("agents: server {s}: {e}")),
        }
    }
    sort_rows(&mut out);
    Ok(out)
}

/// A listing with the agents of the hosts the servers follow (`@tmuxmate-hosts`).
pub struct Listing {
    pub rows: Vec<Row>,
    pub unreached: Vec<super::hosts::Unreached>,
}

impl Listing {
    /// The `agents --json` document (docs/json.md#agent-state): `unreachedHosts` only
    /// when a host was not reached.
    pub fn document(&self) -> serde_json::Value {
        let mut doc = serde_json::json!({ "agents": json(&self.rows) });
        if !self.unreached.is_empty() {
            doc["unreachedHosts"] = self
                .unreached
                .iter()
                .map(|u| serde_json::json!({"host": u.host, "why": u.why}))
                .collect();
        }
        doc
    }
}

/// What `tmuxmate agents` and the MCP tool show: the chosen server's agents
/// (`chosen`: `-L`/`-S` named it), else every server's, and the agents of the hosts they
/// follow, from the followers' snapshots (the current server's followers are started
/// where none runs). A host followed by two servers is listed once.
pub fn listing(tmux: &Tmux, chosen: bool) -> Result<Listing, TmuxError> {
    let mut rows = if chosen {
        rows(tmux)?
    } else {
        every_server(tmux)?
    };
    super::hosts::ensure_named(tmux);
    let mut sockets: Vec<String> = if chosen {
        super::socket_of(tmux).into_iter().collect()
    } else {
        let mut v = super::servers::known();
        v.extend(super::socket_of(tmux).ok());
        v
    };
    sockets.sort();
    sockets.dedup();
    let mut unreached: Vec<super::hosts::Unreached> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for s in sockets {
        let h = super::hosts::seen(&s);
        for r in h.rows {
            if seen.insert((r.host.clone(), r.socket.clone(), r.pane_id.clone())) {
                rows.push(r);
            }
        }
        for u in h.unreached {
            if !unreached.contains(&u) {
                unreached.push(u);
            }
        }
    }
    sort_rows(&mut rows);
    Ok(Listing { rows, unreached })
}

/// Where each agent's state comes from besides its hooks, for `doctor`.
pub struct Source {
    /// `session:window.pane %N`.
    pub pane: String,
    pub harness: String,
    /// `@tmuxmate-state-source`; empty: the hooks alone.
    pub source: String,
}

impl Source {
    /// What the person reads, and whether the agent has every source its CLI offers.
    pub fn describe(&self) -> (bool, String) {
        use super::listen::{OSC, SESSION_FILE, TITLE};
        let full = matches!(
            (self.harness.as_str(), self.source.as_str()),
            ("codex", OSC) | ("gemini", TITLE) | ("claude", SESSION_FILE)
        );
        let what = match self.source.as_str() {
            "" if self.harness == "claude" => {
                "hooks alone (no session file of its Claude was found: a permission denied with Escape is not seen)".to_string()
            }
            "" => "hooks alone".to_string(),
            s => format!("hooks and {s}"),
        };
        (full, format!("{} {}: {what}", self.harness, self.pane))
    }
}

/// Every agent pane of the server and its source.
pub fn sources(tmux: &Tmux) -> Result<Vec<Source>, TmuxError> {
    let fmt = format!(
        "#{{session_name}}:#{{window_index}}.#{{pane_index}} #{{pane_id}}\t#{{{}}}\t#{{{}}}",
        options::STATE_SOURCE.name,
        options::STATE_RECORD.name
    );
    let out = tmux.run(&targs!["list-panes", "-a", "-F", Arg::ours(&fmt)])?;
    Ok(out
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '\t');
            let (pane, source, rec) = (f.next()?, f.next()?, f.next()?);
            let (r, _) = super::store::parse_record(rec)?;
            (r.state != State::Exited).then(|| Source {
                pane: pane.to_string(),
                harness: r.harness,
                source: source.to_string(),
            })
        })
        .collect())
}

/// "needs-you  4m  claude  dev:2.1 %5  permission: Bash: ls", one line an agent.
pub fn text(rows: &[Row], now_ms: u64) -> String {
    if rows.is_empty() {
        return "no agents (an agent appears once its CLI sends a state event: install its hooks with `tmuxmate install <cli>`)".into();
    }
    let mut out = String::new();
    for r in rows {
        let ago = human(now_ms.saturating_sub(r.since_ms) / 1000);
        let who = if r.harness.is_empty() {
            "?"
        } else {
            &r.harness
        };
        out.push_str(&format!(
            "{:<9} {:>4}  {:<6} {} {}",
            r.state, ago, who, r.target, r.pane_id
        ));
        match (r.host.is_empty(), r.socket.is_empty()) {
            (true, true) => {}
            (true, false) => out.push_str(&format!(" (-S {})", r.socket)),
            (false, true) => out.push_str(&format!(" (--host {})", r.host)),
            (false, false) => out.push_str(&format!(" (--host {} -S {})", r.host, r.socket)),
        }
        if !r.why.is_empty() {
            out.push_str("  ");
            out.push_str(&r.why);
        }
        out.push('\n');
    }
    out
}

/// `42s`, `5m`, `3h`, `2d`.
pub fn human(s: u64) -> String {
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pane: &str, state: State, since_s: u64) -> Pane {
        Pane {
            pane: pane.into(),
            window: "@1".into(),
            state,
            since_s,
            why: String::new(),
            window_state: String::new(),
        }
    }

    #[test]
    fn the_longest_waiting_comes_first_and_the_jump_cycles() {
        use State::*;
        let a = [
            p("%1", Working, 1),
            p("%2", NeedsYou, 50),
            p("%3", Done, 10),
            p("%4", NeedsYou, 20),
            p("%5", Idle, 0),
        ];
        let o = jump_order(&a);
        assert_eq!(o, ["%4", "%2", "%3"]);
        assert_eq!(next_after(&o, "").as_deref(), Some("%4"));
        assert_eq!(next_after(&o, "%4").as_deref(), Some("%2"));
        assert_eq!(next_after(&o, "%3").as_deref(), Some("%4"));
        assert_eq!(next_after(&o, "%9").as_deref(), Some("%4"));
        assert_eq!(next_after(&[], "%1"), None);
        let mut all = a.to_vec();
        sort(&mut all);
        let names: Vec<&str> = all.iter().map(|a| a.pane.as_str()).collect();
        assert_eq!(names, ["%4", "%2", "%3", "%1", "%5"]);
    }

    #[test]
    fn compact_text() {
        let r = Row {
            pane_id: "%5".into(),
            target: "dev:2.1".into(),
            harness: "claude".into(),
            state: "needs-you",
            since_ms: 100_000,
            why: "permission: Bash: ls".into(),
            socket: String::new(),
            host: String::new(),
        };
        assert_eq!(
            text(std::slice::from_ref(&r), 400_000),
            "needs-you   5m  claude dev:2.1 %5  permission: Bash: ls\n"
        );
        let mut done = Row {
            state: "done",
            since_ms: 50_000,
            socket: "/tmp/s".into(),
            why: String::new(),
            ..r.clone()
        };
        assert_eq!(
            text(std::slice::from_ref(&done), 400_000),
            "done        5m  claude dev:2.1 %5 (-S /tmp/s)\n"
        );
        let far = Row {
            host: "dev@box:2222".into(),
            ..r.clone()
        };
        assert_eq!(
            text(std::slice::from_ref(&far), 400_000),
            "needs-you   5m  claude dev:2.1 %5 (--host dev@box:2222)  permission: Bash: ls\n"
        );
        // Rows of several servers: needs-you before done, though done waited longer.
        done.since_ms = 1;
        let mut rows = vec![done, r];
        sort_rows(&mut rows);
        assert_eq!(rows[0].state, "needs-you");
        assert_eq!(human(59), "59s");
        assert_eq!(human(7200), "2h");
    }
}
