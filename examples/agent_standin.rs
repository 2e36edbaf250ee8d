//! Stand-in for the Claude Code, Codex and Gemini CLI TUIs, for tmuxmate's bridge tests.
//!
//! Where it imitates the real programs (checked with the real CLIs on a mock API, see
//! docs/harnesses.md; each row is pinned by a test in tests/integration/bridge.rs):
//!
//! | real behaviour | version seen | stand-in |
//! |---|---|---|
//! | a bracketed paste with 3+ line breaks, or over 800 characters (UTF-16 units), becomes `[Pasted text #N +K lines]` in the composer and `\n\n<pasted_content id="HEX4">\nTEXT\n</pasted_content id="HEX4">\n` in the transcript and the request; tabs become 4 spaces, CRLF LF, the prompt is trimmed | Claude Code 2.1.332 | `add_paste`, `expand` |
//! | the user record appears ~0.12-0.16 s after Enter, the turn ends ~0.3-0.7 s after it | Claude Code 2.1.332 (mock API) | `RECORD_MS`, default `delay-ms` |
//! | `/clear` starts a new session id (new transcript file) in the same process; `~/.claude/sessions/<pid>.json` holds the live `sessionId` | Claude Code 2.1.332 | `clear`, `write_session_file` |
//! | each submitted prompt (slash commands too) is appended to `~/.claude/history.jsonl` as `{"display","pastedContents","timestamp","project","sessionId"}` | Claude Code 2.1.332 | `submit` |
//! | Gemini: the composer shows ~2 s before the banner (`Gemini CLI v…`), and a prompt submitted before the banner is lost | Gemini CLI 0.61.0 | `banner-ms`, `submit_gemini` (writes `lost`) |
//! | Gemini: an Enter within 40 ms of a paste's end becomes a newline in the composer; so does one read in the same wakeup as that 40 ms timer's expiry (the guard's end is a React state update whose key handler is subscribed in a later loop phase; measured: stopped 100 ms right after reading a paste, 2 of 8 Enters sent meanwhile were newlines) | Gemini CLI 0.61.0 | `GEMINI_ENTER_AFTER_PASTE_MS`, `guard`, `stall-after-paste-ms` |
//! | Gemini: the terminal cursor sits at the composer's cursor; Left/Right move it; nothing is drawn while a bracketed paste is still arriving (one paste event at its end) | Gemini CLI 0.61.0 | `cursor_back`, `draw`; `no-cursor` leaves it at the end of the screen |
//! | a frame (Gemini: the cursor's place at its end) goes to the terminal in one `write(2)`; Codex 0.171.0 writes three, wrapped in synchronized output (`CSI ? 2026 h` ... `l`) | Gemini CLI 0.61.0, Claude Code 2.1.332 (strace) | `write_frame`; `split-draw-ms` and `split-key-draw-ms` write one in two parts |
//! | Gemini: inline screen, prompt echoed as ` > text` (continuation indented), busy line `(esc to cancel, Ns)`, reply `✦ text`, rule, composer `>   Type your message`, rule, footer | Gemini CLI 0.61.0 | `draw`, `submit_gemini`; `echo-ms` delays the echo after the composer clears |
//! | Gemini: the chat file `~/.gemini/tmp/<cwd basename>/chats/session-<YYYY-MM-DDTHH-MM>-<sid8>.jsonl` (`$GEMINI_CLI_HOME` for `~`; the project in `projects.json`) is created at start-up: a header with the full `sessionId`, then `{"$set":{"messages":[<session context>]}}` | Gemini CLI 0.61.0 | `gemini_chat_start` |
//! | Gemini: each prompt is a `user` record `{id, timestamp, type, content:[{text: trimmed}], displayContent:[{text: as given}]}` (displayContent only when it differs), each answer a `gemini` record `{id, timestamp, type, content: "text", thoughts, tokens, model}`, each followed by `{"$set":{"lastUpdated"}}`; no end-of-turn record: the screen goes idle a moment after the last reply record | Gemini CLI 0.61.0 | `gemini_record`, `idle-ms` |
//! | Gemini: a reply that calls a tool is written first without, then again under the same `id` with its `toolCalls`; the tool's result is a `user` record of `functionResponse` parts; the final text is a new `gemini` record | Gemini CLI 0.61.0 (`tests/fixtures/gemini-chat.jsonl`) | `tools` (control file) |
//! | Gemini: `/clear` starts a new session id, so a new chat file beside the old one | Gemini CLI 0.61.0 (`clearCommand`: `resetNewSessionState(randomUUID())`) | `submit_gemini` |
//! | Gemini: on resume the chat file is rewritten (temp file + rename: a new inode), one record per message | Gemini CLI 0.61.0 (`rewriteConversationFile`) | `rewrite-chat` (control file) |
//! | the process title is the version number | Claude Code 2.1.332 | re-exec with argv[0] `2.1.332` |
//! | without `--no-daemon`, a detached `codex app-server --listen unix://… --managed-daemon` that outlives the TUI and its tmux session, sockets in `codex-daemon-<uid>/` | Codex 0.171.0 | `start_daemon` (under `$STANDIN_DIR`; it exits when that directory is removed) |
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
//! arrives while the dialog is shown), `dialog-on-paste` (exists: a paste brings the
//! dialog up), `stall-after-key-ms` (once: stall after a cursor key),
//! `split-key-draw-ms` (once: the draw after a cursor key is written in two parts this
//! long apart, the cursor below the lines meanwhile), `split-draw-ms` (every draw so,
//! while it exists), `pass-right-on-key-ms` (once: before a cursor key's frame, the
//! cursor shown two columns right of where it rests this long), `lose-right` (once: a Right is
//! dropped), `busy` (exists:
//! never finish the turn),
//! `reply.txt` (reply text), `record-ms` (delay before the prompt is recorded),
//! `delay-ms` (reply delay after the prompt is recorded), Gemini only: `echo-ms` (the
//! prompt's echo after the composer clears), `idle-ms` (idle screen after the last reply
//! record), `tools` (exists: the turn runs one tool call), `rewrite-chat` (exists: the
//! next prompt first rewrites the chat file, as a resume does; then it is removed),
//! `prompts` (one JSON line per prompt: the text as the model would get it, envelopes
//! included).
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
    /// Texts of the pastes shown as placeholders in the composer (`#N` is index + 1).
    pastes: Vec<String>,
    /// Claude's paste envelope id: 4 hex digits, one per session.
    paste_id: String,
    /// Gemini: when its banner (and its readiness) arrives; a prompt before it is lost.
    banner_at: std::time::Instant,
    /// Gemini: its paste guard, set when a bracketed paste ended; while set, an Enter is
    /// a newline. It ends in an idle wakeup after 40 ms, or after the first wakeup that
    /// finds it due (whose keys still see it), as on Gemini's event loop.
    guard: Option<std::time::Instant>,
    /// Gemini: how many characters the composer's cursor is left of its end.
    cursor_back: usize,
    /// Gemini: the next draw is written in two parts this many ms apart (0: at once).
    split_draw_ms: u64,
    /// Gemini: its chat file and the messages in it (for a rewrite).
    chat: Option<PathBuf>,
    chat_msgs: Vec<serde_json::Value>,
}

