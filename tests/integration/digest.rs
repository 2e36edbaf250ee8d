//! The live digest: the fold over real-format transcripts (bounds, incremental reads,
//! fresh starts) and the follower on a real tmux server (status pushes only on change,
//! restart from the cache, exit with its pane).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::server;
use crate::util::*;
use serde::Deserialize;

// ---- test-side JSON shapes: the contract's (tests/util/contract.rs), and the
// follower's state file (storage, pinned here) ----

#[allow(unused_imports)]
use crate::util::contract::{
    CountsJson, DigestAttachJson as AttachJson, DigestJson, DigestShowJson as ShowJson,
    DigestTurnJson as TurnJson, FailureJson, OpenTurnJson as OpenJson, TodoJson, ToolJson,
};

#[derive(Deserialize, Debug, Clone)]
#[allow(dead_code)] // every field pins the documented JSON shape
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FollowerJson {
    v: u32,
    pid: i32,
    started: u64,
    heartbeat: u64,
    transcript: String,
    offset: u64,
    lines: u64,
    read: u64,
    pushes: u64,
}

// ---- a stand-in Claude Code writing real-format transcript lines ----

/// Writes lines shaped like Claude Code 2.1's (see tests/fixtures/claude-transcript.jsonl).
struct ClaudeWriter {
    lines: Vec<String>,
    ms: u64,
    seq: u64,
}

const SID: &str = "5eed0000-0000-4000-8000-00000000d1d1";

fn iso(ms: u64) -> String {
    // 2026-11-29T00:00:00Z plus ms (stays within the day for these tests).
    let s = ms / 1000;
    format!(
        "2026-11-29T{:02}:{:02}:{:02}.{:03}Z",
        (s / 3600) % 24,
        (s / 60) % 60,
        s % 60,
        ms % 1000
    )
}

impl ClaudeWriter {
    fn new() -> Self {
        let mut w = ClaudeWriter {
            lines: Vec::new(),
            ms: 8 * 3600 * 1000,
            seq: 0,
        };
        w.raw(format!(
            r#"{{"type":"permission-mode","permissionMode":"default","sessionId":"{SID}"}}"#
        ));
        w
    }

    fn raw(&mut self, l: String) {
        self.lines.push(l);
    }

    fn uuid(&mut self) -> String {
        self.seq += 1;
        format!("00000000-0000-4000-8000-{:012}", self.seq)
    }

    fn env(&mut self, ty: &str, body: &str) -> String {
        self.ms += 700;
        let u = self.uuid();
        format!(
            r#"{{"parentUuid":null,"isSidechain":false,{body},"type":"{ty}","uuid":"{u}","timestamp":"{}","userType":"external","entrypoint":"cli","cwd":"/tmp/project","sessionId":"{SID}","version":"2.1.332","gitBranch":"HEAD"}}"#,
            iso(self.ms)
        )
    }

    fn prompt(&mut self, text: &str) {
        let body = format!(
            r#""promptId":"p","message":{{"role":"user","content":{}}},"permissionMode":"default","origin":{{"kind":"human"}}"#,
            serde_json::to_string(text).unwrap()
        );
        let l = self.env("user", &body);
        self.raw(l);
    }

    fn assistant(&mut self, msg: &str, block: serde_json::Value, stop: &str) {
        let body = format!(
            r#""message":{{"id":"{msg}","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{block}],"stop_reason":"{stop}","stop_sequence":null,"usage":{{"input_tokens":13832,"output_tokens":87}}}},"requestId":"req_{msg}""#
        );
        let l = self.env("assistant", &body);
        self.raw(l);
    }

    fn tool(&mut self, msg: &str, id: &str, name: &str, input: serde_json::Value) {
        self.assistant(
            msg,
            serde_json::json!({"type":"tool_use","id":id,"name":name,"input":input}),
            "tool_use",
        );
    }

    fn result(&mut self, id: &str, content: &str, is_error: bool, tur: serde_json::Value) {
        let block = serde_json::json!([{"tool_use_id":id,"type":"tool_result","content":content,"is_error":is_error}]);
        let body = format!(
            r#""promptId":"p","message":{{"role":"user","content":{block}}},"toolUseResult":{tur},"sourceToolAssistantUUID":"x""#
        );
        let l = self.env("user", &body);
        self.raw(l);
    }

