//! `tmuxmate kill` and the approval policy against real tmux servers.
//!
//! The menu tests need a real attached client without a terminal: a client of the server
//! under test runs inside a pane of a second private server, so its screen (and the
//! approval menu on it) is readable with `capture-pane`, and keys reach it by `send-keys`.

use std::process::Output;
use std::time::{Duration, Instant};

use crate::server;
use crate::util::contract::KillJson;
use crate::util::*;

const TITLE: &str = "tmuxmate: approve?";

fn text(o: &Output) -> (i32, String, String) {
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn panes(s: &Server) -> Vec<String> {
    let mut v: Vec<String> = s
        .tmux(&["list-panes", "-a", "-F", "#{pane_id}"])
        .lines()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

fn windows(s: &Server) -> String {
    s.tmux(&["list-windows", "-a", "-F", "#{window_id}"])
}

/// A plain extra window in session `main`: (window id, pane id).
fn victim_window(s: &Server, name: &str) -> (String, String) {
    let out = s.tmux(&[
        "new-window",
        "-d",
        "-t",
        "main:",
        "-n",
        name,
        "-P",
        "-F",
        "#{window_id} #{pane_id}",
        "sh",
    ]);
    let (w, p) = out.trim().split_once(' ').unwrap();
    (w.to_string(), p.to_string())
}

fn set(s: &Server, opt: &str, v: &str) {
    s.tmux(&["set-option", "-g", opt, v]);
}

#[test]
fn kill_without_confirm_is_refused_and_kills_nothing() {
    let s = server!();
    let (w, p) = victim_window(&s, "v");
    let before = panes(&s);
    for (scope, t) in [
        ("pane", Some(p.as_str())),
        ("window", Some(w.as_str())),
        ("session", Some("$0")),
        ("server", None),
    ] {
        let mut args = vec!["kill", scope];
        if let Some(t) = t {
            args.extend(["-t", t]);
        }
        let (rc, out, err) = text(&s.run(&args));
        assert_eq!(rc, 1, "{scope}: {err}");
        assert_eq!(out, "");
        assert!(err.contains("without --confirm"), "{err}");
        assert!(err.contains("Add --confirm"), "{err}");
        assert!(err.contains("nothing was killed"), "{err}");
    }
    assert_eq!(panes(&s), before);
}

#[test]
fn kill_pane_with_confirm_kills_exactly_that_pane() {
    let s = server!();
    let (_, p) = victim_window(&s, "v");
    let keep = s
        .tmux(&[
            "split-window",
            "-d",
            "-t",
            &p,
            "-P",
            "-F",
            "#{pane_id}",
            "sh",
        ])
        .trim()
        .to_string();
    let addr = s
        .tmux(&[
            "display",
            "-p",
            "-t",
            &p,
            "#{session_name}:#{window_index}.#{pane_index}",
        ])
        .trim()
        .to_string();
    let (rc, out, err) = text(&s.run(&["kill", "pane", "-t", &p, "--confirm", "--json"]));
    assert_eq!(rc, 0, "{err}");
    let j: KillJson = serde_json::from_str(&out).unwrap();
    assert_eq!(
        j,
        KillJson {
            scope: "pane".into(),
            target: Some(addr),
            pane_id: Some(p.clone()),
            window_id: None,
            session_id: None,
            killed: true
        }
    );
    let now = panes(&s);
    assert!(!now.contains(&p), "{now:?}");
    assert!(now.contains(&keep), "{now:?}");
    // Human output names what was killed.
    let (rc, out, err) = text(&s.run(&["kill", "pane", "-t", &keep, "--confirm"]));
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.starts_with(&format!("killed: kill pane {keep}")),
        "{out}"
    );
    // A pane that is gone is an error, not a fallback to another pane.
    let before = panes(&s);
    let (rc, _, err) = text(&s.run(&["kill", "pane", "-t", &p, "--confirm"]));
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("does not exist"), "{err}");
    assert_eq!(panes(&s), before);
}

