//! Agent state from the CLIs' own hook events, run the way the harnesses run hooks
//! (detached from the terminal, through a shell), and the alerts a person gets on a real
//! attached client.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::server;
use crate::util::*;

/// Run a hook as Claude does: `setsid sh -c '… ; true'` (no tty; shell in between).
fn hook(a: &Agent, harness: &str, input: &Path) -> PaneRun {
    a.sh(&format!(
        "setsid sh -c '\"$0\" hook {harness} < \"$1\"; true' \"$TM\" '{}'",
        input.display()
    ))
}

/// A hook input: a fixture as the CLI sent it, or one written here from `json`.
fn input(s: &Server, name: &str, json: serde_json::Value) -> PathBuf {
    let p = s.dir.join(format!("{name}.json"));
    std::fs::write(&p, json.to_string()).unwrap();
    p
}

fn opt(s: &Server, pane: &str, name: &str) -> String {
    s.tmux(&["display-message", "-p", "-t", pane, &format!("#{{{name}}}")])
        .trim_end_matches('\n')
        .to_string()
}

fn state(s: &Server, pane: &str) -> String {
    opt(s, pane, "@tmuxmate-state")
}

fn status(s: &Server) -> String {
    s.tmux(&["show-options", "-gqv", "@tmuxmate-agents-status"])
        .trim_end_matches('\n')
        .to_string()
}

fn permission(s: &Server, cmd: &str) -> PathBuf {
    input(
        s,
        &format!("perm-{}", cmd.len()),
        serde_json::json!({
            "session_id": "5eed0000-0000-4000-8000-00000000c1a1",
            "hook_event_name": "PermissionRequest",
            "tool_name": "Bash",
            "tool_input": {"command": cmd, "description": "list"},
        }),
    )
}

