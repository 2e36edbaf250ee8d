//! The snippet's key bindings, pressed on a real client: a client of the server under test
//! runs in a pane of a second private server, keys reach it through that pane, and its
//! screen (with the popup on it) is read with `capture-pane`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::server;
use crate::util::*;

/// Load the snippet as `source-file` would from tmux.conf.
fn load_snippet(s: &Server) {
    let conf = s.dir.join("snippet.conf");
    std::fs::write(&conf, ok(s.run(&["init", "tmux"]))).unwrap();
    s.tmux(&["source-file", conf.to_str().unwrap()]);
}

fn screen(outer: &Server, pane: &str) -> String {
    outer.tmux(&["capture-pane", "-p", "-t", pane])
}

/// Is a popup shown: its title from tmux 3.3 (3.2 has no `-T`), else its frame.
fn popup_shown(s: &Server, screen: &str, title: &str) -> bool {
    let v = s.tmux(&["display", "-p", "#{version}"]);
    let titled = !v.starts_with("3.2");
    if titled {
        screen.contains(title)
    } else {
        screen.contains('┌') && screen.contains('┘')
    }
}

fn press(outer: &Server, pane: &str, key: &str) {
    outer.tmux(&["send-keys", "-t", pane, "C-b"]);
    outer.tmux(&["send-keys", "-t", pane, key]);
}

/// A pager that keeps what it was given in `out` and stays open (so the popup does too).
fn pager(s: &Server) -> PathBuf {
    let out = s.dir.join("paged.txt");
    let script = s.dir.join("pager.sh");
    write_script(
        &script,
        &format!(
            "#!/bin/sh\ntee '{0}.tmp' && mv '{0}.tmp' '{0}'\nexec sleep 120\n",
            out.display()
        ),
    );
    s.tmux(&["set-environment", "-g", "PAGER", script.to_str().unwrap()]);
    out
}

/// A pane showing `marker`, captured once so a snapshot of it is stored.
fn stored_snapshot(s: &Server, marker: &str) {
    let pane = s.window("shown", &format!("printf '{marker}\\n'; exec sleep 600"));
    wait_until("the marker on screen", Duration::from_secs(10), || {
        screen(s, &pane).contains(marker).then_some(())
    });
    ok(s.run(&["capture", "-t", &pane]));
}

fn wait_paged(out: &Path, marker: &str) -> String {
    wait_until("the popup's listing", Duration::from_secs(20), || {
        let t = std::fs::read_to_string(out).ok()?;
        t.contains(marker).then_some(t)
    })
}

#[test]
fn snapshots_key_opens_the_listing_in_a_popup() {
    let inner = server!();
    let outer = server!();
    load_snippet(&inner);
    let out = pager(&inner);
    stored_snapshot(&inner, "snap-marker-4711");
    let pane = inner.attach_in(&outer, "main");
    press(&outer, &pane, "M-s");
    let listed = wait_paged(&out, "snap-marker-4711");
    // The listing's line for it: the pane's target and its line count.
    assert!(
        listed.contains("main:") && listed.contains("1L"),
        "{listed}"
    );
    // It is on the client's screen, in a popup titled by tmuxmate (3.3+).
    let shown = wait_until("the popup on screen", Duration::from_secs(10), || {
        let sc = screen(&outer, &pane);
        (sc.contains("snap-marker-4711") && popup_shown(&inner, &sc, " snapshots ")).then_some(sc)
    });
    assert!(shown.contains('│') || shown.contains('|'), "{shown}");
}

