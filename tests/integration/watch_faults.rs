//! Watch jobs under faults: start races with a live poller, two servers
//! with the same pane ids, builtins typed into bash/zsh/fish/dash, parallel hooks while
//! jobs end, `watch start` killed at random moments, leftover files, per-line regex
//! anchors and the copy-mode advice.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::server;
use crate::util::*;
use crate::watch::{SLOW, Started, poller_pid, prompt_shell, start, turn};

/// A job's mirror, read straight from the state dir (`done` first: a job is written
/// there before it leaves `active`).
fn read_job(state: &Path, id: &str) -> Option<serde_json::Value> {
    ["done", "active"].iter().find_map(|d| {
        let t = std::fs::read_to_string(state.join(format!("jobs/{d}/{id}.json"))).ok()?;
        serde_json::from_str(&t).ok()
    })
}

/// Wait until the job has ended and its result is queued; its final state.
fn ended(state: &Path, id: &str, deadline: Duration) -> serde_json::Value {
    wait_until(&format!("watch {id} to end"), deadline, || {
        read_job(state, id).filter(|j| j["status"] != "running" && j["queued"] == true)
    })
}

fn started(out: std::process::Output) -> Started {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn log_text(s: &Server) -> String {
    std::fs::read_to_string(s.state.join("log")).unwrap_or_default()
}

/// How often each job's result appears in `text`.
fn deliveries(text: &str, ids: &[String]) -> Vec<(String, usize)> {
    ids.iter()
        .map(|id| {
            (
                id.clone(),
                text.matches(&format!("tmux watch {id} ")).count(),
            )
        })
        .collect()
}

/// The agent's turns until nothing more is delivered.
fn drain(s: &Server, agent: &str) -> String {
    let mut all = String::new();
    loop {
        let t = turn(s, agent);
        if t.is_empty() {
            return all;
        }
        all.push_str(&t);
    }
}

/// A long job that keeps the server's poller alive; waits until the poller runs.
fn live_poller(s: &Server) -> Started {
    let keep = start(s, &[], &["sleep 600"]);
    wait_until("the poller", SLOW, || poller_pid(s));
    keep
}

#[test]
fn hundred_quick_starts_with_a_live_poller_end_right_and_none_unreadable() {
    let s = server!();
    live_poller(&s);
    // Typed jobs each get their own idle shell, made before the tight loop.
    let shells: Vec<String> = (0..50).map(|_| prompt_shell(&s)).collect();
    let mut jobs = Vec::new(); // (id, expected status, expected exit)
    for i in 0..100usize {
        let (j, status, exit) = match i % 4 {
            0 => {
                let code = (i % 7) as i64;
                let j = start(&s, &[], &[&format!("exit {code}")]);
                (j, "finished", Some(code))
            }
            1 => {
                let re = format!("^R{i} OK$");
                let j = start(
                    &s,
                    &["--done-regex", &re],
                    &[&format!("echo R{i} OK; sleep 60")],
                );
                (j, "matched", None)
            }
            2 => {
                let j = start(&s, &["-t", &shells[i / 4 * 2]], &[&format!("echo T{i}")]);
                (j, "finished", None)
            }
            _ => {
                let re = format!("X{i}Y$");
                let j = start(
                    &s,
                    &["-t", &shells[i / 4 * 2 + 1], "--done-regex", &re],
                    &[&format!("echo X{i}Y; sleep 60")],
                );
                (j, "matched", None)
            }
        };
        jobs.push((j.job_id, status, exit));
    }
    let mut wrong = Vec::new();
    for (id, status, exit) in &jobs {
        let j = ended(&s.state, id, SLOW);
        if j["status"] != *status || (exit.is_some() && j["exitStatus"].as_i64() != *exit) {
            wrong.push(format!("{id}: {j}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong outcomes: {wrong:#?}",
        wrong.len()
    );
    let log = log_text(&s);
    assert!(
        !log.contains("unreadable"),
        "a job was seen unreadable: {log}"
    );
    // Each result reaches the agent exactly once.
    let ids: Vec<String> = jobs.iter().map(|j| j.0.clone()).collect();
    let got = deliveries(&drain(&s, "ag"), &ids);
    let lost = got.iter().filter(|(_, n)| *n == 0).count();
    let doubled = got.iter().filter(|(_, n)| *n > 1).count();
    assert_eq!((lost, doubled), (0, 0), "{got:?}");
    eprintln!("stress: 100 starts: 0 wrong outcomes, {lost} lost, {doubled} doubled, 0 unreadable");
}

#[test]
fn two_servers_with_the_same_pane_ids_keep_their_own_jobs() {
    let a = server!();
    let b = server!();
    // One state dir for both, as for a user running two servers.
    let on = |s: &Server, args: &[&str]| {
        let mut c = s.tmuxmate();
        c.env("TMUXMATE_STATE_DIR", &a.state).args(args);
        c.output().unwrap()
    };
    // --notify takes only an agent someone reads: one per-turn call makes `ag` known.
    assert!(on(&a, &["turn", "--agent", "ag"]).status.success());
    let mut jobs = Vec::new(); // (server, id, pane, exit)
    for i in 0..20 {
        for (n, s) in [(0, &a), (1, &b)] {
            let code = (i + n) % 5;
            let cmd = format!("sleep 0.{}; exit {code}", i % 4);
            let j = started(on(
                s,
                &["watch", "start", "--json", "--notify", "ag", "--", &cmd],
            ));
            jobs.push((n, j.job_id, j.pane_id, code as i64));
        }
    }
    // The two servers really reuse each other's pane ids.
    for pair in jobs.chunks(2) {
        assert_eq!(pair[0].2, pair[1].2, "{pair:?}");
    }
    // Per-turn calls from both sides while the jobs end (they repair every server).
    let turns: Vec<_> = (0..10)
        .map(|k| {
            let s = if k % 2 == 0 { &a } else { &b };
            let mut c = s.tmuxmate();
            c.env("TMUXMATE_STATE_DIR", &a.state)
                .args(["turn", "--agent", "ag"])
                .stdout(std::process::Stdio::piped());
            c.spawn().unwrap()
        })
        .collect();
    let mut wrong = Vec::new();
    for (n, id, pane, code) in &jobs {
        let j = ended(&a.state, id, SLOW);
        if j["status"] != "finished" || j["exitStatus"].as_i64() != Some(*code) {
            wrong.push(format!("server {n} {id} {pane}: {j}"));
        }
    }
    let mut seen: String = turns
        .into_iter()
        .map(|t| String::from_utf8_lossy(&t.wait_with_output().unwrap().stdout).into_owned())
        .collect();
    assert!(wrong.is_empty(), "false outcomes: {wrong:#?}");
    // Every result delivered once, whichever server's turn delivered it.
    loop {
        let o = on(&b, &["turn", "--agent", "ag"]);
        let t = String::from_utf8_lossy(&o.stdout).into_owned();
        if t.is_empty() {
            break;
        }
        seen.push_str(&t);
    }
    let ids: Vec<String> = jobs.iter().map(|j| j.1.clone()).collect();
    let got = deliveries(&seen, &ids);
    let lost = got.iter().filter(|(_, n)| *n == 0).count();
    let doubled = got.iter().filter(|(_, n)| *n > 1).count();
    assert_eq!((lost, doubled), (0, 0), "{got:?}");
    // Each pane's option holds its own server's job.
    for (n, id, pane, _) in &jobs {
        let s = if *n == 0 { &a } else { &b };
        let opt = s.tmux(&["show", "-pv", "-t", pane, "@tmuxmate-job"]);
        assert!(
            opt.contains(&format!("\"id\":\"{id}\"")),
            "{n} {pane}: {opt}"
        );
    }
    eprintln!("stress: 2 servers x 20 jobs: 0 false outcomes, {lost} lost, {doubled} doubled");
}

/// The path of `name` on PATH.
fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// An interactive `shell` with a clean configuration and the prompt `P> ` in a new
/// window, once the prompt is drawn. None (the test is skipped) only outside CI.
fn shell_pane(s: &Server, shell: &str) -> Option<String> {
    if which(shell).is_none() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{shell} is not installed, and CI=true: .ci/run installs it with apt-get");
        }
        eprintln!("SKIP: {shell} is not installed (apt-get install {shell})");
        return None;
    }
    let cmd = match shell {
        "bash" => "exec env PS1='P> ' bash --norc --noprofile -i".to_string(),
        "zsh" => "exec env PS1='P> ' zsh -f -i".to_string(),
        "fish" => {
            "exec fish --no-config -i -C 'function fish_prompt; echo -n \"P> \"; end'".to_string()
        }
        other => format!("exec env PS1='P> ' {other} -i"),
    };
    let pane = s.window(shell, &cmd);
    wait_until(&format!("the {shell} prompt"), SLOW, || {
        s.tmux(&["capture-pane", "-p", "-t", &pane])
            .lines()
            .any(|l| l.starts_with("P>"))
            .then_some(())
    });
    Some(pane)
}

fn typed(s: &Server, pane: &str, cmd: &str) -> String {
    start(s, &["-t", pane], &[cmd]).job_id
}

#[test]
fn typed_builtins_end_at_the_prompt_in_bash_zsh_fish_and_dash() {
    let s = server!();
    live_poller(&s);
    let mut report = Vec::new();
    for shell in ["bash", "zsh", "fish", "dash"] {
        let Some(pane) = shell_pane(&s, shell) else {
            continue;
        };
        for cmd in ["echo x; true", "true", "cd /tmp"] {
            let id = typed(&s, &pane, cmd);
            let j = ended(&s.state, &id, SLOW);
            let took = j["end"].as_u64().unwrap() - j["start"].as_u64().unwrap();
            assert_eq!(j["status"], "finished", "{shell} {cmd:?}: {j}");
            assert!(
                took < 1000,
                "{shell} {cmd:?} took {took} ms to be seen: {j}"
            );
            report.push(format!("{shell} {cmd:?} {took} ms"));
        }
        // A command with a child is not cut short, and its end is seen too.
        let id = typed(&s, &pane, "sleep 0.4; echo after");
        let j = ended(&s.state, &id, SLOW);
        let took = j["end"].as_u64().unwrap() - j["start"].as_u64().unwrap();
        assert!((400..5000).contains(&took), "{shell}: {took} ms: {j}");
        assert!(j["tail"].as_str().unwrap().contains("after"), "{j}");
        // A builtin waiting for input is not the prompt in bash and zsh (dash and fish
        // read their prompt the same way as `read`: documented, not tested there).
        if shell == "bash" || shell == "zsh" {
            let id = typed(&s, &pane, "read line");
            // Two poller looks and more: it must still run.
            let t0 = Instant::now();
            wait_until("half a second", SLOW, || {
                (t0.elapsed() > Duration::from_millis(500)).then_some(())
            });
            assert_eq!(
                read_job(&s.state, &id).unwrap()["status"],
                "running",
                "{shell}: `read` is not the prompt"
            );
            s.tmux(&["send-keys", "-t", &pane, "-l", "hello"]);
            s.tmux(&["send-keys", "-t", &pane, "Enter"]);
            assert_eq!(ended(&s.state, &id, SLOW)["status"], "finished", "{shell}");
        }
    }
    eprintln!("prompt detection: {report:?}");
}

#[test]
fn fifty_parallel_hooks_while_jobs_end_never_panic() {
    let s = server!();
    let agent = "5eed0000-0000-4000-8000-00000000c1a1"; // the fixture's session id
    ok(s.run(&["turn", "--agent", agent]));
    // Enough ended jobs that every completion prunes `jobs/done`.
    let done = s.state.join("jobs/done");
    std::fs::create_dir_all(&done).unwrap();
    for i in 0..260 {
        std::fs::write(done.join(format!("wold{i}.json")), "{}").unwrap();
    }
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hook-claude-UserPromptSubmit.json");
    let mut ids = Vec::new();
    for round in 0..3 {
        for i in 0..8 {
            let cmd = format!("sleep 0.{}; echo r{round}j{i}", i % 3);
            let args = ["watch", "start", "--json", "--notify", agent, "--", &cmd];
            ids.push(started(s.run(&args)).job_id);
        }
        let hooks: Vec<_> = (0..50)
            .map(|_| {
                let mut c = s.tmuxmate();
                c.args(["hook", "claude"])
                    .stdin(std::fs::File::open(&fixture).unwrap())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped());
                c.spawn().unwrap()
            })
            .collect();
        for h in hooks {
            let o = h.wait_with_output().unwrap();
            assert_eq!(
                o.status.code(),
                Some(0),
                "hook failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(
                o.stdout.is_empty()
                    || serde_json::from_slice::<serde_json::Value>(&o.stdout).is_ok(),
                "not JSON: {}",
                String::from_utf8_lossy(&o.stdout)
            );
            assert!(
                !String::from_utf8_lossy(&o.stderr).contains("panicked"),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
    for id in &ids {
        ended(&s.state, id, SLOW);
    }
    // The last writers may still be renaming (a temp file counts until then) or pruning:
    // the bound holds once they are done.
    wait_until("jobs/done to keep at most 200 files", SLOW, || {
        (std::fs::read_dir(&done).unwrap().count() <= 200).then_some(())
    });
}

/// Windows of launched watches: (window name, pane id).
fn watch_windows(s: &Server) -> Vec<(String, String)> {
    s.tmux(&["list-panes", "-a", "-F", "#{window_name}\t#{pane_id}"])
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .filter(|(n, _)| n.starts_with("watch w"))
        .map(|(n, p)| (n.to_string(), p.to_string()))
        .collect()
}

#[test]
fn watch_start_killed_at_random_moments_leaves_no_blocked_window() {
    let s = server!();
    ok(s.run(&["turn", "--agent", "ag"]));
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut killed = 0;
    let keep = live_poller(&s);
    for _ in 0..30 {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        // A start takes 15-20 ms on a quiet machine (up to ~250 under load): most kills
        // must land inside it.
        let delay = Duration::from_millis(if (seed >> 40).is_multiple_of(4) {
            (seed >> 33) % 250
        } else {
            (seed >> 33) % 25
        });
        let mut c = s.tmuxmate();
        c.args([
            "watch",
            "start",
            "--json",
            "--notify",
            "ag",
            "--",
            "sleep 0.3",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
        let mut child = c.spawn().unwrap();
        // The fault: SIGKILL at a random moment of the start.
        std::thread::sleep(delay);
        if child.try_wait().unwrap().is_none() {
            killed += 1;
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    assert!(killed > 0, "no start was killed mid-way");
    // Every window either belongs to a recorded job (which then ends) or goes.
    wait_until("no window without a job", SLOW, || {
        watch_windows(&s)
            .iter()
            .all(|(name, _)| read_job(&s.state, &name["watch ".len()..]).is_some())
            .then_some(())
    });
    let jobs: Vec<String> = std::fs::read_dir(s.state.join("jobs/active"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.strip_suffix(".json").map(str::to_string)
                })
                .filter(|id| *id != keep.job_id)
                .collect()
        })
        .unwrap_or_default();
    let (mut finished, mut gone) = (0, 0);
    for id in &jobs {
        let j = ended(&s.state, id, SLOW);
        if j["status"] == "finished" {
            finished += 1;
        } else {
            assert_eq!(j["detail"], "pane-gone", "{j}");
            gone += 1;
        }
    }
    wait_until("no gate left", SLOW, || {
        std::fs::read_dir(s.state.join("jobs/gates"))
            .map(|rd| rd.count() == 0)
            .unwrap_or(true)
            .then_some(())
    });
    eprintln!(
        "stress: 30 starts, {killed} killed mid-way: {finished} ran, {gone} recorded then their window went, 0 blocked windows"
    );
}

#[test]
fn ended_jobs_leave_no_files_and_listing_ignores_temp_files() {
    let s = server!();
    // The pipe of a --done-regex job goes when the job ends.
    let r = start(
        &s,
        &["--done-regex", "PIPE-OK"],
        &["echo PIPE-OK; sleep 60"],
    );
    let j = ended(&s.state, &r.job_id, SLOW);
    assert_eq!(j["status"], "matched");
    let pipe = j["pipe"].as_str().unwrap().to_string();
    assert!(!Path::new(&pipe).exists(), "{pipe} was left behind");
    // An unreadable flag goes when its job ends.
    let u = start(&s, &[], &["sleep 300"]);
    wait_until("the poller", SLOW, || poller_pid(&s));
    s.tmux(&[
        "set-option",
        "-p",
        "-t",
        &u.pane_id,
        "@tmuxmate-job",
        "{hand edited",
    ]);
    let flag = s.state.join(format!("jobs/{}.unreadable", u.job_id));
    wait_until("the unreadable flag", SLOW, || flag.exists().then_some(()));
    ok(s.run(&["watch", "stop", &u.job_id]));
    assert_eq!(ended(&s.state, &u.job_id, SLOW)["status"], "stopped");
    assert!(!flag.exists(), "the unreadable flag was left behind");
    // A writer killed before its rename leaves `<id>.tmp.<pid>`: never a job, and
    // removed once it is a minute old. So are pipes and gates of jobs that ended.
    let real =
        std::fs::read_to_string(s.state.join(format!("jobs/done/{}.json", r.job_id))).unwrap();
    let mut fake: serde_json::Value = serde_json::from_str(&real).unwrap();
    fake["id"] = "wtmpjob".into();
    fake["status"] = "running".into();
    fake["queued"] = false.into();
    let active = s.state.join("jobs/active");
    std::fs::create_dir_all(&active).unwrap();
    let young = active.join("wtmpjob.tmp.4242");
    let old = active.join("wtmpold.tmp.4243");
    let old_pipe = s.state.join("jobs/pipes/wgone.out");
    let old_gate = s.state.join("jobs/gates/wgone");
    // A `watch start` killed during its writability probe leaves an empty `.probe-*`.
    let old_probe = active.join(".probe-000000000004242x1");
    std::fs::create_dir_all(old_gate.parent().unwrap()).unwrap();
    for p in [&young, &old, &old_pipe, &old_gate] {
        std::fs::write(p, fake.to_string()).unwrap();
    }
    std::fs::write(&old_probe, "").unwrap();
    let past = std::time::SystemTime::now() - Duration::from_secs(120);
    for p in [&old, &old_pipe, &old_gate, &old_probe] {
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(past)
            .unwrap();
    }
    let list = ok(s.run(&["watch", "list", "--json"]));
    assert!(!list.contains("wtmpjob"), "a temp file was listed: {list}");
    for p in [&old, &old_pipe, &old_gate, &old_probe] {
        assert!(!p.exists(), "{} was left behind", p.display());
    }
    assert!(young.exists(), "a young temp file may be a live writer's");
}

#[test]
fn done_regex_anchors_work_per_line_and_skip_the_typed_echo() {
    let s = server!();
    let l = start(&s, &["--done-regex", "GO1$"], &["echo GO1; sleep 60"]);
    assert_eq!(ended(&s.state, &l.job_id, SLOW)["status"], "matched");
    let pane = prompt_shell(&s);
    let t = start(
        &s,
        &["-t", &pane, "--done-regex", "^GO2$"],
        &["sleep 0.3; echo GO2; sleep 60"],
    );
    assert_eq!(ended(&s.state, &t.job_id, SLOW)["status"], "matched");
    // The shell's echo of the typed command holds the pattern: it does not count.
    let pane = prompt_shell(&s);
    let e = start(
        &s,
        &["-t", &pane, "--done-regex", "BUILD OK"],
        &["sleep 1; echo BUILD OK; sleep 60"],
    );
    let j = ended(&s.state, &e.job_id, SLOW);
    let took = j["end"].as_u64().unwrap() - j["start"].as_u64().unwrap();
    assert!(took >= 1000, "matched the echo after {took} ms: {j}");
    // --help says how anchors work.
    let help = ok(s.run(&["watch", "start", "--help"]));
    assert!(help.contains("multi-line"), "{help}");
}

#[test]
fn copy_mode_refusal_gives_advice_that_works() {
    let s = server!();
    let pane = prompt_shell(&s);
    ok(s.run(&["turn", "--agent", "ag"]));
    s.tmux(&["copy-mode", "-t", &pane]);
    let o = s.run(&[
        "watch", "start", "-t", &pane, "--notify", "ag", "--", "echo hi",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(err.contains("--cancel-mode"), "{err}");
    assert!(!err.contains("keys -t"), "advice `keys` refuses: {err}");
    // The advice, followed.
    let j = start(&s, &["-t", &pane, "--cancel-mode"], &["echo hi"]);
    assert_eq!(ended(&s.state, &j.job_id, SLOW)["status"], "finished");
    assert_eq!(
        s.tmux(&["display", "-p", "-t", &pane, "#{pane_in_mode}"])
            .trim(),
        "0"
    );
}

#[test]
fn an_unreadable_verdict_ends_when_the_option_is_valid_again() {
    let s = server!();
    let go = s.dir.join("go");
    let cmd = format!(
        "while [ ! -e '{}' ]; do sleep 0.05; done; echo LATE-OK; sleep 60",
        go.display()
    );
    let j = start(&s, &["--done-regex", "^LATE-OK$"], &[&cmd]);
    wait_until("the poller", SLOW, || poller_pid(&s));
    let valid = s.tmux(&["show", "-pv", "-t", &j.pane_id, "@tmuxmate-job"]);
    let valid = valid.trim_end();
    s.tmux(&[
        "set-option",
        "-p",
        "-t",
        &j.pane_id,
        "@tmuxmate-job",
        "{hand edited",
    ]);
    let flag = s.state.join(format!("jobs/{}.unreadable", j.job_id));
    wait_until("the unreadable verdict", SLOW, || {
        flag.exists().then_some(())
    });
    // Restored (as a restore tool or the user might): the job is watched fully again.
    s.tmux(&["set-option", "-p", "-t", &j.pane_id, "@tmuxmate-job", valid]);
    wait_until("the verdict to be withdrawn", SLOW, || {
        (!flag.exists()).then_some(())
    });
    std::fs::write(&go, "").unwrap();
    assert_eq!(ended(&s.state, &j.job_id, SLOW)["status"], "matched");
}

/// What a `watch start -t` SIGKILLed between writing the pane's option and the job's
/// record leaves: the pane's `@tmuxmate-job` says running, and no record exists.
fn plant_ghost(s: &Server, pane: &str, template: &serde_json::Value, id: &str, age_ms: u64) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let mut g = template.clone();
    g["id"] = id.into();
    g["status"] = "running".into();
    g["start"] = (now - age_ms).into();
    g["deadline"] = (now + 3_600_000).into();
    g["queued"] = false.into();
    s.tmux(&[
        "set-option",
        "-p",
        "-t",
        pane,
        "@tmuxmate-job",
        &g.to_string(),
    ]);
}

#[test]
fn a_ghost_job_left_by_a_killed_start_does_not_hold_the_pane_for_good() {
    let s = server!();
    let pane = prompt_shell(&s);
    let first = start(&s, &["-t", &pane], &["true"]);
    let done = ended(&s.state, &first.job_id, SLOW);
    // A start in progress (its option written a moment ago) still holds the pane.
    plant_ghost(&s, &pane, &done, "wghostyoung", 0);
    let out = s.run(&[
        "watch", "start", "--notify", "ag", "-t", &pane, "--", "true",
    ]);
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("already watched") && e.contains("wghostyoung"),
        "{e}"
    );
    // One with no record, older than any start takes: the next start takes the pane.
    plant_ghost(&s, &pane, &done, "wghostold", 60_000);
    let next = start(&s, &["-t", &pane], &["echo AFTER-GHOST"]);
    let j = ended(&s.state, &next.job_id, SLOW);
    assert_eq!(j["status"], "finished", "{j}");
    assert!(log_text(&s).contains("wghostold"), "the takeover is logged");
}
