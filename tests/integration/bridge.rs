//! The agent bridge against stand-in Claude and Codex CLIs (raw mode, bracketed paste,
//! real transcript formats, Claude's version-number process title, dialogs on demand).

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::server;
pub use crate::util::contract::{AgentStartedJson as Started, ReplyJson as Reply};
use crate::util::*;

pub fn standin_bin() -> PathBuf {
    let p = Path::new(BIN)
        .parent()
        .unwrap()
        .join("examples/agent_standin");
    // `cargo test --test integration` does not build examples: a stand-in older than its
    // source would test the old behaviour, so it is rebuilt like a missing one.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/agent_standin.rs");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let stale = match (modified(&p), modified(&src)) {
        (Some(bin), Some(src)) => bin < src,
        _ => true,
    };
    if stale {
        let st = std::process::Command::new(env!("CARGO"))
            .args(["build", "--example", "agent_standin"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap();
        assert!(st.success());
    }
    p
}

/// A project with stand-in CLIs on PATH; each CLI records into its own dir.
pub struct Bridge {
    pub proj: PathBuf,
    pub bin: PathBuf,
    pub sd: PathBuf,
}

impl Bridge {
    pub fn new(s: &Server, project: &str, branch: &str) -> Bridge {
        let proj = s.dir.join(project);
        std::fs::create_dir_all(proj.join(".git")).unwrap();
        std::fs::write(
            proj.join(".git/HEAD"),
            format!("ref: refs/heads/{branch}\n"),
        )
        .unwrap();
        let bin = s.dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for n in ["claude", "codex", "gemini", "myrepl"] {
            let _ = std::fs::copy(standin_bin(), bin.join(n));
        }
        let sd = s.dir.join(format!("sd-{project}"));
        std::fs::create_dir_all(&sd).unwrap();
        Bridge { proj, bin, sd }
    }

    pub fn command(&self, s: &Server, args: &[&str]) -> std::process::Command {
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut c = s.tmuxmate();
        c.env("PATH", path)
            .env("STANDIN_DIR", &self.sd)
            .env("NO_COLOR", "1")
            .current_dir(&self.proj)
            .args(args);
        c
    }

    pub fn cmd(&self, s: &Server, args: &[&str]) -> Output {
        self.command(s, args).output().unwrap()
    }

    pub fn cmd_env(&self, s: &Server, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = self.command(s, args);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    pub fn ok(&self, s: &Server, args: &[&str]) -> String {
        let o = self.cmd(s, args);
        assert!(
            o.status.success(),
            "{args:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    pub fn refused(&self, s: &Server, args: &[&str], needle: &str) -> String {
        let o = self.cmd(s, args);
        let e = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!o.status.success(), "{args:?} should be refused");
        assert!(e.contains(needle), "{args:?}: expected {needle:?} in: {e}");
        e
    }

    pub fn start(&self, s: &Server, adapter: &str) -> Started {
        serde_json::from_str(&self.ok(s, &["agent", "start", adapter, "--json"])).unwrap()
    }

    pub fn received(&self) -> Vec<u8> {
        std::fs::read(self.sd.join("received.bin")).unwrap_or_default()
    }

    /// The bytes the stand-in read after the end of the last bracketed paste.
    pub fn after_paste(&self) -> Vec<u8> {
        let got = self.received();
        let end = got.windows(6).rposition(|w| w == b"\x1b[201~").unwrap() + 6;
        got[end..].to_vec()
    }

    /// What the stand-in "sent to its model", one entry per prompt.
    pub fn prompts(&self) -> Vec<String> {
        std::fs::read_to_string(self.sd.join("prompts"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Live processes whose environment carries this bridge's STANDIN_DIR.
    pub fn processes(&self) -> Vec<(i32, String)> {
        let want = format!("STANDIN_DIR={}", self.sd.display());
        let mut v = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rfind(')')
                .is_some_and(|i| stat[i + 1..].trim_start().starts_with('Z'));
            if !zombie && env.split(|&b| b == 0).any(|kv| kv == want.as_bytes()) {
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                v.push((pid, String::from_utf8_lossy(&cmd).replace('\0', " ")));
            }
        }
        v
    }
}

fn env_message(b: &Bridge, name: &str, text: &str) -> PathBuf {
    let f = b.sd.join(name);
    std::fs::write(&f, text).unwrap();
    f
}

/// The Claude envelope the stand-in (like Claude Code 2.1.332) stores for a paste.
fn envelope(sent: &str) -> Option<(String, String)> {
    let rest = sent.strip_prefix("\n\n<pasted_content id=\"")?;
    let (id, body) = rest.split_once("\">\n")?;
    let close = format!("\n</pasted_content id=\"{id}\">\n");
    Some((id.to_string(), body.strip_suffix(&close)?.to_string()))
}

#[test]
fn claude_pastes_of_every_size_are_one_verified_prompt_with_the_whole_reply() {
    let s = server!();
    let b = Bridge::new(&s, "sizes", "main");
    let st = b.start(&s, "claude");
    let lines = |n: usize| {
        (1..=n)
            .map(|i| format!("line {i} of {n}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let big = |n: usize| {
        let mut t = String::new();
        let mut i = 0;
        while t.len() < n {
            t.push_str(&format!("row {i:07} $(echo no) `id` ; | && 日本 🚀\n"));
            i += 1;
        }
        t.truncate(n);
        t
    };
    // (message, wrapped by Claude 2.1.332?)
    let cases: Vec<(&str, String, bool)> = vec![
        ("1 line", "just one line".into(), false),
        ("2 lines", lines(2), false),
        ("3 lines", lines(3), false), // 2 line breaks: still plain
        ("3 breaks", format!("{}\n", lines(3)), true),
        ("4 lines", lines(4), true),
        ("50 lines", lines(50), true),
        ("800 chars", "y".repeat(800), false),
        ("801 chars", "z".repeat(801), true),
        ("810 chars", "x".repeat(810), true),
        ("700 CJK", "日".repeat(700), false),
        ("401 emoji", "🚀".repeat(401), true), // 802 UTF-16 units
        (
            "shell text",
            "$(rm -rf /) `id`; echo \"$HOME\" | tee x && exit 1".into(),
            false,
        ),
        ("100 KB", big(100_000), true),
        ("1 MiB", big(1 << 20), true),
    ];
    let before = b.prompts().len();
    for (i, (what, msg, wrapped)) in cases.iter().enumerate() {
        let f = env_message(&b, &format!("msg-{i}"), msg);
        let t0 = std::time::Instant::now();
        let r: Reply = serde_json::from_str(&b.ok(
            &s,
            &[
                "agent",
                "ask",
                &st.name,
                "--file",
                f.to_str().unwrap(),
                "--json",
            ],
        ))
        .unwrap();
        assert!(r.complete, "{what}: {r:?}");
        assert_eq!(r.source, "transcript", "{what}");
        let head: String = msg.trim().chars().take(40).collect();
        assert_eq!(r.text, format!("stand-in reply to: {head}"), "{what}");
        let sent = b.prompts();
        assert_eq!(sent.len(), before + i + 1, "{what}: exactly one prompt");
        let last = sent.last().unwrap();
        match envelope(last) {
            Some((id, body)) => {
                assert!(
                    *wrapped,
                    "{what} should be stored plain: {:?}",
                    &last[..60.min(last.len())]
                );
                assert_eq!(id.len(), 4, "{what}");
                assert_eq!(body, msg.trim_end_matches('\n'), "{what}: byte for byte");
            }
            None => {
                assert!(!*wrapped, "{what} should be wrapped");
                assert_eq!(last, msg.trim(), "{what}");
            }
        }
        eprintln!("{what}: {} ms", t0.elapsed().as_millis());
    }
}

#[test]
fn a_verification_that_times_out_never_hides_the_reply() {
    let s = server!();
    let b = Bridge::new(&s, "late", "main");
    let st = b.start(&s, "claude");
    // The CLI records the prompt only after 1.5 s; tmuxmate looks for 0.3 s.
    std::fs::write(b.sd.join("record-ms"), "1500").unwrap();
    let msg = "a\nlong\nmulti-line\ntask";
    let o = b.cmd_env(
        &s,
        &["agent", "ask", &st.name, "--message", msg],
        &[("TMUXMATE_VERIFY_TIMEOUT_MS", "300")],
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(e.contains("Do not send it again"), "{e}");
    assert!(e.contains(&format!("agent wait {}", st.name)), "{e}");
    let r: Reply = serde_json::from_str(&b.ok(
        &s,
        &["agent", "wait", &st.name, "--timeout", "20s", "--json"],
    ))
    .unwrap();
    assert!(r.complete, "{r:?}");
    assert_eq!(r.text, "stand-in reply to: a\nlong\nmulti-line\ntask");
    let r2: Reply =
        serde_json::from_str(&b.ok(&s, &["agent", "reply", &st.name, "--json"])).unwrap();
    assert_eq!(r2.text, r.text);
    assert_eq!(b.prompts().len(), 1, "the message arrived once");
}

#[test]
fn clear_gives_claude_a_new_session_and_the_bridge_follows_it() {
    let s = server!();
    let b = Bridge::new(&s, "clr", "main");
    let st = b.start(&s, "claude");
    let old = st.cli_session.clone().unwrap();
    assert!(
        b.ok(&s, &["agent", "ask", &st.name, "--message", "before clear"])
            .contains("before clear")
    );
    // A person types /clear in the pane: the same process, a new session id.
    s.tmux(&["send-keys", "-t", &st.pane_id, "-l", "/clear"]);
    s.tmux(&["send-keys", "-t", &st.pane_id, "Enter"]);
    let pid = s.tmux(&["display", "-p", "-t", &st.pane_id, "#{pane_pid}"]);
    let sessions = s
        .home
        .join(".claude/sessions")
        .join(format!("{}.json", pid.trim()));
    let new: String = wait_until("the new session id", Duration::from_secs(10), || {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&sessions).ok()?).ok()?;
        let id = v["sessionId"].as_str()?.to_string();
        (id != old).then_some(id)
    });
    let out = b.ok(&s, &["agent", "ask", &st.name, "--message", "after clear"]);
    assert_eq!(out, "stand-in reply to: after clear\n");
    assert_eq!(
        s.tmux(&["show", "-v", "-t", &st.session_id, "@tmuxmate-cli-session"])
            .trim(),
        new
    );
    // And a prompt already sent when /clear came is still found by `reply`.
    assert!(
        b.ok(&s, &["agent", "reply", &st.name])
            .contains("after clear")
    );
}

#[test]
fn wait_after_a_busy_refusal_never_returns_the_previous_reply() {
    let s = server!();
    let b = Bridge::new(&s, "busy", "main");
    let st = b.start(&s, "claude");
    std::fs::write(b.sd.join("reply.txt"), "PREVIOUS REPLY").unwrap();
    b.ok(&s, &["agent", "ask", &st.name, "--message", "ours"]);
    // A person starts a turn of their own in the pane; it runs until `busy` goes.
    std::fs::write(b.sd.join("busy"), "").unwrap();
    s.tmux(&[
        "send-keys",
        "-t",
        &st.pane_id,
        "-l",
        "the person's own question",
    ]);
    s.tmux(&["send-keys", "-t", &st.pane_id, "Enter"]);
    wait_until("the person's prompt", Duration::from_secs(10), || {
        (b.prompts().len() == 2).then_some(())
    });
    b.refused(&s, &["agent", "send", &st.name, "--message", "x"], "busy");
    let o = b.cmd(&s, &["agent", "wait", &st.name, "--timeout-s", "1"]);
    assert!(!o.status.success());
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(!out.contains("PREVIOUS REPLY"), "{out}");
    assert!(err.contains("did not start"), "{err}");
    // A wait that outlasts the person's turn says whose it was, still not our old reply.
    let t0 = std::time::Instant::now();
    let child = b
        .command(&s, &["agent", "wait", &st.name, "--timeout-s", "20"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(600));
    std::fs::remove_file(b.sd.join("busy")).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        t0.elapsed() >= Duration::from_millis(600),
        "it waited for the turn"
    );
    assert!(!o.status.success());
    assert!(!String::from_utf8_lossy(&o.stdout).contains("PREVIOUS REPLY"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("was not started by tmuxmate"), "{err}");
    // The next message goes through as usual.
    std::fs::write(b.sd.join("reply.txt"), "NEW REPLY").unwrap();
    assert_eq!(
        b.ok(&s, &["agent", "ask", &st.name, "--message", "next"]),
        "NEW REPLY\n"
    );
}

#[test]
fn codex_runs_without_its_daemon_and_stop_leaves_no_process_or_socket() {
    let s = server!();
    // The stand-in, like Codex 0.171, leaves a daemon behind when run without --no-daemon.
    let plain = Bridge::new(&s, "plain", "main");
    let w = s.window(
        "plain",
        &format!(
            "cd '{}' && STANDIN_DIR='{}' exec '{}'",
            plain.proj.display(),
            plain.sd.display(),
            plain.bin.join("codex").display()
        ),
    );
    let uid = crate::util::nix_uid();
    let pidfile = plain.sd.join(format!("codex-daemon-{uid}/app-server.pid"));
    let dpid: i32 = wait_until("the stand-in daemon", Duration::from_secs(10), || {
        std::fs::read_to_string(&pidfile).ok()?.trim().parse().ok()
    });
    s.tmux(&["kill-pane", "-t", &w]);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        plain
            .processes()
            .iter()
            .any(|(p, c)| *p == dpid && c.contains("--managed-daemon")),
        "the daemon outlives its TUI: {:?}",
        plain.processes()
    );
    let _ = std::process::Command::new("kill")
        .arg(dpid.to_string())
        .status();
    // Through the bridge: --no-daemon, and stop leaves nothing of the agent running.
    let b = Bridge::new(&s, "nd", "main");
    let st = b.start(&s, "codex");
    let argv = std::fs::read_to_string(b.sd.join("argv.json")).unwrap();
    assert!(argv.contains("\"--no-daemon\""), "{argv}");
    b.ok(&s, &["agent", "ask", &st.name, "--message", "hello"]);
    assert!(!b.processes().is_empty(), "the TUI runs");
    assert!(!b.sd.join(format!("codex-daemon-{uid}")).exists());
    let out = b.ok(&s, &["agent", "stop", &st.name, "--confirm", "--json"]);
    let v: crate::util::contract::AgentStoppedJson =
        crate::util::contract::parse("agent stop", out.as_bytes());
    assert!(v.stopped, "{out}");
    wait_until("no agent process", Duration::from_secs(5), || {
        b.processes().is_empty().then_some(())
    });
    assert!(!b.sd.join(format!("codex-daemon-{uid}")).exists());
}

#[test]
fn hostile_multiline_message_arrives_as_one_prompt_and_reply_comes_back() {
    let s = server!();
    let b = Bridge::new(&s, "proj", "main");
    let st = b.start(&s, "claude");
    assert_eq!(st.name, "tc-proj-main");
    assert!(!st.reused);
    let never = s.dir.join("NEVER");
    let msg = format!(
        "review this:\n$(touch {n}) `touch {n}` 100% a:b 日本語 🚀\nend with semicolon;\nsneaky \x1b[201~ paste end",
        n = never.display()
    );
    let r: Reply = serde_json::from_str(&b.ok(
        &s,
        &["agent", "ask", "tc-proj-main", "--message", &msg, "--json"],
    ))
    .unwrap();
    assert!(r.complete, "{r:?}");
    assert_eq!(r.source, "transcript");
    assert_eq!(
        r.text,
        format!(
            "stand-in reply to: {}",
            msg.chars().take(40).collect::<String>()
        )
    );
    let (clean, _) = (msg.replace('\x1b', "␛"), ());
    let mut want = b"\x1b[200~".to_vec();
    want.extend_from_slice(clean.as_bytes());
    want.extend_from_slice(b"\x1b[201~\r");
    assert_eq!(
        String::from_utf8_lossy(&b.received()),
        String::from_utf8_lossy(&want)
    );
    assert!(!never.exists());
    // NO_COLOR was dropped, the CLI got the session id and the pane's own TMUX_PANE.
    let argv: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(b.sd.join("argv.json")).unwrap()).unwrap();
    assert_eq!(argv["no_color"], false);
    assert_eq!(argv["tmux_pane"], st.pane_id.as_str());
    assert!(
        argv["argv"]
            .to_string()
            .contains(st.cli_session.as_deref().unwrap())
    );
    // Claude shows its version as the process name: identity still checks out.
    assert_eq!(
        s.tmux(&[
            "display",
            "-p",
            "-t",
            &st.pane_id,
            "#{pane_current_command}"
        ])
        .trim(),
        "2.1.332"
    );
    // Second start reuses; the reply command reads the same complete reply.
    assert!(b.start(&s, "claude").reused);
    let r2: Reply =
        serde_json::from_str(&b.ok(&s, &["agent", "reply", "tc-proj-main", "--json"])).unwrap();
    assert_eq!(r2.text, r.text);
}

#[test]
fn codex_rollout_is_pinned_and_read() {
    let s = server!();
    let b = Bridge::new(&s, "cx", "main");
    std::fs::write(b.sd.join("reply.txt"), "LGTM, two nits.\nSecond line.").unwrap();
    let st = b.start(&s, "codex");
    assert_eq!(st.name, "ta-codex-cx-main");
    let out = b.ok(&s, &["agent", "ask", "codex", "--message", "review please"]);
    assert_eq!(out, "LGTM, two nits.\nSecond line.\n");
    let rollout = s.tmux(&["show", "-v", "-t", &st.session_id, "@tmuxmate-rollout"]);
    assert!(rollout.contains("rollout-"), "{rollout}");
    // A second turn on the same rollout reads only the new turn.
    std::fs::write(b.sd.join("reply.txt"), "second answer").unwrap();
    assert_eq!(
        b.ok(&s, &["agent", "ask", "codex", "--message", "and now?"]),
        "second answer\n"
    );
}

#[test]
fn ask_between_agents_in_panes() {
    // Claude -> Codex and Codex -> Claude: the caller is a process in an agent's pane.
    let s = server!();
    let b = Bridge::new(&s, "both", "main");
    let a = s.agent_pane("caller");
    let path = format!("{}:$PATH", b.bin.display());
    let script = |target: &str, msg: &str| {
        format!(
            "cd '{}' && PATH=\"{}\" STANDIN_DIR='{}' \"$TM\" agent ask {target} --message '{msg}'",
            b.proj.display(),
            path,
            b.sd.display()
        )
    };
    let r = a.sh(&script("codex", "from claude to codex"));
    assert_eq!(r.rc, 0, "{}", r.out);
    assert!(
        r.out.contains("stand-in reply to: from claude to codex"),
        "{}",
        r.out
    );
    let r = a.sh(&script("claude", "from codex to claude"));
    assert_eq!(r.rc, 0, "{}", r.out);
    assert!(
        r.out.contains("stand-in reply to: from codex to claude"),
        "{}",
        r.out
    );
}

#[test]
fn a_session_started_from_a_pane_survives_destroy_unattached() {
    // A user's `destroy-unattached on`, set here for any config: the agent's session runs
    // detached, and started from a pane its `destroy-unattached off` must reach it (a
    // set-option without -t would reach the caller's session: tmux reads $TMUX_PANE).
    let s = server!();
    let b = Bridge::new(&s, "du", "main");
    s.tmux(&["set-option", "-g", "destroy-unattached", "on"]);
    let a = s.agent_pane("caller");
    let r = a.sh(&format!(
        "cd '{}' && PATH=\"{}:$PATH\" STANDIN_DIR='{}' \"$TM\" agent start codex --json",
        b.proj.display(),
        b.bin.display(),
        b.sd.display()
    ));
    assert_eq!(r.rc, 0, "{}", r.out);
    let st: Started = serde_json::from_str(&r.out).unwrap();
    assert_eq!(
        s.tmux(&[
            "show-options",
            "-v",
            "-t",
            &st.session_id,
            "destroy-unattached"
        ])
        .trim(),
        "off"
    );
    // The caller's session keeps its own value (nothing else was touched).
    assert_eq!(
        s.tmux(&["show-options", "-qv", "-t", "=main:", "destroy-unattached"])
            .trim(),
        "off"
    );
    assert!(b.start(&s, "codex").reused, "the session is still there");
}

#[test]
fn refusals_each_name_the_failed_check() {
    let s = server!();
    let b = Bridge::new(&s, "rf", "main");
    b.refused(
        &s,
        &["agent", "send", "tc-rf-main", "--message", "x"],
        "no tmux session is named exactly",
    );
    // An unmanaged session that happens to have the name.
    s.detached_session("tc-rf-main", "sh");
    b.refused(
        &s,
        &["agent", "send", "tc-rf-main", "--message", "x"],
        "not managed by tmuxmate",
    );
    b.refused(&s, &["agent", "start", "claude"], "does not manage it");
    s.tmux(&["kill-session", "-t", "=tc-rf-main"]);
    let st = b.start(&s, "claude");
    // Empty message; permission mode mismatch; unknown mode; project mismatch.
    b.refused(&s, &["agent", "send", &st.name, "--message", "  "], "empty");
    b.refused(
        &s,
        &[
            "agent",
            "send",
            &st.name,
            "--message",
            "x",
            "--permission-mode",
            "plan",
        ],
        "permission mode",
    );
    b.refused(
        &s,
        &["agent", "start", "claude", "--permission-mode", "plan"],
        "permission mode",
    );
    b.refused(
        &s,
        &["agent", "start", "claude", "--permission-mode", "nope"],
        "unknown permission mode",
    );
    let other = Bridge::new(&s, "other", "main");
    other.refused(
        &s,
        &["agent", "send", &st.name, "--message", "x"],
        "works on project",
    );
    // Dialog visible: refused, and no Enter ever reaches the CLI.
    std::fs::write(b.sd.join("dialog"), "").unwrap();
    wait_until("dialog drawn", Duration::from_secs(5), || {
        s.tmux(&["capture-pane", "-p", "-t", &st.pane_id])
            .contains("Do you want to proceed")
            .then_some(())
    });
    let before = b.received();
    b.refused(
        &s,
        &["agent", "send", &st.name, "--message", "x"],
        "shows a dialog",
    );
    assert_eq!(b.received(), before);
    std::fs::remove_file(b.sd.join("dialog")).unwrap();
    wait_until("dialog gone", Duration::from_secs(5), || {
        (!s.tmux(&["capture-pane", "-p", "-t", &st.pane_id])
            .contains("Do you want to proceed"))
        .then_some(())
    });
    // Mid-turn: a turn that does not finish.
    std::fs::write(b.sd.join("busy"), "").unwrap();
    let sent: crate::util::contract::AgentSentJson = crate::util::contract::parse(
        "agent send",
        b.ok(
            &s,
            &[
                "agent",
                "send",
                &st.name,
                "--message",
                "long task",
                "--json",
            ],
        )
        .as_bytes(),
    );
    assert_eq!(
        (sent.name.as_str(), sent.pane_id.as_str()),
        (st.name.as_str(), st.pane_id.as_str())
    );
    assert!(
        sent.submitted && sent.bytes == "long task".len(),
        "{sent:?}"
    );
    b.refused(
        &s,
        &["agent", "send", &st.name, "--message", "again"],
        "mid-turn",
    );
    let o = b.cmd(&s, &["agent", "wait", &st.name, "--timeout-s", "1"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("[incomplete"));
    // The attach advice names the server in use.
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains(&format!("tmux -S {} attach -t", s.socket_path().display())),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    std::fs::remove_file(b.sd.join("busy")).unwrap();
    b.ok(&s, &["agent", "wait", &st.name, "--timeout-s", "10"]);
    // Foreground is not the CLI any more (restarted by hand as a shell).
    s.tmux(&["respawn-pane", "-k", "-t", &st.pane_id, "sh"]);
    b.refused(
        &s,
        &["agent", "send", &st.name, "--message", "x"],
        "not the claude CLI",
    );
    // Pinned pane gone.
    s.tmux(&["split-window", "-d", "-t", &st.pane_id, "sh"]);
    s.tmux(&["kill-pane", "-t", &st.pane_id]);
    b.refused(
        &s,
        &["agent", "send", &st.name, "--message", "x"],
        "is gone",
    );
    // Stop needs --confirm.
    b.refused(&s, &["agent", "stop", &st.name], "--confirm");
    b.ok(&s, &["agent", "stop", &st.name, "--confirm"]);
    assert!(
        !s.tmux(&["list-sessions", "-F", "#{session_name}"])
            .contains("tc-rf-main")
    );
}

#[test]
fn dialog_visible_means_no_keystroke() {
    let s = server!();
    let b = Bridge::new(&s, "dlg", "main");
    let st = b.start(&s, "codex");
    std::fs::write(b.sd.join("dialog"), "").unwrap();
    wait_until("dialog visible", Duration::from_secs(5), || {
        s.tmux(&["capture-pane", "-p", "-t", &st.pane_id])
            .contains("enter/esc confirm")
            .then_some(())
    });
    let before = b.received();
    b.refused(
        &s,
        &["agent", "send", &st.name, "--message", "x"],
        "shows a dialog",
    );
    b.refused(
        &s,
        &["agent", "ask", &st.name, "--message", "x"],
        "shows a dialog",
    );
    assert!(
        !b.sd.join("dialog-enter").exists(),
        "an Enter reached the dialog"
    );
    assert_eq!(
        b.received(),
        before,
        "no byte may reach a CLI showing a dialog"
    );
}

/// A Gemini whose cursor follows its composer but that stops taking keys after the
/// paste gets no Enter at all: it could be read in one wakeup with a key still queued,
/// under the guard's stale handler. The refusal says the text sits in its composer.
#[test]
fn a_gemini_that_stops_taking_keys_gets_no_enter() {
    stuck_gemini_gets_no_enter("gstuck", &[]);
}

/// The same when the frame that draws the Left is shown half drawn for a while first
/// (its lines, the cursor below them): the probe waits for the step on the composer's row
/// instead of taking the half frame's cursor for the move, and calling the Left unseen.
#[test]
fn a_stuck_gemini_whose_left_is_drawn_in_two_parts_gets_no_enter() {
    stuck_gemini_gets_no_enter("gsplit", &[("split-key-draw-ms", 300)]);
}

/// And when every frame is, the paste's too: the cursor the probe starts from is then
/// the half frame's, and the step is counted from where the cursor went next.
#[test]
fn a_stuck_gemini_whose_every_frame_is_drawn_in_two_parts_gets_no_enter() {
    stuck_gemini_gets_no_enter("gsplitall", &[("split-draw-ms", 200)]);
}

/// And when each frame is held half drawn for longer than the probe's `HALF_FRAME`
/// (600 ms), with the whole paste frame shown for a while between (its cursor seen: the
/// first move): the step is still waited for until the probe's short deadline.
#[test]
fn a_stuck_gemini_whose_frames_stay_half_drawn_900_ms_gets_no_enter() {
    stuck_gemini_gets_no_enter(
        "gsplitlong",
        &[("split-draw-ms", 900), ("stall-after-paste-ms", 300)],
    );
}

/// `knobs`: more stand-in knobs (frames shown half drawn, a stall after the paste), each
/// with its value in ms.
fn stuck_gemini_gets_no_enter(project: &str, knobs: &[(&str, u64)]) {
    let s = server!();
    let b = Bridge::new(&s, project, "main");
    let st = b.start(&s, "gemini");
    // The probe gets 4 s to see the stand-in's Left drawn: a Left not seen is counted
    // unseen, and Enter follows the settle pause. The stall is far longer than the probe:
    // tmuxmate's looks at the cursor can come seconds late on a loaded machine, and a
    // stall that is over by then has taken the key.
    std::fs::write(b.sd.join("stall-after-key-ms"), "15000").unwrap();
    for (knob, ms) in knobs {
        std::fs::write(b.sd.join(knob), ms.to_string()).unwrap();
    }
    let o = b.cmd_env(
        &s,
        &["agent", "send", &st.name, "--message", "stuck\nhere"],
        &[("TMUXMATE_PROBE_TIMEOUT_MS", "4000")],
    );
    let e = String::from_utf8_lossy(&o.stderr);
    let log = std::fs::read_to_string(s.state.join("log")).unwrap_or_default();
    assert_eq!(o.status.code(), Some(1), "{e}\nlog:\n{log}");
    assert!(
        e.contains("stopped taking keys") && e.contains("Enter was NOT pressed"),
        "{e}"
    );
    // After the stall it has read Left and the probe's Rights (sent again every 1.5 s while
    // the cursor stays left), and nothing else; nothing submitted.
    let tail = wait_until("the Right read", Duration::from_secs(45), || {
        Some(b.after_paste()).filter(|t| t.len() >= 6)
    });
    let (left, rights) = tail.split_at(3);
    assert_eq!(left, b"\x1b[D", "Left first: {tail:?}");
    assert!(
        rights.chunks(3).all(|k| k == b"\x1b[C"),
        "only Rights after it, no Enter: {tail:?}"
    );
    assert!(
        s.tmux(&["capture-pane", "-p", "-t", &st.pane_id])
            .contains(" > stuck")
    );
    assert!(b.prompts().is_empty());
}

/// A dialog that comes up with the paste gets no key either: not Enter, and not the
/// cursor keys that show Gemini's paste guard over.
#[test]
fn a_dialog_after_the_paste_gets_not_even_the_probe_keys() {
    let s = server!();
    let b = Bridge::new(&s, "dlgp", "main");
    let st = b.start(&s, "gemini");
    std::fs::write(b.sd.join("dialog-on-paste"), "").unwrap();
    b.refused(
        &s,
        &["agent", "send", &st.name, "--message", "two\nlines"],
        "dialog appeared",
    );
    assert_eq!(b.after_paste(), b"", "nothing after the paste");
    assert!(!b.sd.join("dialog-enter").exists());
    assert!(b.prompts().is_empty());
}

#[test]
fn names_with_dots_colons_percent_round_trip() {
    let s = server!();
    let b = Bridge::new(&s, "my.proj%1", "feat:x.y");
    let name = b.ok(&s, &["agent", "name", "claude"]);
    assert_eq!(name.trim(), "tc-my%2Eproj%251-feat%3Ax%2Ey");
    let st = b.start(&s, "claude");
    assert_eq!(st.name, name.trim());
    assert_eq!(
        s.tmux(&["display", "-p", "-t", &st.session_id, "#{session_name}"])
            .trim(),
        name.trim()
    );
    let r = b.ok(&s, &["agent", "ask", name.trim(), "--message", "hi"]);
    assert!(r.contains("stand-in reply to: hi"));
    // A session whose name is a prefix of ours is never matched by tmux prefix rules.
    s.detached_session("tc-my", "sh");
    b.refused(
        &s,
        &["agent", "send", "tc-my%2Epr", "--message", "x"],
        "no tmux session is named exactly",
    );
}

#[test]
fn session_killed_mid_send_never_touches_another_session() {
    let s = server!();
    let victim = Bridge::new(&s, "victim", "main");
    let bystander = Bridge::new(&s, "bystander", "main");
    let v = victim.start(&s, "claude");
    bystander.start(&s, "claude");
    // A tmux shim that kills the victim session right before the text is loaded.
    let shim = s.dir.join("tmux-race");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\ncase \" $* \" in *\" load-buffer \"*) tmux -L {} kill-session -t '{}';; esac\nexec tmux \"$@\"\n",
            s.name, v.session_id
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", shim.to_str().unwrap()])
        .status()
        .unwrap();
    let path = format!(
        "{}:{}",
        victim.bin.display(),
        std::env::var("PATH").unwrap()
    );
    let o = s
        .tmuxmate()
        .env("PATH", path)
        .env("TMUXMATE_TMUX", &shim)
        .current_dir(&victim.proj)
        .args(["agent", "send", &v.name, "--message", "for the victim only"])
        .output()
        .unwrap();
    assert!(
        !o.status.success(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        bystander.received().is_empty(),
        "the bystander got keystrokes"
    );
    assert!(
        !s.tmux(&["list-sessions", "-F", "#{session_name}"])
            .contains("victim")
    );
}

#[test]
fn pane_fallback_for_a_custom_cli() {
    let s = server!();
    let b = Bridge::new(&s, "cust", "main");
    let cli = b.bin.join("myrepl");
    let st: Started = serde_json::from_str(&b.ok(
        &s,
        &[
            "agent",
            "start",
            "custom",
            "--cli",
            cli.to_str().unwrap(),
            "--ready-regex",
            "❯ ",
            "--json",
        ],
    ))
    .unwrap();
    assert_eq!(st.name, "tx-cust-main");
    let r: Reply = serde_json::from_str(&b.ok(
        &s,
        &[
            "agent",
            "ask",
            &st.name,
            "--message",
            "what is up",
            "--json",
        ],
    ))
    .unwrap();
    assert_eq!(r.source, "pane");
    assert!(r.complete);
    assert!(
        r.text.contains("stand-in reply to: what is up"),
        "{}",
        r.text
    );
}

#[test]
fn custom_cli_behind_a_symlink_is_itself_and_ready_regex_matches_trimmed_lines() {
    let s = server!();
    let b = Bridge::new(&s, "sym", "main");
    // As `python3` -> `python3.11`: the name given is a symlink, the process runs the target.
    let link = b.bin.join("repl-link");
    std::os::unix::fs::symlink(b.bin.join("myrepl"), &link).unwrap();
    // The stand-in draws `❯ ` (a trailing blank); `$` must match at the trimmed line end.
    let st: Started = serde_json::from_str(&b.ok(
        &s,
        &[
            "agent",
            "start",
            "custom",
            "--cli",
            link.to_str().unwrap(),
            "--ready-regex",
            "^❯ ?$",
            "--json",
        ],
    ))
    .unwrap();
    let list = b.ok(&s, &["agent", "list"]);
    assert!(list.contains("[ready]"), "{list}");
    let listed: Vec<crate::util::contract::AgentListedJson> = crate::util::contract::parse(
        "agent list",
        b.ok(&s, &["agent", "list", "--json"]).as_bytes(),
    );
    let me = listed.iter().find(|l| l.name == st.name).unwrap();
    assert_eq!(
        (me.pane_id.as_str(), me.state.as_str()),
        (st.pane_id.as_str(), "ready")
    );
    assert!(me.session_id.starts_with('$'), "{me:?}");
    let r = b.ok(
        &s,
        &[
            "agent",
            "ask",
            &st.name,
            "--message",
            "hello there",
            "--timeout",
            "20s",
        ],
    );
    assert!(r.contains("stand-in reply to: hello there"), "{r}");
    // Printed hints reach this server as printed: the attach line names its socket.
    assert!(
        st.attach
            .starts_with(&format!("tmux -S {} attach -t", s.socket_path().display())),
        "{}",
        st.attach
    );
    let check = st.attach.replace(" attach -t ", " has-session -t ");
    let o = std::process::Command::new("sh")
        .args(["-c", &check])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{check}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Gemini CLI 0.61 through the pane fallback: start waits for the banner (a prompt before
/// it is lost), a multi-line paste stays one prompt (an Enter within 40 ms of a paste is a
/// newline), and a second ask right after a send is refused even while the CLI has
/// cleared its composer but not yet drawn the prompt it took.
#[test]
fn gemini_prompts_are_never_lost_doubled_or_queued_behind_our_own_turn() {
    let s = server!();
    let b = Bridge::new(&s, "gem", "main");
    std::fs::write(b.sd.join("banner-ms"), "1500").unwrap();
    let st = b.start(&s, "gemini");
    assert_eq!(st.adapter, "gemini");
    let r = b.ok(
        &s,
        &[
            "agent",
            "ask",
            &st.name,
            "--message",
            "hello there",
            "--timeout-s",
            "20",
        ],
    );
    assert!(r.contains("stand-in reply to: hello there"), "{r}");
    assert!(
        !b.sd.join("lost").exists(),
        "nothing was sent before the banner"
    );
    let three = "one\ntwo\nthree";
    let r = b.ok(
        &s,
        &[
            "agent",
            "ask",
            &st.name,
            "--message",
            three,
            "--timeout-s",
            "20",
        ],
    );
    assert!(r.contains("stand-in reply to: one"), "{r}");
    assert_eq!(
        b.prompts(),
        vec!["hello there".to_string(), three.to_string()]
    );
    // The prompt shows 700 ms after the composer clears; the turn takes 2 s.
    std::fs::write(b.sd.join("echo-ms"), "700").unwrap();
    std::fs::write(b.sd.join("delay-ms"), "2000").unwrap();
    std::fs::write(b.sd.join("reply.txt"), "Slow answer.").unwrap();
    let t0 = std::time::Instant::now();
    b.ok(
        &s,
        &["agent", "send", &st.name, "--message", "a slow question"],
    );
    let e = b.refused(
        &s,
        &[
            "agent",
            "ask",
            &st.name,
            "--message",
            "are you there?",
            "--timeout-s",
            "20",
        ],
        "refused",
    );
    assert!(e.contains("mid-turn") || e.contains("busy"), "{e}");
    let w = b.ok(&s, &["agent", "wait", &st.name, "--timeout-s", "30"]);
    assert!(w.contains("Slow answer."), "{w}");
    assert!(
        t0.elapsed() >= Duration::from_millis(2000),
        "it waited for the turn"
    );
    assert_eq!(b.prompts().len(), 3, "{:?}", b.prompts());
    assert!(!b.prompts().iter().any(|p| p.contains("are you there")));
}

/// Gemini CLI 0.61's paste guard ends on its event loop: an Enter read in the wakeup that
/// finds the guard's 40 ms timer due is still a newline (real Gemini stopped for 100 ms
/// right after it read a 2-line paste, Enter sent meanwhile: 2 of 8 newlines;
/// docs/harnesses.md#gemini-cli-in-a-pane). The
/// stand-in, stalled right after a paste (`stall-after-paste-ms`), does the same.
#[test]
fn gemini_takes_an_enter_read_as_its_paste_guard_expires_as_a_newline() {
    let s = server!();
    let b = Bridge::new(&s, "gguard", "main");
    let st = b.start(&s, "gemini");
    std::fs::write(b.sd.join("stall-after-paste-ms"), "1500").unwrap();
    s.tmux(&["set-buffer", "-b", "g1", "--", "guarded one\nguarded two"]);
    s.tmux(&["paste-buffer", "-dpr", "-b", "g1", "-t", &st.pane_id]);
    let screen = |s: &Server| s.tmux(&["capture-pane", "-p", "-t", &st.pane_id]);
    wait_until("the paste drawn", Duration::from_secs(10), || {
        screen(&s).contains("guarded two").then_some(())
    });
    // Well past the 40 ms, but read only when the stall ends, with the guard due.
    s.tmux(&["send-keys", "-t", &st.pane_id, "Enter"]);
    s.tmux(&["send-keys", "-t", &st.pane_id, "-l", "x"]);
    wait_until(
        "the x on a new composer line",
        Duration::from_secs(10),
        || {
            screen(&s)
                .lines()
                .any(|l| l.trim_end() == "   x")
                .then_some(())
        },
    );
    assert!(
        b.prompts().is_empty(),
        "nothing submitted: {:?}",
        b.prompts()
    );
}

/// So the bridge presses Enter only after two cursor keys Gemini took and drew (Left, then
/// Right: the cursor ends where it was), not after a fixed pause: a Gemini stalled for
/// 1.5 s right after taking the paste in still gets the message as one prompt, exactly.
/// A Gemini whose cursor does not show falls back to the settle pause.
#[test]
fn gemini_gets_enter_after_keys_it_drew_not_after_a_fixed_pause() {
    let s = server!();
    let b = Bridge::new(&s, "gprobe", "main");
    let st = b.start(&s, "gemini");
    std::fs::write(b.sd.join("stall-after-paste-ms"), "1500").unwrap();
    let two = "first line of two\nsecond line of two";
    let r = b.ok(
        &s,
        &[
            "agent",
            "ask",
            &st.name,
            "--message",
            two,
            "--timeout-s",
            "30",
        ],
    );
    assert!(r.contains("stand-in reply to: first line of two"), "{r}");
    assert_eq!(b.prompts(), vec![two.to_string()]);
    let tail = b.after_paste();
    assert_eq!(
        tail, b"\x1b[D\x1b[C\r",
        "after the paste: Left, Right, Enter"
    );
    // No cursor to watch: the pause, and still Left and Right as a pair.
    std::fs::remove_file(b.sd.join("stall-after-paste-ms")).unwrap();
    std::fs::write(b.sd.join("no-cursor"), "").unwrap();
    let r = b.ok(
        &s,
        &[
            "agent",
            "ask",
            &st.name,
            "--message",
            "no cursor here",
            "--timeout-s",
            "30",
        ],
    );
    assert!(r.contains("stand-in reply to: no cursor here"), "{r}");
    assert_eq!(
        b.prompts(),
        vec![two.to_string(), "no cursor here".to_string()]
    );
    let tail = b.after_paste();
    assert_eq!(tail, b"\x1b[D\x1b[C\r");
    // A Right lost (real Gemini under heavy load): Right again, then Enter; the text whole.
    std::fs::remove_file(b.sd.join("no-cursor")).unwrap();
    std::fs::write(b.sd.join("lose-right"), "").unwrap();
    let r = b.ok(
        &s,
        &[
            "agent",
            "ask",
            &st.name,
            "--message",
            "right again",
            "--timeout-s",
            "30",
        ],
    );
    assert!(r.contains("stand-in reply to: right again"), "{r}");
    assert_eq!(b.prompts().last().unwrap(), "right again");
    let tail = b.after_paste();
    assert_eq!(tail, b"\x1b[D\x1b[C\x1b[C\r");
    // The Left's frame shown half drawn for a while (the cursor below its lines): the
    // probe waits for the step, then Right and Enter as always (its stuck counterpart is
    // a_stuck_gemini_whose_left_is_drawn_in_two_parts_gets_no_enter).
    std::fs::write(b.sd.join("split-key-draw-ms"), "300").unwrap();
    ask_proven(&b, &s, &st.name, "half a frame", "30");
    // Every frame half drawn for a while, the paste's included (the probe then starts
    // from the half frame's cursor): delivered the same way.
    std::fs::write(b.sd.join("split-draw-ms"), "200").unwrap();
    ask_proven(&b, &s, &st.name, "every frame in halves", "60");
    std::fs::remove_file(b.sd.join("split-draw-ms")).unwrap();
    // A frame passing by two columns right of the resting cursor between the Left and
    // its draw (seen once in CI): not where Left started, so the Right back proves it.
    std::fs::write(b.sd.join("pass-right-on-key-ms"), "150").unwrap();
    ask_proven(&b, &s, &st.name, "a frame passing by", "30");
    assert!(
        !b.sd.join("pass-right-on-key-ms").exists(),
        "the passing frame was drawn"
    );
}

/// Ask `msg` and check it went as the probe proves it should: the reply, the prompt
/// whole, Left, Right and Enter after the paste, and no settle pause in the log.
fn ask_proven(b: &Bridge, s: &Server, name: &str, msg: &str, timeout_s: &str) {
    let logged = std::fs::read_to_string(s.state.join("log"))
        .unwrap_or_default()
        .len();
    let r = b.ok(
        s,
        &[
            "agent",
            "ask",
            name,
            "--message",
            msg,
            "--timeout-s",
            timeout_s,
        ],
    );
    assert!(r.contains(&format!("stand-in reply to: {msg}")), "{r}");
    assert_eq!(b.prompts().last().unwrap(), msg);
    assert_eq!(b.after_paste(), b"\x1b[D\x1b[C\r");
    let log = std::fs::read_to_string(s.state.join("log")).unwrap_or_default();
    let log = log.get(logged..).unwrap_or_default();
    assert!(
        !log.contains("was not shown over"),
        "the probe was proven: {log}"
    );
}

/// Real Gemini 0.61 writes each frame, the cursor's place at its end, in one `write(2)`
/// (strace in the rig: 2193 bytes for a Left's frame); so does the stand-in. Through a
/// line-buffered stdout it wrote two, and a reader between them saw a frame half drawn
/// that the real CLI does not show (the `split-*` knobs make one on purpose).
#[test]
fn a_stand_in_gemini_writes_each_frame_in_one_write_as_the_real_one() {
    let has_strace = std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_strace {
        assert!(
            std::env::var_os("CI").is_none(),
            "strace is not installed, and CI is set (.ci/run installs it)"
        );
        eprintln!("skipped: strace is not installed");
        return;
    }
    let s = server!();
    let b = Bridge::new(&s, "gframes", "main");
    let st = b.start(&s, "gemini");
    let real = b.bin.join("gemini").display().to_string();
    let (pid, _) = b
        .processes()
        .into_iter()
        .find(|(_, cmd)| cmd.starts_with(&real))
        .expect("the stand-in's process");
    let log = s.dir.join("frames.strace");
    let mut tracer = std::process::Command::new("strace")
        .args(["-f", "-xx", "-s", "1000000", "-e", "trace=write", "-o"])
        .arg(&log)
        .args(["-p", &pid.to_string()])
        .stderr(std::fs::File::create(s.dir.join("strace.err")).unwrap())
        .spawn()
        .unwrap();
    // The frames written to the terminal (fd 1), each as the bytes of one write.
    let re = regex::Regex::new(r#"write\(1, "((?:\\x[0-9a-f]{2})*)""#).unwrap();
    let frames = || -> Vec<Vec<u8>> {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        re.captures_iter(&text)
            .map(|c| {
                c[1].as_bytes()
                    .chunks(4)
                    .map(|h| u8::from_str_radix(std::str::from_utf8(&h[2..]).unwrap(), 16).unwrap())
                    .collect()
            })
            .collect()
    };
    // Typed until the tracer, attached, saw frames; then a Left's frame. A tracer that
    // ended could not attach (ptrace restricted, as Yama does for a non-root user).
    let attached = wait_until("a frame seen by strace", Duration::from_secs(20), || {
        if let Ok(Some(ended)) = tracer.try_wait() {
            return Some(Err(ended));
        }
        s.tmux(&["send-keys", "-t", &st.pane_id, "-l", "x"]);
        std::thread::sleep(Duration::from_millis(100));
        (!frames().is_empty()).then_some(Ok(()))
    });
    if let Err(ended) = attached {
        let why = std::fs::read_to_string(s.dir.join("strace.err")).unwrap_or_default();
        // Yama's ptrace_scope 1 and up lets no one but root attach to a process that is
        // not its own child (the stand-in is the tmux server's): a machine's rule, not a
        // fault of what is tested.
        let restricted = !nix::unistd::geteuid().is_root()
            && std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
                .is_ok_and(|v| v.trim() != "0");
        assert!(
            restricted || std::env::var_os("CI").is_none(),
            "strace could not attach to the stand-in ({ended}), and CI is set: {why}"
        );
        eprintln!("skipped: strace could not attach ({ended}): {why}");
        return;
    }
    let before = frames().len();
    s.tmux(&["send-keys", "-t", &st.pane_id, "Left"]);
    // The Left's frame: the composer's cursor one place left of its end (a frame still
    // owed for the last typed `x` may come first).
    let got = wait_until("the Left's frame", Duration::from_secs(10), || {
        let f = frames();
        f.get(before..)
            .unwrap_or_default()
            .iter()
            .any(|f| String::from_utf8_lossy(f).contains("\x1b7x\x1b[K"))
            .then_some(f)
    });
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(tracer.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let _ = tracer.wait();
    for f in &got {
        let shown = String::from_utf8_lossy(f);
        assert!(
            shown.contains(" > ") && f.ends_with(b"\x1b8"),
            "a frame in one write, the composer's row and the cursor's place together: {shown:?}"
        );
    }
    assert!(got.len() > before, "frames after the Left");
}

/// The stand-in Gemini's chat file, found as the real one is (by its session id's first
/// 8 characters, the full id on its first line).
fn gemini_chat(s: &Server, sid: &str) -> PathBuf {
    let chats = s.home.join(".gemini/tmp/gchat/chats");
    let tail = format!("-{}.jsonl", &sid[..8]);
    let f = std::fs::read_dir(&chats)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(&tail))
        .unwrap_or_else(|| panic!("no chat file *{tail} in {}", chats.display()));
    let first: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&f).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(first["sessionId"], sid);
    f
}

fn gemini_ask(b: &Bridge, s: &Server, name: &str, msg: &str) -> Reply {
    let f = env_message(b, "gemini-msg", msg);
    serde_json::from_str(&b.ok(
        s,
        &[
            "agent",
            "ask",
            name,
            "--file",
            f.to_str().unwrap(),
            "--json",
            "--timeout",
            "30s",
        ],
    ))
    .unwrap()
}

/// Gemini CLI 0.61's replies come from its chat file, exactly: the reply text and nothing
/// of its screen, a long one whole, a turn with a tool call (a reply rewritten under its
/// id) whole, a repeated prompt's own reply, and after the file was rewritten (resume).
/// The file says a turn looks ended; only the idle screen after it ends it.
#[test]
fn gemini_replies_come_from_its_chat_file_exactly() {
    let s = server!();
    let b = Bridge::new(&s, "gchat", "main");
    let st = b.start(&s, "gemini");
    let sid = st
        .cli_session
        .clone()
        .expect("gemini is started with --session-id");
    let argv = std::fs::read_to_string(b.sd.join("argv.json")).unwrap();
    assert!(
        argv.contains("--session-id") && argv.contains(&sid),
        "{argv}"
    );
    let chat = gemini_chat(&s, &sid);
    let reply = "First paragraph of the answer.\n\nSecond paragraph, with `code`:\n  indented line\n\u{2726} not a bullet";
    std::fs::write(b.sd.join("reply.txt"), reply).unwrap();
    let r = gemini_ask(&b, &s, &st.name, "  one\ntwo\nthree  \n");
    assert!(r.complete, "{r:?}");
    assert_eq!(r.source, "transcript");
    assert_eq!(r.text, reply);
    // The record the stand-in wrote, as Gemini does: trimmed content, the prompt as given.
    let recs: Vec<serde_json::Value> = std::fs::read_to_string(&chat)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let user = recs.iter().rev().find(|r| r["type"] == "user").unwrap();
    assert_eq!(user["content"][0]["text"], "one\ntwo\nthree");
    assert_eq!(user["displayContent"][0]["text"], "  one\ntwo\nthree  \n");
    assert!(recs[1]["$set"]["messages"].is_array(), "{:?}", recs[1]);

    // A long reply comes back whole.
    let long: String = (0..3000)
        .map(|i| format!("reply line {i:05} with some words\n"))
        .collect();
    std::fs::write(b.sd.join("reply.txt"), &long).unwrap();
    let r = gemini_ask(&b, &s, &st.name, "a long answer please");
    assert!(r.complete && !r.truncated, "{}", r.text.len());
    assert_eq!(r.text, long.trim_end());

    // The same prompt again: its own reply, not the earlier one.
    std::fs::write(b.sd.join("reply.txt"), "the second answer").unwrap();
    let r = gemini_ask(&b, &s, &st.name, "a long answer please");
    assert_eq!(r.text, "the second answer");

    // A tool call: the first reply is rewritten under its id, then the final answer; and
    // the screen goes idle 1.5 s after the last record: not complete before that.
    std::fs::write(b.sd.join("tools"), "").unwrap();
    std::fs::write(b.sd.join("idle-ms"), "1500").unwrap();
    std::fs::write(b.sd.join("reply.txt"), "All done.").unwrap();
    let t0 = std::time::Instant::now();
    let r = gemini_ask(&b, &s, &st.name, "run something");
    assert_eq!(r.text, "I'll check.\n\nAll done.");
    assert!(
        t0.elapsed() >= Duration::from_millis(1500),
        "ended before the idle screen"
    );
    std::fs::remove_file(b.sd.join("tools")).unwrap();
    std::fs::remove_file(b.sd.join("idle-ms")).unwrap();

    // Resume rewrites the file (a new inode, other offsets): still the right reply.
    let ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&chat).unwrap());
    std::fs::write(b.sd.join("rewrite-chat"), "").unwrap();
    std::fs::write(b.sd.join("reply.txt"), "after the rewrite").unwrap();
    let r = gemini_ask(&b, &s, &st.name, "run something");
    assert_eq!(r.text, "after the rewrite");
    assert_ne!(
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&chat).unwrap()),
        ino
    );
    let again: Reply =
        serde_json::from_str(&b.ok(&s, &["agent", "reply", &st.name, "--json"])).unwrap();
    assert_eq!(again.text, "after the rewrite");
    assert_eq!(b.prompts().len(), 5);
}

/// Gemini records a prompt only after its BeforeAgent hooks: a verification that gives up
/// first never hides the reply that then arrives.
#[test]
fn gemini_a_verification_that_times_out_never_hides_the_reply() {
    let s = server!();
    let b = Bridge::new(&s, "gchat", "main");
    let st = b.start(&s, "gemini");
    std::fs::write(b.sd.join("record-ms"), "1500").unwrap();
    std::fs::write(b.sd.join("reply.txt"), "late but whole").unwrap();
    let o = b.cmd_env(
        &s,
        &["agent", "ask", &st.name, "--message", "a\nlong\ntask"],
        &[("TMUXMATE_VERIFY_TIMEOUT_MS", "300")],
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(e.contains("Do not send it again"), "{e}");
    let r: Reply = serde_json::from_str(&b.ok(
        &s,
        &["agent", "wait", &st.name, "--timeout", "20s", "--json"],
    ))
    .unwrap();
    assert!(r.complete, "{r:?}");
    assert_eq!(r.source, "transcript");
    assert_eq!(r.text, "late but whole");
    assert_eq!(b.prompts().len(), 1, "the message arrived once");
}

/// `/clear` typed in a Gemini pane starts a new session id and chat file (Gemini CLI
/// 0.61): the next ask's reply is read from the new file, and the contract follows it.
#[test]
fn clear_gives_gemini_a_new_chat_file_and_the_bridge_follows_it() {
    let s = server!();
    let b = Bridge::new(&s, "gchat", "main");
    let st = b.start(&s, "gemini");
    let old = st.cli_session.clone().unwrap();
    assert_eq!(
        gemini_ask(&b, &s, &st.name, "before clear").text,
        "stand-in reply to: before clear"
    );
    s.tmux(&["send-keys", "-t", &st.pane_id, "-l", "/clear"]);
    s.tmux(&["send-keys", "-t", &st.pane_id, "Enter"]);
    let chats = s.home.join(".gemini/tmp/gchat/chats");
    let new: String = wait_until("the new chat file", Duration::from_secs(10), || {
        std::fs::read_dir(&chats).ok()?.flatten().find_map(|e| {
            let t = std::fs::read_to_string(e.path()).ok()?;
            let v: serde_json::Value = serde_json::from_str(t.lines().next()?).ok()?;
            let sid = v["sessionId"].as_str()?.to_string();
            (sid != old).then_some(sid)
        })
    });
    let r = gemini_ask(&b, &s, &st.name, "after clear");
    assert!(r.complete, "{r:?}");
    assert_eq!(r.text, "stand-in reply to: after clear");
    assert_eq!(
        s.tmux(&["show", "-v", "-t", &st.session_id, "@tmuxmate-cli-session"])
            .trim(),
        new
    );
    gemini_chat(&s, &new);
}
