//! Harness hook input/output with real fixtures, run the way harnesses run hooks:
//! detached from the terminal (no controlling tty), through a shell.

use crate::server;
use crate::util::*;
use serde::Deserialize;

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HookOut {
    hook_specific_output: Specific,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Specific {
    hook_event_name: String,
    additional_context: String,
}

/// Run a hook as Claude does: `setsid sh -c '… ; true'` (no tty; shell in between).
fn hook(a: &Agent, harness: &str, input: &str) -> PaneRun {
    a.sh(&format!(
        "setsid sh -c '\"$0\" hook {harness} < \"$1\"; true' \"$TM\" '{input}'"
    ))
}

#[test]
fn claude_hook_injects_once_and_after_compaction() {
    let s = server!();
    let a = s.agent_pane("claude");
    let ups = a.fixture("hook-claude-UserPromptSubmit.json");
    let r = hook(&a, "claude", ups.to_str().unwrap());
    assert_eq!(r.rc, 0);
    let o: HookOut = serde_json::from_str(&r.out).expect(&r.out);
    assert_eq!(o.hook_specific_output.hook_event_name, "UserPromptSubmit");
    assert!(
        o.hook_specific_output
            .additional_context
            .starts_with("tmux location (turn 1):\n")
    );
    assert!(o.hook_specific_output.additional_context.contains(&a.pane));
    // keyed by the session id from the fixture
    assert!(
        s.state
            .join("agents/5eed0000-0000-4000-8000-00000000c1a1.jsonl")
            .exists()
    );
    assert_eq!(hook(&a, "claude", ups.to_str().unwrap()).out, "");
    // Other events print nothing.
    for f in [
        "hook-claude-Stop.json",
        "hook-claude-PostToolUse-Bash.json",
        "hook-claude-SessionStart.json",
    ] {
        assert_eq!(
            hook(&a, "claude", a.fixture(f).to_str().unwrap()).out,
            "",
            "{f}"
        );
    }
    assert_eq!(hook(&a, "claude", ups.to_str().unwrap()).out, "");
    // SessionStart source=compact forgets; the next turn re-injects.
    let compact = s.dir.join("compact.json");
    let mut v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(a.fixture("hook-claude-SessionStart.json")).unwrap(),
    )
    .unwrap();
    v["source"] = "compact".into();
    std::fs::write(&compact, v.to_string()).unwrap();
    assert_eq!(hook(&a, "claude", compact.to_str().unwrap()).out, "");
    let r = hook(&a, "claude", ups.to_str().unwrap());
    let o: HookOut = serde_json::from_str(&r.out).expect(&r.out);
    assert!(
        o.hook_specific_output
            .additional_context
            .contains("tmux location (turn 4):")
    );
}

#[test]
fn codex_hook_without_daemon_injects() {
    let s = server!();
    let a = s.agent_pane("codex");
    let f = a.fixture("hook-codex-UserPromptSubmit-no-daemon.json");
    // Codex --no-daemon runs hooks as its own children: no shell in between.
    let r = a.sh(&format!("\"$TM\" hook codex < '{}' & wait", f.display()));
    let o: HookOut = serde_json::from_str(&r.out).expect(&r.out);
    assert_eq!(o.hook_specific_output.hook_event_name, "UserPromptSubmit");
    assert!(o.hook_specific_output.additional_context.contains(&a.pane));
}

#[test]
fn codex_shared_daemon_gets_no_location_never_another_panes() {
    let s = server!();
    let a = s.agent_pane("codex");
    // A detached non-shell process between the pane and the hook: the shape of Codex's
    // shared app-server daemon, which serves several panes.
    let daemon = s.dir.join("codex");
    std::fs::copy("/bin/sh", &daemon).unwrap();
    let f = a.fixture("hook-codex-UserPromptSubmit-second-pane-shared-daemon.json");
    let r = a.sh(&format!(
        "setsid '{}' -c '\"$0\" hook codex < \"$1\"; true' \"$TM\" '{}'",
        daemon.display(),
        f.display()
    ));
    assert_eq!(r.rc, 0);
    assert_eq!(
        r.out, "",
        "the shared daemon must not get the first pane's location"
    );
    let log = std::fs::read_to_string(s.state.join("log")).unwrap();
    assert!(log.contains("no-daemon"), "{log}");
}

