//! Starting (or reusing) an agent CLI in its own managed session.
//!
//! Owns: resolving the CLI to an absolute path from the caller's PATH (a long-running
//! tmux server keeps an old PATH), handing the caller's environment (minus `NO_COLOR`) to
//! the CLI through a private spec file that `tmuxmate agent _exec` reads, deletes and
//! execs (so nothing passes through a shell and secrets never sit in tmux's environment),
//! and waiting for the ready screen. Invariants: a session is reused only when its whole
//! contract matches; a start-up dialog is refused, never answered; the pane runs the CLI
//! itself (exec), so the pane's process is the agent.

use crate::targs;
use crate::tmux::Arg;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::adapters::Adapter;
use super::contract;
use super::hints::attach_line;
use super::naming;
use super::session::check_contract;
use crate::control::policy::Caller;
use crate::error::Error;
use crate::sys::state;
use crate::tmux::{Text, Tmux};

#[derive(Debug, Serialize, Deserialize)]
pub struct Spec {
    pub argv: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Started {
    pub name: String,
    pub session_id: String,
    pub pane_id: String,
    pub adapter: String,
    pub project: String,
    pub permission_mode: String,
    pub reused: bool,
    pub cli_session: Option<String>,
    pub attach: String,
}

impl Started {
    /// The line `agent start` prints.
    pub fn line(&self) -> String {
        format!(
            "{} {} in {} ({}); attach: {}",
            if self.reused { "reusing" } else { "started" },
            self.adapter,
            self.name,
            self.pane_id,
            self.attach
        )
    }
}

/// A random RFC 4122 version 4 UUID from the kernel's generator.
pub fn uuid_v4() -> std::io::Result<String> {
    use std::io::Read;
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    ))
}

// The one PATH lookup lives in `sys::which`; this name stays until the handlers move.
pub use crate::sys::which::which;

