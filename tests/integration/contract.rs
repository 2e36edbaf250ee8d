//! The JSON contract (docs/json.md), one test per command family: each runs the real
//! command with `--json` on a private tmux server and deserializes the whole output into
//! its `deny_unknown_fields` type in `tests/util/contract.rs`, so a key that is added,
//! removed or renamed fails here. The same-key-same-meaning rules are asserted too: ids
//! as tmux prints them under `paneId`/`windowId`/`sessionId`, `target` the resolved
//! `session:window.pane`, indexes as numbers, `jobId` in every watch shape.
//!
//! The agent bridge's shapes are pinned where its stand-in CLIs live (bridge.rs), with
//! the same types.

use std::time::Duration;

use crate::server;
use crate::util::contract::*;
use crate::util::*;

fn json<T: serde::de::DeserializeOwned>(s: &Server, args: &[&str]) -> T {
    let out = s.run(args);
    parse(&args.join(" "), ok(&out).as_bytes())
}

fn fixture(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn where_and_turn_shapes() {
    let s = server!();
    let a = s.agent_pane("agent");
    let r = a.sh("\"$TM\" where --json");
    assert_eq!(r.rc, 0, "{}", r.out);
    let w: WhereJson = parse("where --json", r.out.as_bytes());
    assert_eq!(w.pane_id, a.pane);
    assert_eq!(w.target, s.address(&a.pane));
    assert_eq!(w.session_name, "main");
    let idx = s.tmux(&["display", "-p", "-t", &a.pane, "#{window_index}"]);
    assert_eq!(w.window_index.to_string(), idx.trim(), "a number");
    // A number, as tmux numbers it (a user's pane-base-index can make the first pane 1).
    let pidx = s.tmux(&["display", "-p", "-t", &a.pane, "#{pane_index}"]);
    assert_eq!(w.pane_index.to_string(), pidx.trim(), "a number");
    let r = a.sh("\"$TM\" turn --agent shape --json");
    assert_eq!(r.rc, 0, "{}", r.out);
    let t: TurnJson = parse("turn --json", r.out.as_bytes());
    assert_eq!((t.agent.as_str(), t.turn, t.items.len()), ("shape", 1, 1));
    // The hook answers in the harness's own shape.
    let r = a.sh(&format!(
        "\"$TM\" hook claude < '{}'",
        a.fixture("hook-claude-UserPromptSubmit.json").display()
    ));
    assert_eq!(r.rc, 0, "{}", r.out);
    let h: HookJson = parse("hook claude", r.out.as_bytes());
    assert_eq!(h.hook_specific_output.hook_event_name, "UserPromptSubmit");
}

#[test]
fn list_shape_uses_one_id_naming() {
    let s = server!();
    let pane = s.window("w1", "sh");
    let l: ListJson = json(&s, &["list", "--json"]);
    let sid = s.tmux(&["display", "-p", "-t", &pane, "#{session_id}"]);
    let wid = s.tmux(&["display", "-p", "-t", &pane, "#{window_id}"]);
    let widx = s.tmux(&["display", "-p", "-t", &pane, "#{window_index}"]);
    assert!(l.sessions.iter().any(|x| x.session_id == sid.trim()));
    let w = l
        .windows
        .iter()
        .find(|w| w.window_id == wid.trim())
        .unwrap();
    assert_eq!(w.index.to_string(), widx.trim());
    assert_eq!(w.session_id, sid.trim());
    let p = l.panes.iter().find(|p| p.pane_id == pane).unwrap();
    assert_eq!(p.target, s.address(&pane));
    assert_eq!(
        (p.window_id.as_str(), p.session_id.as_str()),
        (wid.trim(), sid.trim())
    );
    assert!(p.watch.is_none() && p.created_by.is_none() && !p.created_by_us);
    for id in l.sessions.iter().map(|x| &x.session_id) {
        assert!(id.starts_with('$'), "{id}");
    }
    for id in l.windows.iter().map(|x| &x.window_id) {
        assert!(id.starts_with('@'), "{id}");
    }
}

#[test]
fn input_and_capture_shapes() {
    let s = server!();
    let rec = s.recorder_pane("rec");
    let addr = s.address(&rec.pane);
    let r: SentJson = json(&s, &["send", "-t", &rec.pane, "--json", "--enter", "hi"]);
    assert_eq!(
        (r.target.as_str(), r.pane_id.as_str(), r.sent, r.enter),
        (addr.as_str(), rec.pane.as_str(), 2, true)
    );
    let r: PastedJson = json(&s, &["paste", "-t", &rec.pane, "--json", "a\nb"]);
    assert_eq!(
        (r.target.as_str(), r.pane_id.as_str(), r.lines),
        (addr.as_str(), rec.pane.as_str(), 2)
    );
    let r: PressedJson = json(&s, &["keys", "-t", &rec.pane, "Tab", "--json"]);
    assert_eq!(
        (r.target.as_str(), r.pane_id.as_str()),
        (addr.as_str(), rec.pane.as_str())
    );
    assert_eq!(r.keys, ["Tab"]);
    let c: CaptureJson = json(&s, &["capture", "-t", &rec.pane, "--json"]);
    assert_eq!(
        (c.target.as_str(), c.pane_id.as_str()),
        (addr.as_str(), rec.pane.as_str())
    );
    assert!(c.text.contains("stand-in ready"), "{}", c.text);
}

#[test]
fn create_swap_run_kill_shapes() {
    let s = server!();
    let shell = s.window("shell", "sh");
    let sp: CreatedJson = json(&s, &["split", "-t", &shell, "--json", "--", "sh"]);
    assert!(sp.pane_id.starts_with('%'));
    assert_eq!(sp.target, s.address(&sp.pane_id));
    let nw: CreatedJson = json(&s, &["new-window", "--json", "--", "sh"]);
    assert_eq!(nw.target, s.address(&nw.pane_id));
    // swap: positional and flag forms, the same shape (the two pane ids).
    let sw: SwappedJson = json(&s, &["swap", &shell, &sp.pane_id, "--json"]);
    assert_eq!(
        sw,
        SwappedJson {
            src: shell.clone(),
            dst: sp.pane_id.clone()
        }
    );
    // Given as an address, reported as the id.
    let sp_addr = s.address(&sp.pane_id);
    let sw: SwappedJson = json(&s, &["swap", "--src", &sp_addr, "--dst", &shell, "--json"]);
    assert_eq!(
        sw,
        SwappedJson {
            src: sp.pane_id.clone(),
            dst: shell.clone()
        }
    );
    let r: RunJson = json(
        &s,
        &[
            "run",
            "--json",
            "--timeout",
            "60s",
            "--",
            "sh",
            "-c",
            "echo out; exit 3",
        ],
    );
    assert_eq!(
        (r.exit_status, r.text.as_str(), r.kept),
        (Some(3), "out", false)
    );
    assert!(r.pane_id.starts_with('%'));
    // kill: `target` is the killed pane's address, its id under paneId.
    let addr = s.address(&nw.pane_id);
    let k: KillJson = json(
        &s,
        &["kill", "pane", "-t", &nw.pane_id, "--confirm", "--json"],
    );
    assert_eq!(
        k,
        KillJson {
            scope: "pane".into(),
            target: Some(addr),
            pane_id: Some(nw.pane_id.clone()),
            window_id: None,
            session_id: None,
            killed: true
        }
    );
}

#[test]
fn snapshot_shapes() {
    let s = server!();
    let pane = s.window("w", "sh");
    let _: CaptureJson = json(&s, &["capture", "-t", &pane, "--json"]);
    let rows: Vec<SnapshotRow> = json(&s, &["snapshots", "--json"]);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].pane_id, pane);
    let full: SnapshotFull = json(&s, &["snapshots", "--json", "show", &rows[0].snapshot_id]);
    assert_eq!(full.snapshot_id, rows[0].snapshot_id);
    let c: ClearedJson = json(&s, &["snapshots", "clear", "--json"]);
    assert_eq!(c.cleared, 1);
}