#[test]
fn gemini_hook_answers_in_its_shape() {
    let s = server!();
    let a = s.agent_pane("gemini");
    let f = a.fixture("hook-gemini-BeforeAgent.json");
    let r = hook(&a, "gemini", f.to_str().unwrap());
    let o: HookOut = serde_json::from_str(&r.out).expect(&r.out);
    assert_eq!(o.hook_specific_output.hook_event_name, "BeforeAgent");
    assert!(o.hook_specific_output.additional_context.contains(&a.pane));
}

#[test]
fn gemini_hook_keeps_the_pane_tty_and_auto_precompress_is_no_reset() {
    let s = server!();
    let a = s.agent_pane("gemini");
    let before = a.fixture("hook-gemini-BeforeAgent.json");
    // The real PreCompress input (Gemini CLI 0.61), for the BeforeAgent fixture's session.
    let mut v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(a.fixture("hook-gemini-PreCompress.json")).unwrap(),
    )
    .unwrap();
    v["session_id"] = "gemini-7c1d2e3f".into();
    let pre = s.dir.join("precompress-auto.json");
    std::fs::write(&pre, v.to_string()).unwrap();
    // As Gemini CLI 0.61 runs hooks: `bash -c` with piped stdio and no new session, so
    // the hook's controlling tty is the pane's. No TMUX_PANE: the tty alone locates it.
    let run = |f: &std::path::Path| {
        a.sh(&format!(
            "env -u TMUX_PANE bash -c '\"$0\" hook gemini < \"$1\" | cat' \"$TM\" '{}'",
            f.display()
        ))
    };
    let r = run(&before);
    let o: HookOut = serde_json::from_str(&r.out).expect(&r.out);
    assert!(o.hook_specific_output.additional_context.contains(&a.pane));
    // PreCompress `auto` comes before every model request: the location stays known.
    for _ in 0..3 {
        assert_eq!(run(&pre).out, "");
    }
    assert_eq!(run(&before).out, "", "nothing changed, nothing injected");
    // `/compress` (trigger manual) is a real compression: the next turn re-injects.
    let manual = s.dir.join("manual.json");
    v["trigger"] = "manual".into();
    std::fs::write(&manual, v.to_string()).unwrap();
    assert_eq!(run(&manual).out, "");
    let o: HookOut = serde_json::from_str(&run(&before).out).unwrap();
    assert!(o.hook_specific_output.additional_context.contains(&a.pane));
}

#[test]
fn hook_fails_soft() {
    let s = server!();
    let a = s.agent_pane("soft");
    let garbage = s.dir.join("garbage.json");
    std::fs::write(&garbage, "{not json").unwrap();
    let empty = s.dir.join("empty.json");
    std::fs::write(&empty, "").unwrap();
    for f in [&garbage, &empty] {
        let r = hook(&a, "claude", f.to_str().unwrap());
        assert_eq!(r.out, "");
    }
    // Bad interval flag in hook mode: logged, no output, exit 0.
    let ups = a.fixture("hook-claude-UserPromptSubmit.json");
    let r = a.sh(&format!(
        "\"$TM\" hook claude --refresh-interval-ms=-5 < '{}'; echo \"rc=$?\"",
        ups.display()
    ));
    assert_eq!(r.out, "rc=0\n");
    // tmux missing: nothing printed, exit 0, reason logged.
    let r = a.sh(&format!(
        "TMUXMATE_TMUX=/nonexistent/tmux \"$TM\" hook claude < '{}'; echo \"rc=$?\"",
        ups.display()
    ));
    assert_eq!(r.out, "rc=0\n");
    let log = std::fs::read_to_string(s.state.join("log")).unwrap();
    assert!(
        log.contains("not JSON") || log.contains("not valid JSON"),
        "{log}"
    );
    assert!(log.contains("bad arguments"), "{log}");
    assert!(log.contains("tmux is not installed"), "{log}");
}

#[test]
fn hook_with_dead_server_is_silent() {
    let s = server!();
    s.tmux(&["kill-server"]);
    let ups = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hook-claude-UserPromptSubmit.json");
    let out = s
        .tmuxmate()
        .args(["hook", "claude"])
        .stdin(std::fs::File::open(ups).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
}
