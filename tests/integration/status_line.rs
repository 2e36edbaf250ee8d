//! The watch counts tell the truth: a stopped job is not running, "done" counts results
//! the agent has not been told yet, and `list` marks a pane watched only while its job runs.

use std::time::Duration;

use crate::server;
use crate::util::*;

fn start(s: &Server, cmd: &str) -> (String, String) {
    // --notify takes only an agent someone reads: one per-turn call makes `ag` known.
    s.known_agent("ag");
    let out = ok(s.run(&["watch", "start", "--json", "--notify", "ag", "--", cmd]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    (
        v["jobId"].as_str().unwrap().to_string(),
        v["paneId"].as_str().unwrap().to_string(),
    )
}

fn status(s: &Server) -> String {
    s.tmux(&["show", "-gqv", "@tmuxmate-watch-status"])
        .trim_end_matches('\n')
        .to_string()
}

fn wait_status(s: &Server, want: &str) {
    let mut seen = String::new();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_until(&format!("status {want:?}"), Duration::from_secs(15), || {
            seen = status(s);
            (seen == want).then_some(())
        })
    }));
    assert!(r.is_ok(), "status stayed {seen:?}, wanted {want:?}");
}

#[test]
fn a_stopped_job_is_not_running() {
    let s = server!();
    let (id, _) = start(&s, "sleep 300");
    wait_status(&s, "watch 1 running");
    ok(s.run(&["watch", "stop", &id]));
    // Stopped is neither running nor a result waiting for the agent.
    wait_status(&s, "");
}

#[test]
fn done_counts_only_what_the_agent_has_not_been_told() {
    let s = server!();
    let (a, _) = start(&s, "echo first");
    let (_b, _) = start(&s, "sleep 300");
    wait_status(&s, "watch 1 running · 1 done");
    let told = ok(s.run(&["turn", "--agent", "ag"]));
    assert!(told.contains(&format!("tmux watch {a} finished")), "{told}");
    // The turn that delivered it updates the count itself.
    assert_eq!(status(&s), "watch 1 running");
    // With no poller left (killed here; an idle one exits by itself), a result still
    // waiting is counted, and the turn that delivers it clears it.
    ok(s.run(&["watch", "stop", &_b]));
    let (c, _) = start(&s, "echo second");
    wait_status(&s, "watch 1 done");
    let pid = wait_until("the poller's pid", Duration::from_secs(10), || {
        poller_pid(&s)
    });
    std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    let told = ok(s.run(&["turn", "--agent", "ag"]));
    assert!(told.contains(&format!("tmux watch {c} finished")), "{told}");
    assert_eq!(status(&s), "");
}

fn poller_pid(s: &Server) -> Option<i64> {
    for e in std::fs::read_dir(s.state.join("pollers")).ok()?.flatten() {
        if e.path().extension().is_some_and(|x| x == "json") {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(e.path()).ok()?).ok()?;
            return v["pid"].as_i64();
        }
    }
    None
}

#[test]
fn list_marks_watched_only_while_the_job_runs() {
    let s = server!();
    let (_, running) = start(&s, "sleep 300");
    let (done_id, finished) = start(&s, "echo over");
    wait_until("the short job to end", Duration::from_secs(15), || {
        let v = ok(s.run(&["watch", "show", &done_id, "--json"]));
        (!v.contains("\"running\"")).then_some(())
    });
    let list = ok(s.run(&["list"]));
    let line = |p: &str| {
        list.lines()
            .find(|l| l.trim_start().starts_with(&format!("{p} ")))
            .unwrap_or_else(|| panic!("no {p} in {list}"))
            .to_string()
    };
    assert!(line(&running).contains("watched"), "{list}");
    assert!(!line(&finished).contains("watched"), "{list}");
    // JSON still carries the ended job's state for who wants it.
    let j = ok(s.run(&["list", "--json"]));
    assert!(j.contains(&done_id), "{j}");
}
