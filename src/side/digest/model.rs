//! The digest itself: a bounded summary of one agent session, and the only code that
//! changes it.
//!
//! Owns: the digest's fields, their bounds, and the operations the wire-format parsers
//! call (`begin_turn`, `tool_call`, `set_todos`, ...). Invariants:
//! - every string is clipped (whitespace collapsed, control characters dropped, a visible
//!   `…` where cut) and every list is capped, so the digest's size is bounded whatever the
//!   transcript holds;
//! - only transcript events change it; nothing here reads the clock, so no field changes
//!   merely because time passed (start times are stored, never "running for N s");
//! - the parsers never touch the fields directly, so the bounds hold by construction.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

/// Finished turns kept in the digest (the render shows at most `@tmuxmate-digest-turns`).
pub const MAX_TURNS: usize = turns_bound(true);
pub const DEFAULT_TURNS: usize = crate::tmux::options::DIGEST_TURNS.default_number() as usize;
pub const MIN_TURNS: usize = turns_bound(false);

/// The bounds of `@tmuxmate-digest-turns`, from the options table.
const fn turns_bound(upper: bool) -> usize {
    match crate::tmux::options::DIGEST_TURNS.kind {
        crate::tmux::options::Kind::Number { min, max } => (if upper { max } else { min }) as usize,
        _ => 0,
    }
}
pub const MAX_TODOS: usize = 40;
const OPEN_TOOLS: usize = 6;
const OPEN_FAILURES: usize = 4;
const RECENT_TOOLS: usize = 8;
pub const PROMPT_CHARS: usize = 400;
const TURN_PROMPT_CHARS: usize = 100;
const RESULT_CHARS: usize = 100;
const TEXT_CHARS: usize = 400;
pub const SUMMARY_CHARS: usize = 120;
const ERROR_CHARS: usize = 300;
const GOAL_CHARS: usize = 300;
const TODO_CHARS: usize = 120;
const NAME_CHARS: usize = 48;
const ID_CHARS: usize = 80;

pub use crate::sys::printable::clip;

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Turns begun (finished plus the open one).
    pub turns: u64,
    /// Model responses (Claude: distinct message ids; Codex: assistant items; dsh: steps).
    pub steps: u64,
    pub tool_calls: u64,
    pub errors: u64,
    pub compactions: u64,
    /// Complete transcript lines folded into this digest.
    pub lines: u64,
    /// Lines that were not JSON (ignored, never an error).
    pub bad_lines: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub name: String,
    pub summary: String,
    /// `null` when the transcript gave none (always present: docs/json.md).
    #[serde(default)]
    pub id: Option<String>,
    pub at: Option<u64>,
}

