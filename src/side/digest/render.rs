//! The one rendering of a digest, and the status-line text derived from it.
//!
//! Owns: `render` (the text a person inspects with `digest show`, the side agent is
//! given, and the follower's status source, so what a person reads is what a model saw)
//! and `status_line` (one short line for `@tmuxmate-status`). Invariants: both are pure
//! functions of the digest (no clock, no environment beyond the local time zone), so an
//! unchanged digest renders to identical text; `render` is at most `MAX_RENDER` bytes and
//! `status_line` at most `STATUS_CHARS` characters, cut visibly, never silently.

use super::model::{Digest, FinishedTurn, MAX_TURNS, OpenTurn, ToolCall, clip};
use crate::sys::time::{full, hhmm, hhmmss};

pub const MAX_RENDER: usize = 24 * 1024;
pub const STATUS_CHARS: usize = 80;

fn when(t: Option<u64>) -> String {
    t.map(hhmmss).unwrap_or_else(|| "--:--:--".into())
}

fn quote(s: &str) -> String {
    format!("\u{201c}{s}\u{201d}")
}

fn todo_mark(status: &str) -> &'static str {
    match status {
        "completed" => "[x]",
        "in_progress" => "[>]",
        "pending" => "[ ]",
        _ => "[?]",
    }
}

fn tool_line(c: &ToolCall) -> String {
    format!("{} {}", when(c.at), c.label())
}

/// The full digest text. `turns` is how many finished turns to show (clamped 1..=60).
/// Sections in a fixed order, each its own function: goal, session, now, todos, finished
/// turns, recent tools (when idle), last error.
pub fn render(d: &Digest, turns: usize) -> String {
    let turns = turns.clamp(1, MAX_TURNS);
    let mut s = String::new();
    s.push_str(&goal_line(d));
    s.push_str(&session_line(d));
    match &d.open_turn {
        Some(o) => open_turn(&mut s, o),
        None => s.push_str(&idle_line(d)),
    }
    todos(&mut s, d);
    finished_turns(&mut s, d, turns);
    if d.open_turn.is_none() && !d.recent_tools.is_empty() {
        s.push_str("recent tool calls (oldest first):\n");
        for t in &d.recent_tools {
            s.push_str(&format!("  {}\n", tool_line(t)));
        }
    }
    if let Some(e) = &d.last_error {
        s.push_str(&format!(
            "last error: {} {}: {}\n",
            when(e.at),
            e.tool.as_deref().unwrap_or("error"),
            e.text
        ));
    }
    bound(s, MAX_RENDER)
}

/// `goal: ...`, saying where the goal came from.
fn goal_line(d: &Digest) -> String {
    match (&d.goal, d.goal_source.as_deref()) {
        (Some(g), Some("prompt")) => format!("goal (the first prompt): {g}\n"),
        (Some(g), Some("title")) => format!("goal (the session title): {g}\n"),
        (Some(g), _) => format!("goal: {g}\n"),
        (None, _) => "goal: (none yet)\n".into(),
    }
}

/// `session: model · counts · last activity`.
fn session_line(d: &Digest) -> String {
    let c = &d.counts;
    let mut facts = Vec::new();
    if let Some(m) = &d.model {
        facts.push(format!("model {m}"));
    }
    facts.push(format!(
        "{} turns, {} steps, {} tool calls, {} errors, {} compactions",
        c.turns, c.steps, c.tool_calls, c.errors, c.compactions
    ));
    if let Some(t) = d.last_activity {
        facts.push(format!("last activity {}", full(t)));
    }
    format!("session: {}\n", facts.join(" · "))
}

/// `now:` for a running turn, with its prompt, latest reply, tools and failures.
fn open_turn(s: &mut String, o: &OpenTurn) {
    s.push_str(&format!(
        "now: turn {} running since {}, step {}, {} tool calls, {} failed\n",
        o.n,
        when(o.started),
        o.steps,
        o.tool_count,
        o.error_count
    ));
    if let Some(p) = &o.prompt {
        s.push_str(&format!("  prompt: {}\n", quote(p)));
    }
    if let Some(t) = &o.latest_text {
        s.push_str(&format!("  latest reply: {}\n", quote(t)));
    }
    if !o.tools.is_empty() {
        s.push_str("  recent tool calls (oldest first):\n");
        for t in &o.tools {
            s.push_str(&format!("    {}\n", tool_line(t)));
        }
    }
    if !o.failures.is_empty() {
        s.push_str("  failures in this turn:\n");
        for f in &o.failures {
            s.push_str(&format!(
                "    {} {}: {}\n",
                when(f.at),
                f.tool.as_deref().unwrap_or("error"),
                f.text
            ));
        }
    }
}

