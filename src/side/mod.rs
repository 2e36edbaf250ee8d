//! The side chat: a read-only agent that talks about a running main agent session
//! without interrupting it.
//!
//! Owns: resolving the main pane (`-t`, or `TMUXMATE_SIDE_MAIN` inside a side agent), the
//! text a side turn is given (the main's live digest behind a "partial, verify" header),
//! `history` (the main session's real transcript lines, summarised one per line and
//! bounded), `report` (a note queued in the main agent's ledger, delivered at its next turn
//! and never typed into its pane), and which session files a side agent leaves and
//! deleting them. Its lifecycle lives in `open` (popup or split), `supervise` (the side
//! agent child, then the cleanup), `close`, with their shared files in `handoff` and the
//! per-CLI flags in `agent`. Invariants: the side agent gets no copy of the main
//! history; nothing here sends a byte to the main pane; every output is bounded.

pub mod agent;
pub mod claude_history;
pub mod close;
pub mod digest;
pub mod handoff;
pub mod open;
pub mod relay;
pub mod request;
pub mod sandboxed;
pub mod split;
pub mod supervise;
pub mod turn;

use crate::targs;
use crate::tmux::Arg;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::digest::render;
use crate::error::Error;
use crate::harness::SIDE_MAIN_ENV;
use crate::location::ledger::Ledger;
use crate::tmux::Tmux;
use crate::tmux::format::{parse_records, record_format};
use crate::tmux::target::Target;

/// The main transcript, for side agents whose sandbox forbids the tmux socket (Codex's
/// read-only sandbox does): status and history then read the file directly.
pub const ENV_TRANSCRIPT: &str = "TMUXMATE_SIDE_TRANSCRIPT";
pub const OPT_SIDE: &str = crate::tmux::options::SIDE.name;
/// Set on the main pane by the side agent's own hook: the side session's transcript.
pub const OPT_SIDE_TRANSCRIPT: &str = crate::tmux::options::SIDE_TRANSCRIPT.name;
pub const HISTORY_DEFAULT: usize = 40;
pub const HISTORY_MAX: usize = 200;
const LINE_MAX: usize = 400;
pub const REPORT_MAX: usize = 4000;
/// The harness cap is 10,000 characters; stay below it.
const CONTEXT_MAX: usize = 9000;

pub const ROLE: &str = "You are a read-only side conversation about another agent's ongoing session \
(the main agent, in tmux pane {MAIN}). You cannot change anything. You can run exactly these commands: \
`tmuxmate side status` (its live digest and whether it is running now), \
`tmuxmate side history [--turn N] [--contains TEXT] [--limit K]` (the main session's real transcript lines), \
and `tmuxmate side report TEXT` (queue a note that the main agent reads at the start of its next turn; it never \
interrupts it). Each of your turns begins with a digest of the main session: it is partial and can be stale, so \
check details with `tmuxmate side history` before asserting them, and say \"I don't know\" rather than guess.";

/// The main pane of a side command: `-t` (validated) or the side agent's environment.
pub fn main_pane(tmux: &Tmux, target: Option<&str>) -> Result<String, Error> {
    let t = match target {
        Some(t) => t.to_string(),
        None => std::env::var(SIDE_MAIN_ENV).map_err(|_| {
            Error::usage(format!(
                "which main agent? pass -t PANE (e.g. -t %3), or run this inside a side chat ({SIDE_MAIN_ENV} is not set)"
            ))
        })?,
    };
    let rows = crate::tmux::panes::list_all(tmux)?;
    let p = Target::parse(&t)
        .map_err(Error::usage)?
        .resolve(&rows, &t)
        .map_err(Error::new)?;
    Ok(p.pane_id.clone())
}

/// Facts about the main pane in one tmux call.
pub struct Main {
    pub pane: String,
    pub agent: String,
    pub cwd: String,
    pub socket: String,
}

pub fn main_facts(tmux: &Tmux, pane: &str) -> Result<Main, Error> {
    let fmt = record_format(&[
        "pane_id",
        crate::tmux::options::AGENT.name,
        "pane_current_path",
        "socket_path",
    ]);
    let out = tmux.run_bytes(
        &targs![
            "display-message",
            "-p",
            "-t",
            Arg::id(pane),
            "-F",
            Arg::ours(&fmt)
        ],
        None,
    )?;
    let r = parse_records(&out, 4)
        .map_err(Error::new)?
        .into_iter()
        .next()
        .unwrap_or_default();
    if r.first().is_none_or(|p| p != pane) {
        return Err(Error::new(format!("the main pane {pane} is gone")));
    }
    Ok(Main {
        pane: pane.to_string(),
        agent: r[1].clone(),
        cwd: r[2].clone(),
        socket: r[3].clone(),
    })
}

