//! Harness hook wire formats (Claude Code, Codex, Gemini CLI; DeepSeek Harness through its
//! Claude Code hook bridge).
//!
//! Owns: the stdin shape we read and the stdout shape each harness accepts. Invariants:
//! unknown fields and events are ignored; empty stdin is an empty input, not an error;
//! the only text ever printed is one JSON answer object (never plain text that could
//! start with `{`).

use serde::Deserialize;
use serde_json::json;

use super::Harness;

#[derive(Debug, Default, Deserialize)]
pub struct HookInput {
    #[serde(default)]
    pub hook_event_name: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<String>,
    /// Gemini's PreCompress: `manual` (`/compress`) or `auto`.
    #[serde(default)]
    pub trigger: Option<String>,
}

/// What a hook event asks of us.
#[derive(Debug, PartialEq, Eq)]
pub enum Event {
    /// The per-turn point: answer with what the agent should learn now.
    Turn,
    /// The model lost what we injected (compaction, /clear): forget it.
    Reset,
    /// A session (re)started without losing context (startup, resume): note the address.
    Start,
    Other,
}

pub fn parse(stdin: &[u8]) -> Result<HookInput, String> {
    let text = String::from_utf8_lossy(stdin);
    if text.trim().is_empty() {
        return Ok(HookInput::default());
    }
    serde_json::from_str(&text).map_err(|e| format!("hook stdin is not valid JSON: {e}"))
}

pub fn classify(h: Harness, input: &HookInput) -> Event {
    let ev = input.hook_event_name.as_deref().unwrap_or("");
    if ev == h.turn_event() {
        return Event::Turn;
    }
    if ev == "SessionStart" && matches!(input.source.as_deref(), Some("compact" | "clear")) {
        return Event::Reset;
    }
    // Gemini CLI 0.61 fires PreCompress with `trigger: "auto"` before every model
    // request, before it checks whether the history is over the threshold: that is no
    // sign of a compression. `manual` is `/compress`, which compresses whatever the size.
    if h == Harness::Gemini && ev == "PreCompress" && input.trigger.as_deref() == Some("manual") {
        return Event::Reset;
    }
    if ev == "SessionStart" {
        return Event::Start;
    }
    Event::Other
}

/// The answer object for the per-turn event. All three harnesses accept this shape.
pub fn answer(h: Harness, text: &str) -> String {
    json!({"hookSpecificOutput": {"hookEventName": h.turn_event(), "additionalContext": text}})
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_precompress_resets_only_when_manual() {
        let auto = parse(
            &std::fs::read(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/hook-gemini-PreCompress.json"
            ))
            .unwrap(),
        )
        .unwrap();
        assert_eq!(auto.trigger.as_deref(), Some("auto"));
        assert_eq!(classify(Harness::Gemini, &auto), Event::Other);
        let manual = parse(br#"{"hook_event_name":"PreCompress","trigger":"manual"}"#).unwrap();
        assert_eq!(classify(Harness::Gemini, &manual), Event::Reset);
    }

    #[test]
    fn tolerant_input() {
        assert!(parse(b"").unwrap().session_id.is_none());
        assert!(parse(b"  \n").is_ok());
        let i =
            parse(br#"{"hook_event_name":"UserPromptSubmit","session_id":"s","zzz":[1]}"#).unwrap();
        assert_eq!(classify(Harness::Claude, &i), Event::Turn);
        assert_eq!(classify(Harness::Gemini, &i), Event::Other);
        assert!(parse(b"{nope").is_err());
        let c = parse(br#"{"hook_event_name":"SessionStart","source":"compact"}"#).unwrap();
        assert_eq!(classify(Harness::Codex, &c), Event::Reset);
        let s = parse(br#"{"hook_event_name":"SessionStart","source":"startup"}"#).unwrap();
        assert_eq!(classify(Harness::Codex, &s), Event::Start);
        let e = parse(br#"{"hook_event_name":"Stop"}"#).unwrap();
        assert_eq!(classify(Harness::Claude, &e), Event::Other);
    }
}