/// `now:` with no turn running: the last turn's end, or none yet.
fn idle_line(d: &Digest) -> String {
    match d.turns.back() {
        Some(t) => format!(
            "now: idle (turn {} {} at {})\n",
            t.n,
            t.outcome,
            when(t.ended)
        ),
        None => "now: no turn yet\n".into(),
    }
}

fn todos(s: &mut String, d: &Digest) {
    if d.todos.is_empty() {
        return;
    }
    let (done, total) = d.todo_progress();
    s.push_str(&format!("todos ({done}/{total} done):\n"));
    for t in &d.todos {
        s.push_str(&format!("  {} {}\n", todo_mark(&t.status), t.text));
    }
}

/// The last `turns` finished turns, saying how many earlier ones are not shown.
fn finished_turns(s: &mut String, d: &Digest, turns: usize) {
    if d.turns.is_empty() {
        return;
    }
    let shown = d.turns.len().min(turns);
    let hidden = d
        .counts
        .turns
        .saturating_sub(shown as u64 + u64::from(d.open_turn.is_some()));
    s.push_str(&format!(
        "finished turns (last {shown}{}):\n",
        if hidden > 0 {
            format!("; {hidden} earlier not shown")
        } else {
            String::new()
        }
    ));
    for t in d.turns.iter().skip(d.turns.len() - shown) {
        s.push_str(&turn_line(t));
        s.push('\n');
    }
}

/// `HH:MM-HH:MM`, with a side left empty when its time is unknown.
fn span(started: Option<u64>, ended: Option<u64>) -> String {
    match (started, ended) {
        (Some(a), Some(b)) => format!("{}-{}", hhmm(a), hhmm(b)),
        (None, Some(b)) => format!("-{}", hhmm(b)),
        (Some(a), None) => format!("{}-", hhmm(a)),
        (None, None) => "--:--".into(),
    }
}

/// One finished turn: `  #N span outcome · steps · tools[ · failed][ · prompt][ → result]`.
fn turn_line(t: &FinishedTurn) -> String {
    let mut line = format!(
        "  #{} {} {} · {} steps · {} tools",
        t.n,
        span(t.started, t.ended),
        t.outcome,
        t.steps,
        t.tools
    );
    if t.errors > 0 {
        line.push_str(&format!(" · {} failed", t.errors));
    }
    if let Some(p) = &t.prompt {
        line.push_str(&format!(" · {}", quote(p)));
    }
    if let Some(r) = &t.result {
        line.push_str(&format!(" → {}", quote(r)));
    }
    line
}

fn bound(mut s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let marker = "\n[digest cut at its byte bound]\n";
    let mut cut = max - marker.len();
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    s.push_str(marker);
    s
}

