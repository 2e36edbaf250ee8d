//! `tmuxmate dashboard`: the rows once (`--once`, `--json`), and the live view run in a
//! pane of a private server, its keys pressed through a real attached client, its
//! screen read with `capture-pane`: order, live change, filter, help, resize at 80x24 and
//! 200x50 with wide characters, the jump, an ask and a stop.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::server;
use crate::util::contract::DashboardJson;
use crate::util::*;

/// Run a hook as the CLIs do: detached from the terminal, through a shell.
fn hook(a: &Agent, harness: &str, input: &Path) {
    let r = a.sh(&format!(
        "setsid sh -c '\"$0\" hook {harness} < \"$1\"; true' \"$TM\" '{}'",
        input.display()
    ));
    assert_eq!(r.rc, 0, "{}", r.out);
}

fn input(s: &Server, name: &str, v: serde_json::Value) -> PathBuf {
    let p = s.dir.join(format!("{name}.json"));
    std::fs::write(&p, v.to_string()).unwrap();
    p
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn board(s: &Server, extra: &[&str]) -> DashboardJson {
    let mut args = vec!["dashboard", "--once", "--json"];
    args.extend(extra);
    let out = ok(s.run(&args));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// Three agents: claude working on the recorded transcript (its digest followed), codex
/// asking a permission, gemini done. Their panes' ids, in that order.
fn three(s: &Server, claude_window: &str) -> (Agent, Agent, Agent) {
    let c = s.agent_pane_as(claude_window, "claude");
    let x = s.agent_pane_as("cli", "codex");
    let g = s.agent_pane_as("web", "node");
    let tr = s.dir.join("claude.jsonl");
    std::fs::copy(fixture("claude-transcript.jsonl"), &tr).unwrap();
    let ups = input(
        s,
        "c-ups",
        serde_json::json!({"session_id": "5eed0000-0000-4000-8000-0000000000c1",
            "hook_event_name": "UserPromptSubmit", "prompt": "go",
            "transcript_path": tr, "cwd": s.dir}),
    );
    hook(&c, "claude", &ups);
    let perm = input(
        s,
        "x-perm",
        serde_json::json!({"session_id": "x1", "hook_event_name": "PermissionRequest",
            "tool_name": "Bash", "tool_input": {"command": "make deploy"}}),
    );
    hook(&x, "codex", &perm);
    let done = input(
        s,
        "g-done",
        serde_json::json!({"session_id": "g1", "hook_event_name": "AfterAgent",
            "prompt_response": "ok"}),
    );
    hook(&g, "gemini", &done);
    (c, x, g)
}

#[test]
fn once_lists_every_agent_most_urgent_first_with_what_it_does() {
    let s = server!();
    let (c, x, g) = three(&s, "api");
    // A note queued for the claude agent (its per-turn hook recorded its address).
    s.tmux(&[
        "set-option",
        "-p",
        "-t",
        &c.pane,
        "@tmuxmate-agent",
        "sid-c",
    ]);
    ok(s.run(&["side", "report", "-t", &c.pane, "look at the flaky test"]));
    // The follower writes the digest's glance soon after the hook started it.
    let b = wait_until("the claude row's digest", Duration::from_secs(20), || {
        let b = board(&s, &[]);
        b.agents
            .iter()
            .any(|r| r.pane_id == c.pane && !r.doing.is_empty() && r.usage.is_some())
            .then_some(b)
    });
    let order: Vec<(&str, &str)> = b
        .agents
        .iter()
        .map(|r| (r.pane_id.as_str(), r.state.as_str()))
        .collect();
    assert_eq!(
        order,
        [
            (x.pane.as_str(), "needs-you"),
            (g.pane.as_str(), "done"),
            (c.pane.as_str(), "working")
        ]
    );
    assert_eq!(
        (b.counts.needs_you, b.counts.working, b.counts.done),
        (1, 1, 1)
    );
    let cr = b.agents.iter().find(|r| r.pane_id == c.pane).unwrap();
    assert_eq!(
        (cr.harness.as_str(), cr.name.as_str(), cr.managed),
        ("claude", "api", false)
    );
    assert_eq!(cr.pending.notes, 1, "{cr:?}");
    assert_eq!(cr.pending.watch, 0);
    assert!(cr.project.is_some(), "{cr:?}");
    assert!(cr.doing.starts_with("turn "), "{cr:?}");
    assert!(
        cr.usage.as_ref().unwrap().context_tokens.unwrap() > 0,
        "{cr:?}"
    );
    assert!(cr.socket.is_none() && cr.host.is_none());
    let xr = &b.agents[0];
    assert_eq!(xr.why, "permission: Bash: make deploy");
    // The text: one line an agent, then the counts.
    let text = ok(s.run(&["dashboard", "--once"]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(
        lines[0].starts_with("needs-you") && lines[0].contains("codex cli"),
        "{text}"
    );
    assert!(lines[0].contains("permission: Bash: make deploy"), "{text}");
    assert!(lines[2].contains("1 note"), "{text}");
    assert_eq!(lines[3], "3 agents: 1 needs you · 1 working · 1 done");
    // MCP: the same document in structuredContent (the compact lines for the model), the
    // filter as --filter, and `host` refused as --host is.
    let mut m = crate::mcp::Client::start(&s);
    m.initialize();
    let sc = m.ok("tmux_dashboard", serde_json::json!({}));
    let cli: serde_json::Value =
        serde_json::from_str(&ok(s.run(&["dashboard", "--once", "--json"]))).unwrap();
    assert_eq!(sc, cli);
    let f = m.ok("tmux_dashboard", serde_json::json!({"filter": "CODEX"}));
    assert_eq!(f["agents"].as_array().map(Vec::len), Some(1), "{f}");
    let e = m.refused("tmux_dashboard", serde_json::json!({"host": "box"}));
    assert!(
        e.contains("refused") && e.contains("@tmuxmate-hosts"),
        "{e}"
    );
    m.finish();
    // The filter: any field, any case.
    let f = board(&s, &["--filter", "CODEX"]);
    assert_eq!(f.agents.len(), 1);
    assert_eq!(f.counts.needs_you, 1);
    assert!(board(&s, &["--filter", "no such agent"]).agents.is_empty());
    // --json needs --once; --host is refused with what to do.
    let o = s.run(&["dashboard", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    let o = s.run(&["--host", "box", "dashboard", "--once"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("@tmuxmate-hosts"));
    // Without a terminal the live view says what to run instead.
    let o = s.run(&["dashboard"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--once"));
}

fn screen(s: &Server, pane: &str) -> String {
    s.tmux(&["capture-pane", "-p", "-t", pane])
}

fn wait_screen(s: &Server, pane: &str, what: &str, f: impl Fn(&str) -> bool) -> String {
    wait_screen_within(s, pane, what, Duration::from_secs(20), f)
}

fn wait_screen_within(
    s: &Server,
    pane: &str,
    what: &str,
    limit: Duration,
    f: impl Fn(&str) -> bool,
) -> String {
    let mut last = String::new();
    let start = Instant::now();
    while start.elapsed() < limit {
        last = screen(s, pane);
        if f(&last) {
            return last;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("timed out after {limit:?} waiting for {what}; screen:\n{last}");
}

/// The dashboard in a new window of `s` (NO_COLOR: plain text to read back).
fn dashboard_pane(s: &Server) -> String {
    let p = s.window(
        "dash",
        &format!(
            "exec env NO_COLOR=1 '{BIN}' dashboard 2>'{}'",
            s.dir.join("dash.err").display()
        ),
    );
    wait_screen(s, &p, "the dashboard", |t| t.contains("tmuxmate · "));
    p
}

/// The row line of pane `%N`'s agent named `name`.
fn row<'a>(text: &'a str, name: &str) -> Option<(usize, &'a str)> {
    text.lines().enumerate().find(|(_, l)| l.contains(name))
}

/// Columns `s` takes on a terminal.
fn width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// The characters of `line` just before and at display column `col`.
fn around(line: &str, col: usize) -> (char, char) {
    let mut n = 0;
    let mut before = ' ';
    for c in line.chars() {
        if n >= col {
            return (before, c);
        }
        n += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        before = c;
    }
    (before, ' ')
}

#[test]
fn live_view_orders_updates_filters_and_fits_every_size() {
    let s = server!();
    let (c, _x, _g) = three(&s, "漢字🚀agent");
    let d = dashboard_pane(&s);
    s.tmux(&["resize-window", "-t", &d, "-x", "200", "-y", "50"]);
    let t = wait_screen(&s, &d, "three rows", |t| {
        t.contains("codex cli") && t.contains("gemini web") && t.contains("漢字")
    });
    let (xi, _) = row(&t, "codex cli").unwrap();
    let (gi, _) = row(&t, "gemini web").unwrap();
    let (ci, cl) = row(&t, "漢字").unwrap();
    assert!(xi < gi && gi < ci, "needs-you, done, working:\n{t}");
    assert!(cl.starts_with("working"), "{cl}");
    assert!(t.contains("1 needs you · 1 working · 1 done"), "{t}");
    // A change of state moves the row, without a key.
    let perm = input(
        &s,
        "c-perm",
        serde_json::json!({"session_id": "c1", "hook_event_name": "PermissionRequest",
            "tool_name": "Bash", "tool_input": {"command": "rm -rf target"}}),
    );
    hook(&c, "claude", &perm);
    let t = wait_screen(&s, &d, "the claude row to need the person", |t| {
        row(t, "漢字").is_some_and(|(_, l)| l.starts_with("needs-you"))
    });
    assert!(t.contains("permission: Bash: rm -rf target"), "{t}");
    // Filter: only the matching rows, named in the title; Escape in the filter clears it.
    for k in ["/", "c", "o", "d", "e", "x", "Enter"] {
        s.tmux(&["send-keys", "-t", &d, k]);
    }
    let t = wait_screen(&s, &d, "the filtered view", |t| t.contains("filter: codex"));
    assert!(
        row(&t, "codex cli").is_some() && row(&t, "漢字").is_none(),
        "{t}"
    );
    s.tmux(&["send-keys", "-t", &d, "/"]);
    s.tmux(&["send-keys", "-t", &d, "Escape"]);
    wait_screen(&s, &d, "the filter cleared", |t| {
        !t.contains("filter:") && t.contains("漢字")
    });
    // Keys: ? shows them, any key closes the list.
    s.tmux(&["send-keys", "-t", &d, "?"]);
    wait_screen(&s, &d, "the keys", |t| t.contains("any key closes this"));
    s.tmux(&["send-keys", "-t", &d, "j"]);
    wait_screen(&s, &d, "the keys closed", |t| {
        !t.contains("any key closes this")
    });
    // Every size: no line wider than the window, the columns aligned whatever the
    // characters in a row (the project column starts at one place on every row).
    for (w, h) in [(80usize, 24usize), (200, 50), (120, 30)] {
        s.tmux(&[
            "resize-window",
            "-t",
            &d,
            "-x",
            &w.to_string(),
            "-y",
            &h.to_string(),
        ]);
        // At 200 columns the claude row's context shows (once its follower read it).
        let t = wait_screen(&s, &d, "the new size", |t| {
            t.lines().count() == h
                && t.lines().next().is_some_and(|l| l.starts_with(" tmuxmate"))
                && t.contains("STATE")
                && (w < 200 || t.contains("CONTEXT"))
        });
        let header = t.lines().nth(1).unwrap();
        for col in ["STATE", "AGE", "AGENT", "PROJECT", "NOW"] {
            assert!(header.contains(col), "{w}x{h}: {header}");
        }
        if w >= 200 {
            assert!(header.contains("CONTEXT"), "{w}x{h}: {header}");
        }
        let at = width(&header[..header.find("PROJECT").unwrap()]);
        for name in ["codex cli", "gemini web", "漢字"] {
            let (_, l) = row(&t, name).unwrap();
            assert!(width(l) <= w, "{w}x{h}: a row wider than the window: {l}");
            // The project column starts where its title does, on every row.
            let (b, a) = around(l, at);
            assert!(
                b == ' ' && a != ' ',
                "{w}x{h}: the project column moved in {l:?}\n{t}"
            );
        }
    }
    s.tmux(&["send-keys", "-t", &d, "q"]);
    // Its process ends: the pane goes, or stays dead where the user's config has
    // remain-on-exit on.
    wait_until("the dashboard to close", Duration::from_secs(10), || {
        let panes = s.tmux(&["list-panes", "-a", "-F", "#{pane_id} #{pane_dead}"]);
        (!panes.lines().any(|p| p == format!("{d} 0"))).then_some(())
    });
}

/// A stand-in for Claude's screen in a pane (a rule and its `❯` prompt) whose program is
/// named claude and which says it is done through its hook: a line typed into it shows
/// the busy line and is kept in the returned file.
fn fake_claude(s: &Server) -> (String, PathBuf) {
    let dir = s.dir.join("fake");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink("/bin/sh", dir.join("claude")).unwrap();
    let stop = input(
        s,
        "fake-stop",
        serde_json::json!({"session_id": "f1", "hook_event_name": "Stop"}),
    );
    let got = dir.join("got");
    let script = dir.join("screen.sh");
    std::fs::write(
        &script,
        format!(
            "printf '──────────\\n❯ \\n'\n\"{BIN}\" hook claude < '{}'\n\
             while IFS= read -r line; do\n  printf '%s\\n' \"$line\" > '{g}.tmp'; mv '{g}.tmp' '{g}'\n  \
             printf '✻ Thinking… (esc to interrupt)\\n'\ndone\n",
            stop.display(),
            g = got.display()
        ),
    )
    .unwrap();
    let pane = s.window(
        "fake",
        &format!(
            "exec '{}' '{}'",
            dir.join("claude").display(),
            script.display()
        ),
    );
    wait_until(
        "the fake claude to be done",
        Duration::from_secs(20),
        || {
            let st = s.tmux(&["display", "-p", "-t", &pane, "#{@tmuxmate-state}"]);
            (st.trim() == "done").then_some(())
        },
    );
    (pane, got)
}

#[test]
fn keys_through_a_client_go_to_an_agent_ask_one_and_stop_a_managed_one() {
    let outer = server!();
    let s = server!();
    let x = s.agent_pane_as("cli", "codex");
    let perm = input(
        &s,
        "x-perm",
        serde_json::json!({"session_id": "x1", "hook_event_name": "PermissionRequest",
            "tool_name": "Bash", "tool_input": {"command": "make deploy"}}),
    );
    hook(&x, "codex", &perm);
    let (fake, got) = fake_claude(&s);
    // A managed agent (the bridge's stand-in), whose state its hooks would have written.
    let b = crate::bridge::Bridge::new(&s, "proj", "main");
    let st = b.start(&s, "claude");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let rec = serde_json::json!({"state": "idle", "since_ms": now.as_millis() as u64,
        "seq": 1, "harness": "claude", "event": "Stop"});
    s.tmux(&[
        "set-option",
        "-p",
        "-t",
        &st.pane_id,
        "@tmuxmate-state",
        "idle",
        ";",
        "set-option",
        "-p",
        "-t",
        &st.pane_id,
        "@tmuxmate-state-since",
        &now.as_secs().to_string(),
        ";",
        "set-option",
        "-p",
        "-t",
        &st.pane_id,
        "@tmuxmate-state-record",
        &rec.to_string(),
    ]);
    let d = dashboard_pane(&s);
    s.tmux(&["select-window", "-t", &d]);
    let att = s.attach_in(&outer, "main");
    let client = s.tmux(&["list-clients", "-F", "#{client_name}"]);
    let client = client.trim();
    let key = |k: &str| outer.tmux(&["send-keys", "-t", &att, k]);
    let shows = || s.client_pane(client);
    let t = wait_screen(&s, &d, "the rows", |t| {
        t.contains("codex cli") && t.contains("claude fake") && t.contains(&st.name)
    });
    assert!(
        row(&t, "codex cli").unwrap().1.starts_with("needs-you"),
        "{t}"
    );
    // Enter on the first row: the client goes to the agent that needs the person.
    assert_eq!(shows(), d);
    key("Enter");
    wait_until(
        "the client on the codex pane",
        Duration::from_secs(10),
        || (shows() == x.pane).then_some(()),
    );
    s.tmux(&["switch-client", "-c", client, "-t", &d]);
    // Ask the fake claude one line: it arrives once, and the outcome is shown.
    for k in ["/", "f", "a", "k", "e", "Enter", "a"] {
        key(k);
    }
    wait_screen(&s, &d, "the ask line", |t| t.contains("ask claude fake:"));
    outer.tmux(&["send-keys", "-t", &att, "-l", "hello there"]);
    key("Enter");
    wait_until(
        "the line in the fake claude",
        Duration::from_secs(20),
        || {
            std::fs::read_to_string(&got)
                .ok()
                .filter(|g| g == "hello there\n")
        },
    );
    wait_screen(&s, &d, "the outcome", |t| {
        t.contains("delivered to claude fake")
    });
    assert!(screen(&s, &fake).contains("✻ Thinking…"));
    // A second ask while it is busy: refused, nothing typed.
    key("a");
    outer.tmux(&["send-keys", "-t", &att, "-l", "again"]);
    key("Enter");
    wait_screen(&s, &d, "the refusal", |t| {
        t.contains("not delivered: refused")
    });
    assert_eq!(std::fs::read_to_string(&got).unwrap(), "hello there\n");
    // Stop: only a managed agent, and only after y.
    key("x");
    wait_screen(&s, &d, "stop refused", |t| {
        t.contains("was not started by `tmuxmate agent start`")
    });
    key("/");
    key("C-u");
    outer.tmux(&["send-keys", "-t", &att, "-l", &st.name]);
    key("Enter");
    key("x");
    wait_screen(&s, &d, "the question", |t| {
        t.contains(&format!("stop agent {}?", st.name))
    });
    key("n");
    wait_screen(&s, &d, "not stopped", |t| t.contains("not stopped"));
    key("x");
    key("y");
    wait_screen(&s, &d, "stopped", |t| {
        t.contains(&format!("stopped {}", st.name))
    });
    let sessions = s.tmux(&["list-sessions", "-F", "#{session_name}"]);
    assert!(!sessions.lines().any(|l| l == st.name), "{sessions}");
}

/// Left where it opened, the selection is the top row: an agent that comes to need the
/// person while the dashboard is on screen goes to the top, and Enter goes to it (not to
/// the agent that was on top before). A selection the person moved stays on its agent.
#[test]
fn enter_goes_to_the_agent_that_just_came_to_need_the_person() {
    let outer = server!();
    let s = server!();
    let w = s.agent_pane_as("busy", "codex");
    let ups = input(
        &s,
        "w-ups",
        serde_json::json!({"session_id": "w1", "hook_event_name": "UserPromptSubmit",
            "prompt": "go"}),
    );
    hook(&w, "codex", &ups);
    let x = s.agent_pane_as("cli", "claude");
    let d = dashboard_pane(&s);
    s.tmux(&["select-window", "-t", &d]);
    let att = s.attach_in(&outer, "main");
    let client = s.tmux(&["list-clients", "-F", "#{client_name}"]);
    let client = client.trim();
    let shows = || s.client_pane(client);
    let t = wait_screen(&s, &d, "the working agent on top", |t| {
        row(t, "codex busy").is_some_and(|(i, l)| i == 2 && l.starts_with("working"))
    });
    assert!(row(&t, "claude cli").is_none_or(|(i, _)| i > 2), "{t}");
    let perm = input(
        &s,
        "x-perm",
        serde_json::json!({"session_id": "x1", "hook_event_name": "PermissionRequest",
            "tool_name": "Bash", "tool_input": {"command": "make deploy"}}),
    );
    hook(&x, "claude", &perm);
    wait_screen(&s, &d, "the new needs-you on top", |t| {
        row(t, "claude cli").is_some_and(|(i, l)| i == 2 && l.starts_with("needs-you"))
    });
    assert_eq!(shows(), d);
    outer.tmux(&["send-keys", "-t", &att, "Enter"]);
    wait_until(
        "the client on the pane that needs the person",
        Duration::from_secs(10),
        || (shows() == x.pane).then_some(()),
    );
}

/// The sockets in the state's `wake/` directory.
fn wake_sockets(s: &Server) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(s.state.join("wake"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".sock"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The live view wakes through its socket in `<state>/wake/`, not through inotify (a
/// user's 128 inotify instances go to the agents' digest followers): it holds no inotify
/// instance, and a hook's change of state and a queued note (a ledger write) are drawn
/// within seconds without a key (by itself it reads the board again only after 30 s). A
/// socket left by a view that was killed is removed by the first poke; the view's own
/// goes when it closes.
#[test]
fn the_live_view_wakes_through_its_socket_without_inotify() {
    use std::os::unix::fs::DirBuilderExt;
    let s = server!();
    let a = s.agent_pane_as("solo", "codex");
    let ups = input(
        &s,
        "a-ups",
        serde_json::json!({"session_id": "a1", "hook_event_name": "UserPromptSubmit",
            "prompt": "go"}),
    );
    hook(&a, "codex", &ups);
    let wake = s.state.join("wake");
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&wake)
        .unwrap();
    let stale = wake.join("0dead.sock");
    drop(std::os::unix::net::UnixDatagram::bind(&stale).unwrap());
    let d = dashboard_pane(&s);
    s.tmux(&["resize-window", "-t", &d, "-x", "200", "-y", "50"]);
    wait_screen(&s, &d, "the working agent", |t| {
        row(t, "codex solo").is_some_and(|(_, l)| l.starts_with("working"))
    });
    let own = wait_until("the view's socket", Duration::from_secs(10), || {
        let v: Vec<String> = wake_sockets(&s)
            .into_iter()
            .filter(|n| n != "0dead.sock")
            .collect();
        (v.len() == 1).then_some(v)
    });
    let pid = s.tmux(&["display", "-p", "-t", &d, "#{pane_pid}"]);
    let fds = std::fs::read_dir(format!("/proc/{}/fd", pid.trim())).unwrap();
    for fd in fds.flatten() {
        let to = std::fs::read_link(fd.path()).unwrap_or_default();
        assert_ne!(
            to,
            Path::new("anon_inode:inotify"),
            "the view holds inotify"
        );
    }
    // A change of state, drawn without a key; the hook's poke removed the dead socket.
    let perm = input(
        &s,
        "a-perm",
        serde_json::json!({"session_id": "a1", "hook_event_name": "PermissionRequest",
            "tool_name": "Bash", "tool_input": {"command": "make deploy"}}),
    );
    hook(&a, "codex", &perm);
    wait_screen_within(
        &s,
        &d,
        "the agent to need the person",
        Duration::from_secs(5),
        |t| row(t, "codex solo").is_some_and(|(_, l)| l.starts_with("needs-you")),
    );
    assert!(!stale.exists(), "{:?}", wake_sockets(&s));
    assert_eq!(wake_sockets(&s), own);
    // A note queued: only the agent's ledger changes.
    s.tmux(&[
        "set-option",
        "-p",
        "-t",
        &a.pane,
        "@tmuxmate-agent",
        "sid-a",
    ]);
    ok(s.run(&["side", "report", "-t", &a.pane, "look at the flaky test"]));
    wait_screen_within(&s, &d, "the queued note", Duration::from_secs(5), |t| {
        row(t, "codex solo").is_some_and(|(_, l)| l.contains("1 note"))
    });
    s.tmux(&["send-keys", "-t", &d, "q"]);
    wait_until("the view's socket removed", Duration::from_secs(10), || {
        wake_sockets(&s).is_empty().then_some(())
    });
}
