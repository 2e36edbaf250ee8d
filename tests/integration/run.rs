//! run against a real tmux server: exit statuses, fast and slow commands, timeouts, where
//! the pane goes and that it survives, only this command's output, `-t` into a shell.

use std::time::Duration;

use crate::server;
use crate::util::contract::RunJson;
use crate::util::*;

fn run_json(s: &Server, args: &[&str]) -> RunJson {
    let mut v = vec!["run", "--json"];
    v.extend_from_slice(args);
    serde_json::from_str(&ok(s.run(&v))).expect("run --json is one RunJson")
}

fn pane_fields(s: &Server, pane: &str, fmt: &str) -> String {
    s.tmux(&["display", "-p", "-t", pane, fmt])
        .trim()
        .to_string()
}

#[test]
fn exit_statuses_and_output() {
    let s = server!();
    let r = run_json(&s, &["--", "sh", "-c", "echo out; echo err >&2"]);
    assert_eq!(r.exit_status, Some(0));
    assert_eq!(r.text, "out\nerr");
    assert!(!r.timed_out && !r.stabilized && !r.truncated);
    let r = run_json(&s, &["--", "sh", "-c", "echo failing; exit 1"]);
    assert_eq!((r.exit_status, r.text.as_str()), (Some(1), "failing"));
    let r = run_json(&s, &["--", "sh", "-c", "kill -INT $$"]);
    assert_eq!(r.exit_status, Some(130));
    let r = run_json(&s, &["--", "sh", "-c", "exit 130"]);
    assert_eq!(r.exit_status, Some(130));
    // `exit` as the command itself ends only its subshell, not the wrapper.
    let r = run_json(&s, &["--", "exit", "7"]);
    assert_eq!(r.exit_status, Some(7));
    let r = run_json(&s, &["--", "true"]);
    assert_eq!((r.exit_status, r.text.as_str()), (Some(0), ""));
    let r = run_json(&s, &["--", "no-such-program-xyz"]);
    assert_eq!(r.exit_status, Some(127));
}

#[test]
fn text_mode_prints_output_then_status_and_exits_zero() {
    let s = server!();
    assert_eq!(
        ok(s.run(&["run", "--", "sh", "-c", "echo a; echo b; exit 3"])),
        "a\nb\n[exit 3]\n"
    );
    assert_eq!(ok(s.run(&["run", "--", "true"])), "[exit 0]\n");
}

#[test]
fn words_reach_the_program_unchanged() {
    let s = server!();
    let words = [
        "a;",
        ";",
        "$HOME",
        "`id`",
        "#{pane_id}",
        "it's",
        "~",
        "=x",
        "-n",
        "日本 🚀",
        "",
    ];
    let mut args = vec!["--", "printf", "[%s]\\n"];
    args.extend_from_slice(&words);
    let r = run_json(&s, &args);
    let want: Vec<String> = words.iter().map(|w| format!("[{w}]")).collect();
    assert_eq!(r.text, want.join("\n"));
    assert_eq!(r.exit_status, Some(0));
}

#[test]
fn fast_commands_are_never_missed() {
    let s = server!();
    for _ in 0..5 {
        let r = run_json(&s, &["--timeout-ms", "20000", "--", "true"]);
        assert_eq!(r.exit_status, Some(0));
        assert!(!r.timed_out);
    }
    let r = run_json(&s, &["--", "sh", "-c", "sleep 0.005; echo quick"]);
    assert_eq!((r.exit_status, r.text.as_str()), (Some(0), "quick"));
    assert!(!r.timed_out);
}

#[test]
fn slow_command_is_waited_for() {
    let s = server!();
    let r = run_json(&s, &["--", "sleep", "5"]);
    assert_eq!(r.exit_status, Some(0));
    assert!(!r.timed_out);
    assert!(r.elapsed_ms >= 5000, "{r:?}");
    assert!(r.elapsed_ms < 15000, "{r:?}");
}