#[test]
fn side_key_opens_the_side_chat_in_a_popup() {
    let inner = server!();
    let outer = server!();
    load_snippet(&inner);
    // The main agent: a recorder (any byte sent to it would show) with a transcript.
    let main = inner.recorder_pane("mainagent");
    let t = inner.dir.join("main.jsonl");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-transcript.jsonl"),
        &t,
    )
    .unwrap();
    ok(inner.run(&[
        "digest",
        "attach",
        "-t",
        &main.pane,
        "--transcript",
        t.to_str().unwrap(),
        "--format",
        "claude",
    ]));
    // The side agent CLI (a stand-in claude) is found on the server's PATH.
    let bin = inner.dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(crate::bridge::standin_bin(), bin.join("claude")).unwrap();
    let sd = inner.dir.join("side-sd");
    std::fs::create_dir_all(&sd).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    inner.tmux(&["set-environment", "-g", "PATH", &path]);
    inner.tmux(&["set-environment", "-g", "STANDIN_DIR", sd.to_str().unwrap()]);
    inner.tmux(&["select-window", "-t", &main.pane]);
    let pane = inner.attach_in(&outer, "main");
    press(&outer, &pane, "M-a");
    let argv: serde_json::Value = wait_until("the side agent", Duration::from_secs(20), || {
        serde_json::from_str(&std::fs::read_to_string(sd.join("argv.json")).ok()?).ok()
    });
    assert!(argv["argv"].to_string().contains("\"plan\""), "{argv}");
    wait_until("the side chat popup", Duration::from_secs(10), || {
        popup_shown(&inner, &screen(&outer, &pane), " side chat ").then_some(())
    });
    let rec: serde_json::Value = serde_json::from_str(
        inner
            .tmux(&["show", "-pv", "-t", &main.pane, "@tmuxmate-side"])
            .trim(),
    )
    .unwrap();
    assert!(rec["session"].is_string(), "{rec}");
    let closed = ok(inner.run(&["side", "close", "-t", &main.pane]));
    assert!(closed.contains("deleted"), "{closed}");
    wait_until("the popup to close", Duration::from_secs(10), || {
        (!popup_shown(&inner, &screen(&outer, &pane), " side chat ")).then_some(())
    });
    assert!(main.bytes().is_empty(), "nothing may reach the main pane");
}

/// The prefix-table line of `key` (the whole table: `list-keys KEY` on 3.2 ignores
/// modifiers).
fn key_line(s: &Server, key: &str) -> Option<String> {
    s.tmux(&["list-keys", "-T", "prefix"])
        .lines()
        .find(|l| {
            l.split_whitespace()
                .skip_while(|w| *w != "prefix")
                .nth(1)
                .is_some_and(|k| k == key)
        })
        .map(str::to_string)
}

fn log(s: &Server) -> String {
    std::fs::read_to_string(s.state.join("log")).unwrap_or_default()
}

#[test]
fn keys_are_options_checked_before_binding() {
    let inner = server!();
    let outer = server!();
    // A key of the user's own, and two options: one chosen key, one hostile value.
    inner.tmux(&["bind-key", "-T", "prefix", "M-a", "display-message", "mine"]);
    inner.tmux(&["set", "-g", "@tmuxmate-snapshots-key", "M-z"]);
    let pwned = inner.dir.join("PWNED");
    for bad in [
        "x;y".to_string(),
        format!("#(touch {})", pwned.display()),
        "M-s kill-server".into(),
    ] {
        inner.tmux(&["set", "-g", "@tmuxmate-side-key", &bad]);
        load_snippet(&inner);
        assert!(
            log(&inner).contains(&format!("refused: @tmuxmate-side-key is {bad:?}")),
            "{}",
            log(&inner)
        );
    }
    assert!(!pwned.exists());
    let ours = key_line(&inner, "M-z").unwrap();
    assert!(ours.contains("snapshots popup --client"), "{ours}");
    assert!(
        key_line(&inner, "M-s").is_none(),
        "the default is not bound too"
    );
    assert!(
        key_line(&inner, "M-a")
            .unwrap()
            .contains("display-message mine")
    );
    assert_eq!(inner.tmux(&["list-sessions", "-F", "x"]).trim(), "x");

    // Unset: the default M-a is someone else's, so it is left alone and the log says so.
    inner.tmux(&["set", "-gu", "@tmuxmate-side-key"]);
    load_snippet(&inner);
    assert!(
        key_line(&inner, "M-a")
            .unwrap()
            .contains("display-message mine")
    );
    assert!(
        log(&inner).contains("default key prefix M-a is already bound"),
        "{}",
        log(&inner)
    );
    // Asked for explicitly, it is replaced.
    inner.tmux(&["set", "-g", "@tmuxmate-side-key", "M-a"]);
    load_snippet(&inner);
    assert!(key_line(&inner, "M-a").unwrap().contains("side open -t"));

    // The chosen key works when pressed.
    let out = pager(&inner);
    stored_snapshot(&inner, "chosen-key-marker");
    let pane = inner.attach_in(&outer, "main");
    press(&outer, &pane, "M-z");
    wait_paged(&out, "chosen-key-marker");

    // Moving the key unbinds the old one (it is still ours); "none" binds nothing.
    inner.tmux(&["set", "-g", "@tmuxmate-snapshots-key", "F5"]);
    load_snippet(&inner);
    assert!(key_line(&inner, "M-z").is_none());
    assert!(key_line(&inner, "F5").unwrap().contains("snapshots popup"));
    inner.tmux(&["set", "-g", "@tmuxmate-snapshots-key", "none"]);
    load_snippet(&inner);
    assert!(key_line(&inner, "F5").is_none());
}

