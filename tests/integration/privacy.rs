//! Private by default: the state directory and every file in it are the user's alone
//! (and are closed when found wider), snapshots can be cleared or not stored at all, and
//! a tmux server tmuxmate starts never holds the caller's secrets in its environment.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use crate::bridge::Bridge;
use crate::server;
use crate::util::*;

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
}

/// Every entry under `root` (root included) with its mode.
fn walk(root: &Path, out: &mut Vec<(std::path::PathBuf, u32, bool)>) {
    let m = std::fs::symlink_metadata(root).unwrap();
    out.push((root.to_path_buf(), mode(root), m.is_dir()));
    if m.is_dir() {
        for e in std::fs::read_dir(root).unwrap().flatten() {
            walk(&e.path(), out);
        }
    }
}

fn assert_private(root: &Path) -> usize {
    let mut all = Vec::new();
    walk(root, &mut all);
    for (p, m, dir) in &all {
        if *dir {
            assert_eq!(*m, 0o700, "{} is {m:o}", p.display());
        } else {
            assert_eq!(m & 0o077, 0, "{} is {m:o}", p.display());
        }
    }
    all.len()
}

#[test]
fn state_is_private_and_closed_when_found_wider() {
    let s = server!();
    // As an older tmuxmate (or a umask of 022) left it: world-readable screens.
    std::fs::set_permissions(&s.state, std::fs::Permissions::from_mode(0o755)).unwrap();
    let old = s.state.join("snapshots.jsonl");
    std::fs::write(&old, "").unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::create_dir_all(s.state.join("agents")).unwrap();
    std::fs::set_permissions(
        s.state.join("agents"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let other = s.state.join("agents/old.jsonl");
    std::fs::write(&other, "{}\n").unwrap();
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o644)).unwrap();

    let pane = s.window("w", "printf 'secret-screen\\n'; exec sleep 600");
    wait_until("the pane's text", Duration::from_secs(10), || {
        s.tmux(&["capture-pane", "-p", "-t", &pane])
            .contains("secret-screen")
            .then_some(())
    });
    ok(s.run(&["capture", "-t", &pane]));
    assert_eq!(mode(&s.state), 0o700);
    assert_eq!(mode(&old), 0o600);
    assert_eq!(mode(&other), 0o600, "a file the command did not touch");
    assert_eq!(mode(&s.state.join("agents")), 0o700);
    assert!(
        std::fs::read_to_string(s.state.join("log"))
            .unwrap()
            .contains("was readable by others")
    );

    // Every writer: run (its dir, script, status and output), a watch with a pipe file,
    // the poller's lock and heartbeat, a ledger, the tmux version cache.
    ok(s.run(&["run", "--", "echo run-output"]));
    // --notify takes only an agent someone reads: one per-turn call makes `ag` known.
    ok(s.run(&["turn", "--agent", "ag"]));
    let w = ok(s.run(&[
        "watch",
        "start",
        "--notify",
        "ag",
        "--done-regex",
        "never-matches",
        "--",
        "echo watched; sleep 300",
    ]));
    assert!(w.starts_with('w'), "{w}");
    wait_until("the poller's heartbeat", Duration::from_secs(10), || {
        std::fs::read_dir(s.state.join("pollers"))
            .ok()?
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "json"))
            .then_some(())
    });
    ok(s.run(&["turn", "--agent", "ag"]));
    assert!(s.state.join("jobs/pipes").is_dir());
    let n = assert_private(&s.state);
    assert!(n > 10, "only {n} entries: the writers did not run");
}

fn snapshot_count(s: &Server) -> usize {
    let v: serde_json::Value =
        serde_json::from_str(&ok(s.run(&["snapshots", "--json", "--limit", "200"]))).unwrap();
    v.as_array().unwrap().len()
}