#[test]
fn timeout_reports_output_so_far_and_leaves_the_command_running() {
    let s = server!();
    let r = run_json(
        &s,
        &[
            "--timeout-ms",
            "1500",
            "--",
            "sh",
            "-c",
            "echo partial; exec sleep 60",
        ],
    );
    assert!(r.timed_out, "{r:?}");
    assert_eq!(r.exit_status, None);
    assert_eq!(r.text, "partial");
    assert!(r.elapsed_ms >= 1500);
    assert_eq!(pane_fields(&s, &r.pane_id, "#{pane_dead}"), "0");
    let pid: i32 = pane_fields(&s, &r.pane_id, "#{pane_pid}").parse().unwrap();
    assert!(
        in_session(pid).contains(&"sleep".to_string()),
        "the command keeps running in its pane: {:?}",
        in_session(pid)
    );
    // Its shell is busy, so nothing is typed into it.
    let out = s.run(&["run", "-t", &r.pane_id, "--", "true"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("busy"));
}

#[test]
fn ctrl_c_in_the_pane_is_reported_as_130_and_the_pane_survives() {
    let s = server!();
    std::thread::scope(|sc| {
        let job = sc.spawn(|| run_json(&s, &["--keep", "--", "sleep", "60"]));
        let pane = pane_running(&s, Some("tmuxmate"), "sleep");
        s.tmux(&["send-keys", "-t", &pane, "C-c"]);
        let r = job.join().unwrap();
        assert_eq!(r.pane_id, pane);
        assert_eq!(r.exit_status, Some(130));
        assert!(!r.timed_out);
        assert_eq!(pane_fields(&s, &pane, "#{pane_dead}"), "0");
    });
}

/// A run whose pane goes away (closed by a person) ends within a few seconds with an
/// error naming the pane, not at its deadline, and leaves no run directory behind; a typed
/// run (`-t`) into a pane that is killed likewise.
#[test]
fn a_run_whose_pane_goes_away_says_so_at_once() {
    let s = server!();
    let find_sleep = || pane_running(&s, None, "sleep");
    std::thread::scope(|sc| {
        let job = sc.spawn(|| {
            let t0 = std::time::Instant::now();
            let out = s.run(&["run", "--timeout-ms", "60000", "--", "sleep", "300"]);
            (out, t0.elapsed())
        });
        let pane = find_sleep();
        s.tmux(&["kill-pane", "-t", &pane]);
        let (out, took) = job.join().unwrap();
        assert!(!out.status.success());
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(
            e.contains(&pane) && e.contains("went away before its command finished"),
            "{e}"
        );
        assert!(
            took < Duration::from_secs(20),
            "{took:?}: not at the deadline"
        );
    });
    let runs = s.state.join("run");
    let left: Vec<_> = std::fs::read_dir(&runs)
        .map(|r| r.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "run directories left: {left:?}");
    // A typed run into a shell pane that is then killed.
    let shell = s.window("typed", "sh");
    wait_until("the shell prompt", Duration::from_secs(10), || {
        (!s.tmux(&["capture-pane", "-p", "-t", &shell])
            .trim()
            .is_empty())
        .then_some(())
    });
    std::thread::scope(|sc| {
        let job = sc.spawn(|| {
            s.run(&[
                "run",
                "-t",
                &shell,
                "--timeout-ms",
                "60000",
                "--",
                "sleep",
                "301",
            ])
        });
        find_sleep();
        s.tmux(&["kill-pane", "-t", &shell]);
        let out = job.join().unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{e}");
        assert!(e.contains(&shell) && e.contains("went away"), "{e}");
    });
}

/// The pane (of session `session`, or any) whose terminal session runs `program`.
fn pane_running(s: &Server, session: Option<&str>, program: &str) -> String {
    wait_until("the program in its pane", Duration::from_secs(20), || {
        let rows = s.tmux(&[
            "list-panes",
            "-a",
            "-F",
            "#{session_name} #{pane_id} #{pane_pid}",
        ]);
        rows.lines().find_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let pid: i32 = f[2].parse().ok()?;
            (session.is_none_or(|n| f[0] == n) && in_session(pid).iter().any(|p| p == program))
                .then(|| f[1].to_string())
        })
    })
}

/// The names of the processes in the terminal session led by `sid` (a pane's process).
fn in_session(sid: i32) -> Vec<String> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let rest: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        if rest.get(3).and_then(|x| x.parse::<i32>().ok()) == Some(sid) {
            v.push(stat[open + 1..close].to_string());
        }
    }
    v
}