/// Gemini CLI 0.61 draws its composer ~2 s before its banner; the stand-in, by default,
/// this long after start (`banner-ms` in `$STANDIN_DIR` replaces it).
const GEMINI_BANNER_MS: u64 = 600;
/// The stand-in Gemini redraws this many lines of its history at most.
const GEMINI_DRAWN_LINES: usize = 120;
/// Gemini CLI 0.61 turns an Enter this soon after a paste into a newline.
const GEMINI_ENTER_AFTER_PASTE_MS: u128 = 40;

fn ms_file(dir: &Path, name: &str, default: u64) -> u64 {
    std::fs::read_to_string(dir.join(name))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(default)
}

fn banner_shown(s: &St) -> bool {
    std::time::Instant::now() >= s.banner_at
}

/// Claude 2.1.332 writes the prompt's user record this long after Enter.
const RECORD_MS: u64 = 120;

fn paste_id() -> String {
    format!("{:04x}", (now_ms() ^ std::process::id() as u128) & 0xffff)
}

/// Claude's session file: the live session id of this process.
fn write_session_file(s: &St) {
    let p = claude_base()
        .join("sessions")
        .join(format!("{}.json", std::process::id()));
    if let Some(d) = p.parent() {
        let _ = std::fs::create_dir_all(d);
    }
    let _ = std::fs::write(
        p,
        serde_json::json!({"pid": std::process::id(), "sessionId": s.sid, "cwd": s.cwd,
            "version": "2.1.332", "kind": "interactive", "status": if s.busy { "busy" } else { "idle" }})
        .to_string(),
    );
}

