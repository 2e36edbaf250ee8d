//! A global `window-size manual` (a real user setting) crashes tmux 3.3a when a window is
//! created with no client attached. Every path of ours that creates a window or a
//! session must work on such a server and leave the user's value as it was.

use std::process::{Command, Output};

use crate::bridge::Bridge;
use crate::server;
use crate::util::*;

fn window_size(s: &Server) -> String {
    s.tmux(&["show-options", "-gv", "window-size"])
        .trim()
        .to_string()
}

fn alive(s: &Server, after: &str) {
    let out = s.tmux_output(&["list-sessions"]);
    assert!(out.status.success(), "the server died after {after}");
}

#[test]
fn every_creating_path_works_with_global_manual_and_no_client() {
    let s = server!();
    s.tmux(&["set-option", "-g", "window-size", "manual"]);
    // From outside any pane: the `tmuxmate` session is created, then the window.
    ok(s.run(&["new-window", "--", "cat"]));
    alive(&s, "new-window (new session tmuxmate)");
    let first = s.address("%0");
    ok(s.run(&["new-window", "-t", &first, "--name", "w", "--", "cat"]));
    alive(&s, "new-window -t");
    ok(s.run(&["split", "--", "cat"]));
    alive(&s, "split without -t (a new window)");
    ok(s.run(&["run", "--", "true"]));
    alive(&s, "run");
    ok(s.run(&["watch", "start", "--json", "--", "true"]));
    alive(&s, "watch start");
    let b = Bridge::new(&s, "proj", "main");
    ok(b.cmd(&s, &["agent", "start", "claude", "--json"]));
    alive(&s, "agent start");
    assert_eq!(window_size(&s), "manual", "the user's option was changed");
}

#[test]
fn a_failed_creation_still_restores_the_option() {
    let s = server!();
    s.tmux(&["set-option", "-g", "window-size", "manual"]);
    let out = s.run(&[
        "new-window",
        "-t",
        &s.address("%0"),
        "--cwd",
        "/nonexistent-dir",
        "--",
        "cat",
    ]);
    assert_eq!(out.status.code(), Some(2));
    // A creation that tmux itself refuses (a session that vanished) restores it too.
    let out = s.run(&["new-window", "-t", "$99", "--", "cat"]);
    assert!(!out.status.success());
    alive(&s, "refused creations");
    assert_eq!(window_size(&s), "manual");
}

/// A server that tmuxmate itself starts reads the user's tmux.conf before creating.
#[test]
fn a_server_started_by_us_with_manual_in_the_config_survives() {
    let s = server!();
    std::fs::write(s.home.join(".tmux.conf"), "set -g window-size manual\n").unwrap();
    let fresh = format!("{}-fresh", s.name);
    struct Kill<'a>(&'a Server, String);
    impl Drop for Kill<'_> {
        fn drop(&mut self) {
            let _ = self.0.tmux_other(&self.1, &["kill-server"]);
        }
    }
    let _k = Kill(&s, fresh.clone());
    let b = Bridge::new(&s, "fresh", "main");
    let tm = |args: &[&str]| -> Output {
        let mut c = Command::new(BIN);
        s.env(&mut c);
        let path = format!(
            "{}:{}",
            b.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        c.env("PATH", path)
            .env("STANDIN_DIR", &b.sd)
            .current_dir(&b.proj)
            .arg("-L")
            .arg(&fresh)
            .args(args)
            .output()
            .unwrap()
    };
    ok(tm(&["agent", "start", "claude", "--json"]));
    let out = s.tmux_other(&fresh, &["show-options", "-gv", "window-size"]);
    assert!(out.status.success(), "the fresh server is gone");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "manual");
    let opts = s.tmux_other(&fresh, &["show-options", "-g"]);
    assert!(!String::from_utf8_lossy(&opts.stdout).contains("@tmuxmate-saved-window-size"));
    // And a second creation on that (now live) server.
    ok(tm(&["new-window", "--", "cat"]));
}