#[test]
fn watch_shapes_name_the_job_job_id_everywhere() {
    let s = server!();
    s.known_agent("ag");
    let st: WatchStartedJson = json(
        &s,
        &[
            "watch",
            "start",
            "--json",
            "--notify",
            "ag",
            "--timeout",
            "10m",
            "--",
            "sleep 300",
        ],
    );
    let shown: JobJson = json(&s, &["watch", "show", &st.job_id, "--json"]);
    assert_eq!(
        (shown.job_id.as_str(), shown.pane_id.as_str()),
        (st.job_id.as_str(), st.pane_id.as_str())
    );
    assert_eq!(shown.status, "running");
    let within = shown.deadline.saturating_sub(shown.start);
    assert!(
        (599_000..=601_000).contains(&within),
        "--timeout 10m: {within} ms"
    );
    let listed: Vec<JobJson> = json(&s, &["watch", "list", "--json"]);
    assert!(listed.iter().any(|j| j.job_id == st.job_id));
    // The pane's `watch` in `list` is the same shape.
    let l: ListJson = json(&s, &["list", "--json"]);
    let p = l.panes.iter().find(|p| p.pane_id == st.pane_id).unwrap();
    assert_eq!(
        p.watch.as_ref().map(|w| w.job_id.as_str()),
        Some(st.job_id.as_str())
    );
    let stop: WatchStoppedJson = json(&s, &["watch", "stop", &st.job_id, "--json"]);
    assert_eq!(
        (stop.job_id.as_str(), stop.stopped, stop.pane_id.as_str()),
        (st.job_id.as_str(), true, st.pane_id.as_str())
    );
    let shown: JobJson = json(&s, &["watch", "show", &st.job_id, "--json"]);
    assert_eq!(
        (shown.status.as_str(), shown.outcome.as_str()),
        ("stopped", "stopped")
    );
}

