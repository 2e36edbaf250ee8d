//! The watch operations as requests (`watch start|list|show|stop|reattach`): one type
//! each, the command line's flags (`--json` aside) and what `--host` sends to the host's
//! tmuxmate; and the function the command line and a host's `tmuxmate call` both run.
//!
//! Invariant: `watch start --host` never sends `--notify`/`--forward`: the addressees are
//! this machine's agents, resolved here (`super::remote::start`); the host keeps the
//! result for this machine's collector ([`Kept`]). (Plain comments on the structs: clap
//! would make a doc comment the command's `--help` text.)

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{job, start, view};
use crate::error::Error;
use crate::op::Operation;
use crate::sys::duration::duration_ms;
use crate::tmux::Tmux;

// `watch start`.
#[derive(clap::Args, Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Start {
    /// An existing shell pane to type the command into (default: a new window).
    /// The pane: `%N`, `session:window.pane`, or another tmux target (see `tmuxmate list`).
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// Done when output produced after the start matches this regex (Rust regex syntax,
    /// multi-line mode: `^` and `$` match at the start and end of every output line, so
    /// `GO1$` matches a line `GO1`). With -t, the shell's echo of the typed command is not
    /// searched.
    #[arg(long, value_name = "RE")]
    pub done_regex: Option<String>,
    /// Give up after this long: 500ms, 30s, 2m, 1h (default: @tmuxmate-watch-timeout-min
    /// minutes, else 2h); the pane stays.
    #[arg(long, value_name = "DURATION", value_parser = duration_ms)]
    pub timeout: Option<u64>,
    /// Old spelling of --timeout, in minutes (fractions allowed).
    #[arg(
        long,
        value_name = "M",
        allow_hyphen_values = true,
        hide = true,
        conflicts_with = "timeout"
    )]
    pub timeout_min: Option<String>,
    /// Agent whose next turn gets the result: a known address (a session id or `turn
    /// --agent` name that made a per-turn call) or a pane id %N whose agent did (default:
    /// the agent of the calling pane).
    #[arg(long, value_name = "AGENT")]
    pub notify: Option<String>,
    /// Also queue the result for this agent (same addresses as --notify).
    #[arg(long, value_name = "AGENT")]
    #[serde(default)]
    pub forward: Vec<String>,
    /// With -t: leave copy or view mode first (else a pane in a mode is refused).
    #[arg(long)]
    #[serde(default)]
    pub cancel_mode: bool,
    /// The command: one argument is a shell command line; several are quoted words.
    #[arg(last = true)]
    #[serde(default)]
    pub cmd: Vec<String>,
}

impl Start {
    /// `--timeout` (ms) as the minutes `watch::start` takes (the old `--timeout-min` and
    /// the MCP tool's `timeoutMin` speak minutes).
    pub fn timeout_minutes(&self) -> Option<String> {
        match self.timeout {
            Some(ms) => Some(format!("{}", ms as f64 / 60_000.0)),
            None => self.timeout_min.clone(),
        }
    }

    /// The domain request; `timeout_min` is [`Self::timeout_minutes`], kept by the caller.
    pub fn request<'a>(&'a self, timeout_min: &'a Option<String>) -> start::Request<'a> {
        start::Request {
            target: self.target.as_deref(),
            cmd: &self.cmd,
            done_regex: self.done_regex.as_deref(),
            timeout_min: timeout_min.as_deref(),
            notify: self.notify.as_deref(),
            forward: &self.forward,
            cancel_mode: self.cancel_mode,
        }
    }

    pub fn run(&self, tmux: &Tmux) -> Result<start::Started, Error> {
        start::start(tmux, &self.request(&self.timeout_minutes()))
    }
}

// What `watch start --host` asks the host: the job, its result kept for the asking
// machine's collector address (`super::remote::served::watch_start`).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Kept {
    pub collector: String,
    pub start: Start,
}

impl Kept {
    pub fn run(&self, tmux: &Tmux) -> Result<start::Started, Error> {
        let minutes = self.start.timeout_minutes();
        super::remote::served::watch_start(tmux, &self.collector, &self.start.request(&minutes))
    }
}

impl Operation for Kept {
    const NAME: &'static str = "watch.start";
    type Answer = start::Started;
}

// `watch list`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct List {}

impl List {
    /// The jobs on every server here, running and recently ended. (`watch list` adds
    /// the jobs this machine started on other hosts: `super::remote::jobs::list`.)
    pub fn run(&self) -> Vec<Value> {
        view::all()
            .iter()
            .map(|l| serde_json::to_value(l.json()).unwrap_or_default())
            .collect()
    }
}

impl Operation for List {
    const NAME: &'static str = "watch.list";
    type Answer = Vec<Value>;
}

/// `watch list`'s text: a line a job (`(host H)` after one of another host's), with why
/// its state is unreadable on the next line when it is.
pub fn list_text(jobs: &[Value], now_ms: u64) -> String {
    if jobs.is_empty() {
        return "no watch jobs\n".into();
    }
    let mut s = String::new();
    for j in jobs {
        let f = |k: &str| j[k].as_str().unwrap_or("");
        let start = j["start"].as_u64().unwrap_or(0);
        let end = j["end"].as_u64().unwrap_or(now_ms);
        s.push_str(&format!(
            "{} {} {} {} {}",
            f("jobId"),
            f("paneId"),
            short_outcome(f("outcome")),
            job::duration(end.saturating_sub(start)),
            crate::sys::printable::clip(f("command"), COMMAND_CHARS),
        ));
        if let Some(h) = j["host"].as_str() {
            s.push_str(&format!(" (host {h})"));
        }
        s.push('\n');
        if let Some(u) = j["unreadable"].as_str() {
            s.push_str(&format!("    {u}\n"));
        }
    }
    s
}