/// A finished bracketed paste, as Claude takes it into the composer.
fn add_paste(s: &mut St, raw: &[u8]) {
    let text = String::from_utf8_lossy(raw)
        .replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\t', "    ");
    if s.kind != "claude" {
        s.composer.push_str(&text);
        return;
    }
    let breaks = text.matches('\n').count();
    if breaks > 2 || text.encode_utf16().count() > 800 {
        s.pastes.push(text);
        let n = s.pastes.len();
        if breaks > 0 {
            s.composer
                .push_str(&format!("[Pasted text #{n} +{breaks} lines]"));
        } else {
            s.composer.push_str(&format!("[Pasted text #{n}]"));
        }
    } else {
        s.composer.push_str(&text);
    }
}

/// The composer with each placeholder replaced: by the envelope (what the transcript
/// and the model get) or by the bare text (what the person pasted).
fn expand(s: &St, composer: &str, envelope: bool) -> String {
    let mut out = composer.to_string();
    for (i, t) in s.pastes.iter().enumerate().rev() {
        let n = i + 1;
        let breaks = t.matches('\n').count();
        let ph = if breaks > 0 {
            format!("[Pasted text #{n} +{breaks} lines]")
        } else {
            format!("[Pasted text #{n}]")
        };
        let body = t.strip_suffix('\n').unwrap_or(t);
        let with = if envelope {
            format!(
                "\n\n<pasted_content id=\"{id}\">\n{body}\n</pasted_content id=\"{id}\">\n",
                id = s.paste_id
            )
        } else {
            body.to_string()
        };
        out = out.replacen(&ph, &with, 1);
    }
    out
}

/// `/clear`: a new session (id, transcript file) in the same process.
fn clear(s: &mut St) {
    s.sid = format!(
        "c1ea4000-0000-4000-8000-{:012x}",
        now_ms() % 0xffff_ffff_ffff
    );
    s.paste_id = paste_id();
    s.log.clear();
    let path = claude_path(s);
    append(
        &path,
        &serde_json::json!({"type": "user", "isMeta": true, "message": {"role": "user",
        "content": "<local-command-caveat>The command below was run directly in Claude Code.</local-command-caveat>"},
        "sessionId": s.sid}),
    );
    append(
        &path,
        &serde_json::json!({"type": "user", "message": {"role": "user",
        "content": "<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n            <command-args></command-args>"},
        "sessionId": s.sid}),
    );
    append(
        &path,
        &serde_json::json!({"type": "system", "subtype": "local_command", "sessionId": s.sid}),
    );
    s.transcript = Some(path);
    write_session_file(s);
}

/// Codex without `--no-daemon`: a shared app-server, detached from the TUI's session.
fn start_daemon(dir: &Path) {
    use std::os::unix::process::CommandExt;
    let sock_dir = dir.join(format!("codex-daemon-{}", nix::unistd::getuid()));
    let _ = std::fs::create_dir_all(&sock_dir);
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut cmd = std::process::Command::new(exe);
    cmd.arg0("codex")
        .args([
            "app-server",
            "--listen",
            &format!("unix://{}", sock_dir.join("app-server.sock").display()),
            "--managed-daemon",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            // Fork once more so init adopts it, as the real daemon is.
            match nix::unistd::fork().map_err(std::io::Error::from)? {
                nix::unistd::ForkResult::Parent { .. } => nix::libc::_exit(0),
                nix::unistd::ForkResult::Child => Ok(()),
            }
        });
    }
    if let Ok(mut c) = cmd.spawn() {
        let _ = c.wait();
    }
}

