//! `tmuxmate paste`: reads the text (argument, `--file`, stdin) and calls `control::input::paste`.

use crate::cli::Json;
use crate::control::input;
use crate::error::{CliResult, Error};
use crate::tmux::Tmux;

fn read_text(a: &input::PasteAsk) -> Result<String, Error> {
    let raw = match (&a.file, a.text.as_deref()) {
        (Some(f), _) => input::read_source(f)?,
        (None, Some("-")) => input::read_source(std::path::Path::new("-"))?,
        (None, Some(t)) => t.as_bytes().to_vec(),
        (None, None) => {
            return Err(Error::usage(
                "nothing to paste: give the text (after `--` if it starts with `-`), --file F, or - to read stdin",
            ));
        }
    };
    String::from_utf8(raw).map_err(|_| {
        Error::usage("refused: the text is not valid UTF-8; paste takes text, not binary data")
    })
}

pub fn run(tmux: &Tmux, a: Json<input::PasteAsk>) -> CliResult {
    let text = read_text(&a)?;
    let p = input::paste(tmux, a.target.as_deref(), &text, a.enter, a.settle_ms)?;
    super::out_json_if(a.json, &p);
    Ok(())
}