/// One short line: `turn 4 · step 7 · todo 3/8 · Bash(cargo test) · 14:02`; empty when
/// the transcript holds no activity yet. Never ends with `;` (tmux would read a trailing
/// `;` of an argument as a command separator).
pub fn status_line(d: &Digest) -> String {
    let mut head: Vec<String> = Vec::new();
    let mut tool: Option<String> = None;
    match (&d.open_turn, d.turns.back()) {
        (Some(o), _) => {
            head.push(format!("turn {}", o.n));
            head.push(format!("step {}", o.steps));
            if o.error_count > 0 {
                head.push(format!("{} failed", o.error_count));
            }
            tool = o.tools.back().map(ToolCall::label);
        }
        (None, Some(t)) => head.push(format!("turn {} {}", t.n, t.outcome)),
        (None, None) => {
            if d.last_activity.is_none() {
                return String::new();
            }
            head.push("no turn yet".into());
        }
    }
    if !d.todos.is_empty() {
        let (done, total) = d.todo_progress();
        head.push(format!("todo {done}/{total}"));
    }
    let tail = d.last_activity.map(hhmm);
    let fixed: usize = head.iter().map(|h| h.chars().count() + 3).sum::<usize>()
        + tail.as_ref().map_or(0, |t| t.chars().count() + 3);
    if let Some(t) = tool {
        let room = STATUS_CHARS.saturating_sub(fixed);
        if room >= 8 {
            head.push(clip(&t, room - 1));
        }
    }
    head.extend(tail);
    let line = clip(&head.join(" · "), STATUS_CHARS);
    line.trim_end_matches([';', '\\']).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_is_bounded_and_stable() {
        let mut d = Digest::default();
        assert_eq!(status_line(&d), "");
        d.begin_turn(Some("go"), Some(1_000_000));
        d.step(Some(1_000_000));
        d.tool_call("Bash", &"x".repeat(500), None, Some(1_000_000));
        d.set_todos([("a", "completed"), ("b", "pending")]);
        let s = status_line(&d);
        assert!(
            s.starts_with("turn 1 · step 1 · todo 1/2 · Bash(xxx"),
            "{s}"
        );
        assert!(s.chars().count() <= STATUS_CHARS, "{s}");
        assert_eq!(s, status_line(&d.clone()));
        d.tool_call("Bash", "ends with;", None, None);
        assert!(!status_line(&d).ends_with(';'));
        d.end_turn("completed", Some(2_000_000));
        assert!(status_line(&d).starts_with("turn 1 completed · todo 1/2"));
        assert!(render(&d, 12).contains("#1 "));
    }

    #[test]
    fn sections_render_in_their_fixed_words() {
        let mut d = Digest::default();
        assert_eq!(goal_line(&d), "goal: (none yet)\n");
        assert_eq!(idle_line(&d), "now: no turn yet\n");
        d.goal = Some("ship".into());
        d.goal_source = Some("title".into());
        assert_eq!(goal_line(&d), "goal (the session title): ship\n");
        d.goal_source = Some("prompt".into());
        assert_eq!(goal_line(&d), "goal (the first prompt): ship\n");
        d.goal_source = Some("goal".into());
        assert_eq!(goal_line(&d), "goal: ship\n");
        assert_eq!(
            session_line(&d),
            "session: 0 turns, 0 steps, 0 tool calls, 0 errors, 0 compactions\n"
        );
    }

    #[test]
    fn a_turn_span_leaves_an_unknown_side_empty() {
        assert_eq!(span(None, None), "--:--");
        assert_eq!(span(None, Some(60_000)), format!("-{}", hhmm(60_000)));
        assert_eq!(span(Some(60_000), None), format!("{}-", hhmm(60_000)));
        assert_eq!(
            span(Some(0), Some(60_000)),
            format!("{}-{}", hhmm(0), hhmm(60_000))
        );
    }

    #[test]
    fn a_finished_turn_line_shows_only_what_it_has() {
        let mut t = FinishedTurn {
            n: 3,
            outcome: "completed".into(),
            steps: 2,
            tools: 1,
            ..FinishedTurn::default()
        };
        assert_eq!(turn_line(&t), "  #3 --:-- completed · 2 steps · 1 tools");
        t.errors = 1;
        t.prompt = Some("go".into());
        t.result = Some("done".into());
        assert_eq!(
            turn_line(&t),
            "  #3 --:-- completed · 2 steps · 1 tools · 1 failed · \u{201c}go\u{201d} → \u{201c}done\u{201d}"
        );
    }

    #[test]
    fn finished_turns_say_how_many_are_not_shown() {
        let mut d = Digest::default();
        for i in 0..5 {
            d.begin_turn(Some(&format!("p{i}")), None);
            d.end_turn("completed", None);
        }
        let mut s = String::new();
        finished_turns(&mut s, &d, 2);
        assert!(
            s.starts_with("finished turns (last 2; 3 earlier not shown):\n"),
            "{s}"
        );
        assert_eq!(s.lines().count(), 3);
        assert!(s.contains("#5 ") && !s.contains("#3 "), "{s}");
        let mut s = String::new();
        finished_turns(&mut s, &d, 60);
        assert!(s.starts_with("finished turns (last 5):\n"), "{s}");
    }
}