#[test]
fn status_line_shows_the_whole_counts() {
    let inner = server!();
    let outer = server!();
    // The test reads the status line: a user's config may have turned it off (`status
    // off`, which the snippet leaves alone), so this server has it on.
    inner.tmux(&["set-option", "-g", "status", "on"]);
    load_snippet(&inner);
    let pane = inner.attach_in(&outer, "main");
    let counts = "watch 12 running · 3 done";
    let agent = "turn 4 · step 7 · todo 3/8 · Bash";
    inner.tmux(&["set", "-g", "@tmuxmate-watch-status", counts]);
    inner.tmux(&["set", "-p", "-t", "%0", "@tmuxmate-status", agent]);
    let status_row = |outer: &Server| {
        screen(outer, &pane)
            .lines()
            .last()
            .unwrap_or("")
            .to_string()
    };
    let row = wait_until("both segments", Duration::from_secs(20), || {
        inner.tmux(&["refresh-client", "-S"]);
        let r = status_row(&outer);
        (r.contains(counts) && r.contains(agent)).then_some(r)
    });
    // The user's own status-right is still there (the clock and the title).
    assert!(row.contains('"'), "{row}");
    // Without the room the snippet made, the same text is cut: the test sees the difference.
    inner.tmux(&["set", "-g", "status-right-length", "40"]);
    wait_until("the cut status", Duration::from_secs(20), || {
        inner.tmux(&["refresh-client", "-S"]);
        (!status_row(&outer).contains(agent)).then_some(())
    });
}

#[test]
fn status_right_length_is_raised_only_when_smaller() {
    let s = server!();
    let len = |s: &Server| {
        s.tmux(&["show", "-gv", "status-right-length"])
            .trim()
            .to_string()
    };
    load_snippet(&s);
    assert_eq!(len(&s), "200");
    // A tmux.conf that resets status-right and is sourced again: no growth.
    s.tmux(&["set", "-g", "status-right", "%H:%M"]);
    load_snippet(&s);
    load_snippet(&s);
    assert_eq!(len(&s), "200");
    let right = s.tmux(&["show", "-gv", "status-right"]);
    assert_eq!(
        right.matches("@tmuxmate-watch-status, ").count(),
        1,
        "{right}"
    );
    // A larger length of the user's is kept.
    s.tmux(&["set", "-g", "status-right-length", "300"]);
    load_snippet(&s);
    assert_eq!(len(&s), "300");
}

