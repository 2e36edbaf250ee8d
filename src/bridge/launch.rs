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
use crate::error::Error;
use crate::location::address::Caller;
use crate::sys::state;
use crate::tmux::{Text, Tmux};

#[derive(Debug, Serialize, Deserialize)]
pub struct Spec {
    pub argv: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: String,
}

#[derive(Debug, Serialize, Deserialize)]
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
    check_mode(adapter, mode)?;
    if let Some(sid) = contract::find(tmux, &name)? {
        return reuse(tmux, adapter, sid, name, root, mode);
    }
    let mode = mode.unwrap_or(adapter.default_mode()).to_string();
    let cli = which(&adapter.cli).ok_or_else(|| not_on_path(adapter))?;
    let cli_session = adapter.session_id_flag.map(|_| uuid_v4()).transpose()?;
    let env = std::env::vars().collect();
    let spec = plan_spec(adapter, &cli, &mode, &root, env, cli_session.as_deref());
    let spec_path = write_spec(&name, &spec)?;
    let created = create(tmux, caller, adapter, &name_text, &root_text, &spec_path);
    let (sid, pane) = created.inspect_err(|_| {
        let _ = std::fs::remove_file(&spec_path);
    })?;
    let session = NewSession {
        sid: &sid,
        name: &name,
        root: &root,
        mode: &mode,
        pane: &pane,
        cli_session: cli_session.as_deref(),
        cli: &spec.argv[0],
    };
    let r = finish_start(tmux, adapter, &session, timeout);
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
        pane_id: pane,
        adapter: adapter.name.as_str().into(),
        project: root,
        permission_mode: mode,
        reused: false,
        cli_session,
    })
}

fn not_on_path(adapter: &Adapter) -> Error {
    Error::new(format!(
        "the {} CLI ({}) is not on your PATH; install it or pass --cli",
        adapter.name, adapter.cli
    ))
}

/// The spec in a private file of its own under the state directory; its path.
fn write_spec(name: &str, spec: &Spec) -> Result<std::path::PathBuf, Error> {
    let path = state::state_dir().join("launch").join(format!(
        "{}-{}.json",
        naming::encode(name).replace('/', "_"),
        crate::sys::unique::token()
    ));
    write_private(
        &path,
        serde_json::to_string(spec).unwrap_or_default().as_bytes(),
    )?;
    Ok(path)
}

/// A permission mode the adapter does not know is a usage error.
fn check_mode(adapter: &Adapter, mode: Option<&str>) -> Result<(), Error> {
    match mode {
        Some(m) if adapter.mode_args(m).is_none() => Err(Error::usage(format!(
            "unknown permission mode {m:?} for {}: use one of {}",
            adapter.name,
            adapter.mode_names()
        ))),
        _ => Ok(()),
    }
}

/// The running session `sid` named `name`, when its whole contract matches and its pane
/// is the agent.
fn reuse(
    tmux: &Tmux,
    adapter: &Adapter,
    sid: String,
    name: String,
    root: String,
    mode: Option<&str>,
) -> Result<Started, Error> {
    let c = contract::read(tmux, &sid)?;
    check_contract(tmux, &c, adapter, &root, mode)?;
    super::session::check_pane(tmux, &c, adapter)?;
    Ok(Started {
        attach: attach_line(tmux, &name),
        name,
        session_id: sid,
        pane_id: c.pane,
        adapter: adapter.name.as_str().into(),
        project: root,
        permission_mode: c.mode,
        reused: true,
        cli_session: (!c.cli_session.is_empty()).then_some(c.cli_session),
    })
}

/// What `agent _exec` becomes: the CLI with the adapter's arguments (its session id flag
/// when it takes one, then the mode's), in the project root, with the caller's
/// environment minus `NO_COLOR` and plus the adapter's.
fn plan_spec(
    adapter: &Adapter,
    cli: &Path,
    mode: &str,
    root: &str,
    env: BTreeMap<String, String>,
    cli_session: Option<&str>,
) -> Spec {
    let mut argv = vec![cli.to_string_lossy().into_owned()];
    argv.extend(adapter.base_args.iter().map(|s| s.to_string()));
    if let (Some(flag), Some(id)) = (adapter.session_id_flag, cli_session) {
        argv.push(flag.into());
        argv.push(id.into());
    }
    argv.extend(
        adapter
            .mode_args(mode)
            .unwrap_or_default()
            .iter()
            .map(|s| s.to_string()),
    );
    let mut env: BTreeMap<String, String> =
        env.into_iter().filter(|(k, _)| k != "NO_COLOR").collect();
    for (k, v) in &adapter.env {
        env.insert(k.to_string(), v.to_string());
    }
    Spec {
        argv,
        env,
        cwd: root.to_string(),
    }
}