/// The daemon itself: holds its socket until its stand-in directory is removed.
fn run_daemon(argv: &[String]) {
    let sock = argv
        .iter()
        .position(|a| a == "--listen")
        .and_then(|i| argv.get(i + 1))
        .and_then(|a| a.strip_prefix("unix://"))
        .map(PathBuf::from);
    let Some(sock) = sock else { return };
    let _ = std::fs::remove_file(&sock);
    let _l = std::os::unix::net::UnixListener::bind(&sock);
    let _ = std::fs::write(
        sock.with_file_name("app-server.pid"),
        std::process::id().to_string(),
    );
    let dir = sock.parent().and_then(Path::parent).map(Path::to_path_buf);
    let start = std::time::Instant::now();
    // Outlives the TUI like the real one, but not the test that made it.
    while dir.as_ref().is_some_and(|d| d.exists())
        && start.elapsed() < std::time::Duration::from_secs(600)
    {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let _ = std::fs::remove_file(&sock);
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

/// Gemini: `no-cursor` in `$STANDIN_DIR`: the terminal cursor stays below the screen (a
/// CLI that does not show where its composer's cursor is).
fn no_cursor(s: &St) -> bool {
    s.dir.join("no-cursor").exists()
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
    } else if s.kind == "gemini" {
        // Gemini CLI 0.61's inline screen: banner, history (` > prompt`, `✦ reply`),
        // spinner, rule, composer, rule, footer.
        if banner_shown(s) {
            o.push_str(" ███ Gemini CLI v0.61.0 (stand-in)\r\n\r\n");
        } else {
            o.push_str("\r\n\r\n");
        }
        // Its history's last lines only: the real one writes history once and redraws
        // just what is below it, so a long conversation does not slow it down.
        let lines: Vec<&str> = s.log.iter().flat_map(|l| l.split('\n')).collect();
        for l in &lines[lines.len().saturating_sub(GEMINI_DRAWN_LINES)..] {
            o.push_str(&format!("{l}\r\n"));
        }
        if dialog_on(s) {
            o.push_str("\r\n Allow execution of: 'rm'?\r\n ● 1. Allow once\r\n   2. No\r\n");
        } else {
            if s.busy {
                o.push_str(" ⠋ Thinking... (esc to cancel, 0s)      ? for shortcuts\r\n");
            } else {
                o.push_str("? for shortcuts\r\n");
            }
            o.push_str(&"─".repeat(40));
            o.push_str("\r\n Shift+Tab to accept edits\r\n");
            // ESC 7 marks the composer's cursor; ESC 8 at the end puts the terminal's there.
            let mark = if no_cursor(s) { "" } else { "\x1b7" };
            if composer.is_empty() {
                o.push_str(&format!(
                    " > {mark}  Type your message or @path/to/file\r\n"
                ));
            } else {
                let n = composer.chars().count();
                let at = n - s.cursor_back.min(n);
                let before: String = composer.chars().take(at).collect();
                let after: String = composer.chars().skip(at).collect();
                o.push_str(&format!(
                    " > {}{mark}{}\r\n",
                    before.replace('\n', "\r\n   "),
                    after.replace('\n', "\r\n   ")
                ));
            }
            o.push_str(" workspace (/directory)    sandbox    /model\r\n");
            o.push_str(" ~/project    no sandbox    gemini-2.5-pro\r\n");
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
    if s.kind == "gemini" {
        // Inline like the real one: rewrite the lines in place rather than clear the
        // screen (tmux 3.3 scrolls a cleared screen into the history: a stale copy of
        // the composer there would read as an echoed prompt).
        o = o
            .trim_start_matches("\x1b[2J\x1b[H")
            .replace("\r\n", "\x1b[K\r\n");
        o = format!("\x1b[H{o}\x1b[J");
        if !no_cursor(s) {
            o.push_str("\x1b8");
        }
    }
    // A frame half drawn for a while, as a loaded machine shows one when the CLI is
    // descheduled mid-write: the lines first (the cursor below them), the cursor's
    // place after the pause.
    let split_ms = match s.split_draw_ms {
        0 => ms_file(&s.dir, "split-draw-ms", 0),
        ms => ms,
    };
    if split_ms > 0
        && let Some(cut) = o.rfind('\n')
    {
        write_frame(&o.as_bytes()[..=cut]);
        std::thread::sleep(std::time::Duration::from_millis(split_ms));
        write_frame(&o.as_bytes()[cut + 1..]);
    } else {
        write_frame(o.as_bytes());
    }
}

/// Write a frame to the terminal in one `write(2)`, as real Gemini 0.61 and Claude Code
/// 2.1.332 do (strace in the rig: the Left's frame, the cursor's place at its end, was
/// one write of 2193 bytes in Gemini). Rust's stdout is line-buffered: through it a frame
/// went out as two writes, its lines and then the cursor's place, and a reader between
/// them saw a frame half drawn that the real CLIs do not show unless descheduled mid-write
/// (the `split-*` knobs make that happen on purpose).
fn write_frame(b: &[u8]) {
    use std::os::fd::AsFd;
    let mut out = std::io::stdout().lock();
    // Whatever went through the buffer before (set-up sequences) goes first.
    let _ = out.flush();
    let mut rest = b;
    while !rest.is_empty() {
        match nix::unistd::write(out.as_fd(), rest) {
            Ok(0) => break,
            Ok(n) => rest = &rest[n..],
            Err(nix::errno::Errno::EINTR | nix::errno::Errno::EAGAIN) => {
                std::thread::sleep(std::time::Duration::from_millis(1))
            }
            Err(_) => break,
        }
    }
}

fn claude_base() -> PathBuf {
    std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".claude")
        })
}