/// The main agent's ledger address: what its per-turn hook recorded, else the pane's.
pub fn main_address(m: &Main) -> String {
    if m.agent.is_empty() {
        format!("pane:{}:{}", m.socket, m.pane)
    } else {
        m.agent.clone()
    }
}

#[derive(Serialize, Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// The main agent's pane id (`paneId`, as everywhere).
    #[serde(rename = "paneId")]
    pub main_pane: String,
    /// running | idle | unknown
    pub state: String,
    pub transcript: Option<String>,
    pub text: String,
}

pub fn status(tmux: &Tmux, pane: &str) -> Result<Status, Error> {
    match digest::pane::load(tmux, pane, None) {
        Ok(pd) => {
            let turns =
                digest::turns_limit(pd.turns_option.as_deref()).unwrap_or(digest::DEFAULT_TURNS);
            let state = if pd.fold.digest.is_open() {
                "running"
            } else {
                "idle"
            };
            Ok(Status {
                main_pane: pane.to_string(),
                state: state.into(),
                transcript: Some(pd.transcript.to_string_lossy().into_owned()),
                text: render::render(&pd.fold.digest, turns),
            })
        }
        Err(e) => Ok(Status {
            main_pane: pane.to_string(),
            state: "unknown".into(),
            transcript: None,
            text: format!("(no digest: {})", e.msg),
        }),
    }
}

/// `status` from the transcript file alone (no tmux), for sandboxed side agents.
pub fn status_offline(transcript: &str) -> Status {
    let mut fold = digest::Fold::new(None);
    let path = Path::new(transcript);
    let readable = fold.update(path).is_ok();
    Status {
        main_pane: std::env::var(SIDE_MAIN_ENV).unwrap_or_default(),
        state: if !readable {
            "unknown".into()
        } else if fold.digest.is_open() {
            "running".into()
        } else {
            "idle".into()
        },
        transcript: Some(transcript.to_string()),
        text: if readable {
            render::render(&fold.digest, digest::DEFAULT_TURNS)
        } else {
            "(no digest yet: the main transcript does not exist)".into()
        },
    }
}

/// What a side turn is given: the digest behind a header that says what it is.
pub fn turn_context(tmux: &Tmux, pane: &str) -> String {
    let st = match status(tmux, pane) {
        Ok(s) => s,
        Err(e) => {
            return format!(
                "Side chat: the main agent's digest is unavailable ({}).",
                e.msg
            );
        }
    };
    let mut s = format!(
        "Live digest of the main agent session in tmux pane {pane} (partial, possibly stale: verify \
         details with `tmuxmate side history` before asserting them; say \"I don't know\" rather than guess).\n\
         main agent: {}\n{}",
        st.state, st.text
    );
    if s.chars().count() > CONTEXT_MAX {
        s = s.chars().take(CONTEXT_MAX).collect::<String>() + "\n[... digest truncated ...]";
    }
    s
}

fn clip(s: &str, max: usize) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
        .filter(|c| !c.is_control())
        .collect();
    if flat.chars().count() > max {
        format!("{}…", flat.chars().take(max).collect::<String>())
    } else {
        flat
    }
}

