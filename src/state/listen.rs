//! The listeners beside the hooks: for Codex a reader of the pane's output (`pipe-pane
//! -O`, which sees the OSC 7501 status sequences tmux does not pass on), for Gemini CLI a
//! pane hook on its title; set up by the first hook event from the pane, ended when the
//! agent exits. Also what those listeners run ([`title`], [`osc_stream`]).
//!
//! Invariants:
//! - a pane's one `pipe-pane` slot is taken only when free, decided inside the server
//!   (`if-shell -F '#{pane_pipe}'`), so a user's pipe (tmux-logging) is never closed; the
//!   pane then keeps the hooks alone and `@tmuxmate-state-source` says why;
//! - the listener commands are ours: tmux fills in the binary, the socket and the pane
//!   (`#{q:...}`) when it runs them, and they carry the hook's state directory (so hooks
//!   and listeners share one lock per pane whatever the server's environment); no text of
//!   the agent's reaches a parser or a shell;
//! - each listener event is one [`super::apply_with`] under the pane's lock, unattended:
//!   errors are logged.

use std::io::Read as _;

use super::store::Read;
use super::{osc, sources};
use crate::sys::state;
use crate::targs;
use crate::tmux::options;
use crate::tmux::{Arg, Tmux};

/// `@tmuxmate-state-source` values.
pub const OSC: &str = "osc7501";
pub const TITLE: &str = "title";
pub const SESSION_FILE: &str = "session-file";
pub const PIPE_TAKEN: &str = "hooks (the pane's pipe-pane is taken)";
pub const NO_BIN: &str = "hooks (@tmuxmate-bin is not set: the snippet is not loaded)";

/// Set up the listener for `harness` on `pane` when it is not there (cheap when it is:
/// decided from what [`super::store::read`] already read).
pub fn ensure(tmux: &Tmux, pane: &str, harness: &str, cur: &Read) {
    if harness == "claude" {
        follow_claude_file(tmux, pane, cur);
        return;
    }
    let wanted = match harness {
        // A pipe open already is ours (the source says so) or someone else's: theirs is
        // left alone and the pane keeps the hooks alone.
        "codex" if cur.piped => {
            if cur.source != OSC && cur.source != PIPE_TAKEN {
                set_source(tmux, pane, PIPE_TAKEN);
            }
            return;
        }
        "codex" => OSC,
        "gemini" if cur.source != TITLE => TITLE,
        _ => return,
    };
    if options::BIN.global(tmux).trim().is_empty() {
        if cur.source != NO_BIN {
            set_source(tmux, pane, NO_BIN);
        }
        return;
    }
    let r = if wanted == OSC {
        start_reader(tmux, pane)
    } else {
        hook_title(tmux, pane)
    };
    if let Err(e) = r {
        state::log(&format!("agent state of {pane}: listener: {e}"));
    }
}

/// Record the session file of the Claude whose hook this is, for the pane's follower to
/// watch (only when it is new: a restarted Claude has a new pid and file).
fn follow_claude_file(tmux: &Tmux, pane: &str, cur: &Read) {
    let Some(f) = super::claude_file::of_this_hook() else {
        return;
    };
    let path = f.to_string_lossy();
    if path == cur.state_file {
        return;
    }
    let _ = tmux.run(&targs![
        "set-option",
        "-pq",
        "-t",
        Arg::id(pane),
        options::STATE_FILE.name,
        Arg::literal(&path),
        Arg::SEP,
        "set-option",
        "-pq",
        "-t",
        Arg::id(pane),
        options::STATE_SOURCE.name,
        SESSION_FILE,
    ]);
}

fn set_source(tmux: &Tmux, pane: &str, value: &str) {
    let _ = tmux.run(&targs![
        "set-option",
        "-pq",
        "-t",
        Arg::id(pane),
        options::STATE_SOURCE.name,
        Arg::literal(value)
    ]);
}

/// The command a listener runs: our binary on this server, with `verb` for the pane.
/// tmux expands it when it runs it (the values are tmux's own, quoted for the shell).
fn listener(verb: &str, pane_format: &str) -> String {
    // The hook's own state directory, not the server's environment: the listener takes
    // the same pane lock and alert files as the hooks (shell-quoted, then encoded for the
    // one format expansion tmux gives the command).
    let dir = crate::sys::shell::readable(&state::state_dir().to_string_lossy());
    format!(
        "env TMUXMATE_STATE_DIR={} #{{q:{}}} -S #{{q:socket_path}} agents {verb} -t {pane_format}",
        crate::tmux::arg::escape_format(&dir),
        options::BIN.name
    )
}

