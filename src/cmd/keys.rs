//! `tmuxmate keys`: named keys from a fixed list; anything else is refused.
//!
//! Invariant: free text never becomes a key: every argument is checked against the
//! allow-list before a single key is sent.

use crate::targs;
use crate::tmux::Arg;
use serde::Serialize;

use crate::cli::KeysArgs;
use crate::error::{CliError, CliResult};
use crate::input;
use crate::policy;
use crate::tmux::Tmux;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct KeysJson<'a> {
    target: String,
    pane_id: &'a str,
    keys: &'a [String],
    in_mode: bool,
}

pub fn run(tmux: &Tmux, a: KeysArgs) -> CliResult {
    if let Some(bad) = a.keys.iter().find(|k| !input::is_allowed_key(k)) {
        return Err(CliError::usage(format!(
            "refused: {bad:?} is not an allowed key name. Allowed: Enter Escape Tab BTab Up Down Left Right \
             Home End PageUp PageDown BSpace C-a..C-z F1..F12. To type text use `tmuxmate send` or `paste`"
        )));
    }
    let p = policy::input_target(
        tmux,
        a.target.as_deref(),
        "keys",
        &format!("press {}", a.keys.join(" ")),
    )?;
    let mut args: Vec<Arg> = targs!["send-keys", "-t", Arg::id(&p.pane_id), "--"].into();
    // Each key passed the allow-list above.
    args.extend(a.keys.iter().map(|k| Arg::literal(k)));
    tmux.run(&args)?;
    if a.json {
        super::out_json(&KeysJson {
            target: p.target(),
            pane_id: &p.pane_id,
            keys: &a.keys,
            in_mode: p.in_mode,
        });
    }
    Ok(())
}
