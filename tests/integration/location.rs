//! Location reading and per-turn injection against a real tmux server.

use crate::server;
use crate::util::contract::{TurnJson, WhereJson};
use crate::util::*;

#[test]
fn first_turn_injects_exact_text_and_second_is_silent() {
    let s = server!();
    let a = s.agent_pane("agent");
    let first = a.turn("A1");
    // Indexes as tmux numbers them (a user's base-index and pane-base-index).
    let idx = s.tmux(&["display", "-p", "-t", &a.pane, "#{window_index}"]);
    let pidx = s.tmux(&["display", "-p", "-t", &a.pane, "#{pane_index}"]);
    assert_eq!(
        first,
        format!(
            "tmux location (turn 1):\nsession main, window {} \"agent\", pane {} {}\nwindow active=0, pane active=1, layout {}\n",
            idx.trim(),
            pidx.trim(),
            a.pane,
            a.pane
        )
    );
    assert_eq!(
        a.turn("A1"),
        "",
        "unchanged second turn must inject nothing"
    );
    // A new process (restart) sees the durable ledger: still nothing.
    assert_eq!(a.turn("A1"), "");
    // Another agent in the same pane has its own ledger.
    assert!(a.turn("B2").starts_with("tmux location (turn 1):"));
}

#[test]
fn reinjects_on_rename_split_focus_move_but_not_resize() {
    let s = server!();
    let a = s.agent_pane("agent");
    assert!(!a.turn("x").is_empty());
    s.tmux(&["rename-window", "-t", &a.pane, "renamed"]);
    let t = a.turn("x");
    assert!(t.contains("\"renamed\""), "{t}");
    let other = s
        .tmux(&[
            "split-window",
            "-d",
            "-v",
            "-t",
            &a.pane,
            "-P",
            "-F",
            "#{pane_id}",
            "sh",
        ])
        .trim()
        .to_string();
    let t = a.turn("x");
    assert!(t.contains(&format!("layout [{},{}]", a.pane, other)), "{t}");
    assert_eq!(a.turn("x"), "");
    s.tmux(&["resize-window", "-t", &a.pane, "-x", "90", "-y", "30"]);
    s.tmux(&["resize-pane", "-t", &a.pane, "-y", "5"]);
    assert_eq!(a.turn("x"), "", "a resize must not re-inject");
    s.tmux(&["select-pane", "-t", &other]);
    let t = a.turn("x");
    assert!(t.contains("pane active=0"), "{t}");
    s.tmux(&["select-window", "-t", &a.pane]);
    let t = a.turn("x");
    assert!(t.contains("window active=1"), "{t}");
    // move-pane: put the agent pane beside the first window's pane.
    s.tmux(&["move-pane", "-h", "-s", &a.pane, "-t", "%0"]);
    let t = a.turn("x");
    assert!(t.contains("layout {%0,"), "{t}");
    s.tmux(&["break-pane", "-d", "-s", &a.pane]);
    let t = a.turn("x");
    assert!(t.contains(&format!("layout {}\n", a.pane)), "{t}");
}

#[test]
fn hostile_window_names_round_trip() {
    let s = server!();
    let a = s.agent_pane("w");
    for name in [
        "tab\there",
        "new\nline",
        "quo\"te's",
        "#{pane_id}x",
        "emoji 🚀 日本",
        "semi;colon",
    ] {
        let renamed = s.tmux_output(&["rename-window", "-t", &a.pane, name]);
        if !renamed.status.success() {
            // tmux 3.7 refuses names with control characters: such a name cannot exist.
            assert!(
                tmux_release() >= (3, 7) && name.chars().any(char::is_control),
                "{name:?}: {}",
                String::from_utf8_lossy(&renamed.stderr)
            );
            continue;
        }
        let stored = s.tmux(&["display", "-p", "-t", &a.pane, "#{window_name}"]);
        let stored = stored.strip_suffix('\n').unwrap();
        let r = a.sh("\"$TM\" where --json");
        assert_eq!(r.rc, 0, "{}", r.out);
        let w: WhereJson = serde_json::from_str(&r.out).unwrap();
        assert_eq!(w.window_name, stored, "name {name:?}");
        assert_eq!(w.pane_id, a.pane);
        let t = a.turn("names");
        let quoted = serde_json::to_string(stored).unwrap();
        assert!(t.contains(&quoted), "{name:?}: {t}");
        assert_eq!(
            t.lines().count(),
            3,
            "{name:?} broke the three-line shape: {t}"
        );
    }
}

