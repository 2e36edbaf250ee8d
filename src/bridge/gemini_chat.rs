//! Gemini CLI's chat file, and the reply of the turn that began with our message.
//!
//! Owns: finding the chat file of a session (Gemini CLI 0.61:
//! `<gemini tmp>/<project short id>/chats/session-<YYYY-MM-DDTHH-MM>-<first 8 of the
//! session id>.jsonl`, the full id in its first record), replaying its records as Gemini
//! itself does on resume, and reading one turn. The replay: a record with an `id` is a
//! message, and one under an id seen before replaces it in place (a reply is rewritten
//! when its tool calls or token counts arrive); `{"$rewindTo": ID}` drops that message and
//! everything after it (all of them when ID is unknown); `{"$set": {"messages": [...]}}`
//! replaces the whole list; other `$set` lines are metadata. Gemini writes no end-of-turn
//! record, so the file alone can only say that a turn *looks* ended (its last message is
//! a reply without tool calls); `Chat::settle` takes the CLI's idle screen to conclude it.
//! Invariants: our prompt is a user message recorded at or after the send (its
//! timestamp), so an earlier identical prompt is never taken for it; messages recorded
//! before the send are never part of the reply; a half-written last line is left for the
//! next read; the file being replaced (resume rewrites it) means reading it from the start.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::transcript::{Turn, prompt_matches};

/// `~/.gemini` of the environment the CLI was launched with: `$GEMINI_CLI_HOME` replaces
/// the home directory (Gemini CLI 0.61 `homedir()`); under macOS's `sandbox-exec` its
/// runtime files live in `~/.cache/.gemini`.
pub fn gemini_dir() -> PathBuf {
    let home = std::env::var_os("GEMINI_CLI_HOME")
        .filter(|d| !d.is_empty())
        .or_else(|| std::env::var_os("HOME"))
        .map(PathBuf::from)
        .unwrap_or_default();
    if std::env::var("SANDBOX").is_ok_and(|s| s == "sandbox-exec") {
        return home.join(".cache").join(".gemini");
    }
    home.join(".gemini")
}

/// The session id on a chat file's first line.
fn first_session_id(p: &Path) -> Option<String> {
    let mut f = crate::sys::files::open_regular(p).ok()?;
    let mut buf = vec![0u8; 4096];
    let n = f.read(&mut buf).ok()?;
    let line = buf[..n].split(|&b| b == b'\n').next()?;
    let v: Value = serde_json::from_slice(line).ok()?;
    v["sessionId"].as_str().map(str::to_string)
}

/// The chat file of Gemini session `sid` (started with `--session-id sid`). Every project
/// directory under the tmp dir is looked in (the short id is the folder's name, with a
/// suffix when two projects share one); the file must carry the full id.
pub fn chat_file(sid: &str) -> Option<PathBuf> {
    chat_file_in(&gemini_dir(), sid)
}

fn chat_file_in(gemini: &Path, sid: &str) -> Option<PathBuf> {
    let short: String = sid.chars().take(8).collect();
    if short.len() < 8 || !short.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return None;
    }
    let tail = format!("-{short}.jsonl");
    let tmp = gemini.join("tmp");
    let mut found: Option<(std::time::SystemTime, PathBuf)> = None;
    for proj in std::fs::read_dir(&tmp).ok()?.flatten() {
        let Ok(rd) = std::fs::read_dir(proj.path().join("chats")) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with("session-") || !name.ends_with(&tail) {
                continue;
            }
            let p = e.path();
            if first_session_id(&p).as_deref() != Some(sid) {
                continue;
            }
            let m = e
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            if found.as_ref().is_none_or(|(t, _)| m > *t) {
                found = Some((m, p));
            }
        }
    }
    found.map(|(_, p)| p)
}

/// After a `/clear` typed in the pane (Gemini CLI 0.61 then starts a new session id and a
/// new chat file in the same folder): the chat file beside `current`, written to since
/// `at_ms`, that holds the prompt `head` recorded at or after `at_ms`, with its session id.
pub fn moved_to(current: &Path, at_ms: u64, head: &str) -> Option<(String, PathBuf)> {
    let dir = current.parent()?;
    let since = std::time::UNIX_EPOCH + std::time::Duration::from_millis(at_ms);
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        let fresh = e
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|m| m >= since);
        if p == current || !fresh || !name.starts_with("session-") || !name.ends_with(".jsonl") {
            return None;
        }
        let sid = first_session_id(&p)?;
        chat_turn(&p, 0, 0, at_ms, head)
            .submitted
            .then_some((sid, p))
    })
}