fn claude_path(s: &St) -> PathBuf {
    let base = claude_base();
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

/// `2026-12-01T13:19:11.523Z` of epoch milliseconds (H. Hinnant's civil_from_days).
fn iso_ms(ms: u128) -> String {
    let (secs, milli) = ((ms / 1000) as i64, (ms % 1000) as u32);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

fn gemini_base() -> PathBuf {
    std::env::var_os("GEMINI_CLI_HOME")
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var_os("HOME"))
        .map(PathBuf::from)
        .unwrap_or_default()
        .join(".gemini")
}

fn record_id() -> String {
    let n = now_ms() ^ (u128::from(std::process::id()) << 64);
    let mut b = [0u8; 8];
    let _ = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b));
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        (n as u32) ^ u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        u16::from_le_bytes([b[4], b[5]]),
        b[6] as u16 * 16 % 0x1000,
        b[7] as u16 * 16 % 0x1000,
        (n >> 32) as u64 & 0xffff_ffff_ffff
    )
}

/// Gemini CLI 0.61 creates its chat file at start-up: the header, then the session
/// context as the whole message list.
fn gemini_chat_start(s: &mut St) {
    let short = Path::new(&s.cwd)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "project".into());
    let base = gemini_base();
    let _ = std::fs::create_dir_all(&base);
    let _ = std::fs::write(
        base.join("projects.json"),
        serde_json::json!({"projects": {s.cwd.clone(): short.clone()}}).to_string(),
    );
    let now = now_ms();
    let name = format!(
        "session-{}-{}.jsonl",
        iso_ms(now)[..16].replace(':', "-"),
        s.sid.chars().take(8).collect::<String>()
    );
    let p = base.join("tmp").join(&short).join("chats").join(name);
    let header = serde_json::json!({"sessionId": s.sid, "projectHash": format!("{:064x}", s.cwd.len()),
        "startTime": iso_ms(now), "lastUpdated": iso_ms(now), "kind": "main"});
    append(&p, &header);
    let ctx = serde_json::json!({"id": "d04923d38bb0f6017037e74183378ef4", "timestamp": iso_ms(now),
        "type": "user", "content": [{"text": format!("<session_context>\nThis is the Gemini CLI (stand-in).\n- **Workspace Directories:**\n  - {}\n</session_context>", s.cwd)}]});
    append(
        &p,
        &serde_json::json!({"$set": {"messages": [ctx.clone()], "lastUpdated": iso_ms(now)}}),
    );
    s.chat_msgs = vec![ctx];
    s.chat = Some(p);
}

/// One message record (a new one, or a rewrite under its id), then `lastUpdated`.
fn gemini_record(s: &mut St, msg: serde_json::Value) {
    let Some(p) = s.chat.clone() else { return };
    append(&p, &msg);
    append(
        &p,
        &serde_json::json!({"$set": {"lastUpdated": iso_ms(now_ms())}}),
    );
    match s.chat_msgs.iter_mut().find(|m| m["id"] == msg["id"]) {
        Some(m) => *m = msg,
        None => s.chat_msgs.push(msg),
    }
}

/// A resume's rewrite: header and messages, written to a temp file and renamed over.
fn gemini_rewrite(s: &St) {
    let Some(p) = &s.chat else { return };
    let first = std::fs::read_to_string(p)
        .ok()
        .and_then(|t| t.lines().next().map(str::to_string))
        .unwrap_or_default();
    let mut out = format!("{first}\n");
    for m in &s.chat_msgs {
        out.push_str(&format!("{m}\n"));
    }
    let tmp = p.with_extension(format!("jsonl.tmp-{}", std::process::id()));
    let _ = std::fs::write(&tmp, out);
    let _ = std::fs::rename(&tmp, p);
}

