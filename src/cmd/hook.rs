//! `tmuxmate hook claude|codex|gemini`: the unattended per-turn entry point.
//!
//! Invariant: fail soft. Whatever happens, exit 0; print either nothing or exactly one
//! JSON answer; log every reason for silence to the state-dir log.

use crate::targs;
use crate::tmux::Arg;
use std::io::Read;

use crate::cli::Harness;
use crate::hook::{self, Event};
use crate::ledger::Ledger;
use crate::location;
use crate::tmux::{Tmux, version};
use crate::turn::{TurnRequest, compose};

/// The harness caps injected text at 10,000 characters; stay clearly below.
const HOOK_MAX_CHARS: usize = 9500;

/// True when argv names the `hook` subcommand (so a parse error must stay silent).
pub fn is_hook_invocation() -> bool {
    // args_os: an argument that is not UTF-8 must not panic here (clap refuses it later).
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "-L" | "-S" | "--socket" | "--socket-path" => i += 2,
            a if a.starts_with('-') => i += 1,
            a => return a == "hook",
        }
    }
    false
}

pub fn run(tmux: &Tmux, harness: Harness, interval_ms: Option<u64>) {
    if let Err(e) = run_inner(tmux, harness, interval_ms) {
        crate::state::log(&format!("hook {harness:?}: {e}"));
    }
}

fn run_inner(tmux: &Tmux, harness: Harness, interval_ms: Option<u64>) -> Result<(), String> {
    let mut buf = Vec::new();
    std::io::stdin()
        .read_to_end(&mut buf)
        .map_err(|e| format!("reading stdin: {e}"))?;
    let input = hook::parse(&buf)?;
    let event = hook::classify(harness, &input);
    if event == Event::Other {
        return Ok(());
    }
    // A side agent's own turn: it is given the main agent's digest, not a location.
    if let Ok(main) = std::env::var(crate::side::ENV_MAIN) {
        if event == Event::Turn {
            let pane = crate::side::main_pane(tmux, Some(&main)).map_err(|e| e.msg)?;
            // Remember the side session's own transcript, so closing deletes exactly it.
            if let Some(t) = input.transcript_path.as_deref().filter(|t| !t.is_empty()) {
                let _ = tmux.run(&targs![
                    "set-option",
                    "-p",
                    "-t",
                    Arg::id(&pane),
                    "--",
                    crate::side::OPT_SIDE_TRANSCRIPT,
                    Arg::literal(t),
                ]);
            }
            super::out_line(&hook::answer(
                harness,
                &crate::side::turn_context(tmux, &pane),
            ));
        }
        return Ok(());
    }
    version::check(tmux).map_err(|e| e.to_string())?;
    let agent = match input.session_id.as_deref().filter(|s| !s.is_empty()) {
        Some(s) => s.to_string(),
        None => {
            // No session id: the tty-verified pane is the address, or there is none.
            let r = location::read(tmux).map_err(|e| format!("no session_id and {e}"))?;
            crate::policy::pane_address(&r)
        }
    };
    crate::ledger::check_address("session_id", &agent)?;
    let is_session_start = input.hook_event_name.as_deref() == Some("SessionStart");
    if event == Event::Reset && !is_session_start {
        // Gemini's PreCompress (before every model request): no location read here.
        Ledger::for_agent(&agent)
            .forget()
            .map_err(|e| format!("ledger: {e}"))?;
        return Ok(());
    }
    if event == Event::Reset || event == Event::Start {
        let r = location::read(tmux).ok();
        return crate::address::session_started(tmux, &agent, input.source.as_deref(), r.as_ref());
    }
    let transcript = input
        .transcript_path
        .as_deref()
        .filter(|p| !p.is_empty())
        .map(std::path::Path::new);
    let mut ans = compose(
        tmux,
        &TurnRequest {
            agent: &agent,
            turn: None,
            interval_ms,
            max_chars: HOOK_MAX_CHARS,
            transcript,
        },
    )?;
    // Keep a live digest of this agent's transcript for the status line and side chat.
    if let (Some(r), Some(tp)) = (
        &ans.location,
        input.transcript_path.as_deref().filter(|p| !p.is_empty()),
    ) && harness != Harness::Gemini
    {
        let fmt = match harness {
            Harness::Claude => Some(crate::digest::Format::Claude),
            Harness::Codex => Some(crate::digest::Format::Codex),
            Harness::Gemini => None,
        };
        // By socket path: when the follower already runs, this costs no tmux call.
        let t = crate::tmux::Tmux::new(crate::tmux::Socket::Path(r.socket_path.clone().into()));
        if let Err(e) =
            crate::digest::ensure_follower(&t, &r.pane_id, std::path::Path::new(tp), fmt)
        {
            crate::state::log(&format!("hook {harness:?}: digest follower: {e}"));
        }
    }
    if let Some(why) = &ans.no_location {
        crate::state::log(&format!(
            "hook {harness:?} agent {agent}: no location: {why}"
        ));
    }
    if !ans.items.is_empty() {
        // Delivered only once printed; if this process dies before `confirm`, the next
        // turn looks for the text in the transcript before offering it again.
        super::try_out_line(&hook::answer(harness, &ans.text()))
            .map_err(|e| format!("stdout: {e}; the items stay queued"))?;
        ans.confirm()?;
    }
    Ok(())
}

/// The log line for a hook command clap refused: names a mistyped harness plainly
/// (`hook cluade` would otherwise fail silently for ever) and says what to do.
pub fn bad_arguments(e: &clap::Error) -> String {
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let harness = args
        .iter()
        .position(|a| a == "hook")
        .and_then(|i| args.get(i + 1));
    match harness {
        Some(h) if !h.starts_with('-') && !["claude", "codex", "gemini"].contains(&h.as_str()) => {
            format!(
                "hook: error: unknown harness {h:?} (expected claude, codex or gemini): the hook command in your agent's config is wrong; run `tmuxmate doctor`, then `tmuxmate install`"
            )
        }
        _ => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("").trim();
            format!("hook: error: bad arguments ({first}); run `tmuxmate doctor`")
        }
    }
}