#[test]
fn invalid_or_missing_targets_are_usage_errors() {
    let s = server!();
    victim_window(&s, "v");
    let before = panes(&s);
    for bad in ["codex;echo x", "../x", ""] {
        for scope in ["pane", "window", "session"] {
            let (rc, _, err) = text(&s.run(&["kill", scope, "-t", bad, "--confirm"]));
            assert_eq!(rc, 2, "{scope} {bad:?}: {err}");
            assert!(err.contains("target"), "{err}");
            assert!(err.contains("tmuxmate list"), "{err}");
            assert!(err.contains("Nothing was killed"), "{err}");
        }
    }
    let (rc, _, err) = text(&s.run(&["kill", "window", "--confirm"]));
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("needs -t"), "{err}");
    let (rc, _, err) = text(&s.run(&["kill", "server", "-t", "%0", "--confirm"]));
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("takes no -t"), "{err}");
    assert_eq!(panes(&s), before);
}

#[test]
fn self_kill_is_refused_from_inside_the_agent_pane() {
    let s = server!();
    let a = s.agent_pane("agent");
    let win = s
        .tmux(&["display", "-p", "-t", &a.pane, "#{window_id}"])
        .trim()
        .to_string();
    let sess = s
        .tmux(&["display", "-p", "-t", &a.pane, "#{session_id}"])
        .trim()
        .to_string();
    // Approval would refuse window/session/server too; make sure the guard is what speaks.
    set(&s, "@tmuxmate-approve-command", "exit 0");
    let before = panes(&s);
    for (scope, t, says) in [
        ("pane", a.pane.as_str(), "is the pane this command runs in"),
        ("window", win.as_str(), "holds pane"),
        ("session", sess.as_str(), "holds pane"),
    ] {
        let r = a.sh(&format!("\"$TM\" kill {scope} -t '{t}' --confirm"));
        assert_eq!(r.rc, 1, "{scope}: {}", r.out);
        assert!(r.out.contains(says), "{}", r.out);
        assert!(r.out.contains("never kills its caller"), "{}", r.out);
        assert!(r.out.contains("Run it from a pane outside"), "{}", r.out);
    }
    let r = a.sh("\"$TM\" kill server --confirm");
    assert_eq!(r.rc, 1, "{}", r.out);
    assert!(r.out.contains("this tmux server holds pane"), "{}", r.out);
    assert_eq!(panes(&s), before);
    // Another pane is fine from the same caller.
    let (_, other) = victim_window(&s, "other");
    let r = a.sh(&format!("\"$TM\" kill pane -t '{other}' --confirm --json"));
    assert_eq!(r.rc, 0, "{}", r.out);
    assert!(!panes(&s).contains(&other));
}

#[test]
fn kill_window_fails_closed_without_client_or_approver() {
    let s = server!();
    let (w, _) = victim_window(&s, "v");
    let (rc, out, err) = text(&s.run(&["kill", "window", "-t", &w, "--confirm"]));
    assert_eq!(rc, 1, "{err}");
    assert_eq!(out, "");
    assert!(
        err.contains("no tmux client is attached to session $0 to show the approval menu"),
        "{err}"
    );
    assert!(
        err.contains("@tmuxmate-approve-command is not set"),
        "{err}"
    );
    assert!(err.contains("decided by fail-closed"), "{err}");
    assert!(err.contains("`kill-window`"), "{err}");
    assert!(windows(&s).contains(&w));
    // The same for the server scope: no client anywhere.
    let (rc, _, err) = text(&s.run(&["kill", "server", "--confirm"]));
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("attached to this tmux server"), "{err}");
    assert!(windows(&s).contains(&w));
    // Emptying the policy turns approval off for everything.
    set(&s, "@tmuxmate-approval", "");
    let (rc, _, err) = text(&s.run(&["kill", "window", "-t", &w, "--confirm"]));
    assert_eq!(rc, 0, "{err}");
    assert!(!windows(&s).contains(&w));
}

