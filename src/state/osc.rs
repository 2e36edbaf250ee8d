//! Finding OSC 7501 status sequences in a pane's output stream, as `pipe-pane -O` gives
//! it: in chunks that can cut a sequence anywhere.
//!
//! Owns: the incremental scanner (bytes in, payloads out). Invariants: memory is bounded
//! (a payload longer than [`MAX`] is dropped, the scan goes on after its end); every
//! other byte of the stream is passed over, never kept; BEL and ESC `\` both end a
//! sequence, and an ESC that starts anything else ends it unfinished (dropped).

/// The longest payload kept, in bytes (a status with a message is a few hundred).
pub const MAX: usize = 4096;

const INTRO: &[u8] = b"\x1b]7501;";

#[derive(Debug, Default)]
pub struct Scanner {
    /// How much of [`INTRO`] the last bytes matched.
    matched: usize,
    /// Inside a payload: what it holds so far (`None` when outside).
    payload: Option<Vec<u8>>,
    /// The payload grew past [`MAX`]: skip to its end.
    overlong: bool,
    /// The last payload byte was ESC (maybe the start of ESC `\`).
    esc: bool,
}

impl Scanner {
    /// The payloads that end in `bytes`, in order.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        for &b in bytes {
            if let Some(p) = self.payload.as_mut() {
                if self.esc {
                    self.esc = false;
                    let whole = b == b'\\';
                    let p = self.payload.take().unwrap_or_default();
                    if whole && !self.overlong {
                        out.push(String::from_utf8_lossy(&p).into_owned());
                    }
                    self.overlong = false;
                    // An ESC that starts something else may start our intro again.
                    self.matched = match b {
                        _ if whole => 0,
                        b']' => 2,
                        0x1b => 1,
                        _ => 0,
                    };
                    continue;
                }
                match b {
                    0x07 => {
                        let p = self.payload.take().unwrap_or_default();
                        if !self.overlong {
                            out.push(String::from_utf8_lossy(&p).into_owned());
                        }
                        self.overlong = false;
                    }
                    0x1b => self.esc = true,
                    _ if p.len() >= MAX => self.overlong = true,
                    _ => p.push(b),
                }
                continue;
            }
            if b == INTRO[self.matched] {
                self.matched += 1;
                if self.matched == INTRO.len() {
                    self.matched = 0;
                    self.payload = Some(Vec::new());
                }
            } else {
                self.matched = usize::from(b == INTRO[0]);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_cut_anywhere_are_found_whole() {
        let stream = b"text\x1b]7501;state=working\x07more\x1b[2J\x1b]7501;state=blocked:kind=permission\x1b\\\x1b]0;title\x07\x1b]7501;state=done\x07";
        let whole = Scanner::default().feed(stream);
        assert_eq!(
            whole,
            vec![
                "state=working",
                "state=blocked:kind=permission",
                "state=done"
            ]
        );
        for cut in 0..stream.len() {
            let mut s = Scanner::default();
            let mut got = s.feed(&stream[..cut]);
            got.extend(s.feed(&stream[cut..]));
            assert_eq!(got, whole, "cut at {cut}");
        }
    }

    #[test]
    fn other_oscs_unfinished_and_overlong_payloads_are_dropped() {
        let mut s = Scanner::default();
        assert!(
            s.feed(b"\x1b]75010;x\x07\x1b]7502;state=done\x07")
                .is_empty()
        );
        // ESC that starts another sequence ends ours unfinished; the next is found.
        assert_eq!(
            s.feed(b"\x1b]7501;state=wor\x1b]7501;state=idle\x07"),
            vec!["state=idle"]
        );
        let mut long = b"\x1b]7501;".to_vec();
        long.extend(std::iter::repeat_n(b'a', MAX + 10));
        long.extend(b"\x07\x1b]7501;state=done\x07");
        assert_eq!(s.feed(&long), vec!["state=done"]);
    }
}
