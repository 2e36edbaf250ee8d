//! `tmuxmate hook claude|codex|gemini`: the unattended per-turn entry point.
//!
//! Invariant: fail soft. Whatever happens, exit 0; print either nothing or exactly one
//! JSON answer; log every reason for silence to the state-dir log.

use std::io::Read;

use crate::harness::Harness;
use crate::tmux::Tmux;
use crate::turn::hook::on_hook;

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
        crate::sys::state::log(&format!("hook {harness:?}: {e}"));
    }
}

fn run_inner(tmux: &Tmux, harness: Harness, interval_ms: Option<u64>) -> Result<(), String> {
    let mut buf = Vec::new();
    std::io::stdin()
        .read_to_end(&mut buf)
        .map_err(|e| format!("reading stdin: {e}"))?;
    let Some(answer) = on_hook(tmux, harness, &buf, interval_ms)? else {
        return Ok(());
    };
    // Delivered only once printed; if this process dies before `confirm`, the next turn
    // looks for the text in the transcript before offering it again.
    super::try_out_line(&answer.json).map_err(|e| format!("stdout: {e}; the items stay queued"))?;
    if let Some(mut pending) = answer.pending {
        pending.confirm()?;
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
