//! The command line as a careful tool: a mistyped flag is an error, never text; `--json`
//! errors are one object with the same exit code; messages are for people; a command that
//! fails after creating something removes it; every per-turn item fits the budget.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::server;
use crate::util::*;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The one JSON error object a `--json` failure prints on stdout.
fn json_error(o: &Output) -> serde_json::Value {
    let out = stdout(o);
    let v: serde_json::Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}): {out:?}"));
    assert!(v["error"]["kind"].is_string(), "{v}");
    assert!(v["error"]["message"].is_string(), "{v}");
    assert!(v["error"].get("hint").is_some(), "{v}");
    v
}

fn with_stdin(mut c: Command, input: &[u8]) -> Output {
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// `#{window_id}` of every window on the server, sorted.
fn windows(s: &Server) -> Vec<String> {
    let mut v: Vec<String> = s
        .tmux(&["list-windows", "-a", "-F", "#{window_id}"])
        .lines()
        .map(String::from)
        .collect();
    v.sort();
    v
}

fn panes(s: &Server) -> Vec<String> {
    let mut v: Vec<String> = s
        .tmux(&["list-panes", "-a", "-F", "#{pane_id}"])
        .lines()
        .map(String::from)
        .collect();
    v.sort();
    v
}

fn sessions(s: &Server) -> Vec<String> {
    s.tmux(&["list-sessions", "-F", "#{session_name}"])
        .lines()
        .map(String::from)
        .collect()
}

/// A directory holding one executable shell script named `name`; returns PATH with it first.
fn fake_cli(s: &Server, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = s.dir.join(format!("bin-{name}"));
    std::fs::create_dir_all(&bin).unwrap();
    let p = bin.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap())
}

