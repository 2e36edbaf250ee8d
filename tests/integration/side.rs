//! The side chat: status, history, report (delivered once at the main's next turn, never a
//! keystroke), the side agent's per-turn digest, and destroy-on-close.

use std::time::Duration;

use crate::server;
use crate::util::*;

fn fixture(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// A main agent pane (a raw-mode recorder, so any byte sent to it would show) whose
/// transcript is the real Claude sample.
fn main_pane(s: &Server) -> (Recorder, String) {
    let rec = s.recorder_pane("main");
    let t = s.dir.join("main.jsonl");
    std::fs::copy(fixture("claude-transcript.jsonl"), &t).unwrap();
    ok(s.run(&[
        "digest",
        "attach",
        "-t",
        &rec.pane,
        "--transcript",
        t.to_str().unwrap(),
        "--format",
        "claude",
    ]));
    (rec, t.display().to_string())
}

#[test]
fn status_and_history_are_bounded_views_of_the_main_session() {
    let s = server!();
    let (main, _) = main_pane(&s);
    let st = ok(s.run(&["side", "status", "-t", &main.pane]));
    assert!(st.contains("idle"), "{st}");
    assert!(st.contains("please run the slow thing"), "{st}");
    let h = ok(s.run(&["side", "history", "-t", &main.pane]));
    assert!(
        h.contains("[turn 1] user: please run the slow thing"),
        "{h}"
    );
    assert!(h.contains("tool call Bash("), "{h}");
    assert!(h.contains("tool result: done"), "{h}");
    assert!(h.contains("turn 1 ended"), "{h}");
    assert!(!h.contains("thinking"), "{h}");
    let h2 = ok(s.run(&[
        "side",
        "history",
        "-t",
        &main.pane,
        "--contains",
        "DONE",
        "--limit",
        "1",
    ]));
    assert_eq!(h2.lines().count(), 1, "{h2}");
    let none = ok(s.run(&["side", "history", "-t", &main.pane, "--turn", "7"]));
    assert!(none.contains("no matching lines"));
    for bad in ["0", "201"] {
        let o = s.run(&["side", "history", "-t", &main.pane, "--limit", bad]);
        assert_eq!(o.status.code(), Some(2));
    }
    // Inside a side agent the main pane comes from the environment.
    let o = s
        .tmuxmate()
        .env("TMUXMATE_SIDE_MAIN", &main.pane)
        .args(["side", "status", "--json"])
        .output()
        .unwrap();
    let v: crate::util::contract::SideStatusJson =
        crate::util::contract::parse("side status", &o.stdout);
    assert_eq!(
        (v.state.as_str(), v.pane_id.as_str()),
        ("idle", main.pane.as_str())
    );
    // Without either: refused, never "the current pane".
    assert_eq!(s.run(&["side", "status"]).status.code(), Some(2));
    assert!(main.bytes().is_empty(), "nothing may reach the main pane");
}

#[test]
fn report_is_delivered_once_at_the_main_agents_next_turn() {
    let s = server!();
    let (main, _) = main_pane(&s);
    // The main agent's hook recorded its session id on its pane.
    s.tmux(&[
        "set-option",
        "-p",
        "-t",
        &main.pane,
        "@tmuxmate-agent",
        "main-sid",
    ]);
    ok(s.run(&[
        "side",
        "report",
        "-t",
        &main.pane,
        "The test in step 3 failed twice; consider the flaky fixture.",
    ]));
    let t1 = ok(s.run(&["turn", "--agent", "main-sid"]));
    assert!(t1.contains("tmux side chat note"), "{t1}");
    assert!(t1.contains("flaky fixture"), "{t1}");
    assert_eq!(ok(s.run(&["turn", "--agent", "main-sid"])), "");
    assert!(
        main.bytes().is_empty(),
        "a report is never a keystroke into the main pane"
    );
    let o = s.run(&["side", "report", "-t", &main.pane, "   "]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn side_agent_turns_get_the_digest_with_a_verify_header() {
    let s = server!();
    let (main, _) = main_pane(&s);
    let o = s
        .tmuxmate()
        .env("TMUXMATE_SIDE_MAIN", &main.pane)
        .args(["hook", "claude"])
        .stdin(std::fs::File::open(fixture("hook-claude-UserPromptSubmit.json")).unwrap())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        ctx.starts_with("Live digest of the main agent session"),
        "{ctx}"
    );
    assert!(
        ctx.contains("verify") && ctx.contains("I don't know"),
        "{ctx}"
    );
    assert!(ctx.contains("please run the slow thing"), "{ctx}");
    assert!(ctx.chars().count() < 10_000);
    // The side session's own transcript is remembered, so closing deletes exactly it.
    assert!(
        s.tmux(&["show", "-pv", "-t", &main.pane, "@tmuxmate-side-transcript"])
            .contains("5eed0000-0000-4000-8000-00000000c1a1.jsonl")
    );
}

#[test]
fn side_chat_works_before_the_main_agent_has_a_transcript() {
    let s = server!();
    let rec = s.recorder_pane("main");
    let missing = s.dir.join("not-yet.jsonl");
    ok(s.run(&[
        "digest",
        "attach",
        "-t",
        &rec.pane,
        "--transcript",
        missing.to_str().unwrap(),
        "--format",
        "claude",
    ]));
    let st = ok(s.run(&["side", "status", "-t", &rec.pane]));
    assert!(st.contains("main agent in"), "{st}");
}

#[test]
fn open_runs_a_read_only_side_agent_and_close_deletes_its_files() {
    let s = server!();
    let (main, _) = main_pane(&s);
    let bin = s.dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(crate::bridge::standin_bin(), bin.join("claude")).unwrap();
    let sd = s.dir.join("side-sd");
    std::fs::create_dir_all(&sd).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    s.tmux(&["set-environment", "-g", "STANDIN_DIR", sd.to_str().unwrap()]);
    // No client is attached: the side chat opens in a split beside the main pane. New panes
    // take PATH from the client that creates them, so the side agent is found on ours.
    let out = ok(s
        .tmuxmate()
        .env("PATH", &path)
        .args(["side", "open", "-t", &main.pane])
        .output()
        .unwrap());
    assert!(out.contains("split"), "{out}");
    let argv: serde_json::Value = wait_until("the side agent", Duration::from_secs(10), || {
        serde_json::from_str(&std::fs::read_to_string(sd.join("argv.json")).ok()?).ok()
    });
    let a = argv["argv"].to_string();
    assert!(
        a.contains("\"plan\"")
            && a.contains("Bash(tmuxmate side report:*)")
            && a.contains("Edit,Write"),
        "{a}"
    );
    assert!(a.contains("I don't know"), "{a}");
    let rec: serde_json::Value = serde_json::from_str(
        s.tmux(&["show", "-pv", "-t", &main.pane, "@tmuxmate-side"])
            .trim(),
    )
    .unwrap();
    let session = rec["session"].as_str().unwrap().to_string();
    // One side turn, so the side agent writes its own transcript.
    let side_pane = s
        .tmux(&[
            "list-panes",
            "-t",
            &main.pane,
            "-F",
            "#{pane_id} #{pane_current_command}",
        ])
        .lines()
        .find(|l| !l.starts_with(&main.pane))
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    ok(s.run(&[
        "paste",
        "-t",
        &side_pane,
        "--enter",
        "--settle-ms",
        "20",
        "where is it now?",
    ]));
    let files: Vec<std::path::PathBuf> =
        wait_until("the side transcript", Duration::from_secs(10), || {
            let root = s.home.join(".claude/projects");
            let found: Vec<_> = std::fs::read_dir(&root)
                .ok()?
                .flatten()
                .map(|d| d.path().join(format!("{session}.jsonl")))
                .filter(|p| p.exists())
                .collect();
            (!found.is_empty()).then_some(found)
        });
    let closed = ok(s.run(&["side", "close", "-t", &main.pane]));
    assert!(closed.contains("deleted"), "{closed}");
    for f in files {
        assert!(!f.exists(), "{} survived the close", f.display());
    }
    assert!(
        s.tmux(&["show", "-pqv", "-t", &main.pane, "@tmuxmate-side"])
            .trim()
            .is_empty()
    );
    assert!(main.bytes().is_empty(), "nothing may reach the main pane");
}

#[test]
fn a_sandboxed_side_agent_reads_the_transcript_without_tmux() {
    let s = server!();
    let (main, t) = main_pane(&s);
    // As inside Codex's read-only sandbox: the tmux socket is unusable.
    let o = s
        .tmuxmate()
        .env("TMUXMATE_TMUX", "/nonexistent/tmux")
        .env("TMUXMATE_SIDE_MAIN", &main.pane)
        .env("TMUXMATE_SIDE_TRANSCRIPT", &t)
        .args(["side", "history", "--contains", "done"])
        .output()
        .unwrap();
    let h = ok(o);
    assert!(h.contains("tool result: done"), "{h}");
    let o = s
        .tmuxmate()
        .env("TMUXMATE_TMUX", "/nonexistent/tmux")
        .env("TMUXMATE_SIDE_MAIN", &main.pane)
        .env("TMUXMATE_SIDE_TRANSCRIPT", &t)
        .args(["side", "status"])
        .output()
        .unwrap();
    assert!(ok(o).contains("idle"));
}

/// One line of Claude's prompt history, as Claude Code 2.1.332 writes it.
fn history_line(sid: &str, text: &str) -> String {
    format!(
        "{}\n",
        serde_json::json!({"display": text, "pastedContents": {}, "timestamp": 1796118133382u64,
        "project": "/somewhere", "sessionId": sid})
    )
}

#[test]
fn close_under_remain_on_exit_leaves_no_split_restores_the_layout_and_forgets_the_prompts() {
    let s = server!();
    // The person's config keeps dead panes: globally, and on the main window too.
    s.tmux(&["set-option", "-g", "remain-on-exit", "on"]);
    let (main, _) = main_pane(&s);
    s.tmux(&["set-option", "-w", "-t", &main.pane, "remain-on-exit", "on"]);
    let layout = |s: &Server| {
        s.tmux(&[
            "display-message",
            "-p",
            "-t",
            &main.pane,
            "#{window_layout}",
        ])
    };
    let panes = |s: &Server| {
        s.tmux(&[
            "list-panes",
            "-t",
            &main.pane,
            "-F",
            "#{pane_id} #{pane_dead}",
        ])
    };
    let before_layout = layout(&s);
    let before_panes = panes(&s);
    // A history with other sessions' prompts already in it, one of them naming no session.
    let hist = s.home.join(".claude/history.jsonl");
    std::fs::create_dir_all(hist.parent().unwrap()).unwrap();
    let mut others = String::new();
    others.push_str(&history_line(
        "11111111-1111-4111-8111-111111111111",
        "person: fix the build",
    ));
    others.push_str("{\"display\":\"an old line without a session\",\"timestamp\":1}\n");
    others.push_str(&history_line(
        "22222222-2222-4222-8222-222222222222",
        "another agent",
    ));
    std::fs::write(&hist, &others).unwrap();

    let bin = s.dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(crate::bridge::standin_bin(), bin.join("claude")).unwrap();
    let sd = s.dir.join("side-sd");
    std::fs::create_dir_all(&sd).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    s.tmux(&["set-environment", "-g", "STANDIN_DIR", sd.to_str().unwrap()]);
    let out = ok(s
        .tmuxmate()
        .env("PATH", &path)
        .args(["side", "open", "-t", &main.pane])
        .output()
        .unwrap());
    assert!(out.contains("split"), "{out}");
    let rec: serde_json::Value = serde_json::from_str(
        s.tmux(&["show", "-pv", "-t", &main.pane, "@tmuxmate-side"])
            .trim(),
    )
    .unwrap();
    let session = rec["session"].as_str().unwrap().to_string();
    let side_pane = panes(&s)
        .lines()
        .map(|l| l.split(' ').next().unwrap().to_string())
        .find(|p| *p != main.pane)
        .unwrap();
    // Two side prompts, with a person's prompt of another session between them.
    for (k, q) in ["where is it now?", "and what failed?"].iter().enumerate() {
        ok(s.run(&["paste", "-t", &side_pane, "--enter", "--settle-ms", "20", q]));
        wait_until(
            "the side prompt in the history",
            Duration::from_secs(10),
            || {
                let h = std::fs::read_to_string(&hist).ok()?;
                (h.matches(&session).count() == k + 1).then_some(())
            },
        );
        wait_until("the side turn to end", Duration::from_secs(10), || {
            let t = s.tmux(&["capture-pane", "-p", "-t", &side_pane]);
            t.contains("stand-in reply to").then_some(())
        });
        if k == 0 {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&hist)
                .unwrap();
            use std::io::Write;
            let l = history_line("11111111-1111-4111-8111-111111111111", "person: meanwhile");
            f.write_all(l.as_bytes()).unwrap();
            others.push_str(&l);
        }
    }
    assert_ne!(layout(&s), before_layout, "the split is there");
    let closed = ok(s.run(&["side", "close", "-t", &main.pane]));
    assert!(
        closed.contains("removed 2 prompt line(s) of the side session"),
        "{closed}"
    );
    assert_eq!(
        std::fs::read_to_string(&hist).unwrap(),
        others,
        "exactly the side session's lines are gone, every other byte kept"
    );
    // No dead split, and the window as it was.
    wait_until("the split to go", Duration::from_secs(10), || {
        (panes(&s) == before_panes).then_some(())
    });
    assert_eq!(layout(&s), before_layout);
    assert!(
        s.tmux(&["show", "-pqv", "-t", &main.pane, "@tmuxmate-side-split"])
            .trim()
            .is_empty()
    );
    assert!(main.bytes().is_empty(), "nothing may reach the main pane");
}

#[test]
fn a_sandboxed_side_report_is_printed_and_relayed_by_the_hook_once() {
    let s = server!();
    let (main, _) = main_pane(&s);
    s.tmux(&[
        "set-option",
        "-p",
        "-t",
        &main.pane,
        "@tmuxmate-agent",
        "main-sid",
    ]);
    let nonce = "5f1c0e9a8b7d6c5e4f3a2b1c0d9e8f7a";
    let note = "Step 3 failed twice:\nsee \"fixture\" ; $(touch NEVER) 日本 🎉";
    // Inside Codex's read-only sandbox: no tmux socket, no state dir.
    let o = s
        .tmuxmate()
        .env("TMUXMATE_TMUX", "/nonexistent/tmux")
        .env("TMUXMATE_SIDE_MAIN", &main.pane)
        .env("TMUXMATE_SIDE_RELAY", nonce)
        .args(["side", "report", note])
        .output()
        .unwrap();
    let printed = ok(o);
    assert!(printed.contains("tmuxmate-side-report-v1 "), "{printed}");
    assert!(printed.contains("handed to the side chat"), "{printed}");
    assert_eq!(
        ok(s.run(&["turn", "--agent", "main-sid"])),
        "",
        "nothing queued yet"
    );
    // Codex's PostToolUse hook, outside the sandbox, gets the command and its output.
    let hook = |cmd: &str, out: &str, id: &str, nonce: &str| {
        let input = serde_json::json!({"session_id": "side", "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_response": out,
            "tool_use_id": id});
        let mut c = s.tmuxmate();
        c.env("TMUXMATE_SIDE_MAIN", &main.pane)
            .env("TMUXMATE_SIDE_RELAY", nonce)
            .args(["side", "relay"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut ch = c.spawn().unwrap();
        use std::io::Write;
        ch.stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        let o = ch.wait_with_output().unwrap();
        assert!(o.status.success());
        assert!(o.stdout.is_empty(), "a hook that prints nothing");
    };
    let cmd = "tmuxmate side report 'Step 3 failed twice'";
    // Another nonce (a relay line read from a file or the main's history): nothing.
    hook(cmd, &printed, "call_a", "ffffffffffffffffffffffffffffffff");
    hook("cat old-output.txt", &printed, "call_b", nonce);
    assert_eq!(ok(s.run(&["turn", "--agent", "main-sid"])), "");
    // The real one, and the same hook fired twice: one note.
    hook(cmd, &printed, "call_c", nonce);
    hook(cmd, &printed, "call_c", nonce);
    let t1 = ok(s.run(&["turn", "--agent", "main-sid"]));
    assert!(t1.contains("tmux side chat note"), "{t1}");
    assert!(
        t1.contains("see \"fixture\" ; $(touch NEVER) 日本 🎉"),
        "{t1}"
    );
    assert_eq!(ok(s.run(&["turn", "--agent", "main-sid"])), "");
    assert!(!s.dir.join("NEVER").exists());
    assert!(main.bytes().is_empty());
}

#[test]
fn a_report_reaches_the_turn_with_its_controls_made_visible_and_two_at_once_are_two() {
    let s = server!();
    let (main, _) = main_pane(&s);
    s.tmux(&[
        "set-option",
        "-p",
        "-t",
        &main.pane,
        "@tmuxmate-agent",
        "esc-sid",
    ]);
    // An OSC 52 clipboard write, a BEL and a clear-screen inside a report.
    ok(s.run(&[
        "side",
        "report",
        "-t",
        &main.pane,
        "look \x1b]52;c;ZXZpbA==\x07 here \x1b[2J done",
    ]));
    let t = ok(s.run(&["turn", "--agent", "esc-sid"]));
    assert!(!t.contains('\x1b') && !t.contains('\x07'), "{t:?}");
    assert!(
        t.contains("look \u{241b}]52;c;ZXZpbA==\u{2407} here \u{241b}[2J done"),
        "{t}"
    );
    // Two reports at once (an MCP client's parallel calls) are two notes.
    let kids: Vec<_> = (0..6)
        .map(|i| {
            s.tmuxmate()
                .args([
                    "side",
                    "report",
                    "-t",
                    &main.pane,
                    &format!("parallel note {i}"),
                ])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut k in kids {
        assert!(k.wait().unwrap().success());
    }
    let t = ok(s.run(&["turn", "--agent", "esc-sid"]));
    for i in 0..6 {
        assert!(t.contains(&format!("parallel note {i}")), "{i}: {t}");
    }
}

#[test]
fn a_fifo_as_the_transcript_never_blocks_status_or_history() {
    let s = server!();
    let rec = s.recorder_pane("main");
    let t = s.dir.join("fifo.jsonl");
    nix::unistd::mkfifo(&t, nix::sys::stat::Mode::S_IRWXU).unwrap();
    // `digest attach` refuses it, or a later read does: either way nothing hangs.
    let attach = s.run(&[
        "digest",
        "attach",
        "-t",
        &rec.pane,
        "--transcript",
        t.to_str().unwrap(),
        "--format",
        "claude",
    ]);
    for verb in ["status", "history"] {
        let mut c = s.tmuxmate();
        c.args(["side", verb, "-t", &rec.pane])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = Some(c.spawn().unwrap());
        let out = wait_until(
            &format!("side {verb} with a FIFO transcript"),
            std::time::Duration::from_secs(15),
            || {
                child.as_mut()?.try_wait().ok()??;
                child.take().map(|c| c.wait_with_output().unwrap())
            },
        );
        // status says what the digest knows (nothing read); history must read the file.
        if attach.status.success() && verb == "history" {
            assert_eq!(out.status.code(), Some(1), "side {verb}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("not a regular file"), "side {verb}: {err}");
        }
    }
}