/// How much of a command a listing line shows: enough to tell jobs apart; `watch show`
/// and `--json` have all of it.
const COMMAND_CHARS: usize = 40;

/// How much of a failure's reason a listing line shows: its tag (`server-gone`) or its
/// first words.
const REASON_CHARS: usize = 24;

/// The outcome in a word or two for a listing line (`watch show` has the words as
/// delivered): `exit N`, `exit ?` (typed into a shell), `matched`, `failed: REASON` (the
/// reason up to its parenthesis, cut), or the status itself.
fn short_outcome(o: &str) -> std::borrow::Cow<'_, str> {
    if let Some(inner) = o
        .strip_prefix("finished (")
        .and_then(|r| r.strip_suffix(')'))
    {
        let code = inner.strip_prefix("exit ").unwrap_or("");
        let numeric = !code.is_empty() && code.bytes().all(|b| b.is_ascii_digit() || b == b'-');
        return if numeric { inner } else { "exit ?" }.into();
    }
    if o.starts_with("matched /") {
        return "matched".into();
    }
    if let Some(why) = o.strip_prefix("failed: ") {
        let why = why.split(" (").next().unwrap_or(why);
        return format!("failed: {}", crate::sys::printable::clip(why, REASON_CHARS)).into();
    }
    o.into()
}

// `watch show`.
#[derive(clap::Args, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Show {
    /// The job id (as `watch start` printed it, or `watch list` lists it).
    pub job: String,
}

impl Show {
    pub fn run(&self) -> Result<view::JobJson, Error> {
        Ok(view::listed(view::find(&self.job)?).json())
    }
}

impl Operation for Show {
    const NAME: &'static str = "watch.show";
    type Answer = view::JobJson;
}

// `watch stop`.
#[derive(clap::Args, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Stop {
    /// The job id (as `watch start` printed it, or `watch list` lists it).
    pub job: String,
}

impl Stop {
    pub fn run(&self) -> Result<view::Stopped, Error> {
        let (j, stopped) = view::stop(&self.job)?;
        Ok(view::Stopped {
            job_id: self.job.clone(),
            stopped,
            pane_id: j.pane_id,
        })
    }
}

impl Operation for Stop {
    const NAME: &'static str = "watch.stop";
    type Answer = view::Stopped;
}

// `watch reattach`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Reattach {}

impl Reattach {
    pub fn run(&self) {
        super::poller::reattach_all(false);
    }
}

impl Operation for Reattach {
    const NAME: &'static str = "watch.reattach";
    type Answer = ();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_text_reads_local_and_remote_jobs_alike() {
        let jobs = vec![
            serde_json::json!({"jobId": "w1", "paneId": "%1", "outcome": "running",
                "start": 1_000, "end": null, "command": "make"}),
            serde_json::json!({"jobId": "w2", "paneId": "%2", "outcome": "finished (exit 0)",
                "start": 1_000, "end": 3_000, "command": "ls", "host": "box",
                "unreadable": "why"}),
        ];
        assert_eq!(
            list_text(&jobs, 61_000),
            format!(
                "w1 %1 running {} make\nw2 %2 exit 0 {} ls (host box)\n    why\n",
                job::duration(60_000),
                job::duration(2_000)
            )
        );
        assert_eq!(list_text(&[], 0), "no watch jobs\n");
    }

    #[test]
    fn a_listing_line_has_the_outcome_in_a_word_and_the_command_cut() {
        for (words, short) in [
            ("finished (exit 0)", "exit 0"),
            ("finished (exit 137)", "exit 137"),
            (
                "finished (exit status unknown: typed into a shell)",
                "exit ?",
            ),
            ("matched /ready in \\d+ms/", "matched"),
            ("failed: the pane is gone", "failed: the pane is gone"),
            (
                "failed: server-gone (the tmux server at /tmp/x is not running)",
                "failed: server-gone",
            ),
            (
                "failed: interrupted while recording the result",
                "failed: interrupted while record…",
            ),
            ("timed out", "timed out"),
            ("stopped", "stopped"),
            ("running", "running"),
        ] {
            assert_eq!(short_outcome(words), short, "{words}");
        }
        let long = format!("cargo test --release {}\x1b[2J", "x".repeat(100));
        let jobs = vec![serde_json::json!({"jobId": "w3", "paneId": "%9",
            "outcome": "running", "start": 0, "end": 500, "command": long})];
        let line = list_text(&jobs, 0);
        assert!(
            line.starts_with("w3 %9 running 500ms cargo test --release xxx"),
            "{line}"
        );
        assert!(line.ends_with("…\n") && !line.contains('\x1b'), "{line}");
        assert!(line.chars().count() <= 30 + COMMAND_CHARS, "{line}");
    }
}