impl ToolCall {
    /// `Bash(cargo test)`, or the bare name when there is no summary.
    pub fn label(&self) -> String {
        if self.summary.is_empty() {
            self.name.clone()
        } else {
            format!("{}({})", self.name, self.summary)
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    pub tool: Option<String>,
    pub text: String,
    pub at: Option<u64>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Todo {
    pub text: String,
    /// `pending`, `in_progress` or `completed` (other values kept as given, clipped).
    pub status: String,
    /// `null` when the transcript gave none (always present: docs/json.md).
    #[serde(default)]
    pub id: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FinishedTurn {
    pub n: u64,
    pub prompt: Option<String>,
    /// `completed`, `aborted`, `interrupted`, or `ended` (a new turn began without an end
    /// marker).
    pub outcome: String,
    pub started: Option<u64>,
    pub ended: Option<u64>,
    pub steps: u64,
    pub tools: u64,
    pub errors: u64,
    /// The turn's last assistant text, clipped.
    pub result: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OpenTurn {
    pub n: u64,
    pub prompt: Option<String>,
    pub started: Option<u64>,
    pub steps: u64,
    pub tool_count: u64,
    pub error_count: u64,
    pub latest_text: Option<String>,
    pub tools: VecDeque<ToolCall>,
    pub failures: VecDeque<Failure>,
    /// Set by an interrupt notice; the turn ends as `interrupted` at its end marker.
    #[serde(default)]
    pub interrupted: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Digest {
    pub goal: Option<String>,
    /// Where the goal came from: `goal` (explicit), `title` (session title) or `prompt`
    /// (the session's first prompt). A stronger source replaces a weaker one.
    pub goal_source: Option<String>,
    pub model: Option<String>,
    pub turns: VecDeque<FinishedTurn>,
    pub open_turn: Option<OpenTurn>,
    pub todos: Vec<Todo>,
    pub recent_tools: VecDeque<ToolCall>,
    pub last_error: Option<Failure>,
    pub counts: Counts,
    /// Time (ms since the epoch) of the newest timestamped record folded.
    pub last_activity: Option<u64>,
    /// Tokens (and cost) as the transcript reports them; `None` when it reports none.
    #[serde(default)]
    pub usage: Option<Usage>,
}

/// What the model's context holds and what the session spent, as the transcript says:
/// Claude's `message.usage` of its latest response, Codex's `token_count` event. Each
/// field is absent when the transcript does not give it (never estimated).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Tokens in the context of the latest model request (input, cached input and
    /// its output).
    pub context_tokens: Option<u64>,
    /// The model's context window, where the transcript names it (Codex).
    pub context_window: Option<u64>,
    /// Tokens over the whole session, where the transcript sums them (Codex).
    pub total_tokens: Option<u64>,
    /// Cost in US dollars, where the transcript records it.
    pub cost_usd: Option<f64>,
}

fn push_capped<T>(q: &mut VecDeque<T>, v: T, cap: usize) {
    q.push_back(v);
    while q.len() > cap {
        q.pop_front();
    }
}

fn source_rank(s: Option<&str>) -> u8 {
    match s {
        Some("goal") => 3,
        Some("title") => 2,
        Some("prompt") => 1,
        _ => 0,
    }
}

/// Normalise a checklist status to the three common words where it is one of them.
pub fn norm_status(s: &str) -> String {
    match s
        .trim()
        .to_ascii_lowercase()
        .replace(['-', ' '], "_")
        .as_str()
    {
        "pending" | "todo" | "not_started" | "open" => "pending".into(),
        "in_progress" | "inprogress" | "active" | "running" | "doing" => "in_progress".into(),
        "completed" | "complete" | "done" | "finished" => "completed".into(),
        other => clip(other, 20),
    }
}

impl Digest {
    pub fn touch(&mut self, t: Option<u64>) {
        if let Some(t) = t
            && self.last_activity.is_none_or(|l| t > l)
        {
            self.last_activity = Some(t);
        }
    }

    fn open(&mut self, t: Option<u64>) -> &mut OpenTurn {
        if self.open_turn.is_none() {
            self.counts.turns += 1;
            self.open_turn = Some(OpenTurn {
                n: self.counts.turns,
                started: t,
                ..OpenTurn::default()
            });
        }
        self.open_turn.get_or_insert_with(OpenTurn::default)
    }

    /// A turn begins (an explicit marker). Any open turn ends as `ended`.
    pub fn begin_turn(&mut self, prompt: Option<&str>, t: Option<u64>) {
        if self.open_turn.is_some() {
            self.end_turn("ended", t);
        }
        self.touch(t);
        self.open(t);
        if let Some(p) = prompt {
            self.prompt(p, t);
        }
    }

    /// A user prompt. Opens a turn when none is open; a second, different prompt inside
    /// the same turn (steering input) does not replace the turn's prompt.
    pub fn prompt(&mut self, text: &str, t: Option<u64>) {
        let p = clip(text, PROMPT_CHARS);
        if p.is_empty() {
            return;
        }
        self.touch(t);
        if source_rank(self.goal_source.as_deref()) == 0 {
            self.goal = Some(clip(text, GOAL_CHARS));
            self.goal_source = Some("prompt".into());
        }
        let open = self.open(t);
        if open.prompt.is_none() {
            open.prompt = Some(p);
        }
    }

    /// Whether a turn is open and already carries a prompt.
    pub fn has_prompt(&self) -> bool {
        self.open_turn.as_ref().is_some_and(|o| o.prompt.is_some())
    }

    pub fn is_open(&self) -> bool {
        self.open_turn.is_some()
    }

    pub fn mark_interrupted(&mut self, t: Option<u64>) {
        self.touch(t);
        if let Some(o) = self.open_turn.as_mut() {
            o.interrupted = true;
        }
    }

    /// The open turn ends. Without an open turn this does nothing (a repeated end marker).
    pub fn end_turn(&mut self, outcome: &str, t: Option<u64>) {
        self.touch(t);
        let Some(o) = self.open_turn.take() else {
            return;
        };
        let outcome = if o.interrupted && outcome != "aborted" {
            "interrupted".to_string()
        } else {
            clip(outcome, 20)
        };
        let f = FinishedTurn {
            n: o.n,
            prompt: o.prompt.as_deref().map(|p| clip(p, TURN_PROMPT_CHARS)),
            outcome,
            started: o.started,
            ended: t.or(self.last_activity),
            steps: o.steps,
            tools: o.tool_count,
            errors: o.error_count,
            result: o.latest_text.as_deref().map(|r| clip(r, RESULT_CHARS)),
        };
        push_capped(&mut self.turns, f, MAX_TURNS);
    }

    /// One model response began.
    pub fn step(&mut self, t: Option<u64>) {
        self.touch(t);
        self.counts.steps += 1;
        self.open(t).steps += 1;
    }

    pub fn assistant_text(&mut self, text: &str, t: Option<u64>) {
        let c = clip(text, TEXT_CHARS);
        if c.is_empty() {
            return;
        }
        self.touch(t);
        self.open(t).latest_text = Some(c);
    }

    pub fn tool_call(&mut self, name: &str, summary: &str, id: Option<&str>, t: Option<u64>) {
        self.touch(t);
        let call = ToolCall {
            name: clip(name, NAME_CHARS),
            summary: clip(summary, SUMMARY_CHARS),
            id: id.map(|i| clip(i, ID_CHARS)),
            at: t,
        };
        self.counts.tool_calls += 1;
        push_capped(&mut self.recent_tools, call.clone(), RECENT_TOOLS);
        let o = self.open(t);
        o.tool_count += 1;
        push_capped(&mut o.tools, call, OPEN_TOOLS);
    }

    /// The label of the tool call with this id, if it is still remembered.
    pub fn tool_label(&self, id: &str) -> Option<String> {
        let open = self.open_turn.iter().flat_map(|o| o.tools.iter().rev());
        open.chain(self.recent_tools.iter().rev())
            .find(|c| c.id.as_deref() == Some(id))
            .map(ToolCall::label)
    }

    /// A tool call failed. `tool` is used when the call's id is not remembered.
    pub fn tool_error(&mut self, id: Option<&str>, tool: Option<&str>, text: &str, t: Option<u64>) {
        let label = id
            .and_then(|i| self.tool_label(i))
            .or_else(|| tool.map(|s| clip(s, SUMMARY_CHARS)));
        self.failure(label, text, t);
    }

    /// An error that is not a tool's (an API error, a failed hook).
    pub fn error(&mut self, text: &str, t: Option<u64>) {
        self.failure(None, text, t);
    }

    fn failure(&mut self, tool: Option<String>, text: &str, t: Option<u64>) {
        self.touch(t);
        let text = clip(text, ERROR_CHARS);
        let f = Failure {
            tool,
            text: if text.is_empty() {
                "(no message)".into()
            } else {
                text
            },
            at: t,
        };
        self.counts.errors += 1;
        self.last_error = Some(f.clone());
        if let Some(o) = self.open_turn.as_mut() {
            o.error_count += 1;
            push_capped(&mut o.failures, f, OPEN_FAILURES);
        }
    }

    /// Replace the whole checklist (TodoWrite, update_plan, todo/write).
    pub fn set_todos<'a>(&mut self, items: impl IntoIterator<Item = (&'a str, &'a str)>) {
        self.todos = items
            .into_iter()
            .filter(|(text, _)| !text.trim().is_empty())
            .take(MAX_TODOS)
            .map(|(text, status)| Todo {
                text: clip(text, TODO_CHARS),
                status: norm_status(status),
                id: None,
            })
            .collect();
    }

    /// TaskCreate: a new pending item; its id may arrive later (`task_id`).
    pub fn task_create(&mut self, subject: &str, id: Option<&str>) {
        if subject.trim().is_empty() {
            return;
        }
        if self.todos.len() >= MAX_TODOS {
            // Keep the newest: drop the oldest completed item, else the oldest.
            let i = self
                .todos
                .iter()
                .position(|t| t.status == "completed")
                .unwrap_or(0);
            self.todos.remove(i);
        }
        self.todos.push(Todo {
            text: clip(subject, TODO_CHARS),
            status: "pending".into(),
            id: id.map(|i| clip(i, ID_CHARS)),
        });
    }

    /// The id TaskCreate's result gave the item created with `subject`.
    pub fn task_id(&mut self, subject: &str, id: &str) {
        let text = clip(subject, TODO_CHARS);
        if let Some(t) = self
            .todos
            .iter_mut()
            .rev()
            .find(|t| t.id.is_none() && t.text == text)
        {
            t.id = Some(clip(id, ID_CHARS));
        }
    }

    /// TaskUpdate: status (`deleted` removes the item) and/or a new subject.
    pub fn task_update(&mut self, id: &str, status: Option<&str>, subject: Option<&str>) {
        let id = clip(id, ID_CHARS);
        let Some(i) = self.todos.iter().position(|t| t.id.as_deref() == Some(&id)) else {
            return;
        };
        if status.is_some_and(|s| s.eq_ignore_ascii_case("deleted")) {
            self.todos.remove(i);
            return;
        }
        if let Some(s) = status {
            self.todos[i].status = norm_status(s);
        }
        if let Some(s) = subject.filter(|s| !s.trim().is_empty()) {
            self.todos[i].text = clip(s, TODO_CHARS);
        }
    }

    /// An explicit goal (`goal`) or a session title (`title`); never weaker than what is set.
    pub fn set_goal(&mut self, text: &str, source: &str) {
        let g = clip(text, GOAL_CHARS);
        if g.is_empty() || source_rank(Some(source)) < source_rank(self.goal_source.as_deref()) {
            return;
        }
        self.goal = Some(g);
        self.goal_source = Some(source.into());
    }

    pub fn set_model(&mut self, m: &str) {
        let m = clip(m, NAME_CHARS);
        if !m.is_empty() && !m.starts_with('<') {
            self.model = Some(m);
        }
    }

    /// The transcript reported usage: the fields it gave replace the ones held, a cost
    /// adds to the session's.
    pub fn usage(&mut self, u: Usage) {
        let held = self.usage.get_or_insert_with(Usage::default);
        held.context_tokens = u.context_tokens.or(held.context_tokens);
        held.context_window = u.context_window.or(held.context_window);
        held.total_tokens = u.total_tokens.or(held.total_tokens);
        if let Some(c) = u.cost_usd.filter(|c| c.is_finite() && *c >= 0.0) {
            held.cost_usd = Some(held.cost_usd.unwrap_or(0.0) + c);
        }
    }

    pub fn compaction(&mut self, t: Option<u64>) {
        self.touch(t);
        self.counts.compactions += 1;
    }

    /// `(done, total)` of the checklist.
    pub fn todo_progress(&self) -> (usize, usize) {
        let done = self
            .todos
            .iter()
            .filter(|t| t.status == "completed")
            .count();
        (done, self.todos.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_bounds_and_collapses() {
        assert_eq!(clip("  a\n\n b\tc  ", 10), "a b c");
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clip("ab cd", 3), "ab…");
        assert_eq!(clip("\u{1b}[1mx", 5), "[1mx");
        let big = "é".repeat(1_000_000);
        assert_eq!(clip(&big, 5).chars().count(), 6);
    }

    #[test]
    fn caps_hold() {
        let mut d = Digest::default();
        for i in 0..1000 {
            d.begin_turn(Some(&format!("prompt {i} {}", "x".repeat(5000))), Some(i));
            for j in 0..20 {
                d.step(Some(i));
                d.tool_call(
                    "Bash",
                    &"y".repeat(10_000),
                    Some(&format!("c{i}-{j}")),
                    Some(i),
                );
                d.tool_error(
                    Some(&format!("c{i}-{j}")),
                    None,
                    &"z".repeat(10_000),
                    Some(i),
                );
            }
            d.end_turn("completed", Some(i));
        }
        assert_eq!(d.turns.len(), MAX_TURNS);
        assert_eq!(d.counts.turns, 1000);
        assert_eq!(d.recent_tools.len(), RECENT_TOOLS);
        assert!(serde_json::to_string(&d).unwrap().len() < 64 * 1024);
        assert_eq!(d.turns.back().unwrap().n, 1000);
    }

    #[test]
    fn goal_sources_rank() {
        let mut d = Digest::default();
        d.prompt("first prompt", None);
        d.end_turn("completed", None);
        d.prompt("second prompt", None);
        assert_eq!(d.goal.as_deref(), Some("first prompt"));
        d.set_goal("A title", "title");
        d.set_goal("The goal", "goal");
        d.set_goal("Later title", "title");
        assert_eq!(d.goal.as_deref(), Some("The goal"));
    }

    #[test]
    fn tasks_pair_up() {
        let mut d = Digest::default();
        d.task_create("Write tests", None);
        d.task_id("Write tests", "1");
        d.task_create("Ship", Some("2"));
        d.task_update("1", Some("in_progress"), None);
        d.task_update("2", Some("deleted"), None);
        assert_eq!(d.todos.len(), 1);
        assert_eq!(d.todos[0].status, "in_progress");
    }
}
