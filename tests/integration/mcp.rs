//! `tmuxmate mcp` over pipes: both handshakes, every tool, the error codes, the hostile
//! corpus giving the same results as the CLI, and a watch notification.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::server;
use crate::util::*;

const WAIT: Duration = Duration::from_secs(60);
/// The tools whose default answer is the text block alone (`json: true` adds the
/// structured content).
const TEXTED: &[&str] = &["tmux_list", "tmux_capture", "tmux_agents", "tmux_dashboard"];

/// A client on the server's pipes: requests answered by id, notifications kept apart.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: mpsc::Receiver<Value>,
    notes: Vec<Value>,
    early: Vec<Value>,
    next: u64,
}

impl Client {
    pub fn start(s: &Server) -> Client {
        Client::spawn(s.tmuxmate())
    }

    /// `c mcp` on pipes (the caller sets the environment: a server's, an ssh config).
    pub fn spawn(mut c: std::process::Command) -> Client {
        c.arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = c.spawn().expect("spawn tmuxmate mcp");
        let out = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                // As Claude Code reads a server: a message over 10 MiB closes the connection.
                assert!(
                    line.len() < 10 << 20,
                    "a {}-byte message: Claude Code would close the connection",
                    line.len()
                );
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            rx,
            notes: Vec::new(),
            early: Vec::new(),
            next: 1,
        }
    }

    fn write(&mut self, line: &str) {
        let i = self.stdin.as_mut().unwrap();
        i.write_all(line.as_bytes()).unwrap();
        i.write_all(b"\n").unwrap();
        i.flush().unwrap();
    }

    /// The next message that is not a notification.
    fn answer(&mut self) -> Value {
        if !self.early.is_empty() {
            return self.early.remove(0);
        }
        loop {
            let v = self
                .rx
                .recv_timeout(WAIT)
                .expect("an answer from tmuxmate mcp");
            if v.get("id").is_some() {
                return v;
            }
            self.notes.push(v);
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.write(&msg.to_string());
        loop {
            let v = self.answer();
            if v["id"] == json!(id) {
                return v;
            }
            self.early.push(v);
        }
    }

    /// The notifications seen so far.
    pub fn notes(&self) -> &[Value] {
        &self.notes
    }

    pub fn initialize(&mut self) {
        let r = self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}),
        );
        assert_eq!(r["result"]["protocolVersion"], "2025-06-18");
        self.write(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    /// A tools/call result (the JSON-RPC `result`), failing on a JSON-RPC error.
    pub fn call(&mut self, tool: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        assert!(r.get("error").is_none(), "{tool}: {r}");
        r["result"].clone()
    }

    /// A successful call's structured content; a texted tool is asked for it with
    /// `json: true` (its default answer is the text block alone).
    pub fn ok(&mut self, tool: &str, args: Value) -> Value {
        let mut args = args;
        if TEXTED.contains(&tool) && args.get("json").is_none() {
            args["json"] = json!(true);
        }
        let r = self.call(tool, args.clone());
        assert_eq!(r["isError"], false, "{tool} {args}: {r}");
        let sc = r["structuredContent"].clone();
        pin_shape(tool, &sc);
        let text = r["content"][0]["text"].as_str().unwrap();
        if tool == "tmux_capture" {
            assert_eq!(
                text,
                sc["text"].as_str().unwrap(),
                "the text block is the capture"
            );
        } else if tool == "tmux_list" {
            // The model reads the compact tree: every pane on a line of its own.
            for p in sc["panes"].as_array().unwrap() {
                let id = p["paneId"].as_str().unwrap();
                assert!(
                    text.lines()
                        .any(|l| l.trim_start().starts_with(&format!("{id} "))),
                    "{id} not in {text}"
                );
            }
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
        } else if tool == "tmux_agents" || tool == "tmux_dashboard" {
            // The model reads compact lines, the JSON is in structuredContent.
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
        } else {
            let text: Value = serde_json::from_str(text).unwrap();
            assert_eq!(text, sc, "the text block is the structured content");
        }
        sc
    }

    pub fn refused(&mut self, tool: &str, args: Value) -> String {
        let r = self.call(tool, args.clone());
        assert_eq!(r["isError"], true, "{tool} {args}: {r}");
        r["content"][0]["text"].as_str().unwrap().to_string()
    }

    fn error_code(&mut self, method: &str, params: Value) -> i64 {
        let r = self.request(method, params);
        r["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("{method}: no error: {r}"))
    }

    /// Close stdin; the server must exit 0 on its own.
    pub fn finish(mut self) {
        drop(self.stdin.take());
        let st = wait_until("tmuxmate mcp to exit at EOF", WAIT, || {
            self.child.try_wait().unwrap()
        });
        assert!(st.success(), "exit {st:?}");
    }
}

/// What the CLI says on stderr for a failed command, without the `tmuxmate: ` prefix.
fn cli_refusal(s: &Server, args: &[&str]) -> String {
    let out = s.run(args);
    assert!(!out.status.success(), "{args:?} should fail");
    let e = String::from_utf8_lossy(&out.stderr);
    e.trim_end()
        .strip_prefix("tmuxmate: ")
        .unwrap_or(&e)
        .to_string()
}

#[test]
fn both_handshakes_and_a_small_tools_list() {
    let s = server!();
    let mut c = Client::start(&s);
    c.initialize();
    // An unknown version gets our latest of that era.
    let r = c.request("initialize", json!({"protocolVersion": "1999-01-01"}));
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(r["result"]["serverInfo"]["name"], "tmuxmate");
    assert_eq!(c.request("ping", json!({}))["result"], json!({}));
    let l = c.request("tools/list", json!({}));
    let bytes = l["result"].to_string().len();
    // Fifteen tools at under 800 bytes each (peers: 57-140 KB for fewer tools).
    assert!(bytes <= 15 * 800, "tools/list is {bytes} bytes");
    let tools = l["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for want in [
        "tmux_list",
        "tmux_send_keys",
        "tmux_paste",
        "tmux_capture",
        "tmux_split",
        "tmux_swap",
        "tmux_run",
        "tmux_watch",
        "tmux_kill",
        "tmux_agents",
        "tmux_dashboard",
        "agent_ask",
        "side_chat_main_status",
        "side_chat_main_history",
        "side_chat_report",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    for t in tools {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        if TEXTED.contains(&t["name"].as_str().unwrap()) {
            // No schema: it would oblige the default answer to carry structured content.
            assert!(t.get("outputSchema").is_none(), "{t}");
            assert_eq!(t["inputSchema"]["properties"]["json"]["type"], "boolean");
        } else {
            assert_eq!(t["outputSchema"]["type"], "object", "{t}");
        }
        // Every tool says what it does to the world; the reads are read-only.
        let a = &t["annotations"];
        let ro = a["readOnlyHint"].as_bool().unwrap();
        let name = t["name"].as_str().unwrap();
        let reads = [
            "tmux_list",
            "tmux_capture",
            "tmux_agents",
            "tmux_dashboard",
            "side_chat_main_status",
            "side_chat_main_history",
        ];
        assert_eq!(ro, reads.contains(&name), "{name}: {a}");
        for k in ["destructiveHint", "idempotentHint", "openWorldHint"] {
            assert!(a[k].is_boolean(), "{name} {k}: {a}");
        }
    }
    let kill = tools.iter().find(|t| t["name"] == "tmux_kill").unwrap();
    assert_eq!(kill["annotations"]["destructiveHint"], true);
    c.finish();

    // The modern era: discover first, then calls with the version in _meta, no handshake.
    let mut c = Client::start(&s);
    let d = c.request("server/discover", json!({}));
    let versions = d["result"]["supportedVersions"].as_array().unwrap();
    assert!(versions.contains(&json!("2026-07-28")), "{d}");
    assert_eq!(
        d["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "tmuxmate"
    );
    let r = c.request(
        "tools/call",
        json!({"name": "tmux_list", "arguments": {},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    );
    assert_eq!(r["result"]["isError"], false, "{r}");
    c.finish();
}

#[test]
fn protocol_errors_have_their_codes_and_stdout_stays_clean() {
    let s = server!();
    let mut c = Client::start(&s);
    c.initialize();
    assert_eq!(c.error_code("no/such/method", json!({})), -32601);
    assert_eq!(
        c.error_code(
            "tools/call",
            json!({"name": "no_such_tool", "arguments": {}})
        ),
        -32602
    );
    // Arguments that do not fit the schema: unknown field, wrong type, missing required.
    for (tool, args) in [
        ("tmux_capture", json!({"target": "%0", "bogus": 1})),
        ("tmux_capture", json!({"target": 5})),
        ("tmux_run", json!({})),
        ("tmux_run", json!({"cmd": 7})),
        (
            "tmux_send_keys",
            json!({"target": "%0", "text": "a", "keys": ["Enter"]}),
        ),
        ("tmux_kill", json!({"scope": "planet", "confirm": true})),
        ("tmux_swap", json!({"src": "%0"})),
    ] {
        assert_eq!(
            c.error_code("tools/call", json!({"name": tool, "arguments": args})),
            -32602,
            "{tool} {args}"
        );
    }
    // Not JSON, a batch, a non-object: answered with id null, and the server goes on.
    c.write("this is not json");
    assert_eq!(c.answer()["error"]["code"], -32700);
    c.write("[]");
    assert_eq!(c.answer()["error"]["code"], -32600);
    c.write("42");
    assert_eq!(c.answer()["error"]["code"], -32600);
    // A notification of any name is not answered: the next answer is the ping's.
    c.write(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#);
    assert_eq!(c.request("ping", json!({}))["result"], json!({}));
    c.finish();
}

#[test]
fn every_tool_through_mcp() {
    let s = server!();
    let rec = s.recorder_pane("rec");
    let shell = s.window("shell", "sh");
    wait_until("the shell prompt", Duration::from_secs(10), || {
        s.tmux(&["capture-pane", "-p", "-t", &shell])
            .trim()
            .ends_with(['$', '#'])
            .then_some(())
    });
    let mut c = Client::start(&s);
    c.initialize();

    let l = c.ok("tmux_list", json!({}));
    let panes = l["panes"].as_array().unwrap();
    let p = panes
        .iter()
        .find(|p| p["paneId"] == json!(rec.pane))
        .unwrap();
    assert_eq!(p["createdByUs"], false);
    assert!(l["sessions"].as_array().unwrap().len() == 1 && l["windows"].is_array());

    // Byte-exact literal text, then Enter as its own key; then named keys.
    let text = "a;b #{pane_id} $(x) \\;";
    let r = c.ok(
        "tmux_send_keys",
        json!({"target": rec.pane, "text": text, "enter": true}),
    );
    assert_eq!(r["sent"], text.len());
    assert_eq!(r["enter"], true);
    assert_eq!(r["paneId"], json!(rec.pane));
    let mut want = text.as_bytes().to_vec();
    want.push(b'\r');
    rec.expect(&want);
    c.ok(
        "tmux_send_keys",
        json!({"target": rec.pane, "keys": ["Tab", "C-a"]}),
    );
    want.extend_from_slice(b"\t\x01");
    rec.expect(&want);
    let e = c.refused("tmux_send_keys", json!({"target": rec.pane, "keys": ["q"]}));
    assert_eq!(e, cli_refusal(&s, &["keys", "-t", &rec.pane, "q"]));

    let r = c.ok(
        "tmux_paste",
        json!({"target": rec.pane, "text": "one\ntwo"}),
    );
    assert_eq!(r["lines"], 2);
    want.extend_from_slice(b"\x1b[200~one\ntwo\x1b[201~");
    rec.expect(&want);

    let cap = c.ok(
        "tmux_capture",
        json!({"target": rec.pane, "maxBytes": 1000}),
    );
    assert!(
        cap["text"].as_str().unwrap().contains("stand-in ready"),
        "{cap}"
    );
    assert_eq!(cap["truncated"], false);
    // Cut to a budget: the text block starts with the marker line, the structured
    // text is the cut text alone (the same answer `capture --json` gives).
    let cut = c.call(
        "tmux_capture",
        json!({"target": rec.pane, "maxBytes": 8, "json": true}),
    );
    let block = cut["content"][0]["text"].as_str().unwrap();
    let sc = &cut["structuredContent"];
    assert_eq!(sc["truncated"], true, "{cut}");
    let first = block.lines().next().unwrap();
    assert!(
        first.starts_with("[... ") && first.ends_with(" earlier bytes truncated ...]"),
        "{block}"
    );
    assert_eq!(block, format!("{first}\n{}", sc["text"].as_str().unwrap()));
    let uri = cap["snapshot"].as_str().unwrap().to_string();
    let read = c.request("resources/read", json!({"uri": uri}));
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("stand-in ready"),
        "{read}"
    );

    let sp = c.ok(
        "tmux_split",
        json!({"target": shell, "horizontal": true, "cmd": ["cat"]}),
    );
    let new = sp["paneId"].as_str().unwrap().to_string();
    assert!(sp["target"].as_str().unwrap().contains(':'));
    let l = c.ok("tmux_list", json!({}));
    let np = l["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["paneId"] == json!(new))
        .unwrap()
        .clone();
    assert_eq!(np["createdByUs"], true, "{np}");
    assert!(np["createdBy"].is_string(), "the creator's address: {np}");

    let sw = c.ok("tmux_swap", json!({"src": shell, "dst": new}));
    assert_eq!(sw, json!({"src": shell, "dst": new}));
    let e = c.refused("tmux_swap", json!({"src": shell, "dst": shell}));
    assert_eq!(e, cli_refusal(&s, &["swap", &shell, &shell]));

    let r = c.ok("tmux_run", json!({"cmd": ["true"]}));
    assert_eq!(r["exitStatus"], 0);
    assert_eq!(r["stabilized"], false);
    assert!(r["elapsedMs"].is_u64());
    let r = c.ok("tmux_run", json!({"cmd": ["sh", "-c", "echo out; exit 3"]}));
    assert_eq!(
        (r["exitStatus"].clone(), r["text"].clone()),
        (json!(3), json!("out"))
    );
    let e = c.refused("tmux_run", json!({"cmd": ["true"], "target": rec.pane}));
    assert_eq!(e, cli_refusal(&s, &["run", "-t", &rec.pane, "--", "true"]));

    // Kill: refused without confirm (same words as the CLI), then done with it.
    let e = c.refused("tmux_kill", json!({"scope": "pane", "target": new}));
    assert_eq!(e, cli_refusal(&s, &["kill", "pane", "-t", &new]));
    let e = c.refused("tmux_kill", json!({"scope": "window", "confirm": true}));
    assert_eq!(e, cli_refusal(&s, &["kill", "window", "--confirm"]));
    // The killed pane's address as it was at the kill (`target`), its id under `paneId`.
    let l = c.ok("tmux_list", json!({}));
    let addr = l["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["paneId"] == json!(new))
        .unwrap()["target"]
        .clone();
    assert!(addr.as_str().unwrap().contains(':'), "{addr}");
    let k = c.ok(
        "tmux_kill",
        json!({"scope": "pane", "target": new, "confirm": true}),
    );
    assert_eq!(
        k,
        json!({"scope": "pane", "target": addr, "paneId": new, "windowId": null,
            "sessionId": null, "killed": true})
    );
    assert!(
        !s.tmux(&["list-panes", "-a", "-F", "#{pane_id}"])
            .contains(&new)
    );
    // The default policy asks before a window goes; with no approver and no client to
    // ask, that fails closed.
    let e = c.refused(
        "tmux_kill",
        json!({"scope": "window", "target": shell, "confirm": true}),
    );
    assert!(e.starts_with("refused: kill-window"), "{e}");
    assert!(
        s.tmux(&["list-panes", "-a", "-F", "#{pane_id}"])
            .contains(&shell)
    );

    // The bridge and the side chat refuse exactly as the CLI does.
    let e = c.refused(
        "agent_ask",
        json!({"target": "no-such-agent", "message": "hi"}),
    );
    let cli = cli_refusal(&s, &["agent", "ask", "no-such-agent", "--message", "hi"]);
    assert_eq!(e, format!("not-delivered: {cli}"));
    let e = c.refused("side_chat_main_status", json!({}));
    assert_eq!(e, cli_refusal(&s, &["side", "status"]));
    let e = c.refused(
        "side_chat_main_history",
        json!({"target": rec.pane, "limit": 0}),
    );
    assert_eq!(
        e,
        cli_refusal(&s, &["side", "history", "-t", &rec.pane, "--limit", "0"])
    );
    let e = c.refused(
        "side_chat_report",
        json!({"target": rec.pane, "text": "  "}),
    );
    assert_eq!(
        e,
        cli_refusal(&s, &["side", "report", "-t", &rec.pane, "  "])
    );
    c.finish();
}

#[test]
fn a_watch_job_the_client_started_notifies_when_it_ends() {
    let s = server!();
    let mut c = Client::start(&s);
    c.initialize();
    let flag = s.dir.join("go");
    let cmd = format!(
        "while [ ! -e '{}' ]; do sleep 0.05; done; echo finished",
        flag.display()
    );
    let w = c.ok("tmux_watch", json!({"cmd": [cmd]}));
    assert_eq!(w["kind"], "background");
    let id = w["jobId"].as_str().unwrap().to_string();
    let uri = format!("tmuxmate://watch/{id}");
    assert_eq!(w["uri"], json!(uri));
    let listed = c.request("resources/list", json!({}));
    assert!(
        listed["result"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["uri"] == json!(uri)),
        "{listed}"
    );
    // Still running: no notification yet.
    c.request("ping", json!({}));
    assert!(c.notes.is_empty(), "{:?}", c.notes);
    std::fs::write(&flag, "").unwrap();
    let note = loop {
        if let Some(n) = c.notes.pop() {
            break n;
        }
        let v = c.rx.recv_timeout(WAIT).expect("the updated notification");
        if v.get("id").is_none() {
            c.notes.push(v);
        }
    };
    assert_eq!(note["method"], "notifications/resources/updated");
    assert_eq!(note["params"]["uri"], json!(uri));
    let read = c.request("resources/read", json!({"uri": uri}));
    let job: Value =
        serde_json::from_str(read["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(job["status"], "finished", "{job}");
    assert_eq!(job["exitStatus"], 0);
    assert_eq!(
        c.error_code("resources/read", json!({"uri": "tmuxmate://watch/wnope"})),
        -32002
    );
    c.finish();
}

#[test]
fn progress_is_reported_for_a_long_run_when_asked() {
    let s = server!();
    let mut c = Client::start(&s);
    c.initialize();
    let r = c.request(
        "tools/call",
        json!({"name": "tmux_run", "arguments": {"cmd": ["sleep", "1.6"]},
            "_meta": {"progressToken": "tok"}}),
    );
    assert_eq!(r["result"]["structuredContent"]["exitStatus"], 0, "{r}");
    let p = c
        .notes
        .iter()
        .find(|n| n["method"] == "notifications/progress")
        .unwrap_or_else(|| panic!("no progress in {:?}", c.notes));
    assert_eq!(p["params"]["progressToken"], "tok");
    assert!(p["params"]["progress"].as_u64().unwrap() > 0, "{p}");
    c.finish();
}

#[test]
fn the_hostile_corpus_gives_the_cli_results() {
    let s = server!();
    let rec = s.recorder_pane("rec");
    let mut c = Client::start(&s);
    c.initialize();
    let mut want = Vec::new();
    for v in crate::hostile::corpus() {
        // As a target: the same refusal, word for word, or the same pane.
        let r = c.call("tmux_capture", json!({"target": v}));
        let cli = s.run(&["capture", "--json", &format!("--target={v}")]);
        if cli.status.success() {
            assert_eq!(r["isError"], false, "{v:?}: {r}");
        } else {
            assert_eq!(r["isError"], true, "{v:?}: {r}");
            let e = String::from_utf8_lossy(&cli.stdout);
            let j: Value = serde_json::from_str(&e).unwrap();
            let human = match j["error"]["hint"].as_str() {
                Some(h) if !h.is_empty() => {
                    format!("{}; {h}", j["error"]["message"].as_str().unwrap())
                }
                _ => j["error"]["message"].as_str().unwrap().to_string(),
            };
            assert_eq!(r["content"][0]["text"], json!(human), "{v:?}");
        }
        // Without confirm (the corpus holds real ids such as %1): syntax, then confirm.
        let e = c.refused("tmux_kill", json!({"scope": "pane", "target": v}));
        assert_eq!(
            e,
            cli_refusal(&s, &["kill", "pane", &format!("--target={v}")]),
            "{v:?}"
        );
        // As text: typed byte for byte (one line each), nothing run.
        c.ok("tmux_send_keys", json!({"target": rec.pane, "text": v}));
        want.extend_from_slice(v.as_bytes());
        rec.expect(&want);
        // As a key name: refused with the CLI's words.
        let e = c.refused("tmux_send_keys", json!({"target": rec.pane, "keys": [v]}));
        assert_eq!(
            e,
            cli_refusal(&s, &["keys", &format!("--target={}", rec.pane), "--", &v]),
            "{v:?}"
        );
    }
    // Text the CLI refuses (a newline in send, control characters) is refused alike.
    for bad in ["two\nlines", "esc\x1b[201~"] {
        let e = c.refused("tmux_send_keys", json!({"target": rec.pane, "text": bad}));
        assert_eq!(
            e,
            cli_refusal(&s, &["send", "-t", &rec.pane, "--", bad]),
            "{bad:?}"
        );
    }
    c.finish();
    assert!(s.tmux_output(&["list-sessions"]).status.success());
}

/// Every successful structured result has the documented shape (docs/json.md, MCP
/// table): the CLI's type for the same operation, or the MCP additions' own.
fn pin_shape(tool: &str, sc: &Value) {
    use crate::util::contract::*;
    fn is<T: serde::de::DeserializeOwned>(tool: &str, sc: &Value) {
        if let Err(e) = serde_json::from_value::<T>(sc.clone()) {
            panic!("{tool}: not the documented shape ({e}): {sc}");
        }
    }
    match tool {
        "tmux_list" => is::<ListJson>(tool, sc),
        "tmux_send_keys" if sc.get("keys").is_some() => is::<PressedJson>(tool, sc),
        "tmux_send_keys" => is::<SentJson>(tool, sc),
        "tmux_paste" => is::<PastedJson>(tool, sc),
        "tmux_capture" => is::<McpCaptureJson>(tool, sc),
        "tmux_split" => is::<CreatedJson>(tool, sc),
        "tmux_swap" => is::<SwappedJson>(tool, sc),
        "tmux_run" => is::<RunJson>(tool, sc),
        "tmux_watch" => is::<McpWatchJson>(tool, sc),
        "tmux_kill" => is::<KillJson>(tool, sc),
        "agent_ask" => is::<McpAskJson>(tool, sc),
        "side_chat_main_status" => is::<SideStatusJson>(tool, sc),
        "side_chat_main_history" => is::<McpHistoryJson>(tool, sc),
        "side_chat_report" => is::<ReportedJson>(tool, sc),
        "tmux_agents" if sc.get("agents").is_some() => is::<AgentsJson>(tool, sc),
        "tmux_dashboard" => is::<DashboardJson>(tool, sc),
        "tmux_agents" => is::<WaitedJson>(tool, sc),
        other => panic!("{other}: no documented shape to check its result against"),
    }
}

/// The resident server keeps `/proc` handles between listings, never their
/// contents: a new foreground, an exec in place and a replaced pane all show on the next
/// `tmux_list`.
#[test]
fn resident_listing_follows_each_foreground_change() {
    let s = server!();
    let pane = s.window("w", "sh");
    let mut c = Client::start(&s);
    c.initialize();
    let fg = |c: &mut Client, pane: &str| -> (String, String) {
        let l = c.ok("tmux_list", json!({}));
        let p = l["panes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["paneId"] == json!(pane))
            .cloned()
            .unwrap_or_default();
        (
            p["currentCommand"].as_str().unwrap_or("").to_string(),
            p["executable"].as_str().unwrap_or("").to_string(),
        )
    };
    let shell = fg(&mut c, &pane);
    assert_eq!(shell.0, "sh", "{shell:?}");
    s.tmux(&["send-keys", "-t", &pane, "-l", "cat"]);
    s.tmux(&["send-keys", "-t", &pane, "Enter"]);
    wait_until("cat in the foreground", WAIT, || {
        (fg(&mut c, &pane) == ("cat".into(), "cat".into())).then_some(())
    });
    s.tmux(&["send-keys", "-t", &pane, "C-c"]);
    wait_until("the shell again", WAIT, || {
        (fg(&mut c, &pane) == shell).then_some(())
    });
    s.tmux(&[
        "send-keys",
        "-t",
        &pane,
        "-l",
        "sh -c 'sleep 0.2; exec sleep 300'",
    ]);
    s.tmux(&["send-keys", "-t", &pane, "Enter"]);
    wait_until("sleep exec'd in place", WAIT, || {
        (fg(&mut c, &pane) == ("sleep".into(), "sleep".into())).then_some(())
    });
    // The pane replaced: a new process (maybe on a reused pid) is read afresh.
    s.tmux(&["respawn-pane", "-k", "-t", &pane, "exec cat"]);
    wait_until("the respawned pane's cat", WAIT, || {
        (fg(&mut c, &pane) == ("cat".into(), "cat".into())).then_some(())
    });
}

/// Requests written in one go (so they arrive together), answers collected by id.
fn all_at_once(c: &mut Client, calls: &[Value]) -> std::collections::HashMap<u64, Value> {
    let first = c.next;
    let mut lines = String::new();
    for (i, params) in calls.iter().enumerate() {
        let msg = json!({"jsonrpc": "2.0", "id": first + i as u64, "method": "tools/call",
            "params": params});
        lines.push_str(&msg.to_string());
        lines.push('\n');
    }
    c.next += calls.len() as u64;
    c.write(lines.trim_end());
    let mut got = std::collections::HashMap::new();
    while got.len() < calls.len() {
        let v = c.answer();
        got.insert(v["id"].as_u64().unwrap(), v);
    }
    got
}

fn run_dirs(s: &Server) -> Vec<String> {
    std::fs::read_dir(s.state.join("run"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn run_windows(s: &Server) -> usize {
    s.tmux(&["list-windows", "-a", "-F", "#{window_name}"])
        .lines()
        .filter(|l| *l == "run")
        .count()
}

#[test]
fn parallel_runs_started_together_each_get_their_own_output() {
    let s = server!();
    let mut c = Client::start(&s);
    c.initialize();
    let n = 12;
    let calls: Vec<Value> = (0..n)
        .map(|i| {
            json!({"name": "tmux_run", "arguments": {"cmd":
                ["sh", "-c", format!("sleep 0.5; echo ANSWER-{i}; exit {}", i % 4)]}})
        })
        .collect();
    let first = c.next;
    let got = all_at_once(&mut c, &calls);
    for i in 0..n {
        let r = &got[&(first + i as u64)];
        let sc = &r["result"]["structuredContent"];
        assert_eq!(r["result"]["isError"], false, "call {i}: {r}");
        assert_eq!(sc["text"], json!(format!("ANSWER-{i}")), "call {i}: {r}");
        assert_eq!(sc["exitStatus"], json!(i % 4), "call {i}: {r}");
        assert_eq!(sc["timedOut"], false, "call {i}: {r}");
    }
    wait_until("every run's pane and directory to go", WAIT, || {
        (run_windows(&s) == 0 && run_dirs(&s).is_empty()).then_some(())
    });
    c.finish();
}

#[test]
fn parallel_watches_started_together_all_start_with_their_own_ids() {
    let s = server!();
    let mut c = Client::start(&s);
    c.initialize();
    let calls: Vec<Value> = (0..8)
        .map(|i| json!({"name": "tmux_watch", "arguments": {"cmd": [format!("echo W{i}")]}}))
        .collect();
    let got = all_at_once(&mut c, &calls);
    let mut ids = std::collections::HashSet::new();
    for r in got.values() {
        assert_eq!(r["result"]["isError"], false, "{r}");
        ids.insert(
            r["result"]["structuredContent"]["jobId"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    assert_eq!(ids.len(), 8, "{ids:?}");
    for id in &ids {
        wait_until("the watch to finish", WAIT, || {
            let out = s.run(&["watch", "show", id, "--json"]);
            let v: Value = serde_json::from_slice(&out.stdout).ok()?;
            (v["status"] == "finished").then_some(())
        });
    }
    // "finished" is shown once the result is recorded; the record moves from active to
    // done when its result is queued, a moment later.
    let active = s.state.join("jobs").join("active");
    let left = || -> Vec<_> {
        std::fs::read_dir(&active)
            .map(|rd| rd.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default()
    };
    let settled = std::time::Instant::now() + WAIT;
    while !left().is_empty() && std::time::Instant::now() < settled {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(left().is_empty(), "left in jobs/active: {:?}", left());
    c.finish();
}

fn threads_of(pid: u32) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

#[test]
fn a_client_that_stops_reading_never_grows_the_server_past_its_workers() {
    let s = server!();
    let mut c = Client::start(&s);
    c.initialize();
    let pid = c.child.id();
    // 3000 calls written without reading an answer: the server's stdout fills, its
    // workers block, its queue fills, then it stops reading stdin (the writer blocks).
    let mut stdin = c.stdin.take().unwrap();
    let written = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let w = written.clone();
    let writer = std::thread::spawn(move || {
        for i in 0..3000u64 {
            let msg = json!({"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call",
                "params": {"name": "tmux_list", "arguments": {}}});
            if writeln!(stdin, "{msg}").is_err() {
                break;
            }
            w.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        drop(stdin);
    });
    // Until the writer is held up (no progress between two looks 300 ms apart), the
    // server's thread count never passes its pool's bound: 16 workers, each with at most
    // one helper while tmux answers (a listing reads /proc meanwhile), and its own few.
    let mut peak = 0;
    let mut last = usize::MAX;
    wait_until("the writer to be held up or done", WAIT, || {
        peak = peak.max(threads_of(pid));
        let now = written.load(std::sync::atomic::Ordering::SeqCst);
        let stalled = now == last || now == 3000;
        last = now;
        std::thread::sleep(Duration::from_millis(300));
        peak = peak.max(threads_of(pid));
        stalled.then_some(())
    });
    assert!(peak <= 2 * 16 + 4, "{peak} threads");
    // Reading again: every call has an answer, a result or the busy error, and none is lost.
    let mut answered = 0;
    let mut busy = 0;
    while answered < 3000 {
        let v = c.answer();
        if v["id"].as_u64().is_some_and(|i| i >= 1000) {
            answered += 1;
            if v["error"]["code"] == json!(-32000) {
                busy += 1;
                assert!(
                    v["error"]["message"].as_str().unwrap().contains("retry"),
                    "{v}"
                );
            } else {
                assert_eq!(v["result"]["isError"], false, "{v}");
            }
        }
        peak = peak.max(threads_of(pid));
    }
    writer.join().unwrap();
    assert!(peak <= 2 * 16 + 4, "{peak} threads");
    eprintln!("busy answers: {busy} of 3000");
    let st = wait_until("tmuxmate mcp to exit at EOF", WAIT, || {
        c.child.try_wait().unwrap()
    });
    assert!(st.success());
}

fn peak_rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

#[test]
fn an_overlong_message_is_refused_without_being_held() {
    let s = server!();
    let mut c = Client::start(&s);
    c.initialize();
    let pid = c.child.id();
    // 200 MiB without a newline, then the newline: refused, and the server never held it.
    {
        let i = c.stdin.as_mut().unwrap();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..200 {
            i.write_all(&chunk).unwrap();
        }
        i.write_all(b"\n").unwrap();
        i.flush().unwrap();
    }
    let v = c.answer();
    assert_eq!(v["error"]["code"], json!(-32600), "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than 32 MiB"),
        "{v}"
    );
    let kb = peak_rss_kb(pid);
    assert!(kb > 0 && kb < 120 * 1024, "peak RSS {kb} kB");
    // The next message is read as usual.
    let r = c.request("ping", json!({}));
    assert_eq!(r["result"], json!({}));
    c.finish();
}

#[test]
fn a_cancelled_run_ends_its_pane_and_is_not_answered() {
    let s = server!();
    let mut c = Client::start(&s);
    c.initialize();
    c.write(
        &json!({"jsonrpc": "2.0", "id": "long", "method": "tools/call",
        "params": {"name": "tmux_run", "arguments": {"cmd": ["sleep", "60"]}}})
        .to_string(),
    );
    wait_until("the run's pane", WAIT, || {
        (run_windows(&s) == 1).then_some(())
    });
    c.write(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": "long", "reason": "test"}})
        .to_string(),
    );
    wait_until("the run's pane and directory to go", WAIT, || {
        (run_windows(&s) == 0 && run_dirs(&s).is_empty()).then_some(())
    });
    // Answers come in order of the work: a ping after the cancel is answered, the
    // cancelled id never.
    let r = c.request("ping", json!({}));
    assert_eq!(r["result"], json!({}));
    assert!(
        c.early.iter().all(|v| v["id"] != json!("long")),
        "{:?}",
        c.early
    );
    c.finish();
}

#[test]
fn input_ending_during_a_run_ends_the_run_too() {
    let s = server!();
    let mut c = Client::start(&s);
    c.initialize();
    c.write(
        &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "tmux_run", "arguments": {"cmd": ["sleep", "120"]}}})
        .to_string(),
    );
    wait_until("the run's pane", WAIT, || {
        (run_windows(&s) == 1).then_some(())
    });
    // EOF: the server waits its drain (10 s), then cancels the run and exits.
    drop(c.stdin.take());
    let st = wait_until("tmuxmate mcp to exit after its drain", WAIT, || {
        c.child.try_wait().unwrap()
    });
    assert!(st.success(), "{st:?}");
    assert_eq!(run_windows(&s), 0, "the run's pane stayed");
    assert!(run_dirs(&s).is_empty(), "{:?}", run_dirs(&s));
}

#[test]
fn cmd_is_a_shell_line_or_argv_words() {
    let s = server!();
    let mut c = Client::start(&s);
    c.initialize();
    // A string is a shell command line (models write strings first).
    let r = c.ok("tmux_run", json!({"cmd": "echo 'A;B' | tr ';' -; exit 3"}));
    assert_eq!(r["text"], "A-B", "{r}");
    assert_eq!(r["exitStatus"], 3, "{r}");
    // Words stay argv words: no shell reads them.
    let r = c.ok(
        "tmux_run",
        json!({"cmd": ["printf", "%s|", "a b", "$HOME"]}),
    );
    assert_eq!(r["text"], "a b|$HOME|", "{r}");
    let w = c.ok("tmux_watch", json!({"cmd": "echo W-LINE; exit 0"}));
    let id = w["jobId"].as_str().unwrap().to_string();
    wait_until("the watch to finish", WAIT, || {
        let out = s.run(&["watch", "show", &id, "--json"]);
        let v: Value = serde_json::from_slice(&out.stdout).ok()?;
        (v["status"] == "finished").then_some(v)
    });
    // Anything else is not a command.
    assert_eq!(
        c.error_code(
            "tools/call",
            json!({"name": "tmux_run", "arguments": {"cmd": 7}})
        ),
        -32602
    );
    let listed = c.request("tools/list", json!({}));
    let run = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "tmux_run")
        .unwrap()
        .clone();
    assert!(
        run["inputSchema"]["properties"]["cmd"]["anyOf"].is_array(),
        "{run}"
    );
    c.finish();
}

#[test]
fn the_listing_a_model_reads_is_tens_of_bytes_a_pane() {
    let s = server!();
    // 60 panes in 30 windows of two, in one tmux call.
    let mut args: Vec<String> = Vec::new();
    for i in 0..30 {
        if i > 0 {
            args.push(";".into());
        }
        for w in [
            "new-window",
            "-d",
            "-n",
            &format!("w{i}"),
            "sh",
            ";",
            "split-window",
            "-d",
            "-t",
            &format!("main:w{i}"),
            "sh",
        ] {
            args.push(w.to_string());
        }
    }
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    s.tmux(&a);
    let mut c = Client::start(&s);
    c.initialize();
    let r = c.call("tmux_list", json!({"json": true}));
    let text = r["content"][0]["text"].as_str().unwrap();
    let panes = r["structuredContent"]["panes"].as_array().unwrap().len();
    assert_eq!(panes, 61);
    let per_pane = text.len() / panes;
    assert!(per_pane <= 60, "{per_pane} bytes a pane:\n{text}");
    let json = r["structuredContent"].to_string().len() / panes;
    eprintln!("model text {per_pane} bytes a pane, JSON {json}");
    // The CLI prints the same tree.
    let cli = ok(s.run(&["list"]));
    assert_eq!(
        cli.lines().count(),
        text.lines().count(),
        "{cli}\n---\n{text}"
    );
    c.finish();
}

/// Claude Code and Codex give the model a result's structured content whenever it has
/// one: a texted tool's default answer is its text block alone (once on the wire), the
/// same text `json: true` sends beside the JSON; a `json` that is not a boolean is
/// refused by the schema, not taken as false.
#[test]
fn a_texted_tool_answers_with_its_text_alone_unless_asked_for_json() {
    let s = server!();
    let pane = s.window("w", "sh");
    s.tmux(&[
        "send-keys",
        "-t",
        &pane,
        "printf 'line-%s\\n' 1 2 3",
        "Enter",
    ]);
    wait_until("the lines", WAIT, || {
        let t = s.tmux(&["capture-pane", "-p", "-t", &pane]);
        t.contains("line-3").then_some(())
    });
    let mut c = Client::start(&s);
    c.initialize();
    for (tool, args) in [
        ("tmux_list", json!({})),
        ("tmux_capture", json!({"target": pane})),
        ("tmux_agents", json!({})),
        ("tmux_dashboard", json!({})),
    ] {
        let plain = c.call(tool, args.clone());
        assert_eq!(plain["isError"], false, "{tool}: {plain}");
        let keys: Vec<&String> = plain.as_object().unwrap().keys().collect();
        assert!(plain.get("structuredContent").is_none(), "{tool}: {keys:?}");
        assert_eq!(plain["content"].as_array().unwrap().len(), 1, "{plain}");
        let mut asked = args.clone();
        asked["json"] = json!(true);
        let full = c.call(tool, asked);
        assert!(full["structuredContent"].is_object(), "{tool}: {full}");
        if tool != "tmux_dashboard" {
            // (the dashboard's lines say how long ago things were: they may move on)
            assert_eq!(plain["content"], full["content"], "{tool}");
        }
        let mut off = args.clone();
        off["json"] = json!(false);
        assert!(c.call(tool, off)["structuredContent"].is_null(), "{tool}");
    }
    let text = c.call("tmux_capture", json!({"target": pane}))["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("line-3"), "{text}");
    assert_eq!(text.matches("line-3").count(), 1, "{text}");
    let r = c.request(
        "tools/call",
        json!({"name": "tmux_list", "arguments": {"json": "yes"}}),
    );
    assert!(
        r.get("error").is_some() || r["result"]["isError"] == true,
        "{r}"
    );
    c.finish();
}

/// A whole-history capture of more than the answer's gather size (64 KiB) is written in
/// pieces: it reaches the client whole, as one line, with quotes and backslashes escaped,
/// the same text the CLI prints, in the text block by default and in both with `json`.
#[test]
fn a_capture_of_a_long_history_is_one_whole_answer_the_cli_text() {
    let s = server!();
    s.tmux(&["set-option", "-g", "history-limit", "10000"]);
    let pane = s.window(
        "long",
        r#"awk 'BEGIN { for (i = 0; i < 6000; i++) printf "line-%05d \"q\" \\ end\n", i; print "DONE" }'; sleep 1000"#,
    );
    wait_until("the lines", WAIT, || {
        let t = s.tmux(&["capture-pane", "-p", "-t", &pane]);
        t.contains("DONE").then_some(())
    });
    let cli = ok(s.run(&["capture", "-t", &pane, "--all", "--max-bytes", "10000000"]));
    let mut c = Client::start(&s);
    c.initialize();
    let args = json!({"target": pane, "all": true, "maxBytes": 10_000_000});
    let plain = c.call("tmux_capture", args.clone());
    let text = plain["content"][0]["text"].as_str().unwrap();
    assert!(text.len() > 100 << 10, "{} bytes", text.len());
    assert!(
        text.contains("line-00000 \"q\" \\ end\nline-00001 "),
        "{}",
        &text[..200]
    );
    assert!(text.contains("line-05999 \"q\" \\ end\nDONE"));
    assert_eq!(text.trim_end(), cli.trim_end(), "the CLI's text");
    let mut asked = args;
    asked["json"] = json!(true);
    let full = c.call("tmux_capture", asked);
    assert_eq!(full["content"][0]["text"].as_str(), Some(text));
    assert_eq!(full["structuredContent"]["text"].as_str(), Some(text));
    assert_eq!(full["structuredContent"]["truncated"], false);
    c.finish();
}

/// Claude Code closes a server's connection on a message over 10 MiB (the call ends as
/// "Connection closed"). A whole-history capture whose answer would be bigger is cut to
/// fit, newest kept and marked, with `json` too (the text twice); a snapshot too big for
/// one message is refused with an error that says what to do; the connection lives on.
#[test]
fn no_answer_is_bigger_than_a_client_takes() {
    const MAX_MESSAGE: usize = 10_000_000;
    let s = server!();
    s.tmux(&["set-option", "-g", "history-limit", "80000"]);
    // 70,000 lines of quotes and backslashes: 5.7 MB of text, 11 MB escaped.
    let pane = s.window(
        "quotes",
        r#"awk 'BEGIN { q = "\"\\"; for (i = 0; i < 5; i++) q = q q; for (i = 0; i < 70000; i++) printf "%06d %s%s\n", i, q, substr(q, 1, 10); print "DONE" }'; sleep 1000"#,
    );
    wait_until("the lines", WAIT, || {
        let t = s.tmux(&["capture-pane", "-p", "-t", &pane]);
        t.contains("DONE").then_some(())
    });
    let size = |v: &Value| serde_json::to_string(v).unwrap().len() + 1;
    let mut c = Client::start(&s);
    c.initialize();
    let args = json!({"target": pane, "all": true, "maxBytes": 20_000_000, "json": true});
    let r = c.request(
        "tools/call",
        json!({"name": "tmux_capture", "arguments": args}),
    );
    assert!(size(&r) <= MAX_MESSAGE, "{} bytes", size(&r));
    let res = &r["result"];
    assert_eq!(
        res["isError"],
        false,
        "{}",
        r.to_string().chars().take(300).collect::<String>()
    );
    let sc = &res["structuredContent"];
    assert_eq!(sc["truncated"], true);
    let text = sc["text"].as_str().unwrap();
    // Half of a message less 64 KiB for the rest, escaped: no more, and not much less.
    let escaped = serde_json::to_string(text).unwrap().len() - 2;
    assert!(
        (4_900_000..=(MAX_MESSAGE - (64 << 10)) / 2).contains(&escaped),
        "{escaped} bytes kept, escaped"
    );
    assert!(text.ends_with("DONE"), "the newest text is kept");
    assert!(text.starts_with(char::is_numeric), "cut at a line start");
    let block = res["content"][0]["text"].as_str().unwrap();
    let (marker, rest) = block.split_once('\n').unwrap();
    // The marker line says where the whole capture is.
    let id = sc["snapshot"]
        .as_str()
        .unwrap()
        .trim_start_matches("tmuxmate://snapshot/");
    assert!(marker.starts_with("[... ") && marker.contains(" earlier bytes truncated ...]"));
    assert!(
        marker.ends_with(&format!("`tmuxmate snapshots show {id}`)")),
        "{marker}"
    );
    let whole = ok(s.run(&["snapshots", "show", id]));
    assert!(
        whole.len() > 5_500_000 && whole.trim_end().ends_with("DONE"),
        "{}",
        whole.len()
    );
    assert_eq!(rest, text);
    assert_eq!(sc["lineCount"], text.lines().count());
    // Without json: the text block alone, which holds twice as much, cut as well.
    let mut plain = args.clone();
    plain["json"] = json!(false);
    let r = c.request(
        "tools/call",
        json!({"name": "tmux_capture", "arguments": plain}),
    );
    assert!(size(&r) <= MAX_MESSAGE, "{} bytes", size(&r));
    let alone = r["result"]["content"][0]["text"].as_str().unwrap();
    let (marker, rest) = alone.split_once('\n').unwrap();
    assert!(
        marker.contains(" earlier bytes truncated ...] (one MCP answer"),
        "{marker}"
    );
    let escaped = serde_json::to_string(rest).unwrap().len() - 2;
    assert!(
        (9_800_000..=MAX_MESSAGE - (64 << 10)).contains(&escaped),
        "{escaped} bytes kept, escaped"
    );
    assert!(rest.ends_with(text), "the same newest text, more of it");
    // The snapshot holds the whole capture: more than one message carries.
    let uri = sc["snapshot"].as_str().unwrap().to_string();
    let r = c.request("resources/read", json!({"uri": uri}));
    let why = r["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", r.to_string().chars().take(300).collect::<String>()));
    assert!(
        why.contains("more than the 10000000") && why.contains("snapshots show"),
        "{why}"
    );
    // The connection lives on.
    let small = c.ok("tmux_capture", json!({"target": pane, "lines": 2}));
    assert!(small["text"].as_str().unwrap().contains("DONE"));
    c.finish();
}

/// An id of megabytes (a string id has no bound but the line's) makes any answer too big
/// for one message: it is answered with a small error under id `null`, once, and the
/// server goes on.
#[test]
fn an_id_too_big_to_answer_under_is_answered_as_null() {
    let s = server!();
    let mut c = Client::start(&s);
    c.initialize();
    let id = "i".repeat(10_500_000);
    c.write(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string());
    let a = c.answer();
    assert_eq!(
        a["id"],
        Value::Null,
        "{}",
        a.to_string().chars().take(300).collect::<String>()
    );
    assert_eq!(a["error"]["code"], -32603);
    let why = a["error"]["message"].as_str().unwrap();
    assert!(why.contains("more than the 10000000"), "{why}");
    let r = c.request("ping", json!({}));
    assert!(r.get("error").is_none(), "{r}");
    c.finish();
}