    fn system(&mut self, subtype: &str, extra: &str) {
        let body = format!(r#""subtype":"{subtype}"{extra},"isMeta":false"#);
        let l = self.env("system", &body);
        self.raw(l);
    }

    /// One full turn: prompt, plan, a Bash call (failing when `fail`), the answer.
    fn turn(&mut self, n: usize, fail: bool) {
        self.prompt(&format!("turn {n}: run the tests\nand report"));
        let m = format!("msg_{n}_a");
        self.assistant(
            &m,
            serde_json::json!({"type":"thinking","thinking":"...","signature":"s"}),
            "tool_use",
        );
        self.assistant(
            &m,
            serde_json::json!({"type":"text","text":format!("Working on turn {n}.")}),
            "tool_use",
        );
        let todo = format!("toolu_{n}_todo");
        let items = serde_json::json!({"todos":[
            {"content":format!("Run tests {n}"),"status":"completed","activeForm":"Running"},
            {"content":format!("Report {n}"),"status":"in_progress","activeForm":"Reporting"},
            {"content":"Clean up","status":"pending","activeForm":"Cleaning"}]});
        self.tool(&m, &todo, "TodoWrite", items.clone());
        self.result(
            &todo,
            "Todos have been modified successfully.",
            false,
            serde_json::json!({"oldTodos":[],"newTodos":items["todos"]}),
        );
        let b = format!("msg_{n}_b");
        let bash = format!("toolu_{n}_bash");
        self.tool(
            &b,
            &bash,
            "Bash",
            serde_json::json!({"command":format!("cargo test --test t{n}"),"description":"tests"}),
        );
        if fail {
            self.result(
                &bash,
                &format!(
                    "error[E0425]: cannot find value `x{n}`\n{}",
                    "noise ".repeat(400)
                ),
                true,
                serde_json::json!("Error: exit code 101"),
            );
        } else {
            self.result(
                &bash,
                "test result: ok",
                false,
                serde_json::json!({"stdout":"test result: ok","stderr":"","interrupted":false}),
            );
        }
        let c = format!("msg_{n}_c");
        self.assistant(
            &c,
            serde_json::json!({"type":"text","text":format!("Turn {n} done.")}),
            "end_turn",
        );
        self.system("stop_hook_summary", r#","hookCount":1"#);
        self.system("turn_duration", r#","durationMs":4223,"messageCount":29"#);
    }

    fn text(&self) -> String {
        let mut s = self.lines.join("\n");
        s.push('\n');
        s
    }
}

fn write_file(p: &Path, s: &str) {
    std::fs::write(p, s).unwrap();
}

fn append(p: &Path, s: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
    f.write_all(s.as_bytes()).unwrap();
}

fn show(s: &Server, args: &[&str]) -> ShowJson {
    let mut a = vec!["digest", "show", "--json"];
    a.extend_from_slice(args);
    let out = s.run(&a);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn real_rig_samples_fold_without_error() {
    let s = server!();
    let c = show(&s, &["--transcript", &fixture("claude-transcript.jsonl")]);
    assert_eq!(c.format.as_deref(), Some("claude"));
    assert_eq!(c.pending_bytes, 0);
    assert_eq!(c.digest.counts.bad_lines, 0);
    assert_eq!(c.digest.counts.turns, 1);
    assert_eq!(c.digest.turns[0].outcome, "completed");
    assert_eq!(c.digest.turns[0].steps, 4);
    assert_eq!(c.digest.counts.tool_calls, 3);
    assert_eq!(c.digest.model.as_deref(), Some("claude-opus-5-5"));
    assert_eq!(c.digest.todos.len(), 2);
    assert!(c.digest.todos.iter().all(|t| t.status == "completed"));
    assert!(c.text.contains("Bash(sleep 3 && echo done)"), "{}", c.text);
    assert!(
        c.status.starts_with("turn 1 completed · todo 2/2 · "),
        "{}",
        c.status
    );

    let x = show(&s, &["--transcript", &fixture("codex-rollout.jsonl")]);
    assert_eq!(x.format.as_deref(), Some("codex"));
    assert_eq!(x.digest.counts.bad_lines, 0);
    assert_eq!(x.digest.counts.turns, 1);
    assert_eq!(
        x.digest.turns[0].prompt.as_deref(),
        Some("please run the slow thing second line of the same prompt")
    );
    assert_eq!(x.digest.model.as_deref(), Some("gpt-5.5"));
    assert_eq!(x.digest.todos.len(), 2);
    assert_eq!(x.digest.recent_tools[1].summary, "sleep 3 && echo done");

    // The plain text is exactly the JSON's `text`: one render for people and models.
    let out = s.run(&[
        "digest",
        "show",
        "--transcript",
        &fixture("codex-rollout.jsonl"),
    ]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), x.text);
}

#[test]
fn long_claude_session_fields_and_bounds() {
    let s = server!();
    let mut w = ClaudeWriter::new();
    for n in 1..=1000 {
        w.turn(n, n % 7 == 0);
        if n == 500 {
            w.system(
                "compact_boundary",
                r#","compactMetadata":{"trigger":"auto"}"#,
            );
            w.prompt("This session is being continued from a previous conversation that ran out of context.");
        }
        if n % 100 == 0 {
            // Unknown record types, unknown fields and a non-JSON line are ignored.
            w.raw(r#"{"type":"future-thing","x":{"y":[1,2,3]},"sessionId":"s"}"#.into());
            w.raw("this is not json".into());
        }
    }
    // A turn still running: tool error inside it, TaskCreate/TaskUpdate todos.
    w.prompt("the last one");
    w.tool(
        "msg_z",
        "toolu_z1",
        "TaskCreate",
        serde_json::json!({"subject":"Write docs"}),
    );
    w.result(
        "toolu_z1",
        "Task #1 created successfully: Write docs",
        false,
        serde_json::json!({"task":{"id":"1","subject":"Write docs"}}),
    );
    w.tool(
        "msg_z2",
        "toolu_z2",
        "TaskUpdate",
        serde_json::json!({"taskId":"1","status":"in_progress"}),
    );
    w.result(
        "toolu_z2",
        "Updated",
        false,
        serde_json::json!({"success":true,"taskId":"1"}),
    );
    w.tool(
        "msg_z3",
        "toolu_z3",
        "Bash",
        serde_json::json!({"command":"make lint"}),
    );
    w.result("toolu_z3", "lint failed", true, serde_json::json!("Error"));
    let p = s.dir.join("long.jsonl");
    write_file(&p, &w.text());
    let ps = p.to_string_lossy().into_owned();

    let j = show(&s, &["--transcript", &ps]);
    let d = &j.digest;
    assert_eq!(j.format.as_deref(), Some("claude"));
    assert_eq!(d.counts.turns, 1001);
    assert_eq!(d.turns.len(), 60, "finished turns are capped");
    assert_eq!(d.turns.last().unwrap().n, 1000);
    assert_eq!(d.turns.last().unwrap().outcome, "completed");
    assert_eq!(d.turns.last().unwrap().steps, 3);
    assert_eq!(
        d.turns.last().unwrap().result.as_deref(),
        Some("Turn 1000 done.")
    );
    assert_eq!(d.counts.compactions, 1);
    assert_eq!(d.counts.errors, 1000 / 7 + 1);
    assert_eq!(d.counts.bad_lines, 10);
    assert_eq!(d.counts.lines, w.lines.len() as u64);
    assert_eq!(d.goal.as_deref(), Some("turn 1: run the tests and report"));
    assert!(d.recent_tools.len() <= 8);
    let o = d.open_turn.as_ref().expect("open turn");
    assert_eq!(o.n, 1001);
    assert_eq!(o.prompt.as_deref(), Some("the last one"));
    assert_eq!(o.steps, 3);
    assert_eq!(o.failures.len(), 1);
    assert_eq!(o.failures[0].tool.as_deref(), Some("Bash(make lint)"));
    assert_eq!(d.todos.len(), 4, "TaskCreate adds to the TodoWrite list");
    let task = d.todos.iter().find(|t| t.text == "Write docs").unwrap();
    assert_eq!(
        (task.status.as_str(), task.id.as_deref()),
        ("in_progress", Some("1"))
    );
    assert_eq!(
        j.status.split(" · ").take(4).collect::<Vec<_>>(),
        ["turn 1001", "step 3", "1 failed", "todo 1/4"]
    );
    assert!(j.status.chars().count() <= 80);
    // Every string is bounded; the whole rendering too.
    for t in &d.turns {
        assert!(t.prompt.as_ref().unwrap().chars().count() <= 101);
    }
    assert!(d.last_error.as_ref().unwrap().text.chars().count() <= 301);
    assert!(j.text.len() <= 24 * 1024);
    let lines_shown = j.text.lines().filter(|l| l.starts_with("  #")).count();
    assert_eq!(lines_shown, 12, "default @tmuxmate-digest-turns");
    // --turns and the tmux option choose how many finished turns are shown (4-60).
    let j4 = show(&s, &["--transcript", &ps, "--turns", "4"]);
    assert_eq!(j4.text.lines().filter(|l| l.starts_with("  #")).count(), 4);
    s.tmux(&["set-option", "-g", "@tmuxmate-digest-turns", "60"]);
    let j60 = show(&s, &["--transcript", &ps]);
    assert_eq!(
        j60.text.lines().filter(|l| l.starts_with("  #")).count(),
        60
    );
    let bad = s.run(&["digest", "show", "--transcript", &ps, "--turns", "3"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("4 to 60"));
}

#[test]
fn codex_rollout_with_update_plan_and_events_format() {
    let s = server!();
    let mut lines = vec![
        r#"{"timestamp":"2026-11-29T21:02:34.563Z","type":"session_meta","payload":{"id":"r1","cwd":"/p","cli_version":"0.171.0","base_instructions":{"text":"long"}}}"#.to_string(),
        r#"{"timestamp":"2026-11-29T21:02:34.600Z","type":"turn_context","payload":{"turn_id":"t","model":"gpt-5.5"}}"#.to_string(),
    ];
    for n in 0..200 {
        lines.push(format!(r#"{{"timestamp":"2026-11-29T21:03:00.000Z","type":"event_msg","payload":{{"type":"task_started","turn_id":"t{n}","started_at":1795986180}}}}"#));
        lines.push(r#"{"timestamp":"2026-11-29T21:03:00.100Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n<cwd>/p</cwd>\n</environment_context>"}]}}"#.to_string());
        lines.push(format!(r#"{{"timestamp":"2026-11-29T21:03:00.200Z","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"task {n}"}}]}}}}"#));
        lines.push(format!(r#"{{"timestamp":"2026-11-29T21:03:00.200Z","type":"event_msg","payload":{{"type":"user_message","message":"task {n}"}}}}"#));
        lines.push(format!(r#"{{"timestamp":"2026-11-29T21:03:01.000Z","type":"response_item","payload":{{"type":"function_call","name":"update_plan","arguments":"{{\"plan\":[{{\"step\":\"a{n}\",\"status\":\"completed\"}},{{\"step\":\"b{n}\",\"status\":\"in_progress\"}},{{\"step\":\"c{n}\",\"status\":\"pending\"}}]}}","call_id":"p{n}"}}}}"#));
        lines.push(format!(r#"{{"timestamp":"2026-11-29T21:03:02.000Z","type":"response_item","payload":{{"type":"function_call","name":"exec_command","arguments":"{{\"cmd\":\"cargo build\"}}","call_id":"c{n}"}}}}"#));
        lines.push(format!(r#"{{"timestamp":"2026-11-29T21:03:03.000Z","type":"event_msg","payload":{{"type":"exec_command_end","call_id":"c{n}","exit_code":1,"stderr":"error: could not compile"}}}}"#));
        lines.push(format!(r#"{{"timestamp":"2026-11-29T21:03:03.100Z","type":"response_item","payload":{{"type":"function_call_output","call_id":"c{n}","output":"Process exited with code 1\nOutput:\nerror: could not compile"}}}}"#));
        lines.push(format!(r#"{{"timestamp":"2026-11-29T21:03:04.000Z","type":"event_msg","payload":{{"type":"task_complete","turn_id":"t{n}","last_agent_message":"Build fails in {n}."}}}}"#));
    }
    let p = s.dir.join("rollout.jsonl");
    write_file(&p, &(lines.join("\n") + "\n"));
    let j = show(&s, &["--transcript", &p.to_string_lossy()]);
    let d = &j.digest;
    assert_eq!(j.format.as_deref(), Some("codex"));
    assert_eq!(d.counts.turns, 200);
    assert_eq!(d.turns.len(), 60);
    assert_eq!(d.counts.errors, 200, "one failure per call id");
    assert_eq!(d.turns[59].prompt.as_deref(), Some("task 199"));
    assert_eq!(d.turns[59].result.as_deref(), Some("Build fails in 199."));
    assert_eq!(d.turns[59].errors, 1);
    assert_eq!(
        d.todos
            .iter()
            .map(|t| (t.text.as_str(), t.status.as_str()))
            .collect::<Vec<_>>(),
        [
            ("a199", "completed"),
            ("b199", "in_progress"),
            ("c199", "pending")
        ]
    );
    assert_eq!(
        d.last_error.as_ref().unwrap().tool.as_deref(),
        Some("exec_command(cargo build)")
    );

    // The generic events format (documented in src/side/digest/events.rs).
    let ev = s.dir.join("events.jsonl");
    write_file(
        &ev,
        concat!(
            r#"{"type":"goal","text":"Ship the release"}"#,
            "\n",
            r#"{"type":"model","name":"local-llm"}"#,
            "\n",
            r#"{"type":"turn_start","prompt":"tag it","time":"2026-11-29T14:00:00Z"}"#,
            "\n",
            r#"{"type":"tool_call","name":"git","summary":"git tag v1","id":"1","time":1795960860000}"#,
            "\n",
            r#"{"type":"tool_error","id":"1","text":"tag exists"}"#,
            "\n",
            r#"{"type":"todos","items":[{"text":"tag","status":"in_progress"},{"text":"push","status":"pending"}]}"#,
            "\n",
            r#"{"type":"assistant_text","text":"Retrying."}"#,
            "\n",
        ),
    );
    let j = show(&s, &["--transcript", &ev.to_string_lossy()]);
    assert_eq!(j.format.as_deref(), Some("events"));
    assert_eq!(j.digest.goal.as_deref(), Some("Ship the release"));
    assert_eq!(j.digest.goal_source.as_deref(), Some("goal"));
    let o = j.digest.open_turn.unwrap();
    assert_eq!(o.failures[0].tool.as_deref(), Some("git(git tag v1)"));
    assert_eq!(o.latest_text.as_deref(), Some("Retrying."));
    // An unknown format is refused, not guessed.
    let junk = s.dir.join("junk.jsonl");
    write_file(&junk, "{\"a\":1}\n{\"b\":2}\n");
    let out = s.run(&["digest", "show", "--transcript", &junk.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--format"));
}

#[test]
fn half_written_last_line_is_read_when_finished() {
    let s = server!();
    let mut w = ClaudeWriter::new();
    w.turn(1, false);
    w.prompt("second");
    let full = w.text();
    let p = s.dir.join("half.jsonl");
    w.tool(
        "msg_h",
        "toolu_h",
        "Bash",
        serde_json::json!({"command":"echo half"}),
    );
    let last = w.lines.last().unwrap().clone();
    let cut = last.len() / 2;
    write_file(&p, &format!("{full}{}", &last[..cut]));
    let j = show(&s, &["--transcript", &p.to_string_lossy()]);
    assert_eq!(j.pending_bytes, cut as u64);
    assert_eq!(j.offset, full.len() as u64);
    assert_eq!(j.digest.counts.bad_lines, 0);
    assert_eq!(j.digest.open_turn.as_ref().unwrap().tool_count, 0);
    append(&p, &format!("{}\n", &last[cut..]));
    let j = show(&s, &["--transcript", &p.to_string_lossy()]);
    assert_eq!(j.pending_bytes, 0);
    assert_eq!(
        j.digest.open_turn.as_ref().unwrap().tools[0].summary,
        "echo half"
    );
}

// ---- the follower, on a real server ----

fn opt(s: &Server, pane: &str, name: &str) -> String {
    s.tmux(&["display-message", "-p", "-t", pane, &format!("#{{{name}}}")])
        .trim_end_matches('\n')
        .to_string()
}

fn follower(s: &Server, pane: &str) -> Option<FollowerJson> {
    serde_json::from_str(&opt(s, pane, "@tmuxmate-follower")).ok()
}

fn attach(s: &Server, pane: &str, transcript: &Path) -> AttachJson {
    attach_env(
        s,
        pane,
        transcript,
        &[("TMUXMATE_FOLLOWER_HEARTBEAT_MS", "300")],
    )
}

/// `digest attach --json` with `env` for the follower it starts.
fn attach_env(s: &Server, pane: &str, transcript: &Path, env: &[(&str, &str)]) -> AttachJson {
    let out = s
        .tmuxmate()
        .envs(env.iter().copied())
        .args([
            "digest",
            "attach",
            "--json",
            "-t",
            pane,
            "--transcript",
            &transcript.to_string_lossy(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

fn shell_pane(s: &Server) -> String {
    s.tmux(&["new-window", "-d", "-P", "-F", "#{pane_id}", "sh"])
        .trim()
        .to_string()
}

fn wait_follower(
    s: &Server,
    pane: &str,
    what: &str,
    f: impl Fn(&FollowerJson) -> bool,
) -> FollowerJson {
    wait_until(what, Duration::from_secs(15), || {
        follower(s, pane).filter(|i| f(i))
    })
}

#[test]
fn follower_folds_appended_lines_and_pushes_only_changes() {
    let s = server!();
    let pane = shell_pane(&s);
    let mut w = ClaudeWriter::new();
    for n in 1..=3 {
        w.turn(n, false);
    }
    let p = s.dir.join("session.jsonl");
    write_file(&p, &w.text());
    let total = w.lines.len() as u64;
    let a = attach(&s, &pane, &p);
    assert!(a.started);
    assert_eq!(a.pane_id, pane);
    assert_eq!(a.transcript, p.to_string_lossy());
    assert_eq!(a.format, None);
    assert_eq!(opt(&s, &pane, "@tmuxmate-transcript"), p.to_string_lossy());
    let i = wait_follower(&s, &pane, "the first push", |i| i.pushes == 1);
    assert_eq!((i.read, i.lines, i.v), (total, total, 1));
    assert_eq!(i.transcript, p.to_string_lossy());
    assert!(i.heartbeat >= i.started);
    let st = opt(&s, &pane, "@tmuxmate-status");
    assert!(st.starts_with("turn 3 completed · todo 1/3 · "), "{st}");
    // A second attach with the same transcript changes nothing and starts nothing.
    assert!(!attach(&s, &pane, &p).started);

    // One appended line folds one line, and changes the status once.
    w.lines.clear();
    w.prompt("turn 4 please");
    append(&p, &w.text());
    let i = wait_follower(&s, &pane, "the new turn", |i| i.pushes == 2);
    assert_eq!(i.read, total + 1, "one line appended, one line folded");
    assert_eq!(i.offset, std::fs::metadata(&p).unwrap().len());
    assert!(opt(&s, &pane, "@tmuxmate-status").starts_with("turn 4 · step 0 · todo 1/3 · "));

    // Lines that do not change the status text fold but push nothing.
    w.lines.clear();
    for _ in 0..5 {
        w.raw(format!(r#"{{"type":"file-history-snapshot","messageId":"m","snapshot":{{}},"sessionId":"{SID}"}}"#));
    }
    append(&p, &w.text());
    let i = wait_follower(&s, &pane, "the quiet lines", |i| i.read == total + 6);
    assert_eq!(i.pushes, 2);
    // Half a line is not folded; its end is.
    w.lines.clear();
    w.tool(
        "msg_t4",
        "toolu_t4",
        "Bash",
        serde_json::json!({"command":"cargo fmt"}),
    );
    let line = w.text();
    append(&p, &line[..40]);
    std::thread::sleep(Duration::from_millis(700));
    let i = follower(&s, &pane).unwrap();
    assert_eq!((i.read, i.pushes), (total + 6, 2));
    append(&p, &line[40..]);
    let i = wait_follower(&s, &pane, "the finished line", |i| i.pushes == 3);
    assert_eq!(i.read, total + 7);
    let st = opt(&s, &pane, "@tmuxmate-status");
    assert!(st.contains("Bash(cargo fmt)"), "{st}");
    // `show -t` reads the same transcript through the pane and prints the same status.
    let j = show(&s, &["-t", &pane]);
    assert_eq!(j.pane_id.as_deref(), Some(pane.as_str()));
    assert_eq!(j.status, st);
    assert!(j.digest.last_activity.is_some());
    // Its pane gone, the follower exits.
    let pid = i.pid;
    assert!(alive(pid));
    s.tmux(&["kill-pane", "-t", &pane]);
    wait_until("the follower to exit", Duration::from_secs(10), || {
        (!alive(pid)).then_some(())
    });
    // Nothing will resume for a pane that is gone: its cache is removed.
    let left: Vec<_> = std::fs::read_dir(s.state.join("digest"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".cache.json"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn follower_restart_resumes_from_cache() {
    let s = server!();
    let pane = shell_pane(&s);
    let mut w = ClaudeWriter::new();
    for n in 1..=50 {
        w.turn(n, n == 50);
    }
    let p = s.dir.join("session.jsonl");
    write_file(&p, &w.text());
    let total = w.lines.len() as u64;
    attach(&s, &pane, &p);
    let i = wait_follower(&s, &pane, "the first follower", |i| i.read == total);
    // SIGTERM: it leaves a consistent cache and exits.
    kill(i.pid, "-TERM");
    wait_until("the follower to exit", Duration::from_secs(10), || {
        (!alive(i.pid)).then_some(())
    });
    let cache_files: Vec<PathBuf> = std::fs::read_dir(s.state.join("digest"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".cache.json"))
        .collect();
    assert_eq!(cache_files.len(), 1);
    w.lines.clear();
    w.prompt("after the restart");
    append(&p, &w.text());
    let a = attach(&s, &pane, &p);
    assert!(a.started, "a dead follower is restarted");
    let j = wait_follower(&s, &pane, "the second follower", |j| {
        j.pid != i.pid && j.read >= 1
    });
    assert_eq!(
        j.read, 1,
        "resumed at the cached offset: only the new line was read"
    );
    assert_eq!(j.lines, total + 1);
    assert!(opt(&s, &pane, "@tmuxmate-status").starts_with("turn 51 · step 0"));
    assert_eq!(
        show(&s, &["-t", &pane]).digest.counts.errors,
        1,
        "the cached digest keeps what the old lines said"
    );
}

#[test]
fn replaced_or_truncated_transcript_starts_fresh() {
    let s = server!();
    let pane = shell_pane(&s);
    let mut w = ClaudeWriter::new();
    for n in 1..=5 {
        w.turn(n, false);
    }
    let p = s.dir.join("session.jsonl");
    write_file(&p, &w.text());
    attach(&s, &pane, &p);
    wait_until("turn 5", Duration::from_secs(15), || {
        opt(&s, &pane, "@tmuxmate-status")
            .starts_with("turn 5 completed")
            .then_some(())
    });
    // Replaced (a new file renamed over it), longer than the old one.
    let mut w2 = ClaudeWriter::new();
    for n in 1..=7 {
        w2.turn(n, false);
    }
    w2.prompt("fresh session");
    let tmp = s.dir.join("session.jsonl.new");
    write_file(&tmp, &w2.text());
    std::fs::rename(&tmp, &p).unwrap();
    let i = wait_until("the replaced file", Duration::from_secs(15), || {
        follower(&s, &pane).filter(|i| i.lines == w2.lines.len() as u64)
    });
    assert!(opt(&s, &pane, "@tmuxmate-status").starts_with("turn 8 · step 0"));
    // Truncated and rewritten.
    let mut w3 = ClaudeWriter::new();
    w3.turn(1, true);
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(0).unwrap();
    drop(f);
    append(&p, &w3.text());
    wait_until("the truncated file", Duration::from_secs(15), || {
        follower(&s, &pane).filter(|j| j.pushes > i.pushes && j.lines == w3.lines.len() as u64)
    });
    assert!(opt(&s, &pane, "@tmuxmate-status").starts_with("turn 1 completed"));
    // A new transcript recorded for the pane (a new session) is followed by the same
    // follower.
    let q = s.dir.join("other.jsonl");
    let mut w4 = ClaudeWriter::new();
    w4.prompt("other session");
    write_file(&q, &w4.text());
    let pid = follower(&s, &pane).unwrap().pid;
    assert!(!attach(&s, &pane, &q).started);
    let j = wait_until("the new transcript", Duration::from_secs(15), || {
        follower(&s, &pane).filter(|j| j.transcript == q.to_string_lossy())
    });
    assert_eq!(j.pid, pid);
    wait_until("its status", Duration::from_secs(15), || {
        opt(&s, &pane, "@tmuxmate-status")
            .starts_with("turn 1 · step 0")
            .then_some(())
    });
}

fn kill(pid: i32, sig: &str) {
    std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
}

#[test]
fn status_pushes_are_rate_limited_and_end_on_the_last_state() {
    let s = server!();
    let pane = shell_pane(&s);
    let mut w = ClaudeWriter::new();
    w.turn(1, false);
    let p = s.dir.join("session.jsonl");
    write_file(&p, &w.text());
    attach(&s, &pane, &p);
    let i = wait_follower(&s, &pane, "the first push", |i| i.pushes == 1);
    let t0 = std::time::Instant::now();
    for k in 0..40 {
        w.lines.clear();
        w.tool(
            &format!("msg_burst_{k}"),
            &format!("toolu_burst_{k}"),
            "Bash",
            serde_json::json!({"command": format!("echo burst{k}")}),
        );
        append(&p, &w.text());
        std::thread::sleep(Duration::from_millis(10));
    }
    wait_until("the last state", Duration::from_secs(10), || {
        opt(&s, &pane, "@tmuxmate-status")
            .contains("Bash(echo burst39)")
            .then_some(())
    });
    let ms = t0.elapsed().as_millis() as u64;
    let j = follower(&s, &pane).unwrap();
    let pushes = j.pushes - i.pushes;
    assert!(
        pushes <= ms / 250 + 2,
        "{pushes} pushes in {ms} ms: more than 4 per second"
    );
    assert!(pushes >= 1);
}

#[test]
fn transcript_directory_created_after_attach_is_followed_by_notification() {
    let s = server!();
    let pane = shell_pane(&s);
    // Claude creates its project directory at the first prompt, after the hook ran.
    let dir = s.dir.join("projects").join("-tmp-new");
    let p = dir.join("session.jsonl");
    // A one-minute heartbeat: only a file notification can bring the status in time.
    let out = s
        .tmuxmate()
        .env("TMUXMATE_FOLLOWER_HEARTBEAT_MS", "60000")
        .args(["digest", "attach", "-t", &pane, "--transcript"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_follower(&s, &pane, "the follower", |_| true);
    std::fs::create_dir_all(&dir).unwrap();
    let mut w = ClaudeWriter::new();
    w.prompt("hello");
    write_file(&p, &w.text());
    wait_until(
        "the status from the new file",
        Duration::from_secs(5),
        || {
            opt(&s, &pane, "@tmuxmate-status")
                .starts_with("turn 1 · step 0")
                .then_some(())
        },
    );
}

#[test]
fn follower_of_a_dead_pane_kept_by_remain_on_exit_exits() {
    let s = server!();
    s.tmux(&["set-option", "-g", "remain-on-exit", "on"]);
    let pane = shell_pane(&s);
    let mut w = ClaudeWriter::new();
    w.turn(1, false);
    let p = s.dir.join("session.jsonl");
    write_file(&p, &w.text());
    attach(&s, &pane, &p);
    let i = wait_follower(&s, &pane, "the first push", |i| i.pushes == 1);
    assert!(alive(i.pid));
    // The pane's process ends; tmux keeps the pane, dead, because of remain-on-exit.
    s.tmux(&["send-keys", "-t", &pane, "exit", "Enter"]);
    wait_until("the pane to be dead", Duration::from_secs(10), || {
        (opt(&s, &pane, "pane_dead") == "1").then_some(())
    });
    wait_until(
        "the follower of the dead pane to exit",
        Duration::from_secs(10),
        || (!alive(i.pid)).then_some(()),
    );
    assert_eq!(
        opt(&s, &pane, "pane_id"),
        pane,
        "the dead pane itself is still there (remain-on-exit)"
    );
}

/// Where the user has no inotify instance left (each follower holds one; 128 per user by
/// default, so past about a hundred agents), a follower still starts and follows its
/// transcript, looking at its files every second (it used to exit at once: no digest).
#[test]
fn follower_without_inotify_looks_at_its_files() {
    let s = server!();
    let pane = shell_pane(&s);
    let mut w = ClaudeWriter::new();
    w.turn(1, false);
    let p = s.dir.join("session.jsonl");
    write_file(&p, &w.text());
    attach_env(
        &s,
        &pane,
        &p,
        &[
            ("TMUXMATE_FOLLOWER_HEARTBEAT_MS", "600000"),
            ("TMUXMATE_NO_INOTIFY", "1"),
        ],
    );
    wait_follower(&s, &pane, "the first push", |i| i.pushes == 1);
    // No heartbeat for ten minutes: only the look at the files can bring the new turn.
    w.lines.clear();
    w.prompt("turn 2 please");
    append(&p, &w.text());
    wait_follower(&s, &pane, "the appended turn", |i| i.pushes == 2);
    assert!(opt(&s, &pane, "@tmuxmate-status").starts_with("turn 2 · "));
    let log = std::fs::read_to_string(s.state.join("log")).unwrap_or_default();
    assert!(log.contains("no inotify"), "{log}");
}