/// Gemini: a prompt before the banner is dropped (the real one queues it and loses it);
/// otherwise the composer clears, and after `echo-ms` the prompt is echoed as ` > text`
/// with the busy line, then the reply as `✦ text` after `delay-ms`.
fn submit_gemini(state: &Arc<Mutex<St>>, text: String) {
    let dir = {
        let mut s = state.lock().unwrap();
        if !banner_shown(&s) {
            let _ = std::fs::write(s.dir.join("lost"), &text);
            draw(&s);
            return;
        }
        if text.trim() == "/clear" {
            // Gemini CLI 0.61: a new session id, a new chat file beside the old one.
            s.sid = record_id();
            s.log.clear();
            gemini_chat_start(&mut s);
            draw(&s);
            return;
        }
        s.turn += 1;
        draw(&s);
        s.dir.clone()
    };
    let state = Arc::clone(state);
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(ms_file(
            &dir, "echo-ms", 0,
        )));
        {
            let mut s = state.lock().unwrap();
            s.busy = true;
            let echo: Vec<String> = text
                .split('\n')
                .enumerate()
                .map(|(i, l)| {
                    if i == 0 {
                        format!(" > {l}")
                    } else {
                        format!("   {l}")
                    }
                })
                .collect();
            s.log.push(echo.join("\n"));
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(dir.join("prompts"))
                .unwrap();
            let _ = writeln!(f, "{}", serde_json::to_string(&text).unwrap());
            draw(&s);
        }
        // The prompt's record (after its BeforeAgent hooks, in the real one).
        std::thread::sleep(std::time::Duration::from_millis(ms_file(
            &dir,
            "record-ms",
            0,
        )));
        {
            let mut s = state.lock().unwrap();
            if dir.join("rewrite-chat").exists() {
                gemini_rewrite(&s);
                let _ = std::fs::remove_file(dir.join("rewrite-chat"));
            }
            let trimmed = text.trim().to_string();
            let mut rec = serde_json::json!({"id": record_id(), "timestamp": iso_ms(now_ms()),
                "type": "user", "content": [{"text": trimmed}]});
            if trimmed != text {
                rec["displayContent"] = serde_json::json!([{"text": text}]);
            }
            gemini_record(&mut s, rec);
        }
        std::thread::sleep(std::time::Duration::from_millis(ms_file(
            &dir, "delay-ms", 300,
        )));
        while dir.join("busy").exists() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let reply = std::fs::read_to_string(dir.join("reply.txt")).unwrap_or_else(|_| {
            format!(
                "stand-in reply to: {}",
                text.chars().take(40).collect::<String>()
            )
        });
        let gemini = |id: &str, content: &str| {
            serde_json::json!({"id": id, "timestamp": iso_ms(now_ms()), "type": "gemini",
                "content": content, "thoughts": [], "tokens": {"input": 12447, "output": 54,
                "cached": 0, "thoughts": 0, "tool": 0, "total": 12501}, "model": "gemini-2.5-pro"})
        };
        if dir.join("tools").exists() {
            // A reply with a tool call: written bare, then again with its call; the
            // tool's result; then the final answer as a new message.
            let first = record_id();
            let mut m = gemini(&first, "I'll check.");
            gemini_record(&mut state.lock().unwrap(), m.clone());
            std::thread::sleep(std::time::Duration::from_millis(30));
            let call = format!("run_shell_command__{}_0", now_ms());
            m["toolCalls"] = serde_json::json!([{"id": call, "name": "run_shell_command",
                "args": {"command": "true"}, "status": "success"}]);
            gemini_record(&mut state.lock().unwrap(), m);
            std::thread::sleep(std::time::Duration::from_millis(200));
            let res = serde_json::json!({"id": record_id(), "timestamp": iso_ms(now_ms()), "type": "user",
                "content": [{"functionResponse": {"id": call, "name": "run_shell_command",
                "response": {"output": "Output: (empty)"}}}]});
            gemini_record(&mut state.lock().unwrap(), res);
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        gemini_record(
            &mut state.lock().unwrap(),
            gemini(&record_id(), reply.trim_end()),
        );
        // The AfterAgent hook and the redraw come after the last record.
        std::thread::sleep(std::time::Duration::from_millis(ms_file(
            &dir, "idle-ms", 30,
        )));
        let mut s = state.lock().unwrap();
        s.busy = false;
        let lines: Vec<String> = reply
            .trim_end()
            .split('\n')
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    format!("✦ {l}")
                } else {
                    format!("  {l}")
                }
            })
            .collect();
        s.log.push(lines.join("\n"));
        draw(&s);
    });
}

