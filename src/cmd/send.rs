//! `tmuxmate send`: reads the line (argument, `--file`, stdin) and calls `control::input::send`.

use crate::cli::Json;
use crate::control::input;
use crate::error::{CliResult, Error};
use crate::tmux::Tmux;

/// The line to type: the argument, else `--file F` (`-` = stdin), without one trailing
/// newline (what `echo` and editors end a file with).
fn read_line(a: &input::SendAsk) -> Result<String, Error> {
    let src = match (&a.file, a.text.as_deref()) {
        (Some(f), _) => f.as_path(),
        (None, Some("-")) => std::path::Path::new("-"),
        (None, Some(t)) => return Ok(t.to_string()),
        (None, None) => {
            return Err(Error::usage(
                "nothing to send: give the text (after `--` if it starts with `-`), --file F, or - to read stdin",
            ));
        }
    };
    let raw = input::read_source(src)?;
    let mut t =
        String::from_utf8(raw).map_err(|_| Error::usage("refused: the text is not valid UTF-8"))?;
    if t.ends_with('\n') {
        t.pop();
        if t.ends_with('\r') {
            t.pop();
        }
    }
    Ok(t)
}

pub fn run(tmux: &Tmux, a: Json<input::SendAsk>) -> CliResult {
    let text = read_line(&a)?;
    let sent = input::send(tmux, a.target.as_deref(), &text, a.enter, a.cancel_mode)?;
    super::out_json_if(a.json, &sent);
    Ok(())
}