/// The inode of a file (0 if none): a replaced chat file is read from the start.
pub fn inode(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.ino()).unwrap_or(0)
}

/// Complete lines from `offset` on, when the file is still the one that offset was taken
/// in (same inode, not shorter, the offset at a line start); otherwise from the start.
fn lines(p: &Path, offset: u64, ino: u64) -> Vec<String> {
    let Ok(mut f) = crate::sys::files::open_regular(p) else {
        return vec![];
    };
    let same = f
        .metadata()
        .is_ok_and(|m| (ino == 0 || m.ino() == ino) && m.len() >= offset);
    let mut from = if same { offset } else { 0 };
    if from > 0 {
        let mut b = [0u8; 1];
        let at_line_start = f.seek(SeekFrom::Start(from - 1)).is_ok()
            && f.read_exact(&mut b).is_ok()
            && b[0] == b'\n';
        if !at_line_start {
            from = 0;
        }
    }
    super::transcript::complete_lines(&mut f, from)
}

/// The messages of a chat, in order, after replaying `lines` as Gemini CLI 0.61's
/// `loadConversationRecord` does.
pub fn replay(lines: &[String]) -> Vec<Value> {
    let mut order: Vec<String> = Vec::new();
    let mut by_id: HashMap<String, Value> = HashMap::new();
    let put = |order: &mut Vec<String>, by_id: &mut HashMap<String, Value>, v: Value| {
        let Some(id) = v["id"].as_str().map(str::to_string) else {
            return;
        };
        if by_id.insert(id.clone(), v).is_none() {
            order.push(id);
        }
    };
    for line in lines {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let Some(to) = v["$rewindTo"].as_str() {
            let cut = order.iter().position(|id| id == to).unwrap_or(0);
            for id in order.drain(cut..) {
                by_id.remove(&id);
            }
        } else if v["id"].is_string() {
            put(&mut order, &mut by_id, v);
        } else if let Some(msgs) = v["$set"]["messages"].as_array() {
            order.clear();
            by_id.clear();
            for m in msgs {
                put(&mut order, &mut by_id, m.clone());
            }
        } else if v["sessionId"].is_string()
            && let Some(msgs) = v["messages"].as_array()
        {
            // A whole-file header (a rewritten or converted chat) may carry the messages.
            for m in msgs {
                put(&mut order, &mut by_id, m.clone());
            }
        }
    }
    order
        .into_iter()
        .filter_map(|id| by_id.remove(&id))
        .collect()
}

/// The text parts of a message's content (a string, or parts), thoughts left out.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p["thought"] != true)
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// What a user message is, as far as a turn goes.
#[derive(Debug, PartialEq)]
enum UserKind {
    /// A prompt: typed, pasted or sent (its text as the person gave it).
    Prompt(String),
    /// Part of a running turn: tool results, or Gemini's own "Please continue." after
    /// its next-speaker check.
    InTurn,
}

fn user_kind(m: &Value) -> UserKind {
    let c = &m["content"];
    let tool_result = c
        .as_array()
        .is_some_and(|ps| ps.iter().any(|p| p.get("functionResponse").is_some()));
    if tool_result {
        return UserKind::InTurn;
    }
    // `displayContent` is the prompt as given (before `@file` expansion and the hooks'
    // context parts), kept only when it differs from `content`.
    let shown = match &m["displayContent"] {
        Value::Null => text_of(c),
        d => text_of(d),
    };
    if shown == "Please continue." {
        return UserKind::InTurn;
    }
    UserKind::Prompt(shown)
}

/// One turn as the chat file shows it, before the idle screen is taken into account.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Chat {
    pub submitted: bool,
    /// Our turn's reply text so far (each reply message's text, joined by blank lines).
    pub text: String,
    /// Our turn's last message is a reply without tool calls.
    pub ours_end_shaped: bool,
    /// A prompt after ours was recorded (our turn is over).
    pub later: bool,
    /// The chat's last message, in that later turn, is a reply without tool calls.
    pub later_end_shaped: bool,
}

