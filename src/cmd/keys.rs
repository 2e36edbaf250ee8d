//! `tmuxmate keys`: named keys from a fixed list, through `control::input::keys`.

use crate::cli::Json;
use crate::control::input;
use crate::error::CliResult;
use crate::tmux::Tmux;

pub fn run(tmux: &Tmux, a: Json<input::KeysAsk>) -> CliResult {
    let p = input::keys(tmux, a.target.as_deref(), &a.keys)?;
    super::out_json_if(a.json, &p);
    Ok(())
}