/// Start the agent for `project_dir`, or reuse a matching running one.
pub fn start(
    tmux: &Tmux,
    caller: &Caller,
    adapter: &Adapter,
    project_dir: &Path,
    mode: Option<&str>,
    timeout: Duration,
) -> Result<Started, Error> {
    let proj = naming::project(project_dir).map_err(|e| {
        Error::new(format!(
            "cannot read project directory {}: {e}",
            project_dir.display()
        ))
    })?;
    let usage = |e: crate::tmux::TextError| Error::usage(e.to_string());
    let root_text = Text::from_os("the project directory", proj.root.as_os_str()).map_err(usage)?;
    let root = root_text.as_str().to_string();
    let name = naming::name(adapter.prefix, &proj);
    let name_text = Text::new("the session name", &name).map_err(usage)?;
    if let Some(m) = mode
        && adapter.mode_args(m).is_none()
    {
        return Err(Error::usage(format!(
            "unknown permission mode {m:?} for {}: use one of {}",
            adapter.name,
            adapter.mode_names()
        )));
    }
    if let Some(sid) = contract::find(tmux, &name)? {
        let c = contract::read(tmux, &sid)?;
        check_contract(tmux, &c, adapter, &root, mode)?;
        super::session::check_pane(tmux, &c, adapter)?;
        return Ok(Started {
            attach: attach_line(tmux, &name),
            name,
            session_id: sid,
            pane_id: c.pane,
            adapter: adapter.name.as_str().into(),
            project: root,
            permission_mode: c.mode,
            reused: true,
            cli_session: (!c.cli_session.is_empty()).then_some(c.cli_session),
        });
    }
    let mode = mode.unwrap_or(adapter.default_mode()).to_string();
    let cli = which(&adapter.cli).ok_or_else(|| {
        Error::new(format!(
            "the {} CLI ({}) is not on your PATH; install it or pass --cli",
            adapter.name, adapter.cli
        ))
    })?;
    let mut argv = vec![cli.to_string_lossy().into_owned()];
    argv.extend(adapter.base_args.iter().map(|s| s.to_string()));
    let cli_session = match adapter.session_id_flag {
        Some(flag) => {
            let id = uuid_v4()?;
            argv.push(flag.into());
            argv.push(id.clone());
            Some(id)
        }
        None => None,
    };
    argv.extend(
        adapter
            .mode_args(&mode)
            .unwrap_or_default()
            .iter()
            .map(|s| s.to_string()),
    );
    let mut env: BTreeMap<String, String> =
        std::env::vars().filter(|(k, _)| k != "NO_COLOR").collect();
    for (k, v) in &adapter.env {
        env.insert(k.to_string(), v.to_string());
    }
    let spec = Spec {
        argv,
        env,
        cwd: root.clone(),
    };
    let spec_path = state::state_dir().join("launch").join(format!(
        "{}-{}.json",
        naming::encode(&name).replace('/', "_"),
        crate::sys::unique::token()
    ));
    write_private(
        &spec_path,
        serde_json::to_string(&spec).unwrap_or_default().as_bytes(),
    )?;
    let bin = std::env::current_exe()?.to_string_lossy().into_owned();
    // The session comes with a placeholder window; ours is created with history-limit in
    // force, then the placeholder goes.
    let (sid, placeholder) =
        crate::control::create::new_session(tmux, &name_text, Some(&root_text))?;
    let created = crate::control::create::new_window(
        tmux,
        caller,
        &sid,
        Some(&Text::lossy(adapter.name.as_str())),
        Some(&root_text),
        // `exec`: tmux runs the command through `sh -c`, and the pane's process must be
        // the CLI itself (its pid, its process group, its title).
        &[
            "exec".into(),
            bin,
            "agent".into(),
            "_exec".into(),
            spec_path.to_string_lossy().into_owned(),
        ],
    );
    let _ = tmux.run(&targs!["kill-window", "-t", Arg::id(&placeholder)]);
    let created = match created {
        Ok(c) => c,
        Err(e) => {
            let _ = tmux.run(&targs!["kill-session", "-t", Arg::id(&sid)]);
            let _ = std::fs::remove_file(&spec_path);
            return Err(e);
        }
    };
    let r = finish_start(
        tmux,
        adapter,
        &sid,
        &name,
        &root,
        &mode,
        &created.pane_id,
        cli_session.as_deref(),
        &spec.argv[0],
        timeout,
    );
    let _ = std::fs::remove_file(&spec_path);
    if let Err(e) = r {
        // A failed start leaves no `[broken]` session behind. A dialog is the exception:
        // the error tells the user to answer it, and that needs the session.
        if e.kind != crate::error::Kind::Dialog {
            let _ = tmux.run(&targs!["kill-session", "-t", Arg::id(&sid)]);
        }
        return Err(e);
    }
    Ok(Started {
        attach: attach_line(tmux, &name),
        name,
        session_id: sid,
        pane_id: created.pane_id,
        adapter: adapter.name.as_str().into(),
        project: root,
        permission_mode: mode,
        reused: false,
        cli_session,
    })
}

/// The contract options, then the wait for the ready screen.
#[allow(clippy::too_many_arguments)]
fn finish_start(
    tmux: &Tmux,
    adapter: &Adapter,
    sid: &str,
    name: &str,
    root: &str,
    mode: &str,
    pane: &str,
    cli_session: Option<&str>,
    cli: &str,
    timeout: Duration,
) -> Result<(), Error> {
    for (k, v) in [
        (crate::tmux::options::MANAGED.name, "1"),
        (crate::tmux::options::ADAPTER.name, adapter.name.as_str()),
        (crate::tmux::options::PROJECT.name, root),
        (crate::tmux::options::PERMISSION_MODE.name, mode),
        (crate::tmux::options::PANE.name, pane),
        (
            crate::tmux::options::CLI_SESSION.name,
            cli_session.unwrap_or(""),
        ),
        (crate::tmux::options::CLI.name, cli),
    ] {
        contract::set(tmux, sid, k, v)?;
    }
    // So that `remain-on-exit` keeps a CLI that died on screen long enough to say why.
    let _ = tmux.run(&targs![
        "set-option",
        "-p",
        "-t",
        Arg::id(pane),
        "remain-on-exit",
        "on"
    ]);
    wait_ready(tmux, adapter, pane, name, timeout)
}

fn write_private(p: &Path, data: &[u8]) -> Result<(), Error> {
    state::write_private(p, data).map_err(|e| crate::error::state_io("write", p, e))
}

/// The last few non-blank lines of a screen, for an error message.
fn last_lines(scr: &str) -> String {
    let tail: Vec<&str> = scr
        .trim_end()
        .lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .take(8)
        .collect();
    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
}