#[test]
fn digest_and_side_shapes() {
    let s = server!();
    let rec = s.recorder_pane("main");
    let t = s.dir.join("main.jsonl");
    std::fs::copy(fixture("claude-transcript.jsonl"), &t).unwrap();
    let tp = t.to_str().unwrap();
    let a: DigestAttachJson = json(
        &s,
        &[
            "digest",
            "attach",
            "-t",
            &rec.pane,
            "--transcript",
            tp,
            "--format",
            "claude",
            "--json",
        ],
    );
    assert_eq!(
        (a.pane_id.as_str(), a.format.as_deref()),
        (rec.pane.as_str(), Some("claude"))
    );
    let d: DigestShowJson = json(&s, &["digest", "show", "--transcript", tp, "--json"]);
    assert!(d.digest.counts.lines > 0);
    let d: DigestShowJson = json(&s, &["digest", "show", "-t", &rec.pane, "--json"]);
    assert_eq!(d.pane_id.as_deref(), Some(rec.pane.as_str()));
    let st: SideStatusJson = json(&s, &["side", "status", "-t", &rec.pane, "--json"]);
    assert_eq!(
        (st.pane_id.as_str(), st.state.as_str()),
        (rec.pane.as_str(), "idle")
    );
    let h: Vec<HistoryLineJson> = json(
        &s,
        &["side", "history", "-t", &rec.pane, "--limit", "3", "--json"],
    );
    assert!(!h.is_empty() && h.len() <= 3);
    let r: ReportedJson = json(&s, &["side", "report", "-t", &rec.pane, "--json", "a note"]);
    assert!(r.queued);
    assert!(rec.bytes().is_empty(), "nothing may reach the main pane");
}

#[test]
fn doctor_and_error_shapes() {
    let s = server!();
    let out = s.run(&["doctor", "--json"]);
    let d: DoctorJson = parse("doctor --json", &out.stdout);
    assert_eq!(
        d.problems,
        d.checks.iter().filter(|c| c.status == "problem").count()
    );
    for c in &d.checks {
        assert!(
            ["ok", "warning", "problem", "skipped"].contains(&c.status.as_str()),
            "{c:?}"
        );
    }
    // Every failure with --json is one error object, usage errors included.
    for (args, code, kind) in [
        (&["capture", "-t", "%999", "--json"][..], 1, None),
        (
            &["run", "--json", "--timeout", "30", "--", "true"],
            2,
            Some("usage"),
        ),
        (&["swap", "%1", "--json"], 2, Some("usage")),
        (&["watch", "show", "nope!", "--json"], 2, Some("usage")),
    ] {
        let out = s.run(args);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        let e: ErrorJson = parse(&args.join(" "), &out.stdout);
        if let Some(k) = kind {
            assert_eq!(e.error.kind, k, "{args:?}: {e:?}");
        }
        assert!(
            !e.error.kind.is_empty() && !e.error.message.is_empty(),
            "{e:?}"
        );
    }
    // A failed ask also says how far its message got.
    let args = ["agent", "ask", "no-such-agent", "--message", "hi", "--json"];
    let out = s.run(&args);
    assert_eq!(out.status.code(), Some(1));
    let e: AskFailedJson = parse("agent ask --json", &out.stdout);
    assert_eq!(e.delivery.as_deref(), Some("not-delivered"), "{e:?}");
    assert!(e.error.message.contains("no-such-agent"), "{e:?}");
}

#[test]
fn timeouts_in_one_unit_scheme_refuse_a_bare_number() {
    let s = server!();
    let out = s.run(&["run", "--timeout", "30", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("30s") && err.contains("30ms"),
        "names the fix: {err}"
    );
    // A short --timeout really bounds the wait; the old spelling still works.
    let t0 = std::time::Instant::now();
    let r: RunJson = json(
        &s,
        &["run", "--json", "--timeout", "300ms", "--", "sleep", "30"],
    );
    assert!(r.timed_out && r.kept, "{r:?}");
    assert!(t0.elapsed() < Duration::from_secs(20));
    let r: RunJson = json(
        &s,
        &["run", "--json", "--timeout-ms", "300", "--", "sleep", "30"],
    );
    assert!(r.timed_out, "{r:?}");
}
