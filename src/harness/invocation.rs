//! A harness's hook command line as seen before parsing: recognising a `hook` invocation
//! (so a parse error stays silent) and the log line for one clap refused.
//!
//! Owns those two argv readings. Invariants: argv is read with `args_os`, so an argument
//! that is not UTF-8 cannot panic here; a mistyped harness is named plainly in the log
//! (`hook cluade` would otherwise fail silently for ever) with what to do.

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