fn text_of(c: &Value) -> String {
    match c {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .filter_map(|b| b["text"].as_str().or_else(|| b["content"].as_str()))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// One transcript line as "(turn, summary)", or None for bookkeeping records.
fn summarize(v: &Value, turn: &mut u64) -> Option<(u64, String)> {
    // Claude Code
    if let Some(t) = v["type"].as_str() {
        match t {
            "user" if v["isMeta"] != true => {
                let c = &v["message"]["content"];
                let tool_result = c
                    .as_array()
                    .is_some_and(|a| a.iter().any(|b| b["type"] == "tool_result"));
                if tool_result {
                    let r = c
                        .as_array()
                        .and_then(|a| a.iter().find(|b| b["type"] == "tool_result"))?;
                    let err = if r["is_error"] == true {
                        " (error)"
                    } else {
                        ""
                    };
                    return Some((
                        *turn,
                        format!(
                            "tool result{err}: {}",
                            clip(&text_of(&r["content"]), LINE_MAX)
                        ),
                    ));
                }
                *turn += 1;
                return Some((*turn, format!("user: {}", clip(&text_of(c), LINE_MAX))));
            }
            "assistant" => {
                let a = v["message"]["content"].as_array()?;
                let mut parts = Vec::new();
                for b in a {
                    match b["type"].as_str() {
                        Some("text") => {
                            parts.push(format!("assistant: {}", b["text"].as_str().unwrap_or("")))
                        }
                        Some("tool_use") => parts.push(format!(
                            "tool call {}({})",
                            b["name"].as_str().unwrap_or("?"),
                            b["input"]
                        )),
                        _ => {}
                    }
                }
                return (!parts.is_empty()).then(|| (*turn, clip(&parts.join(" "), LINE_MAX)));
            }
            "system" if v["subtype"] == "turn_duration" => {
                return Some((*turn, format!("turn {} ended", *turn)));
            }
            "system" if v["subtype"] == "compact_boundary" => {
                return Some((*turn, "conversation compacted".into()));
            }
            _ => {}
        }
    }
    // Codex rollout
    let p = &v["payload"];
    match (v["type"].as_str(), p["type"].as_str()) {
        (Some("response_item"), Some("message")) => {
            let text = text_of(&p["content"]);
            match p["role"].as_str() {
                Some("user") if !text.trim_start().starts_with('<') => {
                    *turn += 1;
                    Some((*turn, format!("user: {}", clip(&text, LINE_MAX))))
                }
                Some("assistant") => Some((*turn, format!("assistant: {}", clip(&text, LINE_MAX)))),
                _ => None,
            }
        }
        (Some("response_item"), Some("function_call")) => Some((
            *turn,
            clip(
                &format!(
                    "tool call {}({})",
                    p["name"].as_str().unwrap_or("?"),
                    p["arguments"].as_str().unwrap_or("")
                ),
                LINE_MAX,
            ),
        )),
        (Some("response_item"), Some("function_call_output")) => Some((
            *turn,
            format!("tool result: {}", clip(&text_of(&p["output"]), LINE_MAX)),
        )),
        (Some("event_msg"), Some("task_complete")) => {
            Some((*turn, format!("turn {} ended", *turn)))
        }
        (Some("event_msg"), Some("turn_aborted")) => {
            Some((*turn, format!("turn {} aborted", *turn)))
        }
        _ => None,
    }
}

#[derive(Serialize, Deserialize, Debug)]
pub struct HistoryLine {
    pub turn: u64,
    pub text: String,
}

/// How much of a transcript `side history` reads, from its end.
const HISTORY_READ_MAX: u64 = 64 << 20;

/// The main session's transcript lines, summarised, filtered and bounded (newest last).
pub fn history(
    transcript: &Path,
    turn: Option<u64>,
    contains: Option<&str>,
    limit: usize,
) -> Result<Vec<HistoryLine>, Error> {
    // The newest 64 MiB: a history is read for its last lines, and a transcript of
    // gigabytes must not become gigabytes of memory (turn numbers then count from the
    // start of what was read).
    let (data, _) = crate::sys::files::read_tail(transcript, HISTORY_READ_MAX).map_err(|e| {
        Error::new(format!(
            "cannot read the main transcript {}: {e}",
            transcript.display()
        ))
    })?;
    let needle = contains.map(str::to_lowercase);
    let mut t = 0u64;
    let mut out: std::collections::VecDeque<HistoryLine> = Default::default();
    for line in data.split(|b| *b == b'\n') {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let Some((n, text)) = summarize(&v, &mut t) else {
            continue;
        };
        if turn.is_some_and(|w| w != n) {
            continue;
        }
        if needle
            .as_ref()
            .is_some_and(|nd| !text.to_lowercase().contains(nd))
        {
            continue;
        }
        out.push_back(HistoryLine { turn: n, text });
        if out.len() > limit {
            out.pop_front();
        }
    }
    Ok(out.into())
}

/// Queue a note for the main agent's next turn. Returns the ledger key.
pub fn report(tmux: &Tmux, pane: &str, text: &str) -> Result<(String, String), Error> {
    // Unique per call: two reports in one millisecond from one MCP server are two notes.
    let key = format!("side:{}", crate::sys::unique::token());
    report_keyed(tmux, pane, text, &key)
}

/// `report` under a given ledger key: the same key twice queues one note.
pub fn report_keyed(
    tmux: &Tmux,
    pane: &str,
    text: &str,
    key: &str,
) -> Result<(String, String), Error> {
    let text = text.trim();
    if text.is_empty() {
        return Err(Error::usage("refused: the report is empty"));
    }
    if text.chars().count() > REPORT_MAX {
        return Err(Error::usage(format!(
            "refused: the report is longer than {REPORT_MAX} characters; summarise it"
        )));
    }
    let m = main_facts(tmux, pane)?;
    let agent = main_address(&m);
    let key = key.to_string();
    // The note reaches the main agent's next turn, and through it a terminal: no ESC, BEL
    // or other control may ride along (an OSC 52 clipboard write, a clear-screen).
    let (text, _) = crate::sys::printable::visible(text);
    let note = format!(
        "tmux side chat note (from a side conversation about this session, not from the user):\n{text}"
    );
    Ledger::for_agent(&agent)
        .queue(&key, &note)
        .map_err(|e| Error::new(format!("could not queue the note for {agent}: {e}")))?;
    Ok((agent, key))
}

/// The side agent's own session files, to delete when it ends.
pub fn side_files(
    adapter: &str,
    cwd: &str,
    session: &str,
    started_ms: u64,
    main_transcript: Option<&str>,
    own_transcript: Option<&str>,
) -> Vec<PathBuf> {
    match adapter {
        "claude" => {
            // The transcript and its side directory, plus what Claude Code 2.1.332 was seen
            // to keep per session: session-env, file history, todos, temp notes
            // (docs/harnesses.md#claude-code-session-ids-and-files).
            let home = crate::bridge::transcript::claude_dir();
            let enc = crate::bridge::transcript::claude_project(cwd);
            let base = home.join("projects").join(&enc);
            let tmp = std::env::var_os("TMPDIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| "/tmp".into());
            vec![
                base.join(format!("{session}.jsonl")),
                base.join(session),
                home.join("session-env").join(session),
                home.join("file-history").join(session),
                home.join("todos")
                    .join(format!("{session}-agent-{session}.json")),
                tmp.join(format!("claude-{}", nix::unistd::getuid()))
                    .join(&enc)
                    .join(session),
            ]
        }
        // The side agent's own hook recorded its rollout (OPT_SIDE_TRANSCRIPT); without
        // that, only a rollout of this directory whose session began after ours, and not
        // the main's: one such file, or none deleted (never a guess between several).
        "codex" => match own_transcript {
            Some(t) if Some(t) != main_transcript => vec![PathBuf::from(t)],
            _ => {
                let c = codex_rollouts_since(cwd, started_ms, main_transcript);
                if c.len() == 1 { c } else { vec![] }
            }
        },
        _ => vec![],
    }
}

/// Codex rollouts of `cwd` whose session began after `ms`, the main's excluded.
fn codex_rollouts_since(cwd: &str, ms: u64, main: Option<&str>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![crate::bridge::transcript::codex_dir().join("sessions")];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
                && Some(p.to_string_lossy().as_ref()) != main
                && rollout_started_after(&p, ms)
                && rollout_cwd(&p).as_deref() == Some(cwd)
            {
                out.push(p);
            }
        }
    }
    out
}

fn rollout_cwd(p: &Path) -> Option<String> {
    use std::io::BufRead;
    let mut first = String::new();
    std::io::BufReader::new(std::io::Read::take(
        crate::sys::files::open_regular(p).ok()?,
        1 << 20,
    ))
    .read_line(&mut first)
    .ok()?;
    let v: Value = serde_json::from_str(&first).ok()?;
    v["payload"]["cwd"].as_str().map(str::to_string)
}

/// Whether the rollout's own session began after `ms`: by its `session_meta` timestamp,
/// not the file's mtime (another Codex in the same directory writes to its own rollout
/// all the time, and must never lose it to our cleanup).
fn rollout_started_after(p: &Path, ms: u64) -> bool {
    use std::io::BufRead;
    let Ok(f) = crate::sys::files::open_regular(p) else {
        return false;
    };
    let mut first = String::new();
    if std::io::BufReader::new(std::io::Read::take(f, 1 << 20))
        .read_line(&mut first)
        .is_err()
    {
        return false;
    }
    serde_json::from_str::<Value>(&first)
        .ok()
        .filter(|v| v["type"] == "session_meta")
        .and_then(|v| {
            v["payload"]["timestamp"]
                .as_str()
                .or(v["timestamp"].as_str())
                .and_then(crate::sys::time::parse_rfc3339)
        })
        .is_some_and(|t| t + 1000 >= ms)
}

/// Remove the side session's prompts from Claude's prompt history: the lines of its own
/// session id (given at launch), and of the session its hook last reported (a `/clear`
/// inside the side chat starts a new id). Returns (ok, a line saying what happened).
pub fn forget_prompts(session: &str, own_transcript: Option<&str>) -> (bool, String) {
    let mut ids = vec![session.to_string()];
    if let Some(stem) = own_transcript
        .map(Path::new)
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .and_then(|p| p.file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| s.len() == 36 && s != session)
    {
        ids.push(stem);
    }
    let file = crate::side::claude_history::path(&crate::bridge::transcript::claude_dir());
    match crate::side::claude_history::remove_sessions(&file, &ids) {
        Ok(n) => (
            true,
            format!(
                "removed {n} prompt line(s) of the side session from {}",
                file.display()
            ),
        ),
        Err(e) => (
            false,
            format!("its prompt lines could NOT be removed from the history: {e}"),
        ),
    }
}

/// Delete the files and check that they are gone. Returns a line saying honestly what happened.
pub fn delete_and_verify(files: &[PathBuf]) -> (bool, String) {
    let mut left = Vec::new();
    let mut deleted = 0;
    for f in files {
        if !f.exists() {
            continue;
        }
        let _ = if f.is_dir() {
            std::fs::remove_dir_all(f)
        } else {
            std::fs::remove_file(f)
        };
        if f.exists() {
            left.push(f.display().to_string());
        } else {
            deleted += 1;
        }
    }
    if left.is_empty() {
        (
            true,
            format!(
                "side chat closed; deleted {deleted} session file(s), none remain ({} places checked)",
                files.len()
            ),
        )
    } else {
        (
            false,
            format!(
                "side chat closed, but these session files could NOT be deleted: {}",
                left.join(", ")
            ),
        )
    }
}

/// Inside a side agent that cannot reach tmux: the main transcript it was given.
pub fn offline_transcript() -> Option<String> {
    std::env::var(ENV_TRANSCRIPT).ok().filter(|s| !s.is_empty())
}

/// `side status` (CLI and MCP `side_chat_main_status`): the main pane `-t`, else the side
/// chat's own main pane, else (offline, no target) the transcript it was given.
pub fn status_for(tmux: &Tmux, target: Option<&str>) -> Result<Status, Error> {
    match main_pane(tmux, target) {
        Ok(pane) => status(tmux, &pane),
        Err(e) => match (target.is_none(), offline_transcript()) {
            (true, Some(t)) => Ok(status_offline(&t)),
            _ => Err(e),
        },
    }
}

/// `side history` (CLI and MCP `side_chat_main_history`), bounded to `limit` lines.
pub fn history_for(
    tmux: &Tmux,
    target: Option<&str>,
    turn: Option<u64>,
    contains: Option<&str>,
    limit: usize,
) -> Result<Vec<HistoryLine>, Error> {
    if limit == 0 || limit > HISTORY_MAX {
        return Err(Error::usage(format!("--limit must be 1 to {HISTORY_MAX}")));
    }
    let transcript = match main_pane(tmux, target) {
        Ok(pane) => digest::pane::load(tmux, &pane, None)?.transcript,
        Err(e) => match (target.is_none(), offline_transcript()) {
            (true, Some(t)) => t.into(),
            _ => return Err(e),
        },
    };
    history(&transcript, turn, contains, limit)
}

#[derive(Serialize, Deserialize, Debug)]
pub struct Reported {
    pub queued: bool,
    pub agent: String,
    pub key: String,
}

/// `side report` (CLI and MCP `side_chat_report`): a note queued for the main agent.
pub fn report_for(tmux: &Tmux, target: Option<&str>, text: &str) -> Result<Reported, Error> {
    let pane = main_pane(tmux, target)?;
    let (agent, key) = report(tmux, &pane, text)?;
    Ok(Reported {
        queued: true,
        agent,
        key,
    })
}
