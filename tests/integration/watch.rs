//! Watch jobs: delivery exactly once at the next turn, and every fault the issue names.

use std::time::Duration;

use crate::server;
use crate::util::*;
use serde::Deserialize;

/// Deadlines are bounds for a busy 2-core machine (a process start can take seconds
/// there), never expected durations: every wait ends as soon as its condition holds.
pub(crate) const SLOW: Duration = Duration::from_secs(60);

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Started {
    pub job_id: String,
    pub pane_id: String,
}

pub(crate) fn start(s: &Server, extra: &[&str], cmd: &[&str]) -> Started {
    s.known_agent("ag");
    for w in extra.windows(2).filter(|w| w[0] == "--forward") {
        s.known_agent(w[1]);
    }
    let mut args = vec!["watch", "start", "--json", "--notify", "ag"];
    args.extend_from_slice(extra);
    args.push("--");
    args.extend_from_slice(cmd);
    let out = s.run(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

pub(crate) fn turn(s: &Server, agent: &str) -> String {
    let out = s.run(&["turn", "--agent", agent]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Call the per-turn entry until the job's result shows up; returns all text seen.
pub(crate) fn turn_until(s: &Server, agent: &str, job: &str, secs: u64) -> String {
    let mut seen = String::new();
    wait_until(
        &format!("watch {job} to be delivered"),
        Duration::from_secs(secs),
        || {
            seen.push_str(&turn(s, agent));
            seen.contains(&format!("tmux watch {job} ")).then_some(())
        },
    );
    seen
}

/// A pane running an interactive shell that has drawn its prompt (typing before that can
/// race the shell's start, which no real user pane does).
pub(crate) fn prompt_shell(s: &Server) -> String {
    let pane = s.window("shell", "exec sh -i");
    wait_until("the shell prompt", SLOW, || {
        let scr = s.tmux(&["capture-pane", "-p", "-t", &pane]);
        scr.lines()
            .any(|l| l.trim_end().ends_with('#') || l.trim_end().ends_with('$'))
            .then_some(())
    });
    pane
}

pub(crate) fn poller_pid(s: &Server) -> Option<i32> {
    let dir = s.state.join("pollers");
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        if e.path().extension().is_some_and(|x| x == "json") {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(e.path()).ok()?).ok()?;
            return v["pid"].as_i64().map(|p| p as i32);
        }
    }
    None
}

pub(crate) fn kill(pid: i32, sig: &str) {
    std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
}

pub(crate) fn job_state(s: &Server, id: &str) -> serde_json::Value {
    let out = s.run(&["watch", "show", id, "--json"]);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn launched_command_result_arrives_once_with_exact_status_and_pane_stays() {
    let s = server!();
    let j = start(&s, &[], &["echo out-line; exit 7"]);
    let t = turn_until(&s, "ag", &j.job_id, 60);
    let head = format!("tmux watch {} finished (exit 7) after ", j.job_id);
    assert!(t.contains(&head), "{t}");
    assert!(
        t.contains(&format!(
            "in pane {}: echo out-line; exit 7\nout-line",
            j.pane_id
        )),
        "{t}"
    );
    assert_eq!(t.matches(&head).count(), 1);
    assert_eq!(turn(&s, "ag"), "");
    // The pane belongs to tmux and stays.
    assert_eq!(
        s.tmux(&["display", "-p", "-t", &j.pane_id, "#{pane_dead}"])
            .trim(),
        "0"
    );
    // list shows the watch state from the pane option.
    let l = String::from_utf8_lossy(&s.run(&["list", "--json"]).stdout).into_owned();
    assert!(l.contains(&j.job_id));
}

#[test]
fn five_ms_commands_are_not_missed_launched_or_typed() {
    let s = server!();
    let j = start(&s, &[], &["true"]);
    assert!(turn_until(&s, "ag", &j.job_id, 60).contains("finished (exit 0)"));
    // Typed into an existing shell pane: a command that runs ~5 ms.
    let pane = prompt_shell(&s);
    let t = start(&s, &["-t", &pane], &["/bin/true"]);
    let got = turn_until(&s, "ag", &t.job_id, 60);
    assert!(
        got.contains(&format!("tmux watch {} finished", t.job_id)),
        "{got}"
    );
    // And a longer typed command.
    let t2 = start(&s, &["-t", &pane], &["sleep 0.5; echo typed-done"]);
    let got = turn_until(&s, "ag", &t2.job_id, 60);
    assert!(got.contains("typed-done"), "{got}");
}

#[test]
fn done_regex_matches_only_new_output() {
    let s = server!();
    let pane = prompt_shell(&s);
    s.tmux(&["send-keys", "-t", &pane, "echo BUILD OK", "Enter"]);
    wait_until("old output", SLOW, || {
        s.tmux(&["capture-pane", "-p", "-t", &pane])
            .contains("BUILD OK")
            .then_some(())
    });
    let j = start(
        &s,
        &["-t", &pane, "--done-regex", "BUILD (OK|FAIL)"],
        &["sleep 1; echo BUILD FAIL; sleep 100"],
    );
    // Old scrollback holds "BUILD OK": it must not match.
    let first = turn(&s, "ag");
    assert!(!first.contains(&j.job_id), "{first}");
    let t = turn_until(&s, "ag", &j.job_id, 60);
    assert!(t.contains("matched /BUILD (OK|FAIL)/"), "{t}");
    assert!(t.contains("BUILD FAIL"), "{t}");
}

#[test]
fn timeout_leaves_the_pane_alive() {
    let s = server!();
    let j = start(&s, &["--timeout-min", "0.02"], &["sleep 300"]);
    let t = turn_until(&s, "ag", &j.job_id, 60);
    assert!(
        t.contains(&format!("tmux watch {} timed out after", j.job_id)),
        "{t}"
    );
    assert_eq!(
        s.tmux(&["display", "-p", "-t", &j.pane_id, "#{pane_current_command}"])
            .trim(),
        "sh"
    );
}

#[test]
fn killed_pane_is_pane_gone() {
    let s = server!();
    let j = start(&s, &[], &["sleep 300"]);
    wait_until("the poller", SLOW, || poller_pid(&s));
    s.tmux(&["kill-pane", "-t", &j.pane_id]);
    let t = turn_until(&s, "ag", &j.job_id, 60);
    assert!(
        t.contains(&format!("tmux watch {} failed: pane-gone after", j.job_id)),
        "{t}"
    );
}

#[test]
fn poller_sigkill_then_completion_is_delivered_once_after_reattach() {
    let s = server!();
    let pane = prompt_shell(&s);
    let j = start(
        &s,
        &["-t", &pane, "--done-regex", "PHASE TWO"],
        &["sleep 1.5; echo PHASE TWO; sleep 100"],
    );
    let pid = wait_until("the poller", SLOW, || poller_pid(&s));
    kill(pid, "-KILL");
    // The command goes on and prints its pattern while no poller runs.
    wait_until("PHASE TWO", SLOW, || {
        s.tmux(&["capture-pane", "-p", "-t", &pane])
            .contains("PHASE TWO\n")
            .then_some(())
    });
    // Concurrent per-turn calls re-attach; the result is delivered exactly once.
    let mut seen = String::new();
    wait_until("delivery after re-attach", SLOW, || {
        let hs: Vec<_> = (0..5)
            .map(|_| s.tmuxmate().args(["turn", "--agent", "ag"]).output())
            .collect();
        for h in hs {
            seen.push_str(&String::from_utf8_lossy(&h.unwrap().stdout));
        }
        seen.contains(&j.job_id).then_some(())
    });
    for _ in 0..3 {
        seen.push_str(&turn(&s, "ag"));
    }
    assert_eq!(
        seen.matches(&format!("tmux watch {} matched", j.job_id))
            .count(),
        1,
        "{seen}"
    );
    let np = poller_pid(&s);
    assert!(np.is_some() && np != Some(pid), "a new poller runs");
}

#[test]
fn completion_while_no_poller_runs_is_delivered() {
    let s = server!();
    let j = start(&s, &[], &["sleep 1; echo finished-alone"]);
    let pid = wait_until("the poller", SLOW, || poller_pid(&s));
    kill(pid, "-TERM");
    wait_until("job recorded by its wrapper", SLOW, || {
        (job_state(&s, &j.job_id)["status"] == "finished").then_some(())
    });
    let t = turn_until(&s, "ag", &j.job_id, 60);
    assert!(
        t.contains("finished (exit 0)") && t.contains("finished-alone"),
        "{t}"
    );
}

#[test]
fn dead_server_reports_jobs_lost() {
    let s = server!();
    let j = start(&s, &[], &["sleep 300"]);
    wait_until("the poller", SLOW, || poller_pid(&s));
    s.tmux(&["kill-server"]);
    // kill-server returns before the server process is gone.
    wait_until("the server to be gone", SLOW, || {
        (!s.tmux_output(&["list-sessions"]).status.success()).then_some(())
    });
    let list = String::from_utf8_lossy(&s.run(&["watch", "list"]).stdout).into_owned();
    assert!(
        list.contains(&j.job_id) && list.contains("server-gone"),
        "{list}"
    );
    let t = turn_until(&s, "ag", &j.job_id, 60);
    assert!(t.contains("failed: server-gone"), "{t}");
    assert_eq!(turn(&s, "ag"), "");
}

#[test]
fn twenty_parallel_turns_get_each_result_once() {
    let s = server!();
    let a = start(&s, &[], &["echo A"]);
    let b = start(&s, &[], &["echo B"]);
    for id in [&a.job_id, &b.job_id] {
        wait_until("recorded", SLOW, || {
            (job_state(&s, id)["queued"] == true).then_some(())
        });
    }
    let hs: Vec<_> = (0..20)
        .map(|_| {
            s.tmuxmate()
                .args(["turn", "--agent", "ag"])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let all: String = hs
        .into_iter()
        .map(|h| String::from_utf8_lossy(&h.wait_with_output().unwrap().stdout).into_owned())
        .collect();
    assert_eq!(
        all.matches(&format!("tmux watch {} ", a.job_id)).count(),
        1,
        "{all}"
    );
    assert_eq!(
        all.matches(&format!("tmux watch {} ", b.job_id)).count(),
        1,
        "{all}"
    );
}

#[test]
fn forward_and_restarted_agent_and_half_written_ledger() {
    let s = server!();
    // A half-written last line in the notify agent's ledger.
    std::fs::create_dir_all(s.state.join("agents")).unwrap();
    std::fs::write(
        s.state.join("agents/ag.jsonl"),
        "{\"t\":\"turn\",\"n\":3,\"at\":1}\n{\"t\":\"que",
    )
    .unwrap();
    let j = start(&s, &["--forward", "other"], &["echo fwd"]);
    let t = turn_until(&s, "ag", &j.job_id, 60);
    assert!(t.contains("fwd"));
    // The forward agent (a new process, as after a restart) gets it too, once.
    let t2 = turn_until(&s, "other", &j.job_id, 60);
    assert_eq!(t2.matches(&j.job_id).count(), 1);
    assert_eq!(turn(&s, "other"), "");
}

#[test]
fn corrupted_job_option_is_reported_and_others_continue() {
    let s = server!();
    let bad = start(&s, &[], &["sleep 300"]);
    let good = start(&s, &[], &["sleep 2; echo good"]);
    s.tmux(&[
        "set-option",
        "-p",
        "-t",
        &bad.pane_id,
        "@tmuxmate-job",
        "{hand edited",
    ]);
    let t = turn_until(&s, "ag", &good.job_id, 60);
    assert!(t.contains("finished (exit 0)"), "{t}");
    let list = String::from_utf8_lossy(&s.run(&["watch", "list"]).stdout).into_owned();
    wait_until("unreadable report", SLOW, || {
        let l = String::from_utf8_lossy(&s.run(&["watch", "list"]).stdout).into_owned();
        l.contains("unreadable").then_some(())
    });
    let _ = list;
}

#[test]
fn bad_input_is_refused_before_anything_starts() {
    let s = server!();
    let windows = || {
        s.tmux(&["list-windows", "-a", "-F", "#{window_id}"])
            .lines()
            .count()
    };
    let before = windows();
    let cases: &[(&[&str], &str)] = &[
        (&["--done-regex", "(unclosed"], "does not compile"),
        (&["--timeout-min", "-5"], "timeout-min"),
        (&["--timeout-min", "0"], "timeout-min"),
        (&["--timeout-min", "99999999"], "timeout-min"),
        (&["--timeout-min", "soon"], "timeout-min"),
    ];
    for (extra, msg) in cases {
        let mut args = vec!["watch", "start"];
        args.extend_from_slice(extra);
        args.extend(["--", "echo", "x"]);
        let out = s.run(&args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(msg),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = s.run(&["watch", "start", "--"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no command"));
    let out = s.run(&["watch", "show", "../etc"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(windows(), before, "nothing may start");
    assert!(
        !s.state.join("jobs/active").exists()
            || std::fs::read_dir(s.state.join("jobs/active"))
                .unwrap()
                .count()
                == 0
    );
}

#[test]
fn stop_never_kills_the_pane() {
    let s = server!();
    let j = start(&s, &[], &["sleep 300"]);
    let out = s.run(&["watch", "stop", &j.job_id]);
    assert!(out.status.success());
    assert_eq!(
        s.tmux(&["display", "-p", "-t", &j.pane_id, "#{pane_dead}"])
            .trim(),
        "0"
    );
    assert_eq!(job_state(&s, &j.job_id)["status"], "stopped");
    assert_eq!(turn(&s, "ag"), "");
}

#[test]
fn snippet_hook_restarts_a_dead_poller() {
    let s = server!();
    let conf = s.dir.join("snippet.conf");
    std::fs::write(&conf, s.run(&["init", "tmux"]).stdout).unwrap();
    s.tmux(&["source-file", conf.to_str().unwrap()]);
    let j = start(&s, &[], &["sleep 300"]);
    let pid = wait_until("the poller", SLOW, || poller_pid(&s));
    kill(pid, "-KILL");
    std::fs::remove_file(
        s.state
            .join("pollers")
            .read_dir()
            .unwrap()
            .flatten()
            .find(|e| e.path().extension().is_some_and(|x| x == "json"))
            .unwrap()
            .path(),
    )
    .unwrap();
    s.tmux(&["set-hook", "-R", "client-attached"]);
    let np = wait_until("a new poller", SLOW, || poller_pid(&s));
    assert_ne!(np, pid);
    // The status line text is pushed into the global option.
    wait_until("status option", SLOW, || {
        s.tmux(&["show", "-gqv", "@tmuxmate-watch-status"])
            .contains("1 running")
            .then_some(())
    });
    let _ = j;
}

#[test]
fn finished_watch_leaves_a_snapshot() {
    let s = server!();
    let j = start(&s, &[], &["echo snap-me"]);
    turn_until(&s, "ag", &j.job_id, 60);
    let out = String::from_utf8_lossy(&s.run(&["snapshots"]).stdout).into_owned();
    assert!(out.contains(&j.pane_id), "{out}");
    assert!(out.contains("snap-me") || out.contains(&j.job_id), "{out}");
}

#[test]
fn unreadable_job_still_times_out_and_a_replaced_one_ends() {
    let s = server!();
    let j = start(&s, &["--timeout-min", "0.03"], &["sleep 300"]);
    wait_until("the poller", SLOW, || poller_pid(&s));
    s.tmux(&[
        "set-option",
        "-p",
        "-t",
        &j.pane_id,
        "@tmuxmate-job",
        "{hand edited",
    ]);
    let t = turn_until(&s, "ag", &j.job_id, 60);
    assert!(
        t.contains(&format!("tmux watch {} timed out", j.job_id)),
        "{t}"
    );
    // A second typed watch on a pane whose job still runs is refused.
    let pane = prompt_shell(&s);
    let k = start(&s, &["-t", &pane], &["sleep 300"]);
    let o = s.run(&[
        "watch", "start", "-t", &pane, "--notify", "ag", "--", "true",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("already watched"));
    // Another job's state written over it (as a restored server might): ours ends, clearly.
    let mut other: serde_json::Value = serde_json::from_str(
        s.tmux(&["show", "-pv", "-t", &pane, "@tmuxmate-job"])
            .trim(),
    )
    .unwrap();
    other["id"] = "wzzzzzz".into();
    s.tmux(&[
        "set-option",
        "-p",
        "-t",
        &pane,
        "@tmuxmate-job",
        &other.to_string(),
    ]);
    let t = turn_until(&s, "ag", &k.job_id, 60);
    assert!(t.contains("failed: job-option-replaced"), "{t}");
}

#[test]
fn a_turn_numbered_zero_makes_its_agent_known_to_watch_start() {
    let s = server!();
    let refused = s.run(&["watch", "start", "--notify", "zero", "--", "true"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no agent is known"));
    ok(s.run(&["turn", "--agent", "zero", "--turn", "0"]));
    let out = s.run(&["watch", "start", "--json", "--notify", "zero", "--", "true"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let st: Started = serde_json::from_slice(&out.stdout).unwrap();
    turn_until(&s, "zero", &st.job_id, 20);
}

fn pane_exists(s: &Server, pane: &str) -> bool {
    s.tmux(&["list-panes", "-a", "-F", "#{pane_id}"])
        .lines()
        .any(|l| l == pane)
}

/// A launched job that has ended and whose result is queued.
fn finished_window(s: &Server, notify: &str, text: &str) -> Started {
    s.known_agent(notify);
    let out = s.run(&[
        "watch",
        "start",
        "--json",
        "--notify",
        notify,
        "--",
        &format!("echo {text}"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Started = serde_json::from_slice(&out.stdout).unwrap();
    wait_until("the job to finish", SLOW, || {
        let v = job_state(s, &j.job_id);
        (v["status"] == "finished" && v["queued"] == true).then_some(())
    });
    j
}

#[test]
fn finished_watch_windows_beyond_the_kept_close_once_delivered_and_untouched() {
    let s = server!();
    s.tmux(&["set-option", "-g", "@tmuxmate-watch-windows-kept", "1"]);
    let a = finished_window(&s, "ag", "A-OUT"); // typed into later: kept
    let b = finished_window(&s, "ag", "B-OUT"); // delivered, untouched: closed
    let c = finished_window(&s, "bg", "C-OUT"); // its agent was never told: kept
    let d = finished_window(&s, "ag", "D-OUT"); // the newest: kept
    let mut told = String::new();
    wait_until("A, B and D to be delivered", SLOW, || {
        told.push_str(&turn(&s, "ag"));
        [&a, &b, &d]
            .iter()
            .all(|j| told.contains(&format!("tmux watch {} ", j.job_id)))
            .then_some(())
    });
    // The first tidy (at the next start) only notes each window's activity.
    finished_window(&s, "ag", "E-OUT");
    assert!(pane_exists(&s, &b.pane_id), "closed at the first look");
    // A person types into A's shell.
    s.tmux(&["send-keys", "-t", &a.pane_id, "-l", "echo PERSON-TYPED"]);
    s.tmux(&["send-keys", "-t", &a.pane_id, "Enter"]);
    wait_until("the typed command's output", SLOW, || {
        s.tmux(&["capture-pane", "-p", "-t", &a.pane_id])
            .lines()
            .any(|l| l == "PERSON-TYPED")
            .then_some(())
    });
    finished_window(&s, "ag", "F-OUT");
    wait_until("B's window to close", SLOW, || {
        (!pane_exists(&s, &b.pane_id)).then_some(())
    });
    for (name, j) in [("typed into", &a), ("untold", &c), ("newest", &d)] {
        assert!(pane_exists(&s, &j.pane_id), "the {name} window was closed");
    }
    let log = std::fs::read_to_string(s.state.join("log")).unwrap_or_default();
    assert!(
        log.contains(&format!("watch {}: closed its finished window", b.job_id)),
        "{log}"
    );
}