#[test]
fn where_outside_any_pane_says_why() {
    let s = server!();
    let out = s.run(&["where"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not in a tmux pane"), "{err}");
}

#[test]
fn inherited_tmux_pane_from_another_terminal_reads_as_not_in_tmux() {
    let s = server!();
    let other = server!();
    let victim = s.agent_pane("victim");
    // A process in a pane of another server that inherited this server's TMUX/TMUX_PANE,
    // as VS Code's terminal does when launched from a tmux shell.
    let a = other.agent_pane("vscode");
    let sock = s.socket_path();
    let r = a.sh(&format!(
        "TMUX='{},1,0' TMUX_PANE='{}' \"$TM\" where",
        sock.display(),
        victim.pane
    ));
    assert_eq!(r.rc, 1, "{}", r.out);
    assert!(r.out.contains("not in a tmux pane"), "{}", r.out);
    let r = a.sh(&format!(
        "TMUX='{},1,0' TMUX_PANE='{}' \"$TM\" turn --agent inh",
        sock.display(),
        victim.pane
    ));
    assert_eq!(r.rc, 0);
    assert_eq!(r.out, "", "must never report the other pane's location");
}

#[test]
fn no_tmux_pane_env_and_no_tmux_env_still_found_by_tty() {
    let s = server!();
    let a = s.agent_pane("agent");
    let r = a.sh("unset TMUX_PANE; \"$TM\" where --json");
    assert_eq!(r.rc, 0, "{}", r.out);
    let w: WhereJson = serde_json::from_str(&r.out).unwrap();
    assert_eq!(w.pane_id, a.pane);
    let r = a.sh(&format!(
        "unset TMUX TMUX_PANE; \"$TM\" -L '{}' where --json",
        s.name
    ));
    assert_eq!(r.rc, 0, "{}", r.out);
    let w: WhereJson = serde_json::from_str(&r.out).unwrap();
    assert_eq!(w.pane_id, a.pane);
    assert!(!w.socket_path.is_empty());
    // A stale hint (another pane id) is checked, not believed.
    let r = a.sh("TMUX_PANE=%0 \"$TM\" where --json");
    let w: WhereJson = serde_json::from_str(&r.out).unwrap();
    assert_eq!(w.pane_id, a.pane);
}

#[test]
fn refresh_interval_floor_and_validation() {
    let s = server!();
    let a = s.agent_pane("agent");
    assert!(
        !a.sh("\"$TM\" turn --agent iv --refresh-interval-ms 600000")
            .out
            .is_empty()
    );
    s.tmux(&["rename-window", "-t", &a.pane, "changed"]);
    let r = a.sh("\"$TM\" turn --agent iv --refresh-interval-ms 600000 --json");
    let j: TurnJson = serde_json::from_str(&r.out).unwrap();
    assert!(
        j.items.is_empty(),
        "inside the interval nothing is injected"
    );
    assert_eq!(
        j.no_location.as_deref(),
        Some("inside the refresh interval")
    );
    assert_eq!(j.agent, "iv");
    assert_eq!(j.turn, 2);
    assert!(j.text.is_empty());
    // 0 = every changed turn.
    assert!(
        a.sh("\"$TM\" turn --agent iv --refresh-interval-ms 0")
            .out
            .contains("\"changed\"")
    );
    // Bad values are parse-time errors.
    for bad in ["-1", "abc", "1.5", "", "99999999999999999999999"] {
        let r = a.sh(&format!(
            "\"$TM\" turn --agent iv --refresh-interval-ms '{bad}'"
        ));
        assert_eq!(r.rc, 2, "{bad}: {}", r.out);
        assert!(r.out.contains("refresh interval"), "{bad}: {}", r.out);
    }
    // The tmux option sets the interval when no flag is given; a bad option is an error.
    s.tmux(&["set", "-g", "@tmuxmate-refresh-interval-ms", "600000"]);
    s.tmux(&["rename-window", "-t", &a.pane, "again"]);
    assert!(a.turn("opt").contains("\"again\""));
    s.tmux(&["rename-window", "-t", &a.pane, "again2"]);
    assert_eq!(a.turn("opt"), "", "option interval suppresses");
    s.tmux(&["set", "-g", "@tmuxmate-refresh-interval-ms", "soon"]);
    let r = a.sh("\"$TM\" turn --agent opt2");
    assert_eq!(r.rc, 1);
    assert!(r.out.contains("@tmuxmate-refresh-interval-ms"), "{}", r.out);
}

#[test]
fn twenty_concurrent_turns_inject_once() {
    let s = server!();
    let a = s.agent_pane("agent");
    let r = a.sh(
        "for i in $(seq 1 20); do \"$TM\" turn --agent conc --turn 1 > \"$0.$i\" & done; wait; cat \"$0\".*",
    );
    assert_eq!(
        r.out.matches("tmux location (turn 1):").count(),
        1,
        "{}",
        r.out
    );
}

#[test]
fn truncated_ledger_line_counts_as_no_prior_reading() {
    let s = server!();
    let a = s.agent_pane("agent");
    assert!(!a.turn("trunc").is_empty());
    let ledger = s.state.join("agents/trunc.jsonl");
    let mut text = std::fs::read_to_string(&ledger).unwrap();
    text.push_str("{\"t\":\"inject\",\"state\":\"half");
    std::fs::write(&ledger, text).unwrap();
    assert!(
        !a.turn("trunc").is_empty(),
        "corrupt tail = no prior reading"
    );
    assert_eq!(a.turn("trunc"), "", "and the ledger is usable again");
}

#[test]
fn ledger_is_bounded() {
    let s = server!();
    let a = s.agent_pane("agent");
    a.sh("i=0; while [ $i -lt 600 ]; do \"$TM\" turn --agent big >/dev/null; i=$((i+1)); done");
    let len = std::fs::metadata(s.state.join("agents/big.jsonl"))
        .unwrap()
        .len();
    assert!(len < 70 * 1024, "ledger grew to {len} bytes");
    assert_eq!(a.turn("big"), "");
}

#[test]
fn tmux_missing_and_server_dead_are_clear() {
    let s = server!();
    let out = s
        .tmuxmate()
        .env("TMUXMATE_TMUX", "/nonexistent/tmux")
        .args(["where"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tmux is not installed"));
    s.tmux(&["kill-server"]);
    let out = s.run(&["turn", "--agent", "dead", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: TurnJson = serde_json::from_slice(&out.stdout).unwrap();
    assert!(j.items.is_empty());
    assert!(j.no_location.unwrap().contains("not in a tmux pane"));
}

#[test]
fn snippet_loads_into_a_real_server() {
    let s = server!();
    let out = s.run(&["init", "tmux"]);
    assert!(out.status.success());
    let path = s.dir.join("snippet.conf");
    std::fs::write(&path, &out.stdout).unwrap();
    let p = path.to_str().unwrap();
    s.tmux(&["set", "-g", "@tmuxmate-refresh-interval-ms", "250"]);
    s.tmux(&["source-file", "-n", p]);
    s.tmux(&["source-file", p]);
    assert_eq!(
        s.tmux(&["show", "-gv", "@tmuxmate-refresh-interval-ms"])
            .trim(),
        "250"
    );
    assert_eq!(s.tmux(&["show", "-gv", "@tmuxmate-bin"]).trim(), BIN);
    // Loading twice is idempotent: hooks at a fixed index, the status segment once.
    s.tmux(&["source-file", p]);
    let hooks = s.tmux(&["show-hooks", "-g"]);
    assert_eq!(hooks.matches("client-attached[42]").count(), 1, "{hooks}");
    assert!(hooks.contains("session-created[42]"), "{hooks}");
    let right = s.tmux(&["show", "-gv", "status-right"]);
    assert_eq!(
        right.matches("@tmuxmate-watch-status").count(),
        2,
        "{right}"
    );
    assert!(right.matches("@tmuxmate-status").count() >= 2, "{right}");
    let keys = s.tmux(&["list-keys", "-T", "prefix"]);
    // Loading binds through `init bind` (run-shell); pressing them: tests/integration/bindings.rs.
    assert!(
        keys.contains("M-s") && keys.contains("snapshots popup --client #{q:client_name}"),
        "{keys}"
    );
    assert!(keys.contains("side open -t #{pane_id} --client"), "{keys}");
    assert!(!keys.contains("C-s"), "tmux-resurrect's save key: {keys}");
    // Room for what was appended, once.
    assert_eq!(
        s.tmux(&["show", "-gv", "status-right-length"]).trim(),
        "200"
    );
    // The reattach hook really runs our binary: a client-attached hook fired by hand.
    s.tmux(&["set-hook", "-R", "client-attached"]);
}

#[test]
fn demo_runs_on_its_own_server() {
    let s = server!();
    let out = s.tmuxmate().arg("demo").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("tmux location (turn 1):"), "{text}");
    assert!(text.contains("(nothing injected"), "{text}");
    assert!(text.contains("layout {%0,%1}"), "{text}");
    assert!(text.contains("hello from the agent; $(not run)"), "{text}");
    assert_eq!(text.matches("finished (exit 0)").count(), 1, "{text}");
    assert!(text.contains("all 42 tests passed"), "{text}");
}

#[test]
fn a_dead_pane_holding_the_same_tty_is_never_reported() {
    let s = server!();
    s.tmux(&["set", "-g", "remain-on-exit", "on"]);
    let dead = s.window("dead", "true");
    wait_until(
        "the pane to die",
        std::time::Duration::from_secs(10),
        || {
            (s.tmux(&["display", "-p", "-t", &dead, "#{pane_dead}"])
                .trim()
                == "1")
                .then_some(())
        },
    );
    s.tmux(&["set", "-g", "remain-on-exit", "off"]);
    let a = s.agent_pane("alive");
    let dead_tty = s.tmux(&["display", "-p", "-t", &dead, "#{pane_tty}"]);
    let live_tty = s.tmux(&["display", "-p", "-t", &a.pane, "#{pane_tty}"]);
    // The kernel usually hands the freed pty to the new pane; either way the answer is ours.
    eprintln!("dead {dead_tty:?} live {live_tty:?}");
    for hint in [dead.as_str(), a.pane.as_str()] {
        let r = a.sh(&format!("TMUX_PANE={hint} \"$TM\" where"));
        assert_eq!(r.rc, 0, "{}", r.out);
        assert!(
            r.out.contains(&format!(" {}\n", a.pane)),
            "hint {hint}: {}",
            r.out
        );
    }
}

#[test]
fn non_utf8_locale_still_reads_hostile_names() {
    let s = server!();
    let a = s.agent_pane("é 日本 🚀");
    // Force the tmux client path, in the C locale.
    let o = s
        .tmuxmate()
        .env("TMUXMATE_TMUX", "tmux")
        .env("LANG", "C")
        .env("LC_ALL", "C")
        .args(["list", "--json"])
        .output()
        .unwrap();
    let text = ok(&o);
    assert!(text.contains("é 日本 🚀"), "{text}");
    let r = a.sh("LANG=C LC_ALL=C TMUXMATE_TMUX=tmux \"$TM\" where --json");
    assert!(r.out.contains("é 日本 🚀"), "{}", r.out);
}

/// The version gate is the tmux wrapper's, so every command meets it, not only the few
/// handlers that used to ask: a tmux 2.9 is refused by a listing, a send and a capture
/// alike, with exit 1, the version named, and nothing typed into the pane.
#[test]
fn a_too_old_tmux_is_refused_by_every_command() {
    let s = server!();
    let p = s.window("old", "cat");
    let panes = s.tmux(&["list-panes", "-a"]).lines().count();
    let old = s.dir.join("old-tmux");
    std::fs::write(
        &old,
        "#!/bin/sh\n[ \"$1\" = -V ] && { echo 'tmux 2.9'; exit 0; }\nexec tmux \"$@\"\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", old.to_str().unwrap()])
        .status()
        .unwrap();
    for args in [
        vec!["list"],
        vec!["send", "-t", p.as_str(), "--", "NEVER-TYPED"],
        vec!["capture", "-t", p.as_str()],
        vec!["split", "-t", p.as_str()],
    ] {
        let out = s
            .tmuxmate()
            .env("TMUXMATE_TMUX", &old)
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("2.9") && err.contains("3.2"),
            "{args:?}: {err}"
        );
    }
    let screen = s.tmux(&["capture-pane", "-p", "-t", &p]);
    assert!(!screen.contains("NEVER-TYPED"), "{screen}");
    assert_eq!(
        s.tmux(&["list-panes", "-a"]).lines().count(),
        panes,
        "split made nothing"
    );
}