#[test]
fn policy_globs_can_require_approval_for_panes() {
    let s = server!();
    let (_, p) = victim_window(&s, "v");
    set(&s, "@tmuxmate-approval", "send:* kill-p?ne");
    let (rc, _, err) = text(&s.run(&["kill", "pane", "-t", &p, "--confirm"]));
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("`kill-p?ne`"), "{err}");
    assert!(panes(&s).contains(&p));
}

#[test]
fn approve_command_decides_with_data_only_in_argv_and_env() {
    let s = server!();
    let (w, p) = victim_window(&s, "v");
    let hostile = "x';touch PWNED;'\"$(touch PWNED2)\"";
    s.tmux(&["rename-window", "-t", &w, hostile]);
    let rec = s.dir.join("approver.txt");
    set(
        &s,
        "@tmuxmate-approve-command",
        &format!(
            "printf '%s\\n' \"$1\" \"$2\" \"$TMUXMATE_OP\" \"$TMUXMATE_DESCRIPTION\" > '{}'; exit 1",
            rec.display()
        ),
    );
    let (rc, _, err) = text(&s.run(&["kill", "window", "-t", &w, "--confirm"]));
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("the approver exited 1"), "{err}");
    assert!(
        err.contains("decided by @tmuxmate-approve-command"),
        "{err}"
    );
    assert!(windows(&s).contains(&w));
    let got = std::fs::read_to_string(&rec).unwrap();
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(lines[0], "kill-window");
    assert_eq!(lines[2], "kill-window");
    assert!(lines[1].starts_with(&format!("kill window {w} ")), "{got}");
    assert_eq!(lines[1], lines[3]);
    assert!(lines[1].contains("PWNED"), "{got}");
    for cwd in [&s.home, &s.dir] {
        assert!(!cwd.join("PWNED").exists() && !cwd.join("PWNED2").exists());
    }

    set(&s, "@tmuxmate-approve-command", "echo denied >&2; exit 3");
    let (rc, _, err) = text(&s.run(&["kill", "window", "-t", &w, "--confirm"]));
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("exited 3 (it said: denied)"), "{err}");

    // No answer in time is No, and the approver (and what it started) is killed.
    set(&s, "@tmuxmate-approve-command", "sleep 30; exit 0");
    set(&s, "@tmuxmate-approval-timeout-s", "1");
    let t0 = Instant::now();
    let (rc, _, err) = text(&s.run(&["kill", "window", "-t", &w, "--confirm"]));
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("no answer within 1 s"), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert!(windows(&s).contains(&w));

    set(&s, "@tmuxmate-approve-command", "test \"$1\" = kill-window");
    let addr = s
        .tmux(&["display", "-p", "-t", &w, "#{session_name}:#{window_index}"])
        .trim()
        .to_string();
    let (rc, out, err) = text(&s.run(&["kill", "window", "-t", &w, "--confirm", "--json"]));
    assert_eq!(rc, 0, "{err}");
    let j: KillJson = serde_json::from_str(&out).unwrap();
    assert_eq!(j.scope, "window");
    assert_eq!(j.window_id.as_deref(), Some(w.as_str()));
    assert_eq!(j.target.as_deref(), Some(addr.as_str()));
    assert_eq!((j.pane_id, j.session_id), (None, None));
    assert!(j.killed);
    assert!(!windows(&s).contains(&w));
    assert!(!panes(&s).contains(&p));
}

