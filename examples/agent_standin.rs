//! Stand-in for the Claude Code and Codex TUIs, for tmuxmate's bridge tests.
//!
//! Behaves like the real CLIs where it matters to the bridge: runs in raw mode with
//! bracketed paste enabled, draws a ready prompt in the real CLI's shape, goes busy for
//! a turn, can show an approval dialog on demand, sets its process title like Claude
//! (its version number), and writes transcripts in the real formats (Claude JSONL under
//! `~/.claude/projects/<enc-cwd>/<session-id>.jsonl`; Codex rollout under
//! `$CODEX_HOME/sessions/Y/M/D/rollout-*.jsonl`, created with the first prompt). It
//! records every byte it receives. Which CLI it plays comes from its executable name.
//!
//! Control files in `$STANDIN_DIR`: `received.bin` (all input bytes), `argv.json`,
//! `dialog` (exists: show an approval dialog), `dialog-enter` (written if an Enter
//! arrives while the dialog is shown), `busy` (exists: never finish the turn),
//! `reply.txt` (reply text), `delay-ms` (reply delay), `prompts` (one line per prompt).
#![allow(clippy::disallowed_methods)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

struct St {
    kind: String,
    dir: PathBuf,
    composer: String,
    busy: bool,
    log: Vec<String>,
    transcript: Option<PathBuf>,
    sid: String,
    cwd: String,
    turn: u32,
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

fn append(p: &Path, line: &serde_json::Value) {
    if let Some(d) = p.parent() {
        let _ = std::fs::create_dir_all(d);
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)
        .unwrap();
    let _ = writeln!(f, "{line}");
}

fn dialog_on(s: &St) -> bool {
    s.dir.join("dialog").exists()
}

/// The composer as drawn: its last lines only, as real TUIs show a long paste.
fn shown(composer: &str) -> String {
    let lines: Vec<&str> = composer.split('\n').collect();
    let tail = &lines[lines.len().saturating_sub(3)..];
    let mut t: String = tail.join("\n");
    if t.len() > 300 {
        let mut cut = t.len() - 300;
        while !t.is_char_boundary(cut) {
            cut += 1;
        }
        t = t[cut..].to_string();
    }
    t
}

fn draw(s: &St) {
    let composer = shown(&s.composer);
    let mut o = String::from("\x1b[2J\x1b[H");
    if s.kind == "claude" {
        o.push_str(" * Claude Code stand-in v2.1.332\r\n\r\n");
        for l in &s.log {
            o.push_str(&format!("{l}\r\n"));
        }
        if dialog_on(s) {
            o.push_str("\r\n Bash command\r\n   rm -rf build\r\n Do you want to proceed?\r\n ❯ 1. Yes\r\n   2. No\r\n");
        } else {
            if s.busy {
                o.push_str("✻ Thinking… (esc to interrupt)\r\n");
            }
            o.push_str(&"─".repeat(40));
            o.push_str("\r\n❯ ");
            o.push_str(&composer.replace('\n', "\r\n  "));
            o.push_str("\r\n");
            o.push_str(&"─".repeat(40));
            o.push_str("\r\n  ? for shortcuts\r\n");
        }
    } else {
        o.push_str("  >_ OpenAI Codex stand-in (v0.171.0)\r\n\r\n");
        for l in &s.log {
            o.push_str(&format!("{l}\r\n"));
        }
        if dialog_on(s) {
            o.push_str("\r\n  Allow command?\r\n  › 1. Yes, proceed\r\n    2. No\r\n  Press enter/esc confirm\r\n");
        } else {
            if s.busy {
                o.push_str("• Working (0s • esc to interrupt)\r\n");
            }
            if composer.is_empty() {
                o.push_str("\r\n› Ask Codex to do anything\r\n");
            } else {
                o.push_str(&format!("\r\n› {}\r\n", composer.replace('\n', "\r\n  ")));
            }
            o.push_str("\r\n  ? for shortcuts\r\n");
        }
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(o.as_bytes());
    let _ = out.flush();
}

fn claude_path(s: &St) -> PathBuf {
    let base = std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".claude")
        });
    let enc: String = s
        .cwd
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    base.join("projects")
        .join(enc)
        .join(format!("{}.jsonl", s.sid))
}

