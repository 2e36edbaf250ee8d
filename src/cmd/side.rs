//! `tmuxmate side open|status|history|report|close` (and the hidden `run`).
//!
//! Invariants: `open` shows the side agent in a popup on a client attached to the main
//! pane's session (a split beside it when no client is attached); `run` ends by deleting
//! the side agent's session files and says honestly whether that worked; no command here
//! sends a byte to the main pane.

use crate::targs;
use crate::tmux::Arg;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::bridge::launch::{uuid_v4, which};
use crate::cli::SideAction;
use crate::error::{CliError, CliResult};
use crate::side;
use crate::side::relay;
use crate::side::split;
use crate::sys::state;
use crate::tmux::Tmux;
use crate::tmux::format::{parse_records, record_format};

/// What `run` records in the main pane's `@tmuxmate-side` while it lives.
#[derive(Serialize, Deserialize)]
struct SideRecord {
    pid: u32,
    adapter: String,
    session: String,
    started: u64,
}

fn result_path(pane: &str) -> std::path::PathBuf {
    state::state_dir()
        .join("side")
        .join(format!("{}.result", pane.trim_start_matches('%')))
}

/// How long a side agent must stay up before `open` calls it started (a CLI that is not
/// logged in, or rejects its arguments, exits well within this).
const START_GRACE: Duration = Duration::from_secs(3);
/// How long `open` waits for `run` to report (its own tmux calls come first).
const START_WAIT: Duration = Duration::from_secs(30);

/// Where `run` tells `open` how the start went: `running`, or `failed` with the message.
fn start_path(pane: &str) -> std::path::PathBuf {
    state::state_dir()
        .join("side")
        .join(format!("{}.start", pane.trim_start_matches('%')))
}

#[derive(Serialize, Deserialize)]
struct StartState {
    state: String,
    #[serde(default)]
    message: String,
}

fn write_start(pane: &str, state: &str, message: &str) {
    let v = StartState {
        state: state.into(),
        message: message.into(),
    };
    let _ = state::write_atomic(
        &start_path(pane),
        serde_json::to_string(&v).unwrap_or_default().as_bytes(),
    );
}

fn read_start(pane: &str) -> Option<StartState> {
    serde_json::from_str(&std::fs::read_to_string(start_path(pane)).ok()?).ok()
}

/// A side chat that did not start leaves nothing: not its pane, not its files.
fn failed_open(tmux: &Tmux, pane: &str, split: Option<&str>, message: String) -> CliError {
    if let Some(p) = split {
        let _ = tmux.run(&targs!["kill-pane", "-t", Arg::id(p)]);
        split::restore(tmux, pane);
    }
    let _ = std::fs::remove_file(start_path(pane));
    let _ = std::fs::remove_file(result_path(pane));
    let _ = tmux.run(&targs![
        "set-option",
        "-p",
        "-u",
        "-t",
        Arg::id(pane),
        side::OPT_SIDE
    ]);
    let mut e = CliError::new(message).with_hint(
        "fix what the side agent said (its CLI, @tmuxmate-side-agent), then open it again",
    );
    e.kind = "side-agent-failed";
    e
}

