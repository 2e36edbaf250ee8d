//! Reading one turn's reply from an agent's own record of the conversation.
//!
//! Owns: where Claude's transcript and Codex's rollout live, and extracting the reply of
//! the turn that began with our message: assistant text only (no thinking, no tool
//! blocks), complete only when the turn's end marker is there (Claude `turn_duration` or a
//! final `stop_reason`; Codex `task_complete`). Invariants: a partial reply is never
//! reported as complete; unknown record types are skipped; a half-written last line is
//! left for the next read.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde_json::Value;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Turn {
    /// Our message was recorded as a user prompt.
    pub submitted: bool,
    /// The turn's end marker was seen.
    pub complete: bool,
    pub text: String,
    /// After our turn ended, another prompt (not ours: typed by a person, say) began a
    /// turn that has not ended yet.
    pub later_open: bool,
}

/// `~/.claude` (or `$CLAUDE_CONFIG_DIR`) of the environment the CLI was launched with.
pub fn claude_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".claude")
}

pub fn codex_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".codex")
}

/// Claude's project directory name: every non-alphanumeric character becomes `-`.
pub fn claude_project(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The transcript of Claude session `sid` started in `cwd`. Long names are cut at 200
/// characters plus a build-specific hash: match the prefix, as the CLI itself does.
pub fn claude_transcript(cwd: &str, sid: &str) -> Option<PathBuf> {
    let projects = claude_dir().join("projects");
    let enc = claude_project(cwd);
    let exact = projects.join(&enc).join(format!("{sid}.jsonl"));
    if exact.exists() || enc.len() <= 200 {
        return Some(exact);
    }
    let prefix: String = enc.chars().take(200).collect();
    std::fs::read_dir(&projects).ok()?.flatten().find_map(|e| {
        let n = e.file_name().to_string_lossy().into_owned();
        let p = e.path().join(format!("{sid}.jsonl"));
        (n.starts_with(&prefix) && p.exists()).then_some(p)
    })
}

/// Newest Codex rollout, modified at or after `since_ms`, whose session_meta cwd is `cwd`.
pub fn find_rollout(cwd: &str, since_ms: u64) -> Option<PathBuf> {
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    let mut stack = vec![codex_dir().join("sessions")];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with("rollout-") || !name.ends_with(".jsonl") {
                continue;
            }
            let Ok(m) = e.metadata().and_then(|m| m.modified()) else {
                continue;
            };
            let ms = m
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0);
            if ms + 2000 < since_ms {
                continue;
            }
            if rollout_cwd(&p).as_deref() != Some(cwd) {
                continue;
            }
            if best.as_ref().is_none_or(|(t, _)| m > *t) {
                best = Some((m, p));
            }
        }
    }
    best.map(|(_, p)| p)
}

fn rollout_cwd(p: &Path) -> Option<String> {
    let mut f = crate::sys::files::open_regular(p).ok()?;
    let mut buf = vec![0u8; 64 * 1024];
    let n = f.read(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf[..n]);
    let first = text.lines().next()?;
    let v: Value = serde_json::from_str(first).ok()?;
    (v["type"] == "session_meta").then(|| v["payload"]["cwd"].as_str().map(str::to_string))?
}

