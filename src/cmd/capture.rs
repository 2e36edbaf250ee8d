//! `tmuxmate capture`: prints `control::capture` as JSON or as the bounded text.

use crate::cli::Json;
use crate::control::capture;
use crate::error::CliResult;
use crate::tmux::Tmux;

pub fn run(tmux: &Tmux, a: Json<capture::Ask>) -> CliResult {
    let c = capture::capture(tmux, &a.ask.request())?;
    if a.json {
        super::out_json(&c.json());
    } else {
        let mut o = std::io::stdout().lock();
        let _ = c
            .text
            .write_line(&mut o)
            .and_then(|()| std::io::Write::flush(&mut o));
    }
    Ok(())
}