#[test]
fn new_pane_is_a_marked_new_window_that_stays_alive() {
    let s = server!();
    let before = s.tmux(&["list-windows", "-a", "-F", "#{window_id}"]);
    let r = run_json(&s, &["--keep", "--", "sh", "-c", "echo hi"]);
    assert!(r.kept);
    // From outside any pane: a new window in the `tmuxmate` session.
    assert_eq!(pane_fields(&s, &r.pane_id, "#{session_name}"), "tmuxmate");
    let win = pane_fields(&s, &r.pane_id, "#{window_id}");
    assert!(!before.contains(&win));
    assert_eq!(pane_fields(&s, &r.pane_id, "#{window_panes}"), "1");
    let mark: serde_json::Value =
        serde_json::from_str(&pane_fields(&s, &r.pane_id, "#{@tmuxmate-created}")).unwrap();
    assert_eq!(mark["agent"], "cli");
    assert_eq!(pane_fields(&s, &r.pane_id, "#{history_limit}"), "50000");
    // The pane lives on as a shell, and can be reused with -t.
    wait_until("the run pane's shell", Duration::from_secs(10), || {
        (pane_fields(&s, &r.pane_id, "#{pane_dead}") == "0").then_some(())
    });
    let again = run_json(&s, &["-t", &r.pane_id, "--", "echo", "again"]);
    assert_eq!((again.exit_status, again.text.as_str()), (Some(0), "again"));
    // A second run gets its own window in the same session.
    let r2 = run_json(&s, &["--keep", "--", "true"]);
    assert_ne!(pane_fields(&s, &r2.pane_id, "#{window_id}"), win);
    assert_eq!(pane_fields(&s, &r2.pane_id, "#{session_name}"), "tmuxmate");
    // Every result was stored.
    let snaps: Vec<serde_json::Value> =
        serde_json::from_str(&ok(s.run(&["snapshots", "--json"]))).unwrap();
    assert_eq!(snaps.len(), 3);
    assert_eq!(snaps[1]["paneId"], r.pane_id.as_str());
}

#[test]
fn from_an_agent_pane_it_opens_a_window_in_the_callers_session() {
    let s = server!();
    let a = s.agent_pane("agent");
    s.tmux(&["set", "-t", "main", "history-limit", "1234"]);
    let out = a.sh("\"$TM\" run --json --keep -- echo from-agent");
    assert_eq!(out.rc, 0, "{}", out.out);
    let r: RunJson = serde_json::from_str(&out.out).unwrap();
    assert_eq!(r.text, "from-agent");
    assert_eq!(pane_fields(&s, &r.pane_id, "#{session_name}"), "main");
    assert_ne!(
        pane_fields(&s, &r.pane_id, "#{window_id}"),
        pane_fields(&s, &a.pane, "#{window_id}"),
        "never a split of the caller's window"
    );
    // tmux 3.7 applies a session's history-limit to all its panes (a raise for our pane
    // would grow every pane of the user's session, the restore shrink ours back): there
    // the pane has the session's own limit; before, ours.
    let want = if tmux_release() >= (3, 7) {
        "1234"
    } else {
        "50000"
    };
    assert_eq!(pane_fields(&s, &r.pane_id, "#{history_limit}"), want);
    // The caller's session keeps its own setting.
    assert_eq!(
        s.tmux(&["show", "-t", "main", "-v", "history-limit"])
            .trim(),
        "1234"
    );
}

#[test]
fn outside_a_pane_with_an_inherited_tmux_pane_the_own_session_gets_its_own_settings() {
    // A process whose $TMUX_PANE names a pane whose terminal it is not on (inherited, or an
    // MCP server a harness started from a pane): not in a pane, so the run goes into a new
    // `tmuxmate` session; but tmux takes the session of the $TMUX_PANE a client sends
    // for a command without -t. A user's global `destroy-unattached on` (set here for any
    // config) must be off for ours, and the mark must be on our pane, not main's.
    let s = server!();
    s.tmux(&["set-option", "-g", "destroy-unattached", "on"]);
    let sid = pane_fields(&s, "%0", "#{session_id}");
    let tmux_var = format!(
        "{},{},{}",
        s.socket_path().display(),
        std::process::id(),
        sid.trim_start_matches('$')
    );
    let out = s
        .tmuxmate()
        .env("TMUX", &tmux_var)
        .env("TMUX_PANE", "%0")
        .args(["run", "--json", "--keep", "--", "echo", "kept"])
        .output()
        .unwrap();
    let r: RunJson = serde_json::from_str(&ok(out)).unwrap();
    assert_eq!(pane_fields(&s, &r.pane_id, "#{session_name}"), "tmuxmate");
    assert_eq!(
        s.tmux(&[
            "show-options",
            "-v",
            "-t",
            "=tmuxmate:",
            "destroy-unattached"
        ])
        .trim(),
        "off"
    );
    assert_eq!(
        s.tmux(&["show-options", "-pqv", "-t", "%0", "@tmuxmate-created"]),
        ""
    );
    assert_ne!(
        s.tmux(&[
            "show-options",
            "-pqv",
            "-t",
            &r.pane_id,
            "@tmuxmate-created"
        ]),
        ""
    );
}