fn codex_path(s: &St) -> PathBuf {
    let base = std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".codex")
        });
    base.join("sessions/2026/11/29")
        .join(format!("rollout-2026-11-29T21-02-34-{}.jsonl", s.sid))
}

fn submit(state: &Arc<Mutex<St>>) {
    let (kind, msg, path, turn, dir) = {
        let mut s = state.lock().unwrap();
        let msg = std::mem::take(&mut s.composer);
        if msg.trim().is_empty() {
            return;
        }
        s.turn += 1;
        s.busy = true;
        s.log
            .push(format!("> {}", msg.lines().next().unwrap_or("")));
        let path = if s.kind == "claude" {
            claude_path(&s)
        } else {
            codex_path(&s)
        };
        if s.kind == "codex" && s.transcript.is_none() {
            append(
                &path,
                &serde_json::json!({"timestamp": "2026-11-29T21:02:34.563Z", "type": "session_meta",
                "payload": {"id": s.sid, "session_id": s.sid, "cwd": s.cwd, "cli_version": "0.171.0"}}),
            );
        }
        s.transcript = Some(path.clone());
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(s.dir.join("prompts"))
            .unwrap();
        let _ = writeln!(f, "{}", serde_json::to_string(&msg).unwrap());
        if s.kind == "claude" {
            append(
                &path,
                &serde_json::json!({"type": "user", "message": {"role": "user", "content": msg},
                "uuid": format!("u{}", s.turn), "sessionId": s.sid, "cwd": s.cwd}),
            );
        } else {
            append(
                &path,
                &serde_json::json!({"type": "event_msg", "payload": {"type": "task_started", "turn_id": format!("t{}", s.turn)}}),
            );
            append(
                &path,
                &serde_json::json!({"type": "response_item", "payload": {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": msg}]}}),
            );
        }
        draw(&s);
        (s.kind.clone(), msg, path, s.turn, s.dir.clone())
    };
    let state = Arc::clone(state);
    std::thread::spawn(move || {
        let delay: u64 = std::fs::read_to_string(dir.join("delay-ms"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(50);
        std::thread::sleep(std::time::Duration::from_millis(delay));
        while dir.join("busy").exists() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let reply = std::fs::read_to_string(dir.join("reply.txt")).unwrap_or_else(|_| {
            format!(
                "stand-in reply to: {}",
                msg.chars().take(40).collect::<String>()
            )
        });
        if kind == "claude" {
            append(
                &path,
                &serde_json::json!({"type": "assistant", "message": {"id": format!("msg_{turn}"), "role": "assistant",
                "content": [{"type": "thinking", "thinking": "private thoughts"}], "stop_reason": null}}),
            );
            append(
                &path,
                &serde_json::json!({"type": "assistant", "message": {"id": format!("msg_{turn}"), "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "true"}}], "stop_reason": "tool_use"}}),
            );
            append(
                &path,
                &serde_json::json!({"type": "user", "message": {"role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}}),
            );
            append(
                &path,
                &serde_json::json!({"type": "assistant", "message": {"id": format!("msg_{turn}b"), "role": "assistant",
                "content": [{"type": "text", "text": reply}], "stop_reason": "end_turn"}}),
            );
            append(
                &path,
                &serde_json::json!({"type": "system", "subtype": "turn_duration", "durationMs": delay}),
            );
        } else {
            append(
                &path,
                &serde_json::json!({"type": "response_item", "payload": {"type": "reasoning", "summary": []}}),
            );
            append(
                &path,
                &serde_json::json!({"type": "response_item", "payload": {"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": reply}]}}),
            );
            append(
                &path,
                &serde_json::json!({"type": "event_msg", "payload": {"type": "task_complete", "turn_id": format!("t{turn}"),
                "last_agent_message": reply}}),
            );
        }
        let mut s = state.lock().unwrap();
        s.busy = false;
        s.log
            .push(format!("• {}", reply.lines().next().unwrap_or("")));
        draw(&s);
    });
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let kind = if exe.contains("codex") {
        "codex"
    } else {
        "claude"
    }
    .to_string();
    let dir = PathBuf::from(std::env::var("STANDIN_DIR").unwrap_or_else(|_| "/tmp".into()));
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(
        dir.join("argv.json"),
        serde_json::json!({
            "argv": argv, "no_color": std::env::var_os("NO_COLOR").is_some(),
            "term": std::env::var("TERM").ok(), "tmux_pane": std::env::var("TMUX_PANE").ok(),
            "marker": std::env::var("STANDIN_MARKER").ok(),
        })
        .to_string(),
    );
    let sid = argv
        .iter()
        .position(|a| a == "--session-id")
        .and_then(|i| argv.get(i + 1).cloned())
        .unwrap_or_else(|| {
            format!(
                "01a2291d-0000-7000-8000-{:012x}",
                now_ms() % 0xffff_ffff_ffff
            )
        });
    if kind == "claude" {
        // Claude sets its process title to its version: argv[0] is no proof of identity.
        if argv[0] != "2.1.332" {
            use std::os::unix::process::CommandExt;
            let err = std::process::Command::new(std::env::current_exe().unwrap())
                .arg0("2.1.332")
                .args(&argv[1..])
                .exec();
            eprintln!("stand-in: re-exec failed: {err}");
        }
        let _ = nix::sys::prctl::set_name(c"2.1.332");
    }
    let stdin = std::io::stdin();
    if let Ok(mut t) = nix::sys::termios::tcgetattr(&stdin) {
        nix::sys::termios::cfmakeraw(&mut t);
        let _ = nix::sys::termios::tcsetattr(&stdin, nix::sys::termios::SetArg::TCSANOW, &t);
    }
    print!("\x1b[?2004h");
    let state = Arc::new(Mutex::new(St {
        kind,
        dir: dir.clone(),
        composer: String::new(),
        busy: false,
        log: vec![],
        transcript: None,
        sid,
        cwd: std::env::current_dir()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default(),
        turn: 0,
    }));
    draw(&state.lock().unwrap());
    // Real CLIs draw a dialog on their own, without waiting for input.
    {
        let state = Arc::clone(&state);
        std::thread::spawn(move || {
            let mut shown = false;
            loop {
                std::thread::sleep(std::time::Duration::from_millis(50));
                let s = state.lock().unwrap();
                if dialog_on(&s) != shown {
                    shown = !shown;
                    draw(&s);
                }
            }
        });
    }
    let mut rec = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("received.bin"))
        .unwrap();
    let mut buf = [0u8; 65536];
    let mut pending: Vec<u8> = Vec::new();
    let mut in_paste = false;
    let mut lock = stdin.lock();
    loop {
        let n = match lock.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let _ = rec.write_all(&buf[..n]);
        let _ = rec.flush();
        pending.extend_from_slice(&buf[..n]);
        let mut i = 0;
        let mut text = Vec::new();
        let mut submit_now = false;
        while i < pending.len() {
            let rest = &pending[i..];
            if rest.starts_with(b"\x1b[200~") {
                in_paste = true;
                i += 6;
                continue;
            }
            if rest.starts_with(b"\x1b[201~") {
                in_paste = false;
                i += 6;
                continue;
            }
            if rest[0] == 0x1b
                && rest.len() < 6
                && (b"\x1b[200~".starts_with(rest) || b"\x1b[201~".starts_with(rest))
            {
                break; // an escape split across reads
            }
            let b = rest[0];
            if b == b'\r' && !in_paste {
                if dialog_on(&state.lock().unwrap()) {
                    let _ = std::fs::write(
                        dir.join("dialog-enter"),
                        "an Enter arrived while a dialog was shown",
                    );
                } else {
                    let mut s = state.lock().unwrap();
                    s.composer.push_str(&String::from_utf8_lossy(&text));
                    text.clear();
                    drop(s);
                    submit_now = true;
                }
                i += 1;
                if submit_now {
                    break;
                }
                continue;
            }
            if b == 0x7f && !in_paste {
                text.pop();
                i += 1;
                continue;
            }
            text.push(b);
            i += 1;
        }
        pending.drain(..i);
        {
            let mut s = state.lock().unwrap();
            let t = String::from_utf8_lossy(&text).into_owned();
            s.composer.push_str(&t);
            draw(&s);
        }
        if submit_now {
            submit(&state);
            // Anything after the Enter in the same read is processed on the next loop.
            if !pending.is_empty() {
                let more = std::mem::take(&mut pending);
                let mut s = state.lock().unwrap();
                s.composer.push_str(&String::from_utf8_lossy(&more));
            }
        }
    }
}