/// The reader on the pane's output, only if the pane has no pipe; then the source says
/// which it got.
fn start_reader(tmux: &Tmux, pane: &str) -> Result<(), String> {
    let pipe = format!("exec {} 2>/dev/null", listener("osc", "#{pane_id}"));
    // The inner command is tmux command language: its one argument is quoted for tmux.
    let open = format!("pipe-pane -O -t {pane} {}", tmux_quote(&pipe));
    let out = tmux
        .run(&targs![
            "display-message",
            "-p",
            "-t",
            Arg::id(pane),
            "#{pane_pipe}",
            Arg::SEP,
            "if-shell",
            "-F",
            "-t",
            Arg::id(pane),
            "#{pane_pipe}",
            "",
            Arg::ours(&open),
            Arg::SEP,
            "display-message",
            "-p",
            "-t",
            Arg::id(pane),
            "#{pane_pipe}",
        ])
        .map_err(|e| e.to_string())?;
    // Ours when the server saw no pipe before and one after.
    let ours = out.split_whitespace().collect::<Vec<_>>() == ["0", "1"];
    set_source(tmux, pane, if ours { OSC } else { PIPE_TAKEN });
    Ok(())
}

/// `'...'` for tmux's parser: a single-quoted word has no escapes, so a `'` inside ends
/// the quote, is written `\'` and the quote reopens.
fn tmux_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn hook_title(tmux: &Tmux, pane: &str) -> Result<(), String> {
    let run = format!(
        "{} >/dev/null 2>&1; true",
        listener("title", "#{hook_pane}")
    );
    let cmd = format!("run-shell -b {}", tmux_quote(&run));
    tmux.run(&targs![
        "set-hook",
        "-p",
        "-t",
        Arg::id(pane),
        "pane-title-changed[44]",
        Arg::ours(&cmd),
        Arg::SEP,
        "set-option",
        "-pq",
        "-t",
        Arg::id(pane),
        options::STATE_SOURCE.name,
        TITLE,
    ])
    .map(|_| ())
    .map_err(|e| e.to_string())
}

/// The agent exited: its title hook goes (the pane may hold a shell now, whose titles
/// mean nothing to us); the reader ends by itself at Codex's `clear`.
pub fn remove(tmux: &Tmux, pane: &str, cur: &Read) {
    if cur.source == TITLE {
        let _ = tmux.run(&targs![
            "set-hook",
            "-pu",
            "-t",
            Arg::id(pane),
            "pane-title-changed[44]",
            Arg::SEP,
            "set-option",
            "-pqu",
            "-t",
            Arg::id(pane),
            options::STATE_SOURCE.name,
        ]);
    }
}

/// The pane's place (`session:window.pane`) and title, in one call.
fn place_and_title(tmux: &Tmux, pane: &str) -> Result<(String, String), String> {
    let out = tmux
        .run(&targs![
            "display-message",
            "-p",
            "-t",
            Arg::id(pane),
            "#{session_name}:#{window_index}.#{pane_index}\t#{pane_title}",
        ])
        .map_err(|e| e.to_string())?;
    let line = out.trim_end_matches('\n');
    let (place, title) = line.split_once('\t').unwrap_or((line, ""));
    Ok((place.to_string(), title.to_string()))
}

/// The title hook fired: what Gemini CLI's title says now.
pub fn title(tmux: &Tmux, pane: &str) -> Result<(), String> {
    let socket = super::socket_of(tmux)?;
    let (place, title) = place_and_title(tmux, pane)?;
    super::apply_with(tmux, &socket, pane, "gemini", &place, |cur| {
        sources::from_gemini_title(cur.record.as_ref(), &title)
    })
}

/// The pipe-pane reader: the pane's output on stdin until it closes (the pane is gone or
/// the pipe was closed) or Codex says it is done for good (`clear`).
pub fn osc_stream(tmux: &Tmux, pane: &str) -> Result<(), String> {
    let socket = super::socket_of(tmux)?;
    let mut scan = osc::Scanner::default();
    let mut buf = vec![0u8; 64 * 1024];
    let mut stdin = std::io::stdin().lock();
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("reading the pane's output: {e}")),
        };
        for payload in scan.feed(&buf[..n]) {
            let place = super::place_of(tmux, pane)?;
            let r = super::apply_with(tmux, &socket, pane, "codex", &place, |cur| {
                let sig = sources::from_osc7501(cur.record.as_ref(), &payload)?;
                Some(sources::with_noted_error(
                    sig,
                    &cur.last_error,
                    cur.record.as_ref(),
                ))
            });
            if let Err(e) = r {
                state::log(&format!("agent state of {pane}: {e}"));
            }
            if sources::is_clear(&payload) {
                // tmux sees a closed reader only at the pane's next output: close the
                // pipe now, if it is still ours.
                let ours = format!("#{{==:#{{{}}},{OSC}}}", options::STATE_SOURCE.name);
                let close = format!("pipe-pane -t {pane}");
                let _ = tmux.run(&targs![
                    "if-shell",
                    "-F",
                    "-t",
                    Arg::id(pane),
                    Arg::ours(&ours),
                    Arg::ours(&close),
                    Arg::SEP,
                    "set-option",
                    "-pqu",
                    "-t",
                    Arg::id(pane),
                    options::STATE_SOURCE.name,
                ]);
                return Ok(());
            }
        }
    }
}