#[test]
fn output_is_only_this_commands() {
    let s = server!();
    let r = run_json(&s, &["--keep", "--", "sh", "-c", "echo first"]);
    // The kept pane's boot shell is still exec'ing the interactive one for a moment
    // (`run -t` rightly refuses a busy shell): wait for the prompt before typing.
    wait_until(
        "the kept pane's shell to be idle",
        // The shell's start is not timed: on a loaded machine it takes what it takes.
        crate::watch::SLOW,
        || {
            let o = s.run(&["run", "--json", "-t", &r.pane_id, "--", "true"]);
            o.status.success().then_some(())
        },
    );
    let again = run_json(&s, &["-t", &r.pane_id, "--", "echo", "second"]);
    assert_eq!(again.text, "second", "no prompt, no earlier output");
    // Into the session's own shell, with earlier text on its screen.
    // By id: `main:0` is no window under a user's base-index 1.
    let main = pane_fields(&s, "%0", "#{pane_id}");
    let r = run_json(&s, &["-t", &main, "--", "sh", "-c", "echo hi; exit 7"]);
    assert_eq!((r.exit_status, r.text.as_str()), (Some(7), "hi"));
    let r = run_json(&s, &["-t", &main, "--", "printf", "x%sy\\n", "1", "2"]);
    assert_eq!((r.exit_status, r.text.as_str()), (Some(0), "x1y\nx2y"));
    assert_eq!(r.pane_id, main);
}

#[test]
fn output_is_bounded_by_the_budget() {
    let s = server!();
    let r = run_json(
        &s,
        &[
            "--max-bytes",
            "100",
            "--",
            "sh",
            "-c",
            "i=0; while [ $i -lt 5000 ]; do echo \"line $i\"; i=$((i+1)); done",
        ],
    );
    assert!(r.truncated);
    assert!(r.text.len() <= 100);
    assert!(r.text.ends_with("line 4998\nline 4999"), "{:?}", r.text);
    assert!(
        r.text.starts_with("line "),
        "cut on a line start: {:?}",
        r.text
    );
    let text = ok(s.run(&["run", "--max-bytes", "20", "--", "seq", "1", "100"]));
    assert!(text.starts_with("[... "), "{text}");
    assert!(text.ends_with("99\n100\n[exit 0]\n"), "{text}");
}

#[test]
fn refusals() {
    let s = server!();
    let windows = s.tmux(&["list-windows", "-a"]);
    let out = s.run(&["run", "--", ""]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("command is empty"));
    let out = s.run(&["run"]);
    assert_eq!(out.status.code(), Some(2));
    for bad in ["codex;echo x", "../x", ""] {
        let out = s.run(&["run", "-t", bad, "--", "true"]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
    // A pane whose foreground program is not a shell is not typed into.
    let cat = s
        .tmux(&["new-window", "-d", "-P", "-F", "#{pane_id}", "exec cat"])
        .trim()
        .to_string();
    wait_until("cat to run", Duration::from_secs(10), || {
        (pane_fields(&s, &cat, "#{pane_current_command}") == "cat").then_some(())
    });
    let out = s.run(&["run", "-t", &cat, "--", "true"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a POSIX shell") && err.contains("--until-stable"),
        "{err}"
    );
    assert_eq!(
        s.tmux(&["list-windows", "-a"]).lines().count(),
        windows.lines().count() + 1,
        "nothing was created by the refused runs"
    );
}

#[test]
fn until_stable_for_a_repl() {
    let s = server!();
    let cat = s
        .tmux(&["new-window", "-d", "-P", "-F", "#{pane_id}", "exec cat"])
        .trim()
        .to_string();
    wait_until("cat to run", Duration::from_secs(10), || {
        (pane_fields(&s, &cat, "#{pane_current_command}") == "cat").then_some(())
    });
    let r = run_json(
        &s,
        &["-t", &cat, "--until-stable", "300", "--", "hello", "repl"],
    );
    assert!(r.stabilized && !r.timed_out, "{r:?}");
    assert_eq!(r.exit_status, None);
    assert_eq!(r.text, "hello repl\nhello repl");
    // In a fresh pane, a command that ends is done before the screen settles.
    let r = run_json(&s, &["--until-stable", "5000", "--", "echo", "tui"]);
    assert!(!r.stabilized && !r.timed_out, "{r:?}");
    assert_eq!(r.exit_status, Some(0));
    assert!(r.text.starts_with("tui"), "{r:?}");
}
