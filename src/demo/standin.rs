//! The demo's stand-in peer agent: the tmuxmate binary itself, copied into the demo's temp
//! directory under the name [`NAME`], answers like a tiny agent CLI (a prompt, one reply
//! per submitted line) so the demo's bridge step needs no real CLI and no network.
//!
//! Invariant: only an executable named exactly [`NAME`] ever runs this loop; it ends on
//! end of input or a hangup (its tmux server going away), leaving nothing behind.

use std::io::{BufRead, Write};

pub const NAME: &str = "tmuxmate-demo-reviewer";
/// What the bridge waits for before a send and after a reply (the custom adapter's ready regex).
pub const READY_REGEX: &str = r"(?m)^reviewer> *$";

/// If this process is the stand-in, run it and exit.
pub fn intercept() {
    let is_standin = std::env::args_os()
        .next()
        .map(std::path::PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n == NAME))
        .unwrap_or(false);
    if !is_standin {
        return;
    }
    let mut out = std::io::stdout();
    let _ = write!(
        out,
        "stand-in reviewer agent (no model, no network)\nreviewer> "
    );
    let _ = out.flush();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let line = line.trim();
        if line.is_empty() {
            let _ = write!(out, "reviewer> ");
            let _ = out.flush();
            continue;
        }
        let _ = writeln!(out, "thinking…");
        let _ = out.flush();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let _ = write!(
            out,
            "Reviewed \"{line}\": the change looks safe to ship; add a test for the empty case.\nreviewer> "
        );
        let _ = out.flush();
    }
    std::process::exit(0);
}

/// A short Claude Code transcript (the real line shapes:
/// docs/harnesses.md#claude-code-transcript) for the demo's digest and side chat: one
/// finished turn with a checklist, a test run and a reply.
pub fn transcript(cwd: &str) -> String {
    use serde_json::json;
    let sid = "dem00000-0000-4000-8000-000000000001";
    let env = |t: &str, ts: &str| json!({"type": t, "sessionId": sid, "cwd": cwd, "timestamp": ts});
    let mut lines = Vec::new();
    let mut push = |mut base: serde_json::Value, extra: serde_json::Value| {
        if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                b.insert(k.clone(), v.clone());
            }
        }
        lines.push(base.to_string());
    };
    push(
        env("user", "2026-12-01T09:00:00.000Z"),
        json!({"uuid": "u1", "message": {"role": "user", "content": "add a --dry-run flag to the installer"}}),
    );
    push(
        env("assistant", "2026-12-01T09:00:01.000Z"),
        json!({"uuid": "a1", "message": {"id": "m1", "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "TodoWrite", "input": {"todos": [
        {"content": "Add the flag", "status": "completed", "activeForm": "Adding the flag"},
        {"content": "Print the diff", "status": "in_progress", "activeForm": "Printing the diff"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"}]}}], "stop_reason": "tool_use"}}),
    );
    push(
        env("user", "2026-12-01T09:00:01.100Z"),
        json!({"uuid": "u2", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "Todos have been modified successfully."}]}}),
    );
    push(
        env("assistant", "2026-12-01T09:00:02.000Z"),
        json!({"uuid": "a2", "message": {"id": "m2", "role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "cargo test install", "description": "Run the install tests"}}], "stop_reason": "tool_use"}}),
    );
    push(
        env("user", "2026-12-01T09:00:09.000Z"),
        json!({"uuid": "u3", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "test result: ok. 11 passed", "is_error": false}]}, "toolUseResult": {"stdout": "test result: ok. 11 passed", "stderr": "", "interrupted": false}}),
    );
    push(
        env("assistant", "2026-12-01T09:00:10.000Z"),
        json!({"uuid": "a3", "message": {"id": "m3", "role": "assistant", "content": [{"type": "text", "text": "The flag prints the diff and writes nothing; 11 tests pass."}], "stop_reason": "end_turn"}}),
    );
    push(
        env("system", "2026-12-01T09:00:10.100Z"),
        json!({"uuid": "s1", "subtype": "turn_duration", "durationMs": 10100}),
    );
    let mut s = lines.join("\n");
    s.push('\n');
    s
}