fn open(tmux: &Tmux, target: Option<&str>, client: Option<&str>) -> CliResult {
    let Some(t) = target else {
        return Err(CliError::usage(
            "which main agent? pass -t PANE (the snippet's key binding passes the current pane)",
        ));
    };
    if let Some(c) = client {
        // From the key binding: unattended, so a failure is shown on that client and logged.
        let r = side::main_pane(tmux, Some(t)).and_then(|pane| {
            let bin = std::env::current_exe()?.to_string_lossy().into_owned();
            let argv = vec![bin, "side".into(), "run".into(), "-t".into(), pane];
            crate::bindings::popup(tmux, c, " side chat ", &argv)
        });
        if let Err(e) = &r {
            crate::bindings::tell(tmux, c, "side chat", e);
        }
        return r;
    }
    let pane = side::main_pane(tmux, Some(t))?;
    let bin = std::env::current_exe()?.to_string_lossy().into_owned();
    // Separate words: tmux execs them without a shell and expands no format in them.
    let argv: Vec<String> = vec![bin, "side".into(), "run".into(), "-t".into(), pane.clone()];
    let fmt = record_format(&["client_name", "client_session", "client_control_mode"]);
    let sess = tmux.run(&targs![
        "display-message",
        "-p",
        "-t",
        Arg::id(&pane),
        "#{session_name}"
    ])?;
    let clients = tmux
        .run_bytes(&targs!["list-clients", "-F", Arg::ours(&fmt)], None)
        .ok()
        .and_then(|o| parse_records(&o, 3).ok())
        .unwrap_or_default();
    let client = clients
        .iter()
        .find(|c| c[1] == sess.trim_end_matches('\n') && c[2] != "1")
        .map(|c| c[0].clone());
    let _ = std::fs::remove_file(start_path(&pane));
    match client {
        Some(c) => {
            crate::bindings::popup(tmux, &c, " side chat ", &argv)?;
            match read_start(&pane) {
                Some(st) if st.state == "failed" => Err(failed_open(tmux, &pane, None, st.message)),
                _ => {
                    let _ = std::fs::remove_file(start_path(&pane));
                    Ok(())
                }
            }
        }
        None => {
            let before = split::before(tmux, &pane);
            let out = tmux.run(
                &targs![
                    "split-window",
                    "-h",
                    "-d",
                    "-t",
                    Arg::id(&pane),
                    "-l",
                    "40%",
                    "-P",
                    "-F",
                    "#{pane_id}",
                    "--",
                ]
                .into_iter()
                .chain(argv.iter().map(|w| Arg::literal(w)))
                .collect::<Vec<_>>(),
            )?;
            let split = out.trim().to_string();
            split::opened(tmux, &pane, &split, before);
            // "Opened" only once the side agent is up: one that dies at start is an error.
            let start = Instant::now();
            loop {
                match read_start(&pane) {
                    Some(st) if st.state == "failed" => {
                        return Err(failed_open(tmux, &pane, Some(&split), st.message));
                    }
                    Some(st) if st.state == "running" => break,
                    _ => {}
                }
                let alive = tmux
                    .run(&targs![
                        "display-message",
                        "-p",
                        "-t",
                        Arg::id(&split),
                        "#{pane_dead}"
                    ])
                    .is_ok_and(|d| d.trim() == "0");
                if !alive && read_start(&pane).is_none_or(|s| s.state != "running") {
                    let msg = read_start(&pane)
                        .filter(|s| s.state == "failed")
                        .map(|s| s.message)
                        .unwrap_or_else(|| {
                            "the side chat ended at once, before its agent started".into()
                        });
                    return Err(failed_open(tmux, &pane, Some(&split), msg));
                }
                if start.elapsed() > START_WAIT {
                    return Err(failed_open(
                        tmux,
                        &pane,
                        Some(&split),
                        format!(
                            "the side agent did not start within {} s",
                            START_WAIT.as_secs()
                        ),
                    ));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = std::fs::remove_file(start_path(&pane));
            super::out_line(&format!(
                "no client is attached to the main pane's session: the side chat opened in a split ({split}) beside {pane}"
            ));
            Ok(())
        }
    }
}

fn side_agent(tmux: &Tmux) -> String {
    let o = crate::tmux::options::SIDE_AGENT;
    o.text(&o.global(tmux)).to_string()
}

/// Launch arguments for a read-only side agent of `adapter`.
fn side_argv(adapter: &str, session: &str, role: &str, bin: &str) -> Result<Vec<String>, CliError> {
    let hook = format!("{} hook {adapter}", crate::control::create::sh_quote(bin));
    Ok(match adapter {
        "claude" => {
            let settings = serde_json::json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": hook}]}]}});
            vec![
                "--session-id".into(), session.into(),
                "--permission-mode".into(), "plan".into(),
                "--allowedTools".into(),
                "Read,Grep,Glob,Bash(tmuxmate side status:*),Bash(tmuxmate side history:*),Bash(tmuxmate side report:*)".into(),
                "--disallowedTools".into(), "Edit,Write,NotebookEdit".into(),
                "--append-system-prompt".into(), role.into(),
                "--settings".into(), settings.to_string(),
            ]
        }
        // Hooks from `-c` are not trusted yet: bypassing trust for this one throwaway
        // session (which also keeps it off the shared daemon) lets its per-turn hook run.
        "codex" => vec![
            // Its own process, not the shared daemon: hooks keep this side chat's
            // environment (its main pane, its relay nonce) and nothing outlives it.
            "--no-daemon".into(),
            "--no-alt-screen".into(),
            "--sandbox".into(),
            "read-only".into(),
            "--ask-for-approval".into(),
            "never".into(),
            "--dangerously-bypass-hook-trust".into(),
            "-c".into(),
            format!(
                "hooks.UserPromptSubmit=[{{hooks=[{{type=\"command\",command={}}}]}}]",
                serde_json::to_string(&hook).unwrap_or_default()
            ),
            // Its read-only sandbox lets `side report` only print; this hook runs outside
            // it and queues what was printed (src/side_relay.rs).
            "-c".into(),
            format!(
                "hooks.PostToolUse=[{{matcher=\"*\",hooks=[{{type=\"command\",command={}}}]}}]",
                serde_json::to_string(&format!(
                    "{} side relay",
                    crate::control::create::sh_quote(bin)
                ))
                .unwrap_or_default()
            ),
            "-c".into(),
            format!(
                "developer_instructions={}",
                serde_json::to_string(role).unwrap_or_default()
            ),
        ],
        "gemini" => vec!["--approval-mode".into(), "default".into()],
        other => {
            return Err(CliError::usage(format!(
                "{} is {other:?}: use claude, codex or gemini",
                crate::tmux::options::SIDE_AGENT.name
            )));
        }
    })
}

/// The side agent, inside its popup: launch, wait, then delete its session files. Any
/// failure is also written where `open` waits for it.
fn run_side(tmux: &Tmux, target: &str) -> CliResult {
    let r = run_side_inner(tmux, target);
    if let Err(e) = &r {
        write_start(target, "failed", &e.human());
    }
    r
}

/// Copy the child's stderr to ours (the popup's terminal) and keep its tail, so the
/// reason a side agent died can be reported by `open` too.
fn tee_stderr(err: Option<std::process::ChildStderr>) -> Option<std::thread::JoinHandle<Vec<u8>>> {
    use std::io::{Read, Write};
    let mut err = err?;
    Some(std::thread::spawn(move || {
        let mut tail: Vec<u8> = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = err.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut o = std::io::stderr().lock();
            let _ = o.write_all(&buf[..n]);
            let _ = o.flush();
            tail.extend_from_slice(&buf[..n]);
            if tail.len() > 8192 {
                tail.drain(..tail.len() - 4096);
            }
        }
        tail
    }))
}

fn run_side_inner(tmux: &Tmux, target: &str) -> CliResult {
    let pane = side::main_pane(tmux, Some(target))?;
    let m = side::main_facts(tmux, &pane)?;
    let adapter = side_agent(tmux);
    let cli = which(&adapter)
        .ok_or_else(|| CliError::new(format!("the {adapter} CLI is not on PATH")))?;
    let bin = std::env::current_exe()?;
    let session = uuid_v4()?;
    let mut role = side::ROLE.replace("{MAIN}", &pane);
    if adapter == "codex" {
        // Codex runs commands in a login shell, whose profile resets PATH (Codex 0.171 in
        // the rig: "tmuxmate: command not found"): name the binary by its path.
        role = role.replace(
            "`tmuxmate side",
            &format!(
                "`{} side",
                crate::control::create::sh_quote(&bin.to_string_lossy())
            ),
        );
    }
    // Known to the side agent's commands and hooks only: what a relayed report must carry.
    let nonce = uuid_v4()?.replace('-', "");
    let argv = side_argv(&adapter, &session, &role, &bin.to_string_lossy())?;
    let started = state::now_ms();
    let rec = SideRecord {
        pid: std::process::id(),
        adapter: adapter.clone(),
        session: session.clone(),
        started,
    };
    let rec = serde_json::to_string(&rec).unwrap_or_default();
    tmux.run(&targs![
        "set-option",
        "-p",
        "-t",
        Arg::id(&pane),
        "--",
        side::OPT_SIDE,
        Arg::literal(&rec),
    ])?;
    let _ = std::fs::remove_file(result_path(&pane));
    // Closing the popup hangs up on us: stay to clean up; pass TERM on to the agent.
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGINT,
    ] {
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    let path = match (bin.parent(), std::env::var_os("PATH")) {
        (Some(d), Some(p)) => {
            let mut v = vec![d.to_path_buf()];
            v.extend(std::env::split_paths(&p));
            std::env::join_paths(v).unwrap_or(p)
        }
        (_, p) => p.unwrap_or_default(),
    };
    let main_transcript = tmux
        .run(&targs![
            "show-options",
            "-pqv",
            "-t",
            Arg::id(&pane),
            crate::tmux::options::TRANSCRIPT.name
        ])
        .ok()
        .map(|s| s.trim_end().to_string())
        .filter(|s| !s.is_empty());
    let cwd = if m.cwd.is_empty() {
        ".".to_string()
    } else {
        m.cwd.clone()
    };
    // The side agent CLI runs in this popup's terminal, supervised by the loop below.
    let mut child = crate::sys::process::command(&cli);
    child
        .args(&argv)
        .env(side::ENV_MAIN, &pane)
        .env(relay::ENV_NONCE, &nonce)
        .env(
            side::ENV_TRANSCRIPT,
            main_transcript.as_deref().unwrap_or(""),
        )
        .env("PATH", path)
        .env_remove("NO_COLOR")
        .current_dir(&cwd)
        .stderr(std::process::Stdio::piped());
    let mut child = match crate::sys::process::spawn_supervised(child) {
        Ok(c) => c,
        Err(e) => {
            let _ = tmux.run(&targs![
                "set-option",
                "-p",
                "-u",
                "-t",
                Arg::id(&pane),
                side::OPT_SIDE
            ]);
            return Err(CliError::new(format!(
                "could not start {}: {e}",
                cli.display()
            )));
        }
    };
    let errors = tee_stderr(child.stderr.take());
    let spawned = Instant::now();
    let mut reported = false;
    let mut signalled = false;
    let status = loop {
        if let Ok(Some(st)) = child.try_wait() {
            break st;
        }
        if !reported && spawned.elapsed() >= START_GRACE {
            reported = true;
            write_start(&pane, "running", "");
        }
        if stop.load(Ordering::Relaxed) && !signalled {
            signalled = true;
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let tail = errors.and_then(|h| h.join().ok()).unwrap_or_default();
    // Ended on its own with a failure (not closed by us): the side chat failed.
    let failed = (!signalled && !stop.load(Ordering::Relaxed) && !status.success()).then(|| {
        let said = String::from_utf8_lossy(&tail);
        let said: Vec<&str> = said
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.trim().is_empty())
            .collect();
        let said = said[said.len().saturating_sub(6)..].join("\n");
        format!(
            "the {adapter} side agent exited with {status}{}",
            if said.is_empty() {
                " and printed nothing on stderr".to_string()
            } else {
                format!(": {said}")
            }
        )
    });
    let own = tmux
        .run(&targs![
            "show-options",
            "-pqv",
            "-t",
            Arg::id(&pane),
            side::OPT_SIDE_TRANSCRIPT,
        ])
        .ok()
        .map(|s| s.trim_end().to_string())
        .filter(|s| !s.is_empty());
    let files = side::side_files(
        &adapter,
        &cwd,
        &session,
        started,
        main_transcript.as_deref(),
        own.as_deref(),
    );
    let (mut ok, mut line) = side::delete_and_verify(&files);
    if adapter == "claude" {
        // Its prompts are also in Claude's prompt history, by session id.
        let (hist_ok, said) = side::forget_prompts(&session, own.as_deref());
        ok &= hist_ok;
        line = format!("{line}; {said}");
    }
    state::log(&format!("side chat of {pane}: {line}"));
    let _ = state::write_atomic(&result_path(&pane), line.as_bytes());
    let _ = tmux.run(&targs![
        "set-option",
        "-p",
        "-u",
        "-t",
        Arg::id(&pane),
        side::OPT_SIDE
    ]);
    let _ = tmux.run(&targs![
        "set-option",
        "-p",
        "-u",
        "-t",
        Arg::id(&pane),
        side::OPT_SIDE_TRANSCRIPT,
    ]);
    if let Some(msg) = failed {
        return Err(CliError::new(if ok {
            msg
        } else {
            format!("{msg}; {line}")
        }));
    }
    // Before the grace `open` may still be waiting for a word; after it nobody is.
    if reported {
        let _ = std::fs::remove_file(start_path(&pane));
    } else {
        write_start(&pane, "ended", "");
    }
    if !stop.load(Ordering::Relaxed) {
        super::out_line(&line);
    }
    if ok { Ok(()) } else { Err(CliError::new(line)) }
}

/// `side report` inside a sandbox: the same checks, then the note on stdout as one relay
/// line that the side chat's PostToolUse hook picks up (outside the sandbox).
fn relay_report(nonce: &str, text: &str, json: bool, why: &CliError) -> CliResult {
    let t = text.trim();
    if t.is_empty() {
        return Err(CliError::usage("refused: the report is empty"));
    }
    if t.chars().count() > side::REPORT_MAX {
        return Err(CliError::usage(format!(
            "refused: the report is longer than {} characters; summarise it",
            side::REPORT_MAX
        )));
    }
    state::log(&format!(
        "side report relayed through the side chat's hook ({})",
        why.msg
    ));
    let said = "handed to the side chat, which queues it for the main agent's next turn (this sandbox blocks tmux and the state dir)";
    if json {
        super::out_json(
            &serde_json::json!({"queued": "relayed", "relay": relay::line(nonce, t), "note": said}),
        );
    } else {
        super::out_line(&format!("{}\n{said}", relay::line(nonce, t)));
    }
    Ok(())
}

/// Codex's PostToolUse hook in a side chat: unattended, so it logs and prints nothing.
fn relay_hook(tmux: &Tmux) {
    use std::io::Read;
    let Some(nonce) = relay::nonce() else {
        return;
    };
    let mut raw = Vec::new();
    if std::io::stdin()
        .take(4 << 20)
        .read_to_end(&mut raw)
        .is_err()
    {
        return;
    }
    let Ok(input) = serde_json::from_slice::<serde_json::Value>(&raw) else {
        state::log("side relay: the hook input is not JSON; nothing relayed");
        return;
    };
    let Some((id, text)) = relay::from_hook(&input, &nonce) else {
        return;
    };
    let key = format!("side:relay:{id}");
    match side::main_pane(tmux, None).and_then(|p| side::report_keyed(tmux, &p, &text, &key)) {
        Ok((agent, _)) => state::log(&format!(
            "side relay: queued the side chat's note for {agent}"
        )),
        Err(e) => state::log(&format!("side relay: could not queue the note: {}", e.msg)),
    }
}

fn close(tmux: &Tmux, target: Option<&str>) -> CliResult {
    let pane = side::main_pane(tmux, target)?;
    let raw = tmux.run(&targs![
        "show-options",
        "-pqv",
        "-t",
        Arg::id(&pane),
        side::OPT_SIDE
    ])?;
    let Ok(rec) = serde_json::from_str::<SideRecord>(raw.trim_end()) else {
        return Err(CliError::new(format!(
            "no side chat is open for pane {pane}"
        )));
    };
    let pid = nix::unistd::Pid::from_raw(rec.pid as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).map_err(|e| {
        CliError::new(format!(
            "could not end the side chat (pid {}): {e}",
            rec.pid
        ))
    })?;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if let Ok(line) = std::fs::read_to_string(result_path(&pane)) {
            // The split it ran in (no client was attached) closes; the window is as before.
            split::restore(tmux, &pane);
            super::out_line(&line);
            return if line.contains("could NOT") {
                Err(CliError::new(line))
            } else {
                Ok(())
            };
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(CliError::new(format!(
        "the side chat of {pane} (pid {}) did not finish within 20 s; its session files may remain",
        rec.pid
    )))
}

pub fn run(tmux: &Tmux, action: SideAction) -> CliResult {
    match action {
        SideAction::Open { target, client } => open(tmux, target.as_deref(), client.as_deref()),
        SideAction::Run { target } => run_side(tmux, &target),
        SideAction::Status { target, json } => {
            let st = match side::main_pane(tmux, target.as_deref()) {
                Ok(pane) => side::status(tmux, &pane)?,
                Err(e) => match (target.is_none(), side::offline_transcript()) {
                    (true, Some(t)) => side::status_offline(&t),
                    _ => return Err(e),
                },
            };
            if json {
                super::out_json(&st);
            } else {
                super::out_line(&format!(
                    "main agent in {}: {}\n{}",
                    st.main_pane, st.state, st.text
                ));
            }
            Ok(())
        }
        SideAction::History {
            target,
            turn,
            contains,
            limit,
            json,
        } => {
            if limit == 0 || limit > side::HISTORY_MAX {
                return Err(CliError::usage(format!(
                    "--limit must be 1 to {}",
                    side::HISTORY_MAX
                )));
            }
            let transcript = match side::main_pane(tmux, target.as_deref()) {
                Ok(pane) => crate::digest::pane::load(tmux, &pane, None)?.transcript,
                Err(e) => match (target.is_none(), side::offline_transcript()) {
                    (true, Some(t)) => t.into(),
                    _ => return Err(e),
                },
            };
            let lines = side::history(&transcript, turn, contains.as_deref(), limit)?;
            if json {
                super::out_json(&lines);
            } else if lines.is_empty() {
                super::out_line("(no matching lines in the main session's transcript)");
            } else {
                let text: String = lines
                    .iter()
                    .map(|l| format!("[turn {}] {}\n", l.turn, l.text))
                    .collect();
                super::out(&text);
            }
            Ok(())
        }
        SideAction::Report { target, text, json } => {
            let queued = side::main_pane(tmux, target.as_deref())
                .and_then(|pane| side::report(tmux, &pane, &text));
            let (agent, key) = match (queued, target.is_none(), relay::nonce()) {
                (Ok(q), _, _) => q,
                // Inside a sandbox that blocks tmux and the state dir (Codex read-only):
                // print the note for the side chat's hook to deliver.
                (Err(e), true, Some(nonce)) => return relay_report(&nonce, &text, json, &e),
                (Err(e), _, _) => return Err(e),
            };
            if json {
                super::out_json(&serde_json::json!({"queued": true, "agent": agent, "key": key}));
            } else {
                super::out_line(&format!("queued for the main agent's next turn ({agent})"));
            }
            Ok(())
        }
        SideAction::Relay => {
            relay_hook(tmux);
            Ok(())
        }
        SideAction::Close { target } => close(tmux, target.as_deref()),
    }
}
