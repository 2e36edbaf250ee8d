//! The message a caller hands another agent: from an argument, a file or stdin.
//!
//! Invariants: at most 16 MiB, valid UTF-8 and not blank, else a usage refusal that says
//! nothing was sent.

use std::io::Read;
use std::path::Path;

use crate::error::Error;

/// Bound on one message (a 1 MiB message is fine; 16 MiB is surely a mistake).
const MAX_MESSAGE: usize = 16 << 20;

/// Where the message comes from: the first given of `text`, `file`, stdin.
pub fn read(text: Option<&str>, file: Option<&Path>, stdin: bool) -> Result<String, Error> {
    let raw = match (text, file, stdin) {
        (Some(t), _, _) => t.as_bytes().to_vec(),
        (None, Some(f), _) => {
            let mut b = Vec::new();
            std::fs::File::open(f)
                .and_then(|h| h.take(MAX_MESSAGE as u64 + 1).read_to_end(&mut b))
                .map_err(|e| Error::new(format!("cannot read --file {}: {e}", f.display())))?;
            b
        }
        (None, None, true) => {
            let mut b = Vec::new();
            std::io::stdin()
                .take(MAX_MESSAGE as u64 + 1)
                .read_to_end(&mut b)?;
            b
        }
        _ => {
            return Err(Error::usage(
                "no message: give --message TEXT, --file FILE, or - to read stdin",
            ));
        }
    };
    if raw.len() > MAX_MESSAGE {
        return Err(Error::usage("refused: the message is larger than 16 MiB"));
    }
    let s = String::from_utf8(raw)
        .map_err(|_| Error::usage("refused: the message is not valid UTF-8"))?;
    if s.trim().is_empty() {
        return Err(Error::usage(
            "refused: the message is empty; nothing was sent",
        ));
    }
    Ok(s)
}
