//! Did the harness get an item a dead turn offered? Asked of the harness transcript.
//!
//! Owns: the "offered, never confirmed" check. A turn that was killed after printing but
//! before confirming leaves its items offered; Claude Code, Codex and Gemini CLI record
//! the hook's `additionalContext` in their transcripts (Claude: an `attachment` line of
//! type `hook_additional_context` whose `content` holds the text; Codex: a `developer`
//! message with `content_item_kinds: ["hooks.additional_context"]`; Gemini: a user part
//! `<hook_context>...</hook_context>`; docs/harnesses.md, each CLI's hooks section,
//! and `tests/fixtures/`). Invariants: only
//! what the transcript gained after the offer counts (so an earlier delivery of the same
//! text cannot confirm a later one); the check is format-agnostic (any JSON string value
//! of a line that contains the item's head), so an unknown format means "not found",
//! which offers the item again: a possible duplicate, never a loss; bounded reads.

use std::io::{Read, Seek, SeekFrom};

/// Characters of an item kept to recognise it (items start with their unique subject,
/// e.g. "tmux watch <job id> finished").
const HEAD_CHARS: usize = 200;
/// Transcript bytes read past the offer, at most.
const MAX_READ: u64 = 32 << 20;

/// What the offer records of the printed item.
pub fn head(item: &str) -> String {
    item.chars().take(HEAD_CHARS).collect()
}

/// Where an item was offered to a turn that did not confirm it (it died, or has not
/// finished): the transcript and its length then, and the item's first line.
#[derive(Debug, Clone, PartialEq)]
pub struct Offered {
    pub at: u64,
    pub transcript: Option<String>,
    pub tpos: u64,
    pub head: String,
}

/// True if the transcript named in the offer shows its item after the offer was made.
pub fn in_transcript(o: &Offered) -> bool {
    let Some(path) = o.transcript.as_deref() else {
        return false;
    };
    if o.head.trim().is_empty() {
        return false;
    }
    let Ok(mut f) = crate::sys::files::open_regular(std::path::Path::new(path)) else {
        return false;
    };
    // A transcript shorter than at the offer was replaced: nothing after it is ours.
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len < o.tpos || f.seek(SeekFrom::Start(o.tpos)).is_err() {
        return false;
    }
    let mut raw = Vec::new();
    if f.take(MAX_READ).read_to_end(&mut raw).is_err() {
        return false;
    }
    let text = String::from_utf8_lossy(&raw);
    // Gemini escapes `<` and `>` (and perhaps `&`) inside its <hook_context> part.
    let lt_gt = o.head.replace('<', "&lt;").replace('>', "&gt;");
    let all = o
        .head
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let forms = [o.head.as_str(), lt_gt.as_str(), all.as_str()];
    text.split('\n').any(|line| {
        serde_json::from_str::<serde_json::Value>(line)
            .is_ok_and(|v| has_string(&v, &|s| forms.iter().any(|h| s.contains(h))))
    })
}