#[test]
fn snapshots_clear_and_off_store_nothing() {
    let s = server!();
    ok(s.run(&["capture", "-t", "%0"]));
    ok(s.run(&["run", "--", "echo stored"]));
    assert_eq!(snapshot_count(&s), 2);
    let out = ok(s.run(&["snapshots", "clear"]));
    assert!(out.contains("deleted 2 stored snapshots"), "{out}");
    assert_eq!(snapshot_count(&s), 0);
    assert!(!s.state.join("snapshots.jsonl").exists());
    let j: serde_json::Value =
        serde_json::from_str(&ok(s.run(&["snapshots", "clear", "--json"]))).unwrap();
    assert_eq!(j["cleared"], 0);

    s.tmux(&["set", "-g", "@tmuxmate-snapshots", "off"]);
    let cap = ok(s.run(&["capture", "-t", "%0"]));
    let _ = cap; // the capture itself still prints
    let r = ok(s.run(&["run", "--", "echo not-stored"]));
    assert!(r.contains("not-stored"), "{r}");
    assert_eq!(snapshot_count(&s), 0);
    assert!(!s.state.join("snapshots.jsonl").exists());

    // A value that is neither on nor off stores nothing and says so; the capture works.
    s.tmux(&["set", "-g", "@tmuxmate-snapshots", "of"]);
    let o = s.run(&["capture", "-t", "%0"]);
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("@tmuxmate-snapshots is \"of\": use on or off (nothing was stored)"),
        "{err}"
    );
    assert_eq!(snapshot_count(&s), 0);

    s.tmux(&["set", "-g", "@tmuxmate-snapshots", "on"]);
    ok(s.run(&["capture", "-t", "%0"]));
    assert_eq!(snapshot_count(&s), 1);
}

fn global_env(s: &Server) -> String {
    s.tmux(&["show-environment", "-g"])
}

fn environ(pid: &str) -> String {
    String::from_utf8_lossy(&std::fs::read(format!("/proc/{}/environ", pid.trim())).unwrap())
        .replace('\0', "\n")
}

#[test]
fn a_server_tmuxmate_starts_keeps_no_caller_secrets() {
    let s = server!();
    let b = Bridge::new(&s, "sec", "main");
    // No server runs: `agent start` starts it.
    s.tmux(&["kill-server"]);
    let path = format!(
        "{}:{}",
        b.bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = s
        .tmuxmate()
        .env("PATH", &path)
        .env("STANDIN_DIR", &b.sd)
        .env("FAKE_SECRET", "hunter2-agent")
        .env("ANTHROPIC_API_KEY", "sk-test-not-real")
        .current_dir(&b.proj)
        .args(["agent", "start", "claude", "--json"])
        .output()
        .unwrap();
    let st: serde_json::Value = serde_json::from_str(&ok(o)).unwrap();
    let env = global_env(&s);
    assert!(!env.contains("FAKE_SECRET"), "{env}");
    assert!(!env.contains("ANTHROPIC_API_KEY"), "{env}");
    assert!(env.contains("TMUXMATE_STATE_DIR="), "{env}");
    // The agent itself got the caller's environment through its private launch spec.
    let pid = s.tmux(&[
        "display",
        "-p",
        "-t",
        st["paneId"].as_str().unwrap(),
        "#{pane_pid}",
    ]);
    let agent_env = environ(&pid);
    assert!(
        agent_env.contains("FAKE_SECRET=hunter2-agent"),
        "{agent_env}"
    );
    assert!(agent_env.contains("ANTHROPIC_API_KEY=sk-test-not-real"));
    // The spec file holding it is gone once the agent is up.
    assert!(
        std::fs::read_dir(s.state.join("launch"))
            .map(|d| d.count())
            .unwrap_or(0)
            == 0
    );

    // The placeholder `tmuxmate` session (new work outside any pane) on a fresh server too.
    s.tmux(&["kill-server"]);
    let o = s
        .tmuxmate()
        .env("FAKE_SECRET", "hunter2-window")
        .args(["new-window", "--", "sleep", "60"])
        .output()
        .unwrap();
    ok(o);
    let env = global_env(&s);
    assert!(!env.contains("FAKE_SECRET"), "{env}");
}
