//! Reports from a side agent whose sandbox allows neither tmux nor the state dir.
//!
//! Codex's read-only sandbox (0.171, Linux: bubblewrap with `/` read-only plus a seccomp
//! filter) fails `connect()` on every socket, the tmux socket included, with EPERM, and
//! every write outside `/dev/null` with EROFS; only what a command prints gets out. So
//! inside it `side report` prints one relay line (this module's mark, then JSON with the
//! text and the side chat's nonce), and Codex's `PostToolUse` hook, which Codex runs
//! itself, outside the sandbox, hands the tool's output to `side relay`, which queues the
//! note for the main agent exactly as an unsandboxed `side report` would.
//!
//! Invariants: a note is queued only from the output of a command that ran
//! `side report`, from a relay line carrying this side chat's nonce (given to the side
//! agent in its environment at launch, so a transcript line or file content that merely
//! looks like a relay line queues nothing); the ledger key is the tool call's id, so a
//! hook that fires twice queues it once; the hook is unattended: it never fails loudly and
//! prints nothing (Codex reads a hook's stdout).

use serde_json::Value;

/// The side chat's nonce, in the side agent's environment.
pub const ENV_NONCE: &str = "TMUXMATE_SIDE_RELAY";
/// Starts a relay line in a sandboxed `side report`'s output.
pub const MARK: &str = "tmuxmate-side-report-v1 ";

/// The side chat's nonce, when this process runs inside one that relays.
pub fn nonce() -> Option<String> {
    std::env::var(ENV_NONCE).ok().filter(|n| n.len() >= 16)
}

/// The relay line for `text` (one line: the JSON escapes line breaks).
pub fn line(nonce: &str, text: &str) -> String {
    format!(
        "{MARK}{}",
        serde_json::json!({"nonce": nonce, "text": text})
    )
}

/// The note in a tool's output, if a relay line with `nonce` is in it.
pub fn find(output: &str, nonce: &str) -> Option<String> {
    output.lines().find_map(|l| {
        let v: Value = serde_json::from_str(l.trim_end().strip_prefix(MARK)?).ok()?;
        (v["nonce"].as_str() == Some(nonce))
            .then(|| v["text"].as_str().map(str::to_string))
            .flatten()
    })
}

/// What a `PostToolUse` hook input asks to relay: (tool call id, note text).
pub fn from_hook(input: &Value, nonce: &str) -> Option<(String, String)> {
    let command = match &input["tool_input"]["command"] {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" "),
        _ => input["tool_input"]["cmd"].as_str()?.to_string(),
    };
    if !command.contains("side report") {
        return None;
    }
    let output = match &input["tool_response"] {
        Value::String(s) => s.clone(),
        v => ["output", "stdout", "aggregated_output"]
            .iter()
            .find_map(|k| v[*k].as_str().map(str::to_string))?,
    };
    let id = input["tool_use_id"].as_str().filter(|s| !s.is_empty())?;
    Some((id.to_string(), find(&output, nonce)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: &str = "0123456789abcdef0123";

    #[test]
    fn a_relay_line_round_trips_any_text() {
        let text = "line one\nline \"two\" ; $(rm -rf /) 日本 🎉";
        let out = format!("some output\n{}\nmore\n", line(N, text));
        assert_eq!(find(&out, N).as_deref(), Some(text));
        assert_eq!(find(&out, "another-nonce-0000"), None);
        assert_eq!(find("tmuxmate-side-report-v1 {bad json", N), None);
    }

    #[test]
    fn only_a_side_report_commands_output_is_relayed() {
        let hook = |cmd: &str, resp: &str| {
            serde_json::json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                "tool_input": {"command": cmd}, "tool_response": resp, "tool_use_id": "call_1"})
        };
        let rl = line(N, "found it");
        assert_eq!(
            from_hook(&hook("tmuxmate side report 'found it'", &rl), N),
            Some(("call_1".into(), "found it".into()))
        );
        // A relay line printed by anything else (cat of a file, the main's history).
        assert_eq!(from_hook(&hook("cat notes.txt", &rl), N), None);
        assert_eq!(
            from_hook(&hook("tmuxmate side report x", "queued"), N),
            None
        );
        let mut no_id = hook("tmuxmate side report x", &rl);
        no_id["tool_use_id"] = Value::Null;
        assert_eq!(from_hook(&no_id, N), None);
    }
}