/// Whether this transcript has recorded a context of ours (a location or a watch result):
/// then a missing item was not delivered, whatever was printed, and it is offered again.
/// Only the last `MAX_READ` bytes are read (ours are recent; a conversation may predate
/// tmuxmate), and only lines holding a marker's bytes are parsed: asked every turn while
/// an item is held (see `crate::location::turn`), it must stay cheap on a long transcript.
pub fn records_our_context(path: Option<&str>) -> bool {
    const MARKS: [&str; 2] = ["tmux location (turn ", "tmux watch "];
    let Some(path) = path else {
        return false;
    };
    let Ok(mut f) = crate::sys::files::open_regular(std::path::Path::new(path)) else {
        return false;
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if f.seek(SeekFrom::Start(len.saturating_sub(MAX_READ)))
        .is_err()
    {
        return false;
    }
    let mut raw = Vec::new();
    if f.take(MAX_READ).read_to_end(&mut raw).is_err() {
        return false;
    }
    let has = |line: &[u8], m: &str| line.windows(m.len()).any(|w| w == m.as_bytes());
    raw.split(|b| *b == b'\n').any(|line| {
        MARKS.iter().any(|m| has(line, m))
            && serde_json::from_slice::<serde_json::Value>(line)
                .is_ok_and(|v| has_string(&v, &|s| MARKS.iter().any(|m| s.contains(m))))
    })
}

fn has_string(v: &serde_json::Value, f: &dyn Fn(&str) -> bool) -> bool {
    match v {
        serde_json::Value::String(s) => f(s),
        serde_json::Value::Array(a) => a.iter().any(|x| has_string(x, f)),
        serde_json::Value::Object(m) => m.values().any(|x| has_string(x, f)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn offer(path: &std::path::Path, tpos: u64, head: &str) -> Offered {
        Offered {
            at: 0,
            transcript: Some(path.to_string_lossy().into_owned()),
            tpos,
            head: head.into(),
        }
    }

    #[test]
    fn finds_claude_codex_and_gemini_shapes_after_the_offer_only() {
        let dir = std::env::temp_dir().join(format!("tmuxmate-delivered-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.jsonl");
        let item = "tmux watch w1 finished: exit 0\n<ok> & done";
        let claude = serde_json::json!({"type":"attachment","attachment":{"type":"hook_additional_context","content":[format!("loc\n\n{item}")],"hookEvent":"UserPromptSubmit"}});
        let codex = serde_json::json!({"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":item}]}});
        let gem = format!(
            "<hook_context>{}</hook_context>",
            item.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
        );
        let gemini = serde_json::json!({"type":"user","content":[{"text":"prompt"},{"text":gem}]});
        for v in [claude, codex, gemini] {
            std::fs::write(&p, "{\"type\":\"user\"}\n").unwrap();
            let tpos = std::fs::metadata(&p).unwrap().len();
            assert!(!in_transcript(&offer(&p, tpos, &head(item))));
            let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
            writeln!(f, "{v}").unwrap();
            assert!(in_transcript(&offer(&p, tpos, &head(item))), "{v}");
            // Before the offer: an earlier delivery does not confirm this one.
            let end = std::fs::metadata(&p).unwrap().len();
            assert!(!in_transcript(&offer(&p, end, &head(item))));
        }
        // No transcript, a missing one, a shrunk one: not found (offered again).
        assert!(!in_transcript(&Offered {
            at: 0,
            transcript: None,
            tpos: 0,
            head: "x".into()
        }));
        assert!(!in_transcript(&offer(&dir.join("nope"), 0, "x")));
        assert!(!in_transcript(&offer(&p, 1 << 40, "x")));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn records_our_context_only_from_a_string_value_with_a_marker() {
        let dir = std::env::temp_dir().join(format!("tmuxmate-records-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.jsonl");
        let ps = p.to_string_lossy().into_owned();
        std::fs::write(
            &p,
            "{\"type\":\"user\",\"message\":\"hi\"}\nnot json tmux watch x\n",
        )
        .unwrap();
        assert!(!records_our_context(Some(&ps)));
        // A marker as a key is not a context; as a value in any shape (here Gemini's) it is.
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        writeln!(f, "{{\"tmux watch w1\":1}}").unwrap();
        assert!(!records_our_context(Some(&ps)));
        let gem = serde_json::json!({"type":"user","content":[{"text":"<hook_context>tmux watch w1 finished</hook_context>"}]});
        writeln!(f, "{gem}").unwrap();
        assert!(records_our_context(Some(&ps)));
        assert!(!records_our_context(None));
        assert!(!records_our_context(Some(
            &dir.join("nope").to_string_lossy()
        )));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn finds_the_real_claude_sample() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/claude-transcript.jsonl");
        let Ok(text) = std::fs::read_to_string(&p) else {
            return;
        };
        if !text.contains("rig-hook-context: claude UserPromptSubmit") {
            return;
        }
        assert!(in_transcript(&offer(
            &p,
            0,
            "rig-hook-context: claude UserPromptSubmit pane=%0"
        )));
    }
}