/// The session and the agent's window, which runs `agent _exec SPEC`; (session, pane).
/// Nothing is left behind when the window cannot be made.
fn create(
    tmux: &Tmux,
    caller: &Caller,
    adapter: &Adapter,
    name: &Text,
    root: &Text,
    spec_path: &Path,
) -> Result<(String, String), Error> {
    let bin = std::env::current_exe()?.to_string_lossy().into_owned();
    // The session comes with a placeholder window; ours is created with history-limit in
    // force, then the placeholder goes.
    let (sid, placeholder) = crate::control::create::new_session(tmux, name, Some(root))?;
    let created = crate::control::create::new_window(
        tmux,
        caller,
        &sid,
        Some(&Text::lossy(adapter.name.as_str())),
        Some(root),
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
    match created {
        Ok(c) => Ok((sid, c.pane_id)),
        Err(e) => {
            let _ = tmux.run(&targs!["kill-session", "-t", Arg::id(&sid)]);
            Err(e)
        }
    }
}

/// A session just created for the agent: what its contract records.
struct NewSession<'a> {
    sid: &'a str,
    name: &'a str,
    root: &'a str,
    mode: &'a str,
    pane: &'a str,
    cli_session: Option<&'a str>,
    /// The CLI's absolute path.
    cli: &'a str,
}

/// The contract options, then the wait for the ready screen.
fn finish_start(
    tmux: &Tmux,
    adapter: &Adapter,
    s: &NewSession,
    timeout: Duration,
) -> Result<(), Error> {
    for (k, v) in [
        (crate::tmux::options::MANAGED.name, "1"),
        (crate::tmux::options::ADAPTER.name, adapter.name.as_str()),
        (crate::tmux::options::PROJECT.name, s.root),
        (crate::tmux::options::PERMISSION_MODE.name, s.mode),
        (crate::tmux::options::PANE.name, s.pane),
        (
            crate::tmux::options::CLI_SESSION.name,
            s.cli_session.unwrap_or(""),
        ),
        (crate::tmux::options::CLI.name, s.cli),
    ] {
        contract::set(tmux, s.sid, k, v)?;
    }
    // So that `remain-on-exit` keeps a CLI that died on screen long enough to say why.
    let _ = tmux.run(&targs![
        "set-option",
        "-p",
        "-t",
        Arg::id(s.pane),
        "remain-on-exit",
        "on"
    ]);
    wait_ready(tmux, adapter, s.pane, s.name, timeout)
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

#[cfg(test)]
mod tests {
    use super::super::adapters;
    use super::*;

    #[test]
    fn an_unknown_permission_mode_is_a_usage_error() {
        let a = adapters::claude();
        assert!(check_mode(&a, None).is_ok());
        assert!(check_mode(&a, Some(a.default_mode())).is_ok());
        let e = check_mode(&a, Some("no-such-mode")).unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Usage);
        assert!(e.msg.contains("unknown permission mode"), "{}", e.msg);
        assert!(e.msg.contains(&a.mode_names()), "{}", e.msg);
    }

    #[test]
    fn the_spec_is_the_cli_its_session_id_and_mode_and_the_env_without_no_color() {
        let mut a = adapters::claude();
        a.env = vec![("ADAPTER_SET", "1"), ("HOME", "/adapter")];
        let mode = a.default_mode();
        let env: BTreeMap<String, String> = [("NO_COLOR", "1"), ("HOME", "/h"), ("A", "b")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let s = plan_spec(&a, Path::new("/bin/claude"), mode, "/p", env, Some("id-1"));
        let mut want = vec!["/bin/claude".to_string()];
        want.extend(a.base_args.iter().map(|s| s.to_string()));
        want.extend(["--session-id".to_string(), "id-1".to_string()]);
        want.extend(a.mode_args(mode).unwrap().iter().map(|s| s.to_string()));
        assert_eq!(s.argv, want);
        assert_eq!(s.cwd, "/p");
        assert_eq!(
            s.env.keys().map(String::as_str).collect::<Vec<_>>(),
            ["A", "ADAPTER_SET", "HOME"]
        );
        assert_eq!(s.env["HOME"], "/adapter");

        // Without a session id flag, no id is passed.
        let c = adapters::codex();
        let s = plan_spec(
            &c,
            Path::new("/bin/codex"),
            c.default_mode(),
            "/p",
            BTreeMap::new(),
            None,
        );
        assert_eq!(s.argv[1..=c.base_args.len()], c.base_args[..]);
        assert!(!s.argv.iter().any(|w| w == "--session-id"));
    }
}
