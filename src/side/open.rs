//! `side open`: showing the side agent beside a main pane, in a popup on a client attached
//! to the main pane's session, else in a split beside it.
//!
//! Owns the choice of popup or split and waiting for the side agent to start. Invariants:
//! the side agent (`side run`) is started as separate words, which tmux execs without a
//! shell and expands no format in; a split is called opened only once `side run` says
//! its agent is up; a side chat that did not start leaves nothing behind (not its split,
//! not its files, not `@tmuxmate-side`); nothing here sends a byte to the main pane.

use std::time::{Duration, Instant};

use crate::error::Error;
use crate::targs;
use crate::tmux::format::{parse_records, record_format};
use crate::tmux::{Arg, Tmux};

use super::handoff::{read_start, result_path, start_path};
use super::split;

/// How long `open` waits for `run` to report (its own tmux calls come first).
const START_WAIT: Duration = Duration::from_secs(30);

/// Where the side chat opened.
pub enum Opened {
    /// In a popup (on the client given, or on one attached to the main pane's session).
    Popup,
    /// No client is attached to the main pane's session: in split `split` beside `main`.
    Split { main: String, split: String },
}

/// A side chat that did not start leaves nothing: not its pane, not its files.
fn failed_open(tmux: &Tmux, pane: &str, split: Option<&str>, message: String) -> Error {
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
        super::OPT_SIDE
    ]);
    let mut e = Error::new(message).with_hint(
        "fix what the side agent said (its CLI, @tmuxmate-side-agent), then open it again",
    );
    e.kind = crate::error::Kind::SideAgentFailed;
    e
}

/// `side open -t TARGET [--client C]`: with a client (the key binding, unattended) a
/// failure is also shown on that client and logged.
pub fn open(tmux: &Tmux, target: Option<&str>, client: Option<&str>) -> Result<Opened, Error> {
    let Some(t) = target else {
        return Err(Error::usage(
            "which main agent? pass -t PANE (the snippet's key binding passes the current pane)",
        ));
    };
    if let Some(c) = client {
        // From the key binding: unattended, so a failure is shown on that client and logged.
        let r = super::main_pane(tmux, Some(t)).and_then(|pane| {
            let bin = std::env::current_exe()?.to_string_lossy().into_owned();
            let argv = vec![bin, "side".into(), "run".into(), "-t".into(), pane];
            crate::tmux::popup::popup(tmux, c, " side chat ", &argv).map_err(Error::from)
        });
        if let Err(e) = &r {
            crate::tmux::popup::tell(tmux, c, "side chat", &e.msg);
        }
        return r.map(|()| Opened::Popup);
    }
    let pane = super::main_pane(tmux, Some(t))?;
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
            crate::tmux::popup::popup(tmux, &c, " side chat ", &argv)?;
            match read_start(&pane) {
                Some(st) if st.state == "failed" => Err(failed_open(tmux, &pane, None, st.message)),
                _ => {
                    let _ = std::fs::remove_file(start_path(&pane));
                    Ok(Opened::Popup)
                }
            }
        }
        None => in_split(tmux, pane, &argv),
    }
}

/// No client to show a popup on: a split beside the main pane, opened once its agent is up.
fn in_split(tmux: &Tmux, pane: String, argv: &[String]) -> Result<Opened, Error> {
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
                .unwrap_or_else(|| "the side chat ended at once, before its agent started".into());
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
    Ok(Opened::Split { main: pane, split })
}