fn submit(state: &Arc<Mutex<St>>) {
    let (kind, msg, sent, path, turn, dir) = {
        let mut s = state.lock().unwrap();
        let typed = std::mem::take(&mut s.composer);
        s.cursor_back = 0;
        let composer = if s.kind == "claude" {
            typed.trim().to_string()
        } else {
            typed
        };
        if composer.trim().is_empty() {
            return;
        }
        if s.kind == "gemini" {
            drop(s);
            submit_gemini(state, composer);
            return;
        }
        if s.kind == "claude" {
            // Every submitted prompt, slash commands too, under the session it was sent in.
            append(
                &claude_base().join("history.jsonl"),
                &serde_json::json!({"display": composer, "pastedContents": {},
                "timestamp": now_ms() as u64, "project": s.cwd, "sessionId": s.sid}),
            );
        }
        if s.kind == "claude" && composer == "/clear" {
            clear(&mut s);
            s.pastes.clear();
            draw(&s);
            return;
        }
        let msg = expand(&s, &composer, false);
        let sent = expand(&s, &composer, true);
        s.pastes.clear();
        s.turn += 1;
        s.busy = true;
        s.log
            .push(format!("> {}", composer.lines().next().unwrap_or("")));
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
        if s.kind == "claude" {
            write_session_file(&s);
        }
        draw(&s);
        (s.kind.clone(), msg, sent, path, s.turn, s.dir.clone())
    };
    let state = Arc::clone(state);
    std::thread::spawn(move || {
        let record_ms: u64 = std::fs::read_to_string(dir.join("record-ms"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(if kind == "claude" { RECORD_MS } else { 0 });
        std::thread::sleep(std::time::Duration::from_millis(record_ms));
        {
            let s = state.lock().unwrap();
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(dir.join("prompts"))
                .unwrap();
            let _ = writeln!(f, "{}", serde_json::to_string(&sent).unwrap());
            if kind == "claude" {
                append(
                    &path,
                    &serde_json::json!({"type": "user", "message": {"role": "user", "content": sent},
                    "uuid": format!("u{}", turn), "sessionId": s.sid, "cwd": s.cwd}),
                );
            } else {
                append(
                    &path,
                    &serde_json::json!({"type": "event_msg", "payload": {"type": "task_started", "turn_id": format!("t{}", turn)}}),
                );
                append(
                    &path,
                    &serde_json::json!({"type": "response_item", "payload": {"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": sent}]}}),
                );
            }
        }
        let delay: u64 = std::fs::read_to_string(dir.join("delay-ms"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(if kind == "claude" { 200 } else { 50 });
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
    if argv.get(1).map(String::as_str) == Some("app-server") {
        run_daemon(&argv);
        return;
    }
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let kind = if exe.contains("codex") {
        "codex"
    } else if exe.contains("gemini") {
        "gemini"
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
    if kind == "codex" && !argv.iter().any(|a| a == "--no-daemon") {
        start_daemon(&dir);
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
        pastes: vec![],
        paste_id: paste_id(),
        banner_at: std::time::Instant::now()
            + std::time::Duration::from_millis(ms_file(&dir, "banner-ms", GEMINI_BANNER_MS)),
        guard: None,
        cursor_back: 0,
        split_draw_ms: 0,
        chat: None,
        chat_msgs: vec![],
    }));
    {
        let mut s = state.lock().unwrap();
        if s.kind == "claude" {
            write_session_file(&s);
        }
        if s.kind == "gemini" {
            gemini_chat_start(&mut s);
        }
        draw(&s);
    }
    // Real CLIs draw a dialog on their own, without waiting for input.
    {
        let state = Arc::clone(&state);
        std::thread::spawn(move || {
            let mut shown = false;
            let mut banner = false;
            loop {
                std::thread::sleep(std::time::Duration::from_millis(50));
                let s = state.lock().unwrap();
                if dialog_on(&s) != shown || (s.kind == "gemini" && banner_shown(&s) != banner) {
                    shown = dialog_on(&s);
                    banner = banner_shown(&s);
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
    // The bytes of the bracketed paste being received (it may span reads).
    let mut paste: Vec<u8> = Vec::new();
    let mut lock = stdin.lock();
    // Keys read with the one a stall came after: taken once the stall is over.
    let mut carried = false;
    loop {
        let guard = state.lock().unwrap().guard;
        if let Some(t) = guard.filter(|_| !carried) {
            // Wait for input no longer than the guard's timer, as Node's poll phase does.
            use std::os::fd::AsFd;
            let left = (GEMINI_ENTER_AFTER_PASTE_MS as u64)
                .saturating_sub(t.elapsed().as_millis() as u64)
                .max(1);
            let fd = std::io::stdin();
            let mut fds = [nix::poll::PollFd::new(
                fd.as_fd(),
                nix::poll::PollFlags::POLLIN,
            )];
            let timeout =
                nix::poll::PollTimeout::try_from(left).unwrap_or(nix::poll::PollTimeout::MAX);
            if let Ok(0) = nix::poll::poll(&mut fds, timeout) {
                // An idle wakeup: the timer fires and its update takes effect.
                state.lock().unwrap().guard = None;
                continue;
            }
        }
        let n = if std::mem::take(&mut carried) {
            0
        } else {
            match lock.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            }
        };
        let chunk = buf[..n].to_vec();
        // Keys read in the wakeup that finds the guard due still see it (see `guard`).
        let guard_due =
            guard.is_some_and(|t| t.elapsed().as_millis() >= GEMINI_ENTER_AFTER_PASTE_MS);
        let mut stall_ms = 0;
        let _ = rec.write_all(&chunk);
        let _ = rec.flush();
        pending.extend_from_slice(&chunk);
        let mut i = 0;
        let mut text = Vec::new();
        let mut submit_now = false;
        while i < pending.len() {
            let rest = &pending[i..];
            if rest.starts_with(b"\x1b[200~") {
                in_paste = true;
                paste.clear();
                i += 6;
                continue;
            }
            if rest.starts_with(b"\x1b[201~") {
                in_paste = false;
                let mut s = state.lock().unwrap();
                s.composer.push_str(&String::from_utf8_lossy(&text));
                text.clear();
                add_paste(&mut s, &std::mem::take(&mut paste));
                s.guard = Some(std::time::Instant::now());
                s.cursor_back = 0;
                stall_ms = ms_file(&dir, "stall-after-paste-ms", 0);
                if dir.join("dialog-on-paste").exists() {
                    let _ = std::fs::write(dir.join("dialog"), "");
                }
                i += 6;
                continue;
            }
            if rest[0] == 0x1b
                && rest.len() < 6
                && (b"\x1b[200~".starts_with(rest) || b"\x1b[201~".starts_with(rest))
            {
                break; // an escape split across reads
            }
            if !in_paste && rest[0] == 0x1b && rest.len() < 3 {
                break; // a cursor key split across reads
            }
            if !in_paste
                && rest.len() >= 3
                && rest[0] == 0x1b
                && matches!(rest[1], b'[' | b'O')
                && matches!(rest[2], b'C' | b'D')
            {
                let mut s = state.lock().unwrap();
                s.composer.push_str(&String::from_utf8_lossy(&text));
                text.clear();
                let n = s.composer.chars().count();
                // Once: a Right lost (real Gemini under heavy load, see enter_probe.rs).
                if rest[2] == b'C' && std::fs::remove_file(dir.join("lose-right")).is_ok() {
                    i += 3;
                    continue;
                }
                s.cursor_back = if rest[2] == b'D' {
                    (s.cursor_back + 1).min(n)
                } else {
                    s.cursor_back.saturating_sub(1)
                };
                // Once: before the key's own frame, the cursor shown two columns right
                // of where it rests for this long (a frame passing by, as CI once showed
                // one between a Left and its draw).
                if let Ok(v) = std::fs::read_to_string(dir.join("pass-right-on-key-ms")) {
                    let _ = std::fs::remove_file(dir.join("pass-right-on-key-ms"));
                    write_frame(b"\x1b[2C");
                    std::thread::sleep(std::time::Duration::from_millis(
                        v.trim().parse().unwrap_or(0),
                    ));
                }
                // Once: stalled right after taking a cursor key in, with what came after
                // it in the same read still unread (a Right sent at once must not be
                // taken before the stall, however the two keys were read).
                if let Ok(v) = std::fs::read_to_string(dir.join("split-key-draw-ms")) {
                    let _ = std::fs::remove_file(dir.join("split-key-draw-ms"));
                    s.split_draw_ms = v.trim().parse().unwrap_or(0);
                }
                let f = dir.join("stall-after-key-ms");
                if let Ok(v) = std::fs::read_to_string(&f) {
                    let _ = std::fs::remove_file(&f);
                    stall_ms = v.trim().parse().unwrap_or(0);
                    i += 3;
                    carried = i < pending.len();
                    break;
                }
                i += 3;
                continue;
            }
            let b = rest[0];
            if in_paste {
                paste.push(b);
                i += 1;
                continue;
            }
            if b == b'\r' {
                if dialog_on(&state.lock().unwrap()) {
                    let _ = std::fs::write(
                        dir.join("dialog-enter"),
                        "an Enter arrived while a dialog was shown",
                    );
                } else {
                    let mut s = state.lock().unwrap();
                    s.composer.push_str(&String::from_utf8_lossy(&text));
                    text.clear();
                    if s.kind == "gemini" && s.guard.is_some() {
                        // Taken as part of the paste: a newline in the composer.
                        s.composer.push('\n');
                        i += 1;
                        continue;
                    }
                    drop(s);
                    submit_now = true;
                }
                i += 1;
                if submit_now {
                    break;
                }
                continue;
            }
            if b == 0x7f {
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
            if guard_due && s.guard == guard {
                s.guard = None;
            }
            // Gemini takes a bracketed paste in as one event at its end: no draw before.
            if !(s.kind == "gemini" && in_paste) {
                draw(&s);
                s.split_draw_ms = 0;
            }
        }
        if stall_ms > 0 {
            // Descheduled right after taking the paste in (a loaded machine).
            std::thread::sleep(std::time::Duration::from_millis(stall_ms));
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