#[test]
fn a_mistyped_flag_is_a_usage_error_and_nothing_is_typed() {
    let s = server!();
    let rec = s.recorder_pane("rec");
    let p = rec.pane.as_str();
    for (args, bad) in [
        (vec!["send", "-t", p, "--entr"], "--entr"),
        (vec!["send", "-t", p, "hello", "--entr"], "--entr"),
        (vec!["send", "-t", p, "-5"], "-5"),
        (vec!["paste", "-t", p, "--eneter"], "--eneter"),
        (vec!["paste", "-t", p, "--eneter", "hi"], "--eneter"),
        (vec!["side", "report", "-t", p, "--jsn"], "--jsn"),
    ] {
        let o = s.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("'{bad}'")),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // Text that starts with `-` goes after `--`, and is typed exactly.
    ok(s.run(&["send", "-t", p, "--", "--entr"]));
    rec.expect(b"--entr");
    // No side-chat note was queued by the refused `side report`.
    let ledgers = std::fs::read_dir(s.state.join("agents"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(ledgers, 0, "a refused report queued nothing");
}

#[test]
fn keys_take_options_anywhere_and_send_and_paste_read_stdin_and_files() {
    let s = server!();
    let rec = s.recorder_pane("rec");
    let p = rec.pane.as_str();
    let out = ok(s.run(&["keys", "-t", p, "Enter", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["keys"][0], "Enter");
    rec.expect(b"\r");
    // send -: one line from stdin, its trailing newline dropped.
    let mut c = s.tmuxmate();
    c.args(["send", "-t", p, "-"]);
    ok(with_stdin(c, b"from stdin\n"));
    rec.expect(b"\rfrom stdin");
    let f = s.dir.join("line.txt");
    std::fs::write(&f, "from file\n").unwrap();
    ok(s.run(&["send", "-t", p, "--file", f.to_str().unwrap()]));
    rec.expect(b"\rfrom stdinfrom file");
    // A file of two lines is refused like any multi-line text: nothing typed.
    std::fs::write(&f, "a\nb\n").unwrap();
    let o = s.run(&["send", "-t", p, "--file", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // paste --file - is stdin.
    let mut c = s.tmuxmate();
    c.args(["paste", "-t", p, "--file", "-"]);
    ok(with_stdin(c, b"x\ny"));
    rec.expect(b"\rfrom stdinfrom file\x1b[200~x\ny\x1b[201~");
    // Nothing to send at all is a usage error.
    let o = s.run(&["send", "-t", p]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nothing to send"), "{}", stderr(&o));
}

#[test]
fn json_errors_are_one_object_with_the_same_exit_code() {
    let s = server!();
    let rec = s.recorder_pane("rec");
    // A usage error from the parser.
    let o = s.run(&["send", "-t", &rec.pane, "--entr", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    let v = json_error(&o);
    assert_eq!(v["error"]["kind"], "usage");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("--entr"),
        "{v}"
    );
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    // A usage error from a handler.
    let o = s.run(&["keys", "-t", &rec.pane, "hello", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(json_error(&o)["error"]["kind"], "usage");
    // A runtime failure: a target that does not exist.
    let o = s.run(&["capture", "-t", "%999", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let v = json_error(&o);
    assert!(
        v["error"]["message"].as_str().unwrap().contains("%999"),
        "{v}"
    );
    // `--json` after `--` is text, not our flag: the error is for people, on stderr.
    let o = s.run(&["send", "-t", "%999", "--", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).is_empty() && stderr(&o).starts_with("tmuxmate: "));
    // Help is an answer, not an error.
    let o = s.run(&["send", "--help", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("Usage"));
    rec.expect(b"");
}

#[test]
fn tmux_errors_name_the_socket_and_keep_the_argv_for_the_log_and_verbose() {
    let s = server!();
    let sock = format!("{}-absent", s.name);
    let mut c = Command::new(BIN);
    s.env(&mut c);
    c.args(["-L", &sock, "list", "--json"]).stdin(Stdio::null());
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let v = json_error(&o);
    assert_eq!(v["error"]["kind"], "no-server");
    let hint = v["error"]["hint"].as_str().unwrap();
    assert!(
        hint.contains(&format!("`tmux -L {sock} new-session`")),
        "{hint}"
    );
    // People get one line without the argv; --verbose adds it; the log has it.
    let mut c = Command::new(BIN);
    s.env(&mut c);
    c.args(["-L", &sock, "list"]).stdin(Stdio::null());
    let o = c.output().unwrap();
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(!e.contains("argv") && !e.contains("list-panes"), "{e}");
    assert!(e.contains(&format!("tmux -L {sock} new-session")), "{e}");
    let mut c = Command::new(BIN);
    s.env(&mut c);
    c.args(["-L", &sock, "--verbose", "list"])
        .stdin(Stdio::null());
    let e = stderr(&c.output().unwrap());
    assert!(e.contains("argv: tmux"), "{e}");
    let log = std::fs::read_to_string(s.state.join("log")).unwrap();
    assert!(log.contains("argv: tmux"), "{log}");
}

#[test]
fn a_missing_program_is_refused_before_a_pane_exists() {
    let s = server!();
    let before = (windows(&s), panes(&s));
    // main's first pane by id: `main:0` is no window under a user's base-index 1.
    let main = s.tmux(&["display", "-p", "-t", "%0", "#{pane_id}"]);
    for args in [
        vec!["split", "--", "no-such-program-xyz"],
        vec![
            "split",
            "-t",
            main.trim(),
            "--",
            "no-such-program-xyz",
            "arg",
        ],
        vec!["new-window", "--", "no-such-program-xyz"],
        vec!["split", "--", "/nonexistent/prog"],
    ] {
        let o = s.run(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains("command not found"), "{e}");
        assert!(e.contains("no-such-program-xyz") || e.contains("/nonexistent/prog"));
        let o = s.run(&[&args[..1], &["--json"], &args[1..]].concat());
        assert_eq!(json_error(&o)["error"]["kind"], "command-not-found");
    }
    assert_eq!((windows(&s), panes(&s)), before, "nothing was created");
    // A program that exists still works.
    let out = ok(s.run(&["split", "--", "sleep", "30"]));
    assert!(out.starts_with('%'), "{out}");
}

#[test]
fn where_without_a_terminal_does_not_blame_codex() {
    let s = server!();
    // The test runner (not a launcher, maybe without a tty) is the caller here.
    let mut c = Command::new("setsid");
    s.env(&mut c);
    c.args([BIN, "-L", &s.name, "where"]).stdin(Stdio::null());
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("not in a tmux pane"), "{e}");
    assert!(!e.contains("Codex") && !e.contains("no-daemon"), "{e}");
}

#[test]
fn run_without_t_leaves_no_window_unless_keep() {
    let s = server!();
    let before = windows(&s);
    for _ in 0..3 {
        let v: serde_json::Value =
            serde_json::from_str(&ok(s.run(&["run", "--json", "--", "echo", "hi"]))).unwrap();
        assert_eq!(v["text"], "hi");
        assert_eq!(v["kept"], false);
    }
    assert_eq!(ok(s.run(&["run", "--", "true"])), "[exit 0]\n");
    wait_until("the run windows to go", Duration::from_secs(10), || {
        (windows(&s) == before).then_some(())
    });
    let v: serde_json::Value =
        serde_json::from_str(&ok(s.run(&["run", "--json", "--keep", "--", "true"]))).unwrap();
    assert_eq!(v["kept"], true);
    assert_eq!(windows(&s).len(), before.len() + 1);
    let o = s.run(&["run", "-t", "%0", "--keep", "--", "true"]);
    assert_eq!(o.status.code(), Some(2), "--keep is for a pane of our own");
}

/// `run` does not wait for its pane's removal, yet the next call already sees
/// it gone; and the options it reads in its first round trip (`control::preflight`: the
/// budget, the snapshot switch, the own session) still take effect.
#[test]
fn run_removal_is_seen_by_the_next_call_and_its_options_apply() {
    let s = server!();
    let before = windows(&s);
    for _ in 0..5 {
        let v: serde_json::Value =
            serde_json::from_str(&ok(s.run(&["run", "--json", "--", "true"]))).unwrap();
        let pane = v["paneId"].as_str().unwrap().to_string();
        let panes = s.tmux(&["list-panes", "-a", "-F", "#{pane_id}"]);
        assert!(
            !panes.lines().any(|p| p == pane),
            "{pane} still there: {panes}"
        );
        assert_eq!(windows(&s), before);
    }
    s.tmux(&["set", "-g", "@tmuxmate-capture-max-bytes", "100"]);
    let v: serde_json::Value = serde_json::from_str(&ok(s.run(&[
        "run",
        "--json",
        "--",
        "sh",
        "-c",
        "seq 1 1000",
    ])))
    .unwrap();
    assert_eq!(v["truncated"], true, "{v}");
    assert!(v["text"].as_str().unwrap().len() <= 100, "{v}");
    // A value tmux quotes (not one of ours) goes the separate way, with the same refusal.
    s.tmux(&["set", "-g", "@tmuxmate-capture-max-bytes", "a lot"]);
    let o = s.run(&["run", "--", "true"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("\"a lot\", not a positive byte count"),
        "{}",
        stderr(&o)
    );
    s.tmux(&["set", "-gu", "@tmuxmate-capture-max-bytes"]);
    // With a `tmuxmate` session already there, the run goes into it and leaves it as it was.
    s.detached_session("tmuxmate", "cat");
    let n = windows(&s).len();
    ok(s.run(&["run", "--", "true"]));
    assert_eq!(windows(&s).len(), n);
}

#[test]
fn an_unwritable_state_dir_is_named_and_nothing_is_created() {
    let s = server!();
    // A regular file where the state directory should be: no one can write under it.
    let bad = s.dir.join("state-is-a-file");
    std::fs::write(&bad, "").unwrap();
    let before = windows(&s);
    let o = s
        .tmuxmate()
        .env("TMUXMATE_STATE_DIR", &bad)
        .args(["watch", "start", "--", "echo", "never"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(e.contains(bad.to_str().unwrap()), "names the path: {e}");
    assert!(e.contains("TMUXMATE_STATE_DIR"), "{e}");
    assert_eq!(windows(&s), before, "no window left at its gate");
    let clients = s.tmux(&["list-clients"]);
    assert!(clients.is_empty(), "{clients}");
    let o = s
        .tmuxmate()
        .env("TMUXMATE_STATE_DIR", &bad)
        .args(["watch", "start", "--json", "--", "echo", "never"])
        .output()
        .unwrap();
    assert_eq!(json_error(&o)["error"]["kind"], "state-dir");
    assert_eq!(windows(&s), before);
    // agent start writes its launch spec before it creates a session: same error, no session.
    let path = fake_cli(&s, "claude", "sleep 30");
    let sess = sessions(&s);
    let o = s
        .tmuxmate()
        .env("TMUXMATE_STATE_DIR", &bad)
        .env("PATH", &path)
        .args([
            "agent",
            "start",
            "claude",
            "--project",
            s.dir.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(e.contains(bad.to_str().unwrap()), "names the path: {e}");
    assert_eq!(sessions(&s), sess);
}

#[test]
fn agent_start_of_a_cli_that_dies_leaves_no_session() {
    let s = server!();
    let path = fake_cli(
        &s,
        "claude",
        "echo 'claude: not logged in, run claude login' >&2\nsleep 2\nexit 1",
    );
    let proj = s.dir.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let before = sessions(&s);
    let o = s
        .tmuxmate()
        .env("PATH", &path)
        .args([
            "agent",
            "start",
            "claude",
            "--project",
            proj.to_str().unwrap(),
            "--timeout-s",
            "20",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(e.contains("exited during start-up"), "{e}");
    assert!(e.contains("not logged in"), "its own words: {e}");
    assert!(!e.contains("tmux attach"), "nothing left to attach to: {e}");
    assert_eq!(sessions(&s), before, "no [broken] session left");
    let listed = ok(s.run(&["agent", "list"]));
    assert!(!listed.contains("broken"), "{listed}");
    let launch = std::fs::read_dir(s.state.join("launch"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(launch, 0, "the launch spec is gone");
}

#[test]
fn side_open_reports_a_side_agent_that_died_at_start() {
    let s = server!();
    let rec = s.recorder_pane("main");
    let t = s.dir.join("main.jsonl");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/claude-transcript.jsonl"),
        &t,
    )
    .unwrap();
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
    let path = fake_cli(
        &s,
        "claude",
        "echo 'Invalid API key - please run /login' >&2\nexit 1",
    );
    let before = panes(&s);
    let o = s
        .tmuxmate()
        .env("PATH", &path)
        .args(["side", "open", "-t", &rec.pane])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(!stdout(&o).contains("opened"), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(e.contains("Invalid API key"), "its message: {e}");
    assert!(e.contains("exited with"), "{e}");
    wait_until("the side split to go", Duration::from_secs(10), || {
        (panes(&s) == before).then_some(())
    });
    assert!(
        s.tmux(&["show", "-pqv", "-t", &rec.pane, "@tmuxmate-side"])
            .trim()
            .is_empty()
    );
    let side_dir: Vec<_> = std::fs::read_dir(s.state.join("side"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(side_dir.is_empty(), "{side_dir:?}");
    assert!(rec.bytes().is_empty(), "nothing reached the main pane");
}

#[test]
fn every_item_fits_the_budget_the_location_included() {
    let s = server!();
    let name = "w".repeat(12_000);
    let a = s.agent_pane(&name);
    let out = a.sh("\"$TM\" turn --agent big --json").out;
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let text = v["text"].as_str().unwrap();
    assert!(text.starts_with("tmux location (turn 1)"), "{text:.80}");
    assert!(text.chars().count() <= 9500, "{}", text.chars().count());
    // The name itself is carried clipped (start, length, digest), leaving the budget to
    // the items queued behind it.
    assert!(text.contains("... (12000 bytes, "), "{text:.400}");
    assert!(text.chars().count() < 1000, "{}", text.chars().count());
    let out = a
        .sh("\"$TM\" turn --agent small --max-chars 300 --json")
        .out;
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let n = v["text"].as_str().unwrap().chars().count();
    assert!(n <= 300 && n > 100, "{n}");
    let r = a.sh("\"$TM\" turn --agent tiny --max-chars 10");
    assert_eq!(r.rc, 2, "{}", r.out);
    // The hook's answer stays within the harness's 10,000-character cap.
    let f = a.fixture("hook-claude-UserPromptSubmit.json");
    let out = a
        .sh(&format!("\"$TM\" hook claude < '{}'", f.display()))
        .out;
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(ctx.chars().count() <= 10_000, "{}", ctx.chars().count());
    assert!(ctx.contains("tmux location"), "{ctx:.80}");
}

#[test]
fn a_command_run_for_another_host_ends_at_that_hosts_deadline() {
    // What the host end of a `--host` call sees: the caller's wait in TMUXMATE_WITHIN_MS.
    // A call the caller gave up on must not hold its ssh session (sshd's MaxSessions).
    let s = server!();
    let mut c = s.tmuxmate();
    c.env("TMUXMATE_WITHIN_MS", "300")
        .arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = c.spawn().unwrap();
    let _held_open = child.stdin.take();
    let st = wait_until(
        "the command to end at the deadline",
        Duration::from_secs(30),
        || child.try_wait().unwrap(),
    );
    assert_eq!(st.code(), Some(124));
    let log = std::fs::read_to_string(s.state.join("log")).unwrap_or_default();
    assert!(log.contains("deadline (300 ms) passed"), "{log}");
}