impl Chat {
    /// The turn, given whether the CLI's screen is idle now (no busy line, its composer
    /// ready). Read the file first and the screen after it: Gemini writes the reply
    /// before it goes idle, and a next-speaker continuation starts before it does too.
    pub fn settle(&self, idle: bool) -> Turn {
        Turn {
            submitted: self.submitted,
            complete: self.submitted && (self.later || (self.ours_end_shaped && idle)),
            text: self.text.clone(),
            later_open: self.later && !(self.later_end_shaped && idle),
        }
    }
}

fn ts_ms(m: &Value) -> u64 {
    m["timestamp"]
        .as_str()
        .and_then(crate::sys::time::parse_rfc3339)
        .unwrap_or(0)
}

/// The turn that began with a user prompt beginning like `head` (whitespace-normalised),
/// recorded at or after `at_ms`. `offset`/`ino` say where the file stood at the send.
pub fn chat_turn(p: &Path, offset: u64, ino: u64, at_ms: u64, head: &str) -> Chat {
    turn_of(&replay(&lines(p, offset, ino)), at_ms, head)
}

fn turn_of(msgs: &[Value], at_ms: u64, head: &str) -> Chat {
    let want = head.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut c = Chat::default();
    let mut parts: Vec<String> = Vec::new();
    // Rewrites of older messages (a reply's token count) keep their old timestamp.
    for m in msgs.iter().filter(|m| ts_ms(m) >= at_ms) {
        let gemini = m["type"] == "gemini";
        let user = m["type"] == "user";
        if !c.submitted {
            if user
                && let UserKind::Prompt(t) = user_kind(m)
                && prompt_matches(&t, &want)
            {
                c.submitted = true;
            }
            continue;
        }
        let tools = m["toolCalls"].as_array().is_some_and(|t| !t.is_empty());
        if c.later {
            c.later_end_shaped = gemini && !tools;
            continue;
        }
        if gemini {
            let t = text_of(&m["content"]);
            if !t.trim().is_empty() {
                parts.push(t);
            }
            c.ours_end_shaped = !tools;
        } else if user {
            match user_kind(m) {
                UserKind::InTurn => c.ours_end_shaped = false,
                UserKind::Prompt(_) => c.later = true,
            }
        }
    }
    c.text = parts.join("\n\n");
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name)
    }

    fn at(s: &str) -> u64 {
        crate::sys::time::parse_rfc3339(s).unwrap()
    }

    #[test]
    fn real_gemini_chat_turn_with_tools() {
        // Recorded from Gemini CLI 0.61.0: write_todos, run_shell_command, write_todos, text;
        // the first reply is rewritten under its id when its tool call is added.
        let f = fixture("gemini-chat.jsonl");
        let c = chat_turn(
            &f,
            0,
            0,
            at("2026-12-01T07:04:06.000Z"),
            "please run the slow thing",
        );
        assert!(c.submitted && c.ours_end_shaped && !c.later, "{c:?}");
        assert_eq!(
            c.text,
            "I'll plan first.\n\nThe command printed `done`. All tasks complete."
        );
        // Not idle: not complete, whatever the file says.
        assert!(!c.settle(false).complete);
        assert!(c.settle(true).complete);
        // A prompt recorded before the send is not ours.
        let late = chat_turn(
            &f,
            0,
            0,
            at("2026-12-01T07:04:07.000Z"),
            "please run the slow thing",
        );
        assert!(!late.submitted);
    }

    fn msg(id: &str, ts: &str, kind: &str, content: Value) -> String {
        serde_json::json!({"id": id, "timestamp": ts, "type": kind, "content": content}).to_string()
    }

    #[test]
    fn replay_rewrites_rewinds_and_sets() {
        let t0 = "2026-12-01T10:00:00.000Z";
        let lines = vec![
            r#"{"sessionId":"s","projectHash":"h","startTime":"x","lastUpdated":"x","kind":"main"}"#.to_string(),
            msg("a", t0, "user", serde_json::json!([{"text": "first"}])),
            msg("b", t0, "gemini", serde_json::json!("one")),
            msg("a", t0, "user", serde_json::json!([{"text": "first, rewritten"}])),
            msg("c", t0, "user", serde_json::json!([{"text": "second"}])),
            r#"{"$set":{"lastUpdated":"y"}}"#.to_string(),
            r#"{"$rewindTo":"c"}"#.to_string(),
            msg("d", t0, "user", serde_json::json!([{"text": "third"}])),
        ];
        let ids = |v: &[Value]| {
            v.iter()
                .map(|m| m["id"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        let m = replay(&lines);
        assert_eq!(ids(&m), ["a", "b", "d"]);
        assert_eq!(m[0]["content"][0]["text"], "first, rewritten");
        // An unknown rewind target drops everything; `$set.messages` replaces the list.
        let mut l2 = lines.clone();
        l2.push(r#"{"$rewindTo":"zz"}"#.into());
        assert!(replay(&l2).is_empty());
        l2.push(
            serde_json::json!({"$set": {"messages": [serde_json::from_str::<Value>(&lines[2]).unwrap()]}})
                .to_string(),
        );
        assert_eq!(ids(&replay(&l2)), ["b"]);
        // Half a line and garbage are skipped.
        assert!(replay(&["{\"id\":".into(), "not json".into()]).is_empty());
    }

    #[test]
    fn later_prompts_continuations_and_display_content() {
        let t = |s: u32| format!("2026-12-01T10:00:{s:02}.000Z");
        let msgs: Vec<Value> = [
            msg("p0", &t(1), "user", serde_json::json!([{"text": "ask me"}])),
            msg("r0", &t(2), "gemini", serde_json::json!("old reply")),
            // Ours: displayContent is the prompt as given; content has the hook context.
            serde_json::json!({"id": "p1", "timestamp": t(5), "type": "user",
                "content": [{"text": "ask me"}, {"text": "<hook_context>loc</hook_context>"}],
                "displayContent": [{"text": "ask me\n"}]})
            .to_string(),
            msg(
                "r1",
                &t(6),
                "gemini",
                serde_json::json!([{"text": "thinking", "thought": true}, {"text": "part one"}]),
            ),
            msg(
                "p2",
                &t(7),
                "user",
                serde_json::json!([{"text": "Please continue."}]),
            ),
            msg("r2", &t(8), "gemini", serde_json::json!("part two")),
            msg(
                "p3",
                &t(9),
                "user",
                serde_json::json!([{"text": "typed by a person"}]),
            ),
        ]
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
        let c = turn_of(&msgs, at(&t(4)), "ask me");
        assert!(c.submitted && c.later && !c.later_end_shaped, "{c:?}");
        assert_eq!(c.text, "part one\n\npart two");
        let turn = c.settle(true);
        assert!(turn.complete && turn.later_open);
        // Before the person's prompt: ours looked ended only once part two came.
        let c = turn_of(&msgs[..5], at(&t(4)), "ask me");
        assert!(!c.ours_end_shaped && !c.settle(true).complete, "{c:?}");
    }

    #[test]
    fn finds_the_chat_file_by_the_full_session_id() {
        let d = std::env::temp_dir().join(format!("tm-gemini-chat-{}", std::process::id()));
        let chats = d.join("tmp/proj/chats");
        std::fs::create_dir_all(&chats).unwrap();
        let sid = "90b6793a-b9cc-479b-91e1-ef6528e29f4c";
        let other = "90b6793a-0000-479b-91e1-ef6528e29f4c";
        std::fs::write(
            chats.join("session-2026-12-01T13-19-90b6793a.jsonl"),
            format!("{{\"sessionId\":\"{other}\"}}\n"),
        )
        .unwrap();
        std::fs::write(
            chats.join("session-2026-12-01T13-20-90b6793a.jsonl"),
            format!("{{\"sessionId\":\"{sid}\"}}\n"),
        )
        .unwrap();
        let found = chat_file_in(&d, sid);
        assert!(chat_file_in(&d, "short").is_none());
        let _ = std::fs::remove_dir_all(&d);
        assert_eq!(
            found.unwrap().file_name().unwrap(),
            "session-2026-12-01T13-20-90b6793a.jsonl"
        );
    }
}