#[test]
fn a_key_that_fails_says_why_on_the_client() {
    let inner = server!();
    let outer = server!();
    load_snippet(&inner);
    // A side agent CLI that is on no PATH here (the test's PATH has no stand-ins).
    inner.tmux(&["set", "-g", "@tmuxmate-side-agent", "gemini"]);
    let pane = inner.attach_in(&outer, "main");
    press(&outer, &pane, "M-a");
    // The popup stays open with the reason (it closes by itself only on success).
    wait_until("the reason in the popup", Duration::from_secs(20), || {
        screen(&outer, &pane)
            .contains("the gemini CLI is not on PATH")
            .then_some(())
    });
    outer.tmux(&["send-keys", "-t", &pane, "Escape"]);
    wait_until("the popup to close", Duration::from_secs(10), || {
        (!screen(&outer, &pane).contains("the gemini CLI is not on PATH")).then_some(())
    });
    // A client that is not there: refused, and the reason is logged.
    let o = inner.run(&[
        "side",
        "open",
        "-t",
        "%0",
        "--client",
        "/dev/no-such-client",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        log(&inner).contains("key side chat on client /dev/no-such-client"),
        "{}",
        log(&inner)
    );
}

#[test]
fn an_upgrade_removes_the_old_popup_bindings() {
    let s = server!();
    // What the previous snippet bound (C-s is tmux-resurrect's save key).
    s.tmux(&["set", "-g", "@tmuxmate-bin", BIN]);
    s.tmux(&[
        "bind-key",
        "-T",
        "prefix",
        "M-s",
        "display-popup",
        "-E",
        "-w",
        "90%",
        "-h",
        "80%",
        "#{q:@tmuxmate-bin} snapshots --limit 50 | ${PAGER:-less}",
    ]);
    s.tmux(&[
        "bind-key",
        "-T",
        "prefix",
        "C-s",
        "display-popup",
        "-E",
        "-w",
        "80%",
        "-h",
        "80%",
        "#{q:@tmuxmate-bin} side run -t #{pane_id}",
    ]);
    load_snippet(&s);
    assert!(key_line(&s, "C-s").is_none());
    assert!(
        key_line(&s, "M-s")
            .unwrap()
            .contains("snapshots popup --client")
    );
    assert!(log(&s).contains("removed the old tmuxmate binding of prefix C-s"));
}

#[test]
fn dashboard_key_opens_every_agent_in_a_popup_and_enter_goes_to_one() {
    let inner = server!();
    let outer = server!();
    load_snippet(&inner);
    let x = inner.agent_pane_as("cli", "codex");
    let perm = inner.dir.join("perm.json");
    std::fs::write(
        &perm,
        serde_json::json!({"session_id": "x1", "hook_event_name": "PermissionRequest",
            "tool_name": "Bash", "tool_input": {"command": "make deploy"}})
        .to_string(),
    )
    .unwrap();
    let r = x.sh(&format!(
        "setsid sh -c '\"$0\" hook codex < \"$1\"; true' \"$TM\" '{}'",
        perm.display()
    ));
    assert_eq!(r.rc, 0, "{}", r.out);
    inner.tmux(&["select-window", "-t", "main:^"]);
    let pane = inner.attach_in(&outer, "main");
    let client = inner.tmux(&["list-clients", "-F", "#{client_name}"]);
    let client = client.trim().to_string();
    let shows = || inner.client_pane(&client);
    assert_ne!(shows(), x.pane);
    press(&outer, &pane, "M-d");
    let sc = wait_until("the dashboard popup", Duration::from_secs(20), || {
        let sc = screen(&outer, &pane);
        (popup_shown(&inner, &sc, " agents ") && sc.contains("codex cli")).then_some(sc)
    });
    assert!(sc.contains("needs-you"), "{sc}");
    assert!(sc.contains("permission: Bash: make deploy"), "{sc}");
    // Enter: that client goes to the agent's pane, and the popup closes.
    outer.tmux(&["send-keys", "-t", &pane, "Enter"]);
    wait_until(
        "the client on the agent's pane",
        Duration::from_secs(10),
        || (shows() == x.pane).then_some(()),
    );
    wait_until("the popup to close", Duration::from_secs(10), || {
        (!popup_shown(&inner, &screen(&outer, &pane), " agents ")).then_some(())
    });
}