#[test]
fn kill_session_and_server_with_approver() {
    let s = server!();
    s.detached_session("other", "sh");
    let sid = s
        .tmux(&["display", "-p", "-t", "=other:", "#{session_id}"])
        .trim()
        .to_string();
    set(&s, "@tmuxmate-approve-command", "exit 0");
    let (rc, out, err) = text(&s.run(&["kill", "session", "-t", "=other", "--confirm", "--json"]));
    assert_eq!(rc, 0, "{err}");
    let j: KillJson = serde_json::from_str(&out).unwrap();
    assert_eq!(j.session_id.as_deref(), Some(sid.as_str()));
    assert_eq!(j.target.as_deref(), Some("other"));
    let sessions = s.tmux(&["list-sessions", "-F", "#{session_name}"]);
    assert_eq!(sessions.trim(), "main");

    let (rc, out, err) = text(&s.run(&["kill", "server", "--confirm", "--json"]));
    assert_eq!(rc, 0, "{err}");
    let j: KillJson = serde_json::from_str(&out).unwrap();
    assert_eq!(
        j,
        KillJson {
            scope: "server".into(),
            target: None,
            pane_id: None,
            window_id: None,
            session_id: None,
            killed: true
        }
    );
    assert!(!s.tmux_output(&["list-sessions"]).status.success());
}

/// A client attached to `inner`'s session `main`, living in a pane of `outer`.
fn attach_from(outer: &Server, inner: &Server) -> String {
    inner.attach_in(outer, "main")
}

fn screen(outer: &Server, pane: &str) -> String {
    outer.tmux(&["capture-pane", "-p", "-t", pane])
}

/// Run `kill window` on `inner` while `answer` plays the person at the menu; returns the
/// kill's output and how long it took.
fn kill_with_menu(
    inner: &Server,
    outer: &Server,
    pane: &str,
    window: &str,
    answer: Option<&str>,
) -> (i32, String, String, Duration) {
    std::thread::scope(|sc| {
        let t0 = Instant::now();
        let h = sc.spawn(|| inner.run(&["kill", "window", "-t", window, "--confirm"]));
        if let Some(key) = answer {
            let shown = wait_until("the approval menu", Duration::from_secs(20), || {
                let sc = screen(outer, pane);
                sc.contains(TITLE).then_some(sc)
            });
            assert!(
                shown.contains(&format!("kill window {window} \"victim")),
                "{shown}"
            );
            assert!(shown.contains("No") && shown.contains("Yes"), "{shown}");
            outer.tmux(&["send-keys", "-t", pane, key]);
        }
        let (rc, out, err) = text(&h.join().unwrap());
        (rc, out, err, t0.elapsed())
    })
}

fn no_answer_left(inner: &Server) {
    let opts = inner.tmux(&["show-options", "-g"]);
    assert!(!opts.contains("@tmuxmate-answer-"), "{opts}");
}

#[test]
fn menu_yes_approves() {
    let inner = server!();
    let outer = server!();
    set(&inner, "@tmuxmate-approval-timeout-s", "30");
    let (w, _) = victim_window(&inner, "victim");
    // The menu's text is format-expanded and style-drawn: `#{...}` and `#[...]` in a
    // name must show as stored (rename-window itself expands `##{` to `#{`).
    // A `#(...)` that reached format expansion would run as a shell job.
    let pwned = inner.dir.join("PWNED");
    let name = format!("victim##{{pane_id}}##[fg=red]##(touch {})", pwned.display());
    inner.tmux(&["rename-window", "-t", &w, &name]);
    let stored = inner.tmux(&["display", "-p", "-t", &w, "#{window_name}"]);
    let stored = stored.trim_end_matches('\n').to_string();
    assert!(
        stored.contains("#{pane_id}") && stored.contains("#(touch"),
        "{stored}"
    );
    let pane = attach_from(&outer, &inner);
    // A long temp path may be cut to fit the client: the text up to it is enough.
    let expect = format!(
        "kill window {w} \"{}",
        &stored[..stored.find('/').unwrap_or(stored.len())]
    );
    let (rc, out, err) = std::thread::scope(|sc| {
        let h = sc.spawn(|| inner.run(&["kill", "window", "-t", &w, "--confirm"]));
        let shown = wait_until("the approval menu", Duration::from_secs(20), || {
            let sc = screen(&outer, &pane);
            sc.contains(TITLE).then_some(sc)
        });
        assert!(shown.contains(&expect), "{shown}");
        outer.tmux(&["send-keys", "-t", &pane, "y"]);
        text(&h.join().unwrap())
    });
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("approved on the tmux menu on client"), "{out}");
    assert!(!windows(&inner).contains(&w));
    assert!(!pwned.exists(), "the description ran as a format job");
    no_answer_left(&inner);
    wait_until("the menu to close", Duration::from_secs(10), || {
        (!screen(&outer, &pane).contains(TITLE)).then_some(())
    });
}