/// Wait for the ready screen; a dialog or a dead pane is an error that says what to do.
pub fn wait_ready(
    tmux: &Tmux,
    a: &Adapter,
    pane: &str,
    name: &str,
    timeout: Duration,
) -> Result<(), Error> {
    let start = Instant::now();
    loop {
        let dead = tmux
            .run(&targs![
                "display-message",
                "-p",
                "-t",
                Arg::id(pane),
                "#{pane_dead}"
            ])
            .map(|s| s.trim() == "1")
            .unwrap_or(true);
        let scr = super::screen(tmux, pane);
        if dead {
            // tmux scrolls the screen to write "Pane is dead": the CLI's last words may be
            // just above it, in the history.
            let scr = tmux
                .run(&targs![
                    "capture-pane",
                    "-p",
                    "-J",
                    "-S",
                    "-40",
                    "-t",
                    Arg::id(pane)
                ])
                .unwrap_or(scr);
            return Err(Error::new(format!(
                "the {} CLI exited during start-up (the session {name} was removed); its last lines:\n{}",
                a.name,
                last_lines(&scr)
            ))
            .with_hint(format!(
                "fix what it says, then run `tmuxmate agent start {}` again",
                a.name
            )));
        }
        if let Some(d) = super::any(&a.dialogs, &scr) {
            let mut e = Error::refused(format!(
                "refused: the {} CLI in session {name} shows a start-up dialog ({d:?}); tmuxmate never answers dialogs. Answer it yourself: {}",
                a.name,
                attach_line(tmux, name)
            ));
            e.kind = crate::error::Kind::Dialog;
            return Err(e);
        }
        // The start-up banner may already have scrolled into the history.
        if super::ready(a, &scr)
            && (a.start_ready.is_empty() || super::all(&a.start_ready, &history(tmux, pane)))
        {
            // Some dialogs draw a moment after the prompt (Codex's model migration).
            if a.late_dialog_ms > 0 {
                std::thread::sleep(Duration::from_millis(a.late_dialog_ms));
                let scr = super::screen(tmux, pane);
                if let Some(d) = super::any(&a.dialogs, &scr) {
                    let mut e = Error::refused(format!(
                        "refused: the {} CLI in session {name} opened a dialog after start-up ({d:?}); answer it yourself: {}",
                        a.name,
                        attach_line(tmux, name)
                    ));
                    e.kind = crate::error::Kind::Dialog;
                    return Err(e);
                }
            }
            return Ok(());
        }
        if start.elapsed() > timeout {
            return Err(Error::new(format!(
                "the {} CLI did not show its prompt within {} s (the session {name} was removed); its last lines:\n{}",
                a.name,
                timeout.as_secs(),
                last_lines(&scr)
            ))
            .with_hint("pass a longer --timeout-s, or check that the CLI starts in a terminal"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn history(tmux: &Tmux, pane: &str) -> String {
    tmux.run(&targs![
        "capture-pane",
        "-p",
        "-J",
        "-S",
        "-",
        "-t",
        Arg::id(pane)
    ])
    .unwrap_or_default()
}

/// `tmuxmate agent _exec SPEC`: become the CLI described by SPEC (and delete SPEC).
pub fn exec(spec_path: &Path) -> Error {
    let spec: Spec = match std::fs::read(spec_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
    {
        Some(s) => s,
        None => return Error::new(format!("cannot read launch spec {}", spec_path.display())),
    };
    let _ = std::fs::remove_file(spec_path);
    let Some(prog) = spec.argv.first() else {
        return Error::new("empty launch spec");
    };
    // The pane's own terminal facts win over the caller's (its TERM may be `dumb`).
    let mut env = spec.env;
    for k in ["TMUX", "TMUX_PANE", "TERM"] {
        match std::env::var(k) {
            Ok(v) => {
                env.insert(k.into(), v);
            }
            Err(_) => {
                env.remove(k);
            }
        }
    }
    for k in ["COLUMNS", "LINES", "NO_COLOR"] {
        env.remove(k);
    }
    let mut cmd = crate::sys::process::command(prog);
    cmd.args(&spec.argv[1..])
        .env_clear()
        .envs(env)
        .current_dir(&spec.cwd);
    let err = crate::sys::process::exec(cmd);
    Error::new(format!("could not start {prog}: {err}"))
}
