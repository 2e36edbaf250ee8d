//! `tmuxmate capture`: prints `control::capture` as JSON or as the bounded text.

use crate::cli::CaptureArgs;
use crate::control::budget::Range;
use crate::control::capture;
use crate::error::CliResult;
use crate::tmux::Tmux;

pub fn run(tmux: &Tmux, a: CaptureArgs) -> CliResult {
    let range = match (a.all, a.lines) {
        (true, _) => Range::All,
        (false, Some(n)) => Range::Lines(n),
        (false, None) => Range::Screen,
    };
    let c = capture::capture(
        tmux,
        &capture::Request {
            target: a.target.as_deref(),
            range: Some(range),
            max_bytes: a.max_bytes,
            ansi: a.ansi,
            join: a.join,
        },
    )?;
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