#[test]
fn a_claude_turn_moves_the_pane_state_counts_and_window_marker() {
    let s = server!();
    let a = s.agent_pane_as("claude", "claude");
    let ups = a.fixture("hook-claude-UserPromptSubmit.json");
    assert_eq!(hook(&a, "claude", &ups).rc, 0);
    assert_eq!(state(&s, &a.pane), "working");
    assert_eq!(status(&s), "1 working");
    let r = hook(&a, "claude", &permission(&s, "ls -la; rm x"));
    assert_eq!(
        r.out, "",
        "a state event prints nothing (Claude would read it)"
    );
    assert_eq!(state(&s, &a.pane), "needs-you");
    assert_eq!(
        opt(&s, &a.pane, "@tmuxmate-state-why"),
        "permission: Bash: ls -la; rm x"
    );
    assert_eq!(status(&s), "1 needs you");
    assert_eq!(opt(&s, &a.pane, "@tmuxmate-window-marker"), "!");
    assert_eq!(opt(&s, &a.pane, "@tmuxmate-window-state"), "needs-you");
    let since: u64 = opt(&s, &a.pane, "@tmuxmate-state-since").parse().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(now.abs_diff(since) < 60, "{since} vs {now}");

    let v: serde_json::Value = serde_json::from_str(&ok(s.run(&["agents", "--json"]))).unwrap();
    let row = &v["agents"][0];
    assert_eq!(row["paneId"], a.pane.as_str());
    assert_eq!(row["state"], "needs-you");
    assert_eq!(row["harness"], "claude");
    assert_eq!(row["why"], "permission: Bash: ls -la; rm x");
    let text = ok(s.run(&["agents"]));
    assert!(text.starts_with("needs-you "), "{text}");

    hook(
        &a,
        "claude",
        &a.fixture("hook-claude-PostToolUse-Bash.json"),
    );
    assert_eq!(state(&s, &a.pane), "working");
    hook(&a, "claude", &a.fixture("hook-claude-Stop.json"));
    assert_eq!(state(&s, &a.pane), "done");
    assert_eq!(status(&s), "1 done");
    assert_eq!(opt(&s, &a.pane, "@tmuxmate-window-marker"), "+");
    let end = input(
        &s,
        "end",
        serde_json::json!({"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}),
    );
    hook(&a, "claude", &end);
    hook(&a, "claude", &end);
    assert_eq!(state(&s, &a.pane), "exited");
    assert_eq!(status(&s), "");
    assert_eq!(opt(&s, &a.pane, "@tmuxmate-window-marker"), "");
}

#[test]
fn codex_and_gemini_errors_need_you_and_their_ends_are_done() {
    let s = server!();
    let x = s.agent_pane_as("codex", "codex");
    let g = s.agent_pane_as("gemini", "node");
    hook(&x, "codex", &x.fixture("hook-codex-UserPromptSubmit.json"));
    hook(&g, "gemini", &g.fixture("hook-gemini-BeforeAgent.json"));
    assert_eq!(status(&s), "2 working");
    let no_err = input(
        &s,
        "pmr-ok",
        serde_json::json!({"hook_event_name": "PostModelRequest", "error": null}),
    );
    hook(&x, "codex", &no_err);
    assert_eq!(state(&s, &x.pane), "working");
    let err = input(
        &s,
        "pmr-err",
        serde_json::json!({"hook_event_name": "PostModelRequest", "error": {"message": "upstream 500"}}),
    );
    hook(&x, "codex", &err);
    assert_eq!(state(&s, &x.pane), "needs-you");
    assert!(opt(&s, &x.pane, "@tmuxmate-state-why").starts_with("error: "));
    let mut failed: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(g.fixture("hook-gemini-AfterAgent.json")).unwrap(),
    )
    .unwrap();
    failed["prompt_response"] = "[no response text]".into();
    hook(&g, "gemini", &input(&s, "aa-err", failed));
    assert_eq!(state(&s, &g.pane), "needs-you");
    assert_eq!(status(&s), "2 need you");
    hook(&g, "gemini", &g.fixture("hook-gemini-AfterAgent.json"));
    hook(&x, "codex", &x.fixture("hook-codex-Stop.json"));
    assert_eq!(state(&s, &g.pane), "done");
    assert_eq!(state(&s, &x.pane), "done");
    assert_eq!(status(&s), "2 done");
}

#[test]
fn an_agent_gone_from_its_pane_is_unknown_not_its_last_word() {
    let s = server!();
    let a = s.agent_pane_as("claude", "claude");
    hook(&a, "claude", &permission(&s, "ls"));
    assert_eq!(status(&s), "1 needs you");
    // The stand-in (sh) stops being the pane's program: the pane now runs a shell the
    // person typed into, the agent is gone without a SessionEnd.
    s.tmux(&["respawn-pane", "-k", "-t", &a.pane, "exec bash --norc"]);
    let v = wait_until("the listing to see it", Duration::from_secs(10), || {
        let v: serde_json::Value = serde_json::from_str(&ok(s.run(&["agents", "--json"]))).unwrap();
        (v["agents"][0]["state"] == "unknown").then_some(v)
    });
    assert_eq!(v["agents"][0]["paneId"], a.pane.as_str());
    assert_eq!(status(&s), "1 unknown");
}

/// The person's notify command: appends each alert's argument as a line to `file`.
fn notifier(s: &Server) -> PathBuf {
    let file = s.dir.join("alerts.txt");
    let script = s.dir.join("notify.sh");
    write_script(
        &script,
        &format!("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{}'\n", file.display()),
    );
    s.tmux(&[
        "set",
        "-g",
        "@tmuxmate-notify-command",
        script.to_str().unwrap(),
    ]);
    file
}

fn alerts(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

fn wait_alerts(file: &Path, n: usize) -> Vec<String> {
    wait_until(&format!("{n} alerts"), Duration::from_secs(20), || {
        let a = alerts(file);
        (a.len() >= n).then_some(a)
    })
}

#[test]
fn alerts_come_once_per_transition_and_never_while_the_person_looks() {
    let inner = server!();
    let outer = server!();
    let a = inner.agent_pane_as("claude", "claude");
    let file = notifier(&inner);
    inner.tmux(&["set", "-g", "@tmuxmate-notify-cooldown-s", "0"]);
    // A client that looks at another window.
    inner.tmux(&["new-window", "-d", "-n", "elsewhere"]);
    let client = inner.attach_in(&outer, "main");
    inner.tmux(&["select-window", "-t", "main:elsewhere"]);

    hook(&a, "claude", &permission(&inner, "make deploy"));
    let got = wait_alerts(&file, 1);
    assert!(
        got[0].contains("claude in main:")
            && got[0].ends_with("needs you: permission: Bash: make deploy"),
        "{got:?}"
    );
    // The same event again (a retried hook) is no new transition.
    hook(&a, "claude", &permission(&inner, "make deploy"));
    // The message on the client's screen.
    wait_until("the message on the client", Duration::from_secs(10), || {
        outer
            .tmux(&["capture-pane", "-p", "-t", &client])
            .contains("needs you: permission")
            .then_some(())
    });
    hook(&a, "claude", &a.fixture("hook-claude-Stop.json"));
    let got = wait_alerts(&file, 2);
    assert!(got[1].ends_with("is done"), "{got:?}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(alerts(&file).len(), 2, "{:?}", alerts(&file));

    // Looking at the agent's pane: no alert, and a turn that ends is seen (idle).
    inner.tmux(&["select-window", "-t", &a.pane]);
    hook(
        &a,
        "claude",
        &a.fixture("hook-claude-UserPromptSubmit.json"),
    );
    hook(&a, "claude", &permission(&inner, "make test"));
    assert_eq!(state(&inner, &a.pane), "needs-you");
    hook(&a, "claude", &a.fixture("hook-claude-Stop.json"));
    assert_eq!(state(&inner, &a.pane), "idle");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(alerts(&file).len(), 2, "{:?}", alerts(&file));

    // The cooldown: two transitions of one pane within it alert once (a pane that has
    // not alerted yet).
    let b = inner.agent_pane_as("other", "claude");
    inner.tmux(&["select-window", "-t", "main:elsewhere"]);
    inner.tmux(&["set", "-g", "@tmuxmate-notify-cooldown-s", "600"]);
    hook(&b, "claude", &permission(&inner, "one"));
    wait_alerts(&file, 3);
    hook(&b, "claude", &permission(&inner, "two"));
    assert_eq!(
        opt(&inner, &b.pane, "@tmuxmate-state-why"),
        "permission: Bash: two"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(alerts(&file).len(), 3, "{:?}", alerts(&file));
}

#[test]
fn an_alert_a_killed_process_left_unsent_is_delivered_once_by_the_next_event() {
    let inner = server!();
    let outer = server!();
    let a = inner.agent_pane_as("claude", "claude");
    let b = inner.agent_pane_as("codex", "codex");
    let file = notifier(&inner);
    inner.tmux(&["set", "-g", "@tmuxmate-notify-cooldown-s", "0"]);
    inner.tmux(&["new-window", "-d", "-n", "elsewhere"]);
    inner.attach_in(&outer, "main");
    inner.tmux(&["select-window", "-t", "main:elsewhere"]);
    hook(&a, "claude", &permission(&inner, "deploy"));
    wait_alerts(&file, 1);
    // As if the process had been killed after claiming the alert and before marking it
    // sent: the mark is gone and the claim is old.
    let dir = inner.state.join("agents");
    let mut marks = Vec::new();
    for d in std::fs::read_dir(&dir).unwrap().flatten() {
        // The servers' directories (beside them: locks, the change marker, hosts).
        if d.file_name() == "locks" || !d.path().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            if f.file_name().to_string_lossy().ends_with(".sent") {
                marks.push(f.path());
            }
        }
    }
    assert_eq!(marks.len(), 1, "{marks:?}");
    std::fs::remove_file(&marks[0]).unwrap();
    let claim = marks[0].with_extension("");
    let claim = PathBuf::from(
        claim
            .to_string_lossy()
            .trim_end_matches(".sent")
            .to_string(),
    );
    assert!(claim.exists(), "{}", claim.display());
    let old = std::process::Command::new("touch")
        .args(["-d", "10 seconds ago"])
        .arg(&claim)
        .status()
        .unwrap();
    assert!(old.success());
    std::fs::File::open(&file).unwrap();
    std::fs::write(&file, "").unwrap();
    // Any later event on that server delivers it: once.
    hook(&b, "codex", &b.fixture("hook-codex-UserPromptSubmit.json"));
    let got = wait_alerts(&file, 1);
    assert!(
        got[0].ends_with("needs you: permission: Bash: deploy"),
        "{got:?}"
    );
    hook(&b, "codex", &b.fixture("hook-codex-Stop.json"));
    let got = wait_alerts(&file, 2);
    assert!(
        got[1].contains("codex") && got[1].ends_with("is done"),
        "{got:?}"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(alerts(&file).len(), 2, "{:?}", alerts(&file));
}

fn load_snippet(s: &Server) {
    let conf = s.dir.join("snippet.conf");
    std::fs::write(&conf, ok(s.run(&["init", "tmux"]))).unwrap();
    s.tmux(&["source-file", conf.to_str().unwrap()]);
}

#[test]
fn the_jump_key_goes_to_the_longest_waiting_agent_and_looking_makes_done_idle() {
    let inner = server!();
    let outer = server!();
    load_snippet(&inner);
    let a = inner.agent_pane_as("first", "claude");
    let b = inner.agent_pane_as("second", "claude");
    let c = inner.agent_pane_as("third", "claude");
    inner.tmux(&["new-window", "-n", "elsewhere"]);
    hook(&c, "claude", &a.fixture("hook-claude-Stop.json"));
    hook(&a, "claude", &permission(&inner, "a"));
    std::thread::sleep(Duration::from_millis(1100));
    hook(&b, "claude", &permission(&inner, "b"));
    assert_eq!(
        inner
            .tmux(&["show-options", "-gqv", "@tmuxmate-agents-status"])
            .trim(),
        "2 need you · 1 done"
    );
    let client = inner.attach_in(&outer, "main");
    let shown = || {
        inner
            .tmux(&["list-clients", "-F", "#{pane_id}"])
            .trim()
            .to_string()
    };
    let press = || {
        outer.tmux(&["send-keys", "-t", &client, "C-b"]);
        outer.tmux(&["send-keys", "-t", &client, "M-j"]);
    };
    press();
    wait_until("the jump to the first", Duration::from_secs(10), || {
        (shown() == a.pane).then_some(())
    });
    press();
    wait_until("the jump to the second", Duration::from_secs(10), || {
        (shown() == b.pane).then_some(())
    });
    press();
    wait_until("the jump to the done one", Duration::from_secs(10), || {
        (shown() == c.pane).then_some(())
    });
    // Shown: the done agent is seen.
    wait_until("the done agent seen", Duration::from_secs(10), || {
        (state(&inner, &c.pane) == "idle").then_some(())
    });
    // Looking by selecting the window (not the key) also makes done idle.
    hook(&b, "claude", &a.fixture("hook-claude-Stop.json"));
    assert_eq!(state(&inner, &b.pane), "done");
    inner.tmux(&["select-window", "-t", &b.pane]);
    wait_until(
        "the window's done agent seen",
        Duration::from_secs(10),
        || (state(&inner, &b.pane) == "idle").then_some(()),
    );
}

#[test]
fn agent_wait_until_returns_at_the_state_and_refuses_what_it_cannot_follow() {
    let s = server!();
    let a = s.agent_pane_as("claude", "claude");
    hook(
        &a,
        "claude",
        &a.fixture("hook-claude-UserPromptSubmit.json"),
    );
    let mut waiter = s.tmuxmate();
    waiter.args([
        "agent",
        "wait",
        &a.pane,
        "--until",
        "needs-you,done",
        "--timeout",
        "60s",
        "--json",
    ]);
    let waiting = std::thread::spawn(move || waiter.output().unwrap());
    hook(&a, "claude", &permission(&s, "make deploy"));
    let out = waiting.join().unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(v["state"], "needs-you", "{v}");
    assert_eq!(v["why"], "permission: Bash: make deploy", "{v}");
    assert_eq!(v["paneId"], a.pane.as_str(), "{v}");

    // Already there: at once. The text form names the pane and why.
    let out = s.run(&["agent", "wait", &a.pane, "--until", "needs-you"]);
    assert_eq!(
        ok(&out).trim(),
        format!("{} is needs-you: permission: Bash: make deploy", a.pane)
    );

    // A deadline: the error says what it is instead, and nothing changed.
    let out = s.run(&[
        "agent",
        "wait",
        &a.pane,
        "--until",
        "idle",
        "--timeout",
        "300ms",
    ]);
    assert_ne!(out.status.code(), Some(0));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("still needs-you (permission: Bash: make deploy)"),
        "{e}"
    );
    assert_eq!(state(&s, &a.pane), "needs-you");

    // What it cannot follow: a state that is not one, a pane without an agent, no pane.
    let out = s.run(&["agent", "wait", &a.pane, "--until", "finished"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a state"));
    let plain = s.window("plain", "cat");
    let out = s.run(&[
        "agent",
        "wait",
        &plain,
        "--until",
        "done",
        "--timeout",
        "1s",
    ]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("has no agent state"), "{e}");
    let out = s.run(&[
        "agent",
        "wait",
        "%999",
        "--until",
        "done",
        "--timeout",
        "1s",
    ]);
    assert_ne!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stderr).is_empty());

    // An agent that ends while one waits for done: an error, not a hang to the deadline.
    let mut waiter = s.tmuxmate();
    waiter.args([
        "agent",
        "wait",
        &a.pane,
        "--until",
        "done",
        "--timeout",
        "60s",
    ]);
    let waiting = std::thread::spawn(move || waiter.output().unwrap());
    let end = input(
        &s,
        "end",
        serde_json::json!({"session_id": "5eed0000-0000-4000-8000-00000000c1a1",
            "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}),
    );
    hook(&a, "claude", &end);
    let out = waiting.join().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("exited before it was done"), "{e}");
}

#[test]
fn the_mcp_agents_tool_lists_compactly_and_waits_for_one() {
    let s = server!();
    let a = s.agent_pane_as("claude", "claude");
    hook(&a, "claude", &permission(&s, "make deploy"));
    let mut c = crate::mcp::Client::start(&s);
    c.initialize();
    let sc = c.ok("tmux_agents", serde_json::json!({}));
    let rows = sc["agents"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{sc}");
    assert_eq!(rows[0]["state"], "needs-you");
    let r = c.call("tmux_agents", serde_json::json!({}));
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains(&a.pane) && text.contains("needs-you"),
        "{text}"
    );
    assert!(text.len() < 120, "{text}");

    let sc = c.ok(
        "tmux_agents",
        serde_json::json!({"target": a.pane, "until": ["needs-you"], "timeoutMs": 5000}),
    );
    assert_eq!(sc["state"], "needs-you", "{sc}");
    // A wait that runs out is an error result that says what the agent is doing.
    let r = c.call(
        "tmux_agents",
        serde_json::json!({"target": a.pane, "until": ["done"], "timeoutMs": 300}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("still needs-you")
    );
    let r = c.call("tmux_agents", serde_json::json!({"until": ["done"]}));
    assert_eq!(r["isError"], true, "{r}");
    // A state that is not one is refused by the schema's own words.
    let r = c.request(
        "tools/call",
        serde_json::json!({"name": "tmux_agents", "arguments": {"target": a.pane, "until": ["finished"]}}),
    );
    assert!(
        r.get("error").is_some() || r["result"]["isError"] == true,
        "{r}"
    );
    c.finish();
}

/// What the pane's program writes to its terminal (the stand-in's scripts write to a file).
fn emit(a: &Agent, printf_args: &str) {
    assert_eq!(a.sh(&format!("printf {printf_args} > /dev/tty")).rc, 0);
}

fn wait_state(s: &Server, pane: &str, want: &str, why: &str) {
    wait_until(
        &format!("{pane} to be {want} ({why})"),
        Duration::from_secs(20),
        || (state(s, pane) == want && opt(s, pane, "@tmuxmate-state-why") == why).then_some(()),
    );
}

/// Codex 0.171's status sequence (rig-recorded: `:app=codex`, always ended by ESC \).
fn codex(state: &str) -> String {
    let st = match state {
        "clear" => "state=clear".to_string(),
        "blocked" => "state=blocked:app=codex:kind=permission".to_string(),
        _ => format!("state={state}:app=codex"),
    };
    format!(r"'\033]7501;{st}\033\\'")
}

#[test]
fn codex_status_sequences_move_the_state_at_once_and_a_users_pipe_is_left_alone() {
    let s = server!();
    s.tmux(&["set", "-g", "@tmuxmate-bin", BIN]);
    let a = s.agent_pane_as("codex", "codex");
    let ups = a.fixture("hook-codex-UserPromptSubmit.json");
    assert_eq!(hook(&a, "codex", &ups).rc, 0);
    // The first event set up the reader on the pane's output.
    wait_until("the reader", Duration::from_secs(20), || {
        (opt(&s, &a.pane, "@tmuxmate-state-source") == "osc7501"
            && opt(&s, &a.pane, "pane_pipe") == "1")
            .then_some(())
    });
    assert_eq!(state(&s, &a.pane), "working");
    // Blocked: needs you at once (0.9 s before Codex draws it); the hook adds what for.
    emit(&a, &codex("blocked"));
    wait_state(&s, &a.pane, "needs-you", "permission");
    hook(&a, "codex", &a.fixture("hook-codex-PermissionRequest.json"));
    wait_state(
        &s,
        &a.pane,
        "needs-you",
        "permission: Bash: touch perm-approved.txt && echo approved-ran",
    );
    // Approved: working again at once (no hook fires until the tool ends).
    emit(&a, &codex("working"));
    wait_state(&s, &a.pane, "working", "");
    emit(&a, &codex("done"));
    wait_state(&s, &a.pane, "done", "");
    // Denied with Escape, as the real one goes: blocked, working, idle (no Stop hook).
    emit(&a, &codex("idle"));
    wait_state(&s, &a.pane, "idle", "");
    emit(&a, &codex("working"));
    emit(&a, &codex("blocked"));
    wait_state(&s, &a.pane, "needs-you", "permission");
    emit(&a, &codex("working"));
    emit(&a, &codex("idle"));
    wait_state(&s, &a.pane, "idle", "interrupted");
    // An API error: the stream says the turn failed, the hook says why (one transition).
    emit(&a, &codex("working"));
    wait_state(&s, &a.pane, "working", "");
    let err = a.fixture("hook-codex-PostModelRequest-error.json");
    // A failed attempt alone is not a failed turn while the stream is read (Codex retries);
    // the stream's error then says why with the attempt's words.
    hook(&a, "codex", &err);
    assert_eq!(state(&s, &a.pane), "working");
    emit(&a, &codex("error"));
    let why = wait_until("the error's words", Duration::from_secs(20), || {
        let why = opt(&s, &a.pane, "@tmuxmate-state-why");
        (state(&s, &a.pane) == "needs-you" && why.contains("high demand")).then_some(why)
    });
    assert!(why.starts_with("error: "), "{why}");
    // The next turn's error is not explained by that attempt; a hook after it is.
    emit(&a, &codex("idle"));
    emit(&a, &codex("working"));
    wait_state(&s, &a.pane, "working", "");
    emit(&a, &codex("error"));
    wait_state(&s, &a.pane, "needs-you", "error: the turn failed");
    hook(&a, "codex", &err);
    wait_state(&s, &a.pane, "needs-you", &why);
    // The end: the reader stops and the pipe closes.
    emit(&a, &codex("clear"));
    wait_state(&s, &a.pane, "exited", "");
    wait_until("the reader to end", Duration::from_secs(20), || {
        (opt(&s, &a.pane, "pane_pipe") == "0").then_some(())
    });

    // A pane whose pipe is the user's (tmux-logging): left open, the hooks alone count.
    let b = s.agent_pane_as("codex2", "codex");
    let log = s.dir.join("user-log");
    s.tmux(&[
        "pipe-pane",
        "-t",
        &b.pane,
        &format!("cat >> '{}'", log.display()),
    ]);
    assert_eq!(hook(&b, "codex", &ups).rc, 0);
    wait_until("the source", Duration::from_secs(20), || {
        opt(&s, &b.pane, "@tmuxmate-state-source")
            .contains("pipe-pane is taken")
            .then_some(())
    });
    emit(&b, "'still logged\\n'");
    wait_until("the user's log", Duration::from_secs(20), || {
        std::fs::read_to_string(&log)
            .is_ok_and(|l| l.contains("still logged"))
            .then_some(())
    });
    assert_eq!(opt(&s, &b.pane, "pane_pipe"), "1");
    assert_eq!(state(&s, &b.pane), "working");
    // Without the stream, the failed request's hook is the error.
    hook(&b, "codex", &err);
    wait_until("the hook's error", Duration::from_secs(20), || {
        (state(&s, &b.pane) == "needs-you").then_some(())
    });
    // doctor says which source each agent has (the ended one is not listed).
    let out = s.run(&["doctor", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows: Vec<(String, String)> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["area"] == "agent state")
        .map(|c| {
            (
                c["status"].as_str().unwrap().to_string(),
                c["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].0, "warning", "{rows:?}");
    assert!(
        rows[0].1.starts_with("codex ")
            && rows[0].1.contains(&b.pane)
            && rows[0].1.contains("pipe-pane is taken"),
        "{rows:?}"
    );
}

#[test]
fn gemini_title_changes_move_the_state_and_the_hook_goes_with_the_agent() {
    let s = server!();
    s.tmux(&["set", "-g", "@tmuxmate-bin", BIN]);
    let a = s.agent_pane_as("gemini", "node");
    let tool = a.fixture("hook-gemini-AfterTool-run_shell_command.json");
    assert_eq!(hook(&a, "gemini", &tool).rc, 0);
    wait_until("the title hook", Duration::from_secs(20), || {
        (opt(&s, &a.pane, "@tmuxmate-state-source") == "title").then_some(())
    });
    // Gemini CLI 0.61's titles, padded to 80 columns (rig-recorded).
    let title = |t: &str| {
        let pad = 80 - t.chars().count();
        emit(&a, &format!("'\\033]2;{t}{}\\033\\\\'", " ".repeat(pad)))
    };
    title("✋  Action Required (proj)");
    wait_state(&s, &a.pane, "needs-you", "permission");
    hook(
        &a,
        "gemini",
        &a.fixture("hook-gemini-Notification-ToolPermission.json"),
    );
    let why = opt(&s, &a.pane, "@tmuxmate-state-why");
    assert!(why.starts_with("permission: "), "{why}");
    // Approved: working at once.
    title("✦  Working… (proj)");
    wait_state(&s, &a.pane, "working", "");
    // Ready after a reply and after an API error look the same: AfterAgent says which.
    title("◇  Ready (proj)");
    assert_eq!(
        hook(&a, "gemini", &a.fixture("hook-gemini-AfterAgent.json")).rc,
        0
    );
    wait_state(&s, &a.pane, "done", "");
    title("✦  Working… (proj)");
    wait_state(&s, &a.pane, "working", "");
    title("◇  Ready (proj)");
    hook(
        &a,
        "gemini",
        &a.fixture("hook-gemini-AfterAgent-error.json"),
    );
    wait_state(&s, &a.pane, "needs-you", "error: the turn failed");
    // Denied with Escape: Action Required, then Ready (no hook fires).
    title("✦  Working… (proj)");
    title("✋  Action Required (proj)");
    wait_state(&s, &a.pane, "needs-you", "permission");
    title("◇  Ready (proj)");
    wait_state(&s, &a.pane, "idle", "denied");
    // The agent ends: the hook goes, so a shell's titles later cost nothing.
    hook(&a, "gemini", &a.fixture("hook-gemini-SessionEnd.json"));
    wait_state(&s, &a.pane, "exited", "");
    let hooks = s.tmux(&["show-hooks", "-p", "-t", &a.pane]);
    assert!(!hooks.contains("agents title"), "{hooks}");
}

#[test]
fn claudes_session_file_tells_a_denied_permission_no_hook_reports() {
    let s = server!();
    s.tmux(&["set", "-g", "@tmuxmate-bin", BIN]);
    let a = s.agent_pane_as("claude", "claude");
    // Claude Code 2.1 keeps `<config>/sessions/<its pid>.json` (rig-recorded shape).
    let pid = opt(&s, &a.pane, "pane_pid");
    let dir = s.home.join(".claude/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{pid}.json"));
    let write = |status: &str, waiting: Option<&str>| {
        let mut v = serde_json::json!({
            "pid": pid.parse::<u32>().unwrap(),
            "sessionId": "5eed0000-0000-4000-8000-00000000c1a1",
            "cwd": "/tmp/proj",
            "status": status,
            "updatedAt": 1,
        });
        if let Some(w) = waiting {
            v["waitingFor"] = w.into();
        }
        // Replaced whole, as a new file under the same name.
        let tmp = dir.join(format!(".{pid}.json.tmp"));
        std::fs::write(&tmp, v.to_string()).unwrap();
        std::fs::rename(&tmp, &file).unwrap();
    };
    write("busy", None);
    let transcript = s.dir.join("t.jsonl");
    std::fs::write(&transcript, "").unwrap();
    let ups = input(
        &s,
        "ups",
        serde_json::json!({
            "session_id": "5eed0000-0000-4000-8000-00000000c1a1",
            "transcript_path": transcript,
            "cwd": "/tmp/proj",
            "hook_event_name": "UserPromptSubmit",
            "prompt": "go",
        }),
    );
    assert_eq!(hook(&a, "claude", &ups).rc, 0);
    assert_eq!(state(&s, &a.pane), "working");
    assert_eq!(
        opt(&s, &a.pane, "@tmuxmate-state-file"),
        file.display().to_string()
    );
    assert_eq!(opt(&s, &a.pane, "@tmuxmate-state-source"), "session-file");
    let doctor = String::from_utf8_lossy(&s.run(&["doctor", "--json"]).stdout).to_string();
    let place = opt(&s, &a.pane, "session_name}:#{window_index}.#{pane_index");
    assert!(
        doctor.contains(&format!(
            "claude {place} {}: hooks and session-file",
            a.pane
        )),
        "{doctor}"
    );
    wait_until("the follower", Duration::from_secs(20), || {
        (!opt(&s, &a.pane, "@tmuxmate-follower").is_empty()).then_some(())
    });
    // A prompt for permission, then Escape: no hook fires for the denial.
    write("waiting", Some("permission prompt"));
    wait_state(&s, &a.pane, "needs-you", "permission");
    write("idle", None);
    wait_state(&s, &a.pane, "idle", "denied");
    // With the hooks too: the hook's detail stays, the file's idle after Stop is done.
    write("busy", None);
    wait_state(&s, &a.pane, "working", "");
    hook(&a, "claude", &permission(&s, "make"));
    write("waiting", Some("permission prompt"));
    write("busy", None);
    wait_state(&s, &a.pane, "working", "");
    hook(&a, "claude", &permission(&s, "make test"));
    assert_eq!(
        opt(&s, &a.pane, "@tmuxmate-state-why"),
        "permission: Bash: make test"
    );
    write("waiting", Some("permission prompt"));
    hook(
        &a,
        "claude",
        &a.fixture("hook-claude-PostToolUse-Bash.json"),
    );
    hook(&a, "claude", &a.fixture("hook-claude-Stop.json"));
    write("idle", None);
    wait_state(&s, &a.pane, "done", "");
    // A file that is not a regular file is not read (and blocks nothing).
    std::fs::remove_file(&file).unwrap();
    nix::unistd::mkfifo(&file, nix::sys::stat::Mode::S_IRWXU).unwrap();
    hook(&a, "claude", &ups);
    assert_eq!(state(&s, &a.pane), "working");
    std::fs::remove_file(&file).unwrap();
    write("waiting", Some("permission prompt"));
    wait_state(&s, &a.pane, "needs-you", "permission");
}

#[test]
fn the_listeners_share_the_hooks_state_dir_not_the_servers() {
    let s = server!();
    s.tmux(&["set", "-g", "@tmuxmate-bin", BIN]);
    // The agents' hooks see another state directory than the tmux server (a HOME or
    // TMUXMATE_STATE_DIR of the agent's own).
    let other = s.dir.join("agent's #{state}");
    std::fs::create_dir_all(&other).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o700)).unwrap();
    let hook_in = |a: &Agent, harness: &str, input: &Path| {
        a.sh(&format!(
            "TMUXMATE_STATE_DIR='{}' setsid sh -c '\"$0\" hook {harness} < \"$1\"; true' \"$TM\" '{}'",
            other.display().to_string().replace('\'', "'\\''"),
            input.display()
        ))
    };
    let g = s.agent_pane_as("gemini", "node");
    hook_in(
        &g,
        "gemini",
        &g.fixture("hook-gemini-AfterTool-run_shell_command.json"),
    );
    let x = s.agent_pane_as("codex", "codex");
    hook_in(&x, "codex", &x.fixture("hook-codex-UserPromptSubmit.json"));
    wait_until("the listeners", Duration::from_secs(20), || {
        (opt(&s, &g.pane, "@tmuxmate-state-source") == "title"
            && opt(&s, &x.pane, "@tmuxmate-state-source") == "osc7501")
            .then_some(())
    });
    emit(&g, "'\\033]2;✋  Action Required (proj)\\033\\\\'");
    emit(&x, &codex("blocked"));
    wait_state(&s, &g.pane, "needs-you", "permission");
    wait_state(&s, &x.pane, "needs-you", "permission");
    let locks = |d: &Path| -> Vec<String> {
        std::fs::read_dir(d.join("agents/locks"))
            .map(|r| {
                r.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(locks(&other).len(), 2, "{:?}", locks(&other));
    assert!(locks(&s.state).is_empty(), "{:?}", locks(&s.state));
}

#[test]
fn with_no_client_attached_only_the_persons_command_is_told_once() {
    let s = server!();
    let a = s.agent_pane_as("claude", "claude");
    // No notify command and no client: nothing to tell, nothing claimed.
    hook(&a, "claude", &permission(&s, "make"));
    assert_eq!(state(&s, &a.pane), "needs-you");
    let file = notifier(&s);
    s.tmux(&["set", "-g", "@tmuxmate-notify-cooldown-s", "0"]);
    hook(&a, "claude", &a.fixture("hook-claude-Stop.json"));
    let got = wait_alerts(&file, 1);
    assert!(got[0].ends_with("is done"), "{got:?}");
    hook(&a, "claude", &a.fixture("hook-claude-Stop.json"));
    hook(
        &a,
        "claude",
        &a.fixture("hook-claude-UserPromptSubmit.json"),
    );
    hook(&a, "claude", &permission(&s, "make test"));
    let got = wait_alerts(&file, 2);
    assert!(
        got[1].ends_with("needs you: permission: Bash: make test"),
        "{got:?}"
    );
    // The repeated Stop was no transition: two alerts, in order.
    assert_eq!(got.len(), 2, "{got:?}");
}

#[test]
fn agents_lists_every_server_agents_were_seen_on_unless_one_is_named() {
    let s = server!();
    let t = server!();
    let a = s.agent_pane_as("claude", "claude");
    let b = t.agent_pane_as("codex", "codex");
    hook(&a, "claude", &a.fixture("hook-claude-Stop.json"));
    // The second server's agent, with the same state dir as the first's (one person).
    let r = b.sh(&format!(
        "TMUXMATE_STATE_DIR='{}' setsid sh -c '\"$0\" hook codex < \"$1\"; true' \"$TM\" '{}'",
        s.state.display(),
        permission(&t, "make").display()
    ));
    assert_eq!(r.rc, 0);
    assert_eq!(state(&t, &b.pane), "needs-you");
    // No -L/-S and no server of its own: both servers' agents, needs-you first.
    let mut c = std::process::Command::new(BIN);
    s.env(&mut c);
    let out = c.args(["agents", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let rows = v["agents"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{v}");
    assert_eq!(rows[0]["state"], "needs-you");
    assert_eq!(rows[0]["socket"], t.socket_path().display().to_string());
    assert_eq!(rows[1]["state"], "done");
    assert_eq!(rows[1]["socket"], s.socket_path().display().to_string());
    // Named with -L: that server's alone, no socket column.
    let v: serde_json::Value = serde_json::from_str(&ok(s.run(&["agents", "--json"]))).unwrap();
    assert_eq!(v["agents"].as_array().unwrap().len(), 1, "{v}");
    assert!(v["agents"][0].get("socket").is_none(), "{v}");
    // A server that ended is forgotten.
    drop(t);
    let mut c = std::process::Command::new(BIN);
    s.env(&mut c);
    let text = ok(c.arg("agents").output().unwrap());
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("done "), "{text}");
}

/// The host side of a followed host (`agents changes`): where the user has no inotify
/// instance left, a state change still answers the long poll at once, through the wake
/// socket the hook pokes (it used to wait for the deadline).
#[test]
fn a_long_poll_without_inotify_answers_a_change_at_once() {
    let s = server!();
    let a = s.agent_pane_as("api", "claude");
    let first: serde_json::Value =
        serde_json::from_str(&ok(s.run(&["agents", "changes", "--wait-ms", "0"]))).unwrap();
    let token = first["token"].as_str().unwrap().to_string();
    let started = std::time::Instant::now();
    let poll = s
        .tmuxmate()
        .env("TMUXMATE_NO_INOTIFY", "1")
        .args(["agents", "changes", "--after", &token, "--wait-ms", "30000"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Its listener is up before the change.
    wait_until(
        "the long poll's wake socket",
        Duration::from_secs(10),
        || {
            std::fs::read_dir(s.state.join("wake"))
                .ok()?
                .flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(".sock"))
                .then_some(())
        },
    );
    let perm = input(
        &s,
        "perm",
        serde_json::json!({"session_id": "s1", "hook_event_name": "PermissionRequest",
            "tool_name": "Bash", "tool_input": {"command": "make deploy"}}),
    );
    let r = hook(&a, "claude", &perm);
    assert_eq!(r.rc, 0, "{}", r.out);
    let out = poll.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the change waited for the deadline: {:?}",
        started.elapsed()
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(v["token"], first["token"], "{v}");
    assert_eq!(v["agents"][0]["state"], "needs-you", "{v}");
}