#[test]
fn menu_no_and_escape_refuse() {
    let inner = server!();
    let outer = server!();
    set(&inner, "@tmuxmate-approval-timeout-s", "30");
    let (w, _) = victim_window(&inner, "victim");
    let pane = attach_from(&outer, &inner);

    let (rc, _, err, took) = kill_with_menu(&inner, &outer, &pane, &w, Some("n"));
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("No was chosen on the menu on client"), "{err}");
    assert!(err.contains("decided by the tmux approval menu"), "{err}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert!(windows(&inner).contains(&w));
    no_answer_left(&inner);

    // Enter on the default item is No as well.
    let (rc, _, err, _) = kill_with_menu(&inner, &outer, &pane, &w, Some("Enter"));
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("No was chosen"), "{err}");

    // Escape closes the menu without running an item: noticed at once, not at the timeout.
    let (rc, _, err, took) = kill_with_menu(&inner, &outer, &pane, &w, Some("Escape"));
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("closed without a choice"), "{err}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert!(windows(&inner).contains(&w));
    no_answer_left(&inner);
}

#[test]
fn menu_timeout_refuses_and_closes_the_menu() {
    let inner = server!();
    let outer = server!();
    set(&inner, "@tmuxmate-approval-timeout-s", "2");
    let (w, _) = victim_window(&inner, "victim");
    let pane = attach_from(&outer, &inner);
    std::thread::scope(|sc| {
        let h = sc.spawn(|| inner.run(&["kill", "window", "-t", &w, "--confirm"]));
        wait_until("the approval menu", Duration::from_secs(20), || {
            screen(&outer, &pane).contains(TITLE).then_some(())
        });
        let (rc, _, err) = text(&h.join().unwrap());
        assert_eq!(rc, 1, "{err}");
        assert!(err.contains("no answer on the menu on client"), "{err}");
        assert!(err.contains("within 2 s"), "{err}");
    });
    wait_until("the menu to be closed", Duration::from_secs(10), || {
        (!screen(&outer, &pane).contains(TITLE)).then_some(())
    });
    assert!(windows(&inner).contains(&w));
    no_answer_left(&inner);
    // The client is still usable: a later approval is shown and answered.
    set(&inner, "@tmuxmate-approval-timeout-s", "30");
    let (rc, _, err, _) = kill_with_menu(&inner, &outer, &pane, &w, Some("y"));
    assert_eq!(rc, 0, "{err}");
    assert!(!windows(&inner).contains(&w));
}

#[test]
fn menu_is_shown_only_to_clients_of_the_affected_session() {
    let inner = server!();
    let outer = server!();
    inner.detached_session("elsewhere", "sh");
    let w = inner
        .tmux(&[
            "new-window",
            "-d",
            "-t",
            "=elsewhere:",
            "-P",
            "-F",
            "#{window_id}",
            "sh",
        ])
        .trim()
        .to_string();
    let pane = attach_from(&outer, &inner);
    let (rc, _, err) = text(&inner.run(&["kill", "window", "-t", &w, "--confirm"]));
    assert_eq!(rc, 1, "{err}");
    assert!(
        err.contains("no tmux client is attached to session $1"),
        "{err}"
    );
    assert!(!screen(&outer, &pane).contains(TITLE));
    assert!(windows(&inner).contains(&w));
}
