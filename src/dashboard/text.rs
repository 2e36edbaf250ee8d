//! The board as compact text: what `dashboard --once` prints and a model reads through
//! MCP (one line an agent, then the counts and the watch jobs; a few tens of bytes an
//! agent, nothing said twice).

use super::row::{Board, Row};
use crate::state::list::human;

/// `12.3k`, `258k`, `1.2M`.
pub fn tokens(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=99_999 => format!("{:.1}k", n as f64 / 1000.0).replace(".0k", "k"),
        100_000..=999_999 => format!("{}k", n / 1000),
        _ => format!("{:.1}M", n as f64 / 1e6).replace(".0M", "M"),
    }
}

/// `ctx 45k/258k`, `ctx 13.8k`, `$0.42` (what the transcript gave).
pub fn usage(r: &Row) -> String {
    let Some(u) = &r.usage else {
        return String::new();
    };
    let mut parts = Vec::new();
    match (u.context_tokens, u.context_window) {
        (Some(c), Some(w)) => parts.push(format!("ctx {}/{}", tokens(c), tokens(w))),
        (Some(c), None) => parts.push(format!("ctx {}", tokens(c))),
        _ => {}
    }
    if let Some(c) = u.cost_usd {
        parts.push(format!("${c:.2}"));
    }
    parts.join(" ")
}

/// `2 results · 1 note` waiting for the agent's next turn.
pub fn pending(r: &Row) -> String {
    let p = &r.pending;
    let mut parts = Vec::new();
    if p.watch > 0 {
        parts.push(format!(
            "{} result{}",
            p.watch,
            if p.watch == 1 { "" } else { "s" }
        ));
    }
    if p.notes > 0 {
        parts.push(format!(
            "{} note{}",
            p.notes,
            if p.notes == 1 { "" } else { "s" }
        ));
    }
    parts.join(" · ")
}

/// `todo 3/8` (with the current item when there is one).
pub fn todos(r: &Row, with_now: bool) -> String {
    match &r.todos {
        Some(t) => match (&t.now, with_now) {
            (Some(now), true) => format!("todo {}/{}: {now}", t.done, t.total),
            _ => format!("todo {}/{}", t.done, t.total),
        },
        None => String::new(),
    }
}

/// `api (main)`, the project and its branch.
pub fn place(r: &Row) -> String {
    match (r.project_name(), r.branch.as_deref()) {
        ("", _) => String::new(),
        (p, Some(b)) => format!("{p} ({b})"),
        (p, None) => p.to_string(),
    }
}

/// Where to reach the agent from here: `(-S SOCKET)`, `(--host H)`.
fn reach(r: &Row) -> String {
    match (&r.host, &r.socket) {
        (None, None) => String::new(),
        (None, Some(s)) => format!(" (-S {s})"),
        (Some(h), None) => format!(" (--host {h})"),
        (Some(h), Some(s)) => format!(" (--host {h} -S {s})"),
    }
}

/// One line an agent, then a summary line.
pub fn text(b: &Board, now_ms: u64) -> String {
    if b.agents.is_empty() {
        let mut s = "no agents (an agent appears once its CLI sends a state event: install its hooks with `tmuxmate install <cli>`)\n".to_string();
        s.push_str(&footer(b));
        return s;
    }
    let mut out = String::new();
    for r in &b.agents {
        let ago = human(now_ms.saturating_sub(r.since) / 1000);
        let who = if r.harness.is_empty() {
            "?"
        } else {
            &r.harness
        };
        out.push_str(&format!("{:<9} {:>4}  {who}", r.state, ago));
        if !r.name.is_empty() {
            out.push_str(&format!(" {}", r.name));
        }
        out.push_str(&format!("  {} {}{}", r.target, r.pane_id, reach(r)));
        let what = if r.why.is_empty() { &r.doing } else { &r.why };
        let more = [
            place(r),
            what.clone(),
            todos(r, false),
            pending(r),
            usage(r),
        ];
        for m in more.iter().filter(|m| !m.is_empty()) {
            out.push_str("  ");
            out.push_str(m);
        }
        out.push('\n');
    }
    out.push_str(&footer(b));
    out
}

/// `5 agents: 1 needs you · 3 working · 1 idle; watch 1 running · 2 done`, and the
/// hosts not reached.
pub fn footer(b: &Board) -> String {
    let n = b.agents.len();
    let mut s = format!("{n} agent{}", if n == 1 { "" } else { "s" });
    let counts = b.counts.text();
    if !counts.is_empty() {
        s.push_str(": ");
        s.push_str(&counts);
    }
    let w = crate::watch::status::text(b.watch.running, b.watch.done, 0);
    if !w.is_empty() {
        s.push_str("; ");
        s.push_str(&w);
    }
    s.push('\n');
    for u in &b.unreached_hosts {
        s.push_str(&format!("host {} not reached: {}\n", u.host, u.why));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::row::tests::row;
    use super::super::row::{Counts, Pending, Todos};
    use super::*;
    use crate::side::digest::model::Usage;

    #[test]
    fn one_compact_line_an_agent() {
        let mut r = row("%5", "needs-you");
        r.since = 100_000;
        r.why = "permission: Bash: ls".into();
        r.todos = Some(Todos {
            done: 3,
            total: 8,
            now: Some("tests".into()),
        });
        r.pending = Pending { watch: 2, notes: 1 };
        r.usage = Some(Usage {
            context_tokens: Some(45_200),
            context_window: Some(258_400),
            ..Usage::default()
        });
        let mut w = row("%6", "working");
        w.since = 390_000;
        w.socket = Some("/tmp/s".into());
        w.branch = None;
        let b = Board {
            counts: Counts::of(&[r.clone(), w.clone()]),
            agents: vec![r, w],
            ..Board::default()
        };
        assert_eq!(
            text(&b, 400_000),
            "needs-you   5m  claude api  dev:1.0 %5  api-server (main)  permission: Bash: ls  todo 3/8  2 results · 1 note  ctx 45.2k/258k\n\
             working    10s  claude api  dev:1.0 %6 (-S /tmp/s)  api-server  turn 2 · step 3\n\
             2 agents: 1 needs you · 1 working\n"
        );
        assert_eq!(tokens(999), "999");
        assert_eq!(tokens(13_000), "13k");
        assert_eq!(tokens(1_250_000), "1.2M");
    }
}