/// File size now (the offset a reply starts after).
pub fn size(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// Complete lines from `offset` on (a half-written last line is left out).
fn lines_from(p: &Path, offset: u64) -> Vec<String> {
    let Ok(mut f) = crate::sys::files::open_regular(p) else {
        return vec![];
    };
    complete_lines(&mut f, offset)
}

/// The complete lines of an open file from `offset` on (a half-written last line is
/// left out: its writer is not done with it).
pub fn complete_lines(f: &mut std::fs::File, offset: u64) -> Vec<String> {
    if f.seek(SeekFrom::Start(offset)).is_err() {
        return vec![];
    }
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    let end = buf
        .iter()
        .rposition(|&b| b == b'\n')
        .map(|i| i + 1)
        .unwrap_or(0);
    String::from_utf8_lossy(&buf[..end])
        .lines()
        .map(str::to_string)
        .collect()
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Claude's record of a prompt with each paste envelope replaced by the pasted text.
///
/// Claude Code 2.1.332 stores (and sends to the model) a bracketed paste of 3 or more
/// line breaks, or of more than 800 characters, as
/// `\n\n<pasted_content id="e26b">\nTEXT\n</pasted_content id="e26b">\n` (one random
/// 4-hex id per session, the same in both tags; TEXT byte for byte, with tabs as 4 spaces
/// and CRLF as LF). Anything that is not a whole envelope is kept as it is.
pub fn unwrap_pasted(s: &str) -> String {
    const OPEN: &str = "<pasted_content id=\"";
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(OPEN) {
        let after = &rest[i + OPEN.len()..];
        let Some(q) = after.find("\">") else { break };
        let id = &after[..q];
        let body = &after[q + 2..];
        let close = format!("</pasted_content id=\"{id}\">");
        if id.is_empty() || id.len() > 64 || id.contains(['\n', '"', '<', '>']) {
            out.push_str(&rest[..i + OPEN.len()]);
            rest = after;
            continue;
        }
        let Some(j) = body.find(&close) else { break };
        out.push_str(&rest[..i]);
        let text = &body[..j];
        let text = text.strip_prefix('\n').unwrap_or(text);
        out.push_str(text.strip_suffix('\n').unwrap_or(text));
        rest = &body[j + close.len()..];
    }
    out.push_str(rest);
    out
}

/// Does a prompt as the CLI recorded it start like the message we sent (whose first
/// characters, whitespace-normalised, are `want`)? Whitespace is compared loosely
/// because the CLIs normalise it (tabs, CRLF, trailing blanks).
pub fn prompt_matches(recorded: &str, want: &str) -> bool {
    norm(&unwrap_pasted(recorded)).starts_with(want)
}

fn text_blocks(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            let texts: Vec<&str> = items
                .iter()
                .filter(|b| {
                    b["type"] == "text" || b["type"] == "input_text" || b["type"] == "output_text"
                })
                .filter_map(|b| b["text"].as_str())
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// An assistant record that ends its turn (text only, with a final stop reason).
fn later_turn_ends(m: &Value) -> bool {
    let Some(arr) = m["content"].as_array() else {
        return false;
    };
    let has_tool = arr.iter().any(|b| b["type"] == "tool_use");
    let stop = m["stop_reason"].as_str().unwrap_or("");
    !has_tool
        && matches!(
            stop,
            "end_turn" | "stop_sequence" | "max_tokens" | "refusal"
        )
}

/// The Claude turn that starts with a user prompt beginning like `head`.
pub fn claude_turn(p: &Path, offset: u64, head: &str) -> Turn {
    let mut t = Turn::default();
    let want = norm(head);
    let mut parts: Vec<String> = Vec::new();
    for line in lines_from(p, offset) {
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        match v["type"].as_str() {
            Some("user") if !t.submitted || t.complete => {
                let c = &v["message"]["content"];
                let is_prompt = c.is_string()
                    || c.as_array()
                        .is_some_and(|a| a.iter().all(|b| b["type"] != "tool_result"));
                // Slash commands run in the CLI (`/clear`, `/model`) are recorded as user
                // records too, but start no model turn.
                let local = text_blocks(c).is_some_and(|t| {
                    let t = t.trim_start();
                    t.starts_with("<command-name>") || t.starts_with("<local-command-")
                });
                if !is_prompt || v["isMeta"] == true || local {
                    continue;
                }
                if t.complete {
                    t.later_open = true;
                } else if let Some(text) = text_blocks(c)
                    && prompt_matches(&text, &want)
                {
                    t.submitted = true;
                }
            }
            Some("assistant") if t.complete && later_turn_ends(&v["message"]) => {
                t.later_open = false;
            }
            Some("assistant") if t.complete => {}
            Some("assistant") if t.submitted => {
                let m = &v["message"];
                if let Some(arr) = m["content"].as_array() {
                    for b in arr {
                        if b["type"] == "text"
                            && let Some(s) = b["text"].as_str()
                        {
                            parts.push(s.to_string());
                        }
                    }
                    if later_turn_ends(m) {
                        t.complete = true;
                    }
                }
            }
            Some("system") if t.complete && v["subtype"] == "turn_duration" => {
                t.later_open = false;
            }
            Some("system") if t.submitted && v["subtype"] == "turn_duration" => {
                t.complete = true;
            }
            _ => {}
        }
    }
    t.text = parts.join("\n\n");
    t
}

/// Codex records its own context (environment, AGENTS.md, instructions) as user messages.
fn is_codex_context(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("<environment_context>")
        || t.starts_with("<user_instructions>")
        || t.starts_with("# AGENTS.md")
        || t.starts_with("<permissions")
        || t.starts_with("<turn_aborted>")
}

/// The Codex turn that starts with a user message beginning like `head`.
pub fn codex_turn(p: &Path, offset: u64, head: &str) -> Turn {
    let mut t = Turn::default();
    let want = norm(head);
    let mut parts: Vec<String> = Vec::new();
    let mut last_agent: Option<String> = None;
    for line in lines_from(p, offset) {
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let pl = &v["payload"];
        match (v["type"].as_str(), pl["type"].as_str()) {
            (Some("response_item"), Some("message")) => {
                let text = text_blocks(&pl["content"]).unwrap_or_default();
                match pl["role"].as_str() {
                    Some("user") if t.complete && !is_codex_context(&text) => t.later_open = true,
                    Some("user") if !t.submitted && norm(&text).starts_with(&want) => {
                        t.submitted = true
                    }
                    Some("assistant") if t.submitted && !t.complete && !text.is_empty() => {
                        parts.push(text)
                    }
                    _ => {}
                }
            }
            (Some("event_msg"), Some("user_message"))
                if !t.submitted
                    && pl["message"]
                        .as_str()
                        .is_some_and(|m| norm(m).starts_with(&want)) =>
            {
                t.submitted = true;
            }
            (Some("event_msg"), Some("task_started")) if t.complete => {
                t.later_open = true;
            }
            (Some("event_msg"), Some("task_complete" | "turn_aborted")) if t.complete => {
                t.later_open = false;
            }
            (Some("event_msg"), Some("task_complete")) if t.submitted => {
                t.complete = true;
                last_agent = pl["last_agent_message"].as_str().map(str::to_string);
            }
            (Some("event_msg"), Some("turn_aborted")) if t.submitted => {
                t.complete = true;
                parts.push("[the turn was aborted]".into());
            }
            _ => {}
        }
    }
    t.text = if parts.is_empty() {
        last_agent.unwrap_or_default()
    } else {
        parts.join("\n\n")
    };
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name)
    }

    #[test]
    fn real_claude_transcript() {
        let t = claude_turn(
            &fixture("claude-transcript.jsonl"),
            0,
            "please run the slow thing",
        );
        assert!(t.submitted && t.complete, "{t:?}");
        assert_eq!(
            t.text,
            "I'll plan first.\n\nThe command printed `done`. All tasks complete."
        );
        let none = claude_turn(&fixture("claude-transcript.jsonl"), 0, "something else");
        assert!(!none.submitted);
    }

    #[test]
    fn real_claude_paste_envelopes_are_our_prompts() {
        // Recorded from Claude Code 2.1.332: 3 line breaks, 50 lines, an
        // 810-character line and 4 lines were wrapped; 2 lines and 800 characters were not.
        let f = fixture("claude-paste-transcript.jsonl");
        for head in [
            "line one line two line three",
            "a1 a2 a3",
            "row 1 row 2 row 3 row 4 row 5 row 6 row 7 row 8 row 9 row 10",
            &"x".repeat(60),
            "b1 b2 b3 b4",
            "c1 c2",
            &"y".repeat(60),
            &"z".repeat(60),
            "w x y",
        ] {
            let t = claude_turn(&f, 0, head);
            assert!(t.submitted && t.complete, "{head}: {t:?}");
            assert!(t.text.starts_with("Mock reply to: "), "{head}: {t:?}");
        }
        assert!(!claude_turn(&f, 0, "pasted_content").submitted);
    }

    #[test]
    fn unwraps_only_whole_envelopes() {
        let e = |id: &str, t: &str| {
            format!("\n\n<pasted_content id=\"{id}\">\n{t}\n</pasted_content id=\"{id}\">\n")
        };
        assert_eq!(unwrap_pasted(&e("e26b", "a\nb\nc")), "\n\na\nb\nc\n");
        // Two pastes with words around them.
        let two = format!("see {} and {}", e("1af0", "one"), e("1af0", "two"));
        assert_eq!(norm(&unwrap_pasted(&two)), "see one and two");
        // A paste that itself quotes an envelope of another id stays byte for byte.
        let inner = e("beef", "x");
        assert_eq!(
            norm(&unwrap_pasted(&e("1234", &inner))),
            norm("<pasted_content id=\"beef\"> x </pasted_content id=\"beef\">")
        );
        // Not an envelope: unclosed, mismatched id, or a bare mention.
        for s in [
            "<pasted_content id=\"aa\">\nopen only",
            "<pasted_content id=\"aa\">x</pasted_content id=\"bb\">",
            "about <pasted_content> tags",
        ] {
            assert_eq!(unwrap_pasted(s), s);
        }
        assert!(prompt_matches(
            &e("e26b", "Review\tthis\r\nplease"),
            "Review this please"
        ));
    }

    #[test]
    fn real_codex_rollout() {
        let t = codex_turn(
            &fixture("codex-rollout.jsonl"),
            0,
            "please run the slow thing",
        );
        assert!(t.submitted && t.complete, "{t:?}");
        assert!(
            t.text
                .ends_with("The command printed `done`. All tasks complete."),
            "{}",
            t.text
        );
    }

    #[test]
    fn encodes_claude_projects() {
        assert_eq!(claude_project("/home/user/my-repo"), "-home-user-my-repo");
        assert_eq!(claude_project("/tmp/a.b c"), "-tmp-a-b-c");
    }
}
