//! Pane captures and the byte budget every captured text passes through.
//!
//! Owns: the `capture-pane` argv for a range (screen, last N lines, all), trimming the
//! blank bottom of a screen, the byte budget (`--max-bytes`, else the tmux option
//! `@tmuxmate-capture-max-bytes`, else `DEFAULT_MAX_BYTES`) and cutting text to it.
//! Invariants: a cut keeps the most recent text; it falls on a line boundary when any
//! whole line fits, and otherwise never inside a UTF-8 character or an escape sequence;
//! a cut is always reported (`truncated`, with the dropped byte count) so the caller can
//! mark it visibly. Only pane ids (`%N`) reach `capture-pane -t`.

use crate::error::Error;
use crate::targs;
use crate::tmux::Arg;
use crate::tmux::{Tmux, TmuxError};

/// The budget when neither `--max-bytes` nor `@tmuxmate-capture-max-bytes` says otherwise.
pub const DEFAULT_MAX_BYTES: usize =
    crate::tmux::options::CAPTURE_MAX_BYTES.default_number() as usize;

/// The tmux option holding the default budget.
pub const MAX_BYTES_OPTION: &str = crate::tmux::options::CAPTURE_MAX_BYTES.name;

/// Which lines of a pane to capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Range {
    /// The visible screen.
    Screen,
    /// The last N lines of scrollback plus the screen.
    Lines(u64),
    /// All of the scrollback plus the screen.
    All,
}

/// Raw `capture-pane -p` output for `pane_id` (a `%N` id, never a user string).
pub fn capture_pane(
    tmux: &Tmux,
    pane_id: &str,
    range: Range,
    ansi: bool,
    join: bool,
) -> Result<Vec<u8>, TmuxError> {
    let mut args: Vec<Arg> = targs!["capture-pane", "-p", "-t", Arg::id(pane_id)].into();
    if ansi {
        args.push("-e".into());
    }
    if join {
        args.push("-J".into());
    }
    match range {
        Range::Screen => {}
        Range::Lines(n) => args.extend(targs!["-S", Arg::ours(format!("-{n}"))]),
        Range::All => args.extend(targs!["-S", "-"]),
    }
    tmux.run_bytes(&args, None)
}

/// Pick the budget: the flag, else the tmux option's value (`option` as read, may be
/// empty), else the default. A malformed option is an error rather than a silent default,
/// so a typo in tmux.conf does not quietly change what a model reads.
pub fn budget_from(flag: Option<usize>, option: &str) -> Result<usize, Error> {
    if let Some(b) = flag {
        if b == 0 {
            return Err(Error::usage(
                "--max-bytes must be at least 1 (it is the byte budget of the captured text)",
            ));
        }
        return Ok(b);
    }
    let v = option.trim();
    if v.is_empty() {
        return Ok(DEFAULT_MAX_BYTES);
    }
    match v.parse::<usize>() {
        Ok(b) if b > 0 => Ok(b),
        _ => Err(Error::new(format!(
            "the tmux option {MAX_BYTES_OPTION} is {v:?}, not a positive byte count; fix it with \
             `tmux set -g {MAX_BYTES_OPTION} {DEFAULT_MAX_BYTES}` or pass --max-bytes"
        ))),
    }
}

/// The budget, reading the tmux option only when no flag was given.
pub fn budget(tmux: &Tmux, flag: Option<usize>) -> Result<usize, Error> {
    if flag.is_some() {
        return budget_from(flag, "");
    }
    // No server yet means no option set (`run` may be the one that starts the server).
    let v = match tmux.run(&["show-options", "-gqv", MAX_BYTES_OPTION]) {
        Ok(v) => v,
        Err(e) if e.is_no_server() => String::new(),
        Err(e) => return Err(e.into()),
    };
    budget_from(None, &v)
}

/// Drop trailing lines that hold nothing visible (only whitespace and escape sequences,
/// as `-e` may emit), and the final newline. A screen's blank bottom is not output.
pub fn trim_trailing_blank(b: &[u8]) -> &[u8] {
    let mut end = b.len();
    loop {
        let line_start = b[..end]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
        if !blank(&b[line_start..end]) {
            return &b[..end];
        }
        if line_start == 0 {
            return &b[..0];
        }
        end = line_start - 1;
    }
}

fn blank(line: &[u8]) -> bool {
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b' ' | b'\t' | b'\r' => i += 1,
            0x1b => i = escape_end(line, i),
            _ => return false,
        }
    }
    true
}

/// The index just past the escape sequence starting at `b[i] == ESC`: CSI (`ESC [ ...
/// final`), OSC/DCS-like strings (ended by BEL or `ESC \`), else a two-byte escape. An
/// unterminated sequence runs to the end of the slice.
pub fn escape_end(b: &[u8], i: usize) -> usize {
    let n = b.len();
    if i + 1 >= n {
        return n;
    }
    match b[i + 1] {
        b'[' => {
            let mut j = i + 2;
            while j < n {
                if (0x40..=0x7e).contains(&b[j]) {
                    return j + 1;
                }
                j += 1;
            }
            n
        }
        b']' | b'P' | b'_' | b'^' | b'X' => {
            let mut j = i + 2;
            while j < n {
                if b[j] == 0x07 {
                    return j + 1;
                }
                if b[j] == 0x1b && j + 1 < n && b[j + 1] == b'\\' {
                    return j + 2;
                }
                j += 1;
            }
            n
        }
        _ => i + 2,
    }
}

/// Text cut to a budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounded {
    pub text: String,
    pub truncated: bool,
    /// Bytes dropped from the front (a lower bound when `dropped_at_least`).
    pub dropped: usize,
    pub dropped_at_least: bool,
}

impl Bounded {
    pub fn line_count(&self) -> usize {
        line_count(&self.text)
    }

    /// The visible first line for text mode, when something was cut.
    pub fn marker(&self) -> Option<String> {
        self.truncated.then(|| {
            format!(
                "[... {}{} earlier bytes truncated ...]",
                if self.dropped_at_least {
                    "at least "
                } else {
                    ""
                },
                self.dropped
            )
        })
    }

    /// [`Bounded::render`] written to `out` with a final newline, without a copy.
    pub fn write_line(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        match self.marker() {
            Some(m) if self.text.is_empty() => writeln!(out, "{m}"),
            Some(m) => {
                writeln!(out, "{m}")?;
                out.write_all(self.text.as_bytes())?;
                if !self.text.ends_with('\n') {
                    out.write_all(b"\n")?;
                }
                Ok(())
            }
            None if self.text.is_empty() => Ok(()),
            None => {
                out.write_all(self.text.as_bytes())?;
                if !self.text.ends_with('\n') {
                    out.write_all(b"\n")?;
                }
                Ok(())
            }
        }
    }

    /// Text mode: the marker line (if any) followed by the text.
    pub fn render(&self) -> String {
        match self.marker() {
            Some(m) if self.text.is_empty() => m,
            Some(m) => format!("{m}\n{}", self.text),
            None => self.text.clone(),
        }
    }
}

pub fn line_count(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        newlines(text.as_bytes()) + 1
    }
}

/// The newlines in `b`. A byte sum over blocks short enough that it cannot wrap is what
/// the compiler turns into whole-register compares and adds (about 14 GB/s measured); a
/// plain filter and count, or a hand-made per-lane counter, does not vectorise and runs
/// at a tenth of that, a visible share of a long capture's own CPU.
fn newlines(b: &[u8]) -> usize {
    b.chunks(255)
        .map(|block| usize::from(block.iter().map(|&c| u8::from(c == b'\n')).sum::<u8>()))
        .sum()
}

/// [`text_of`] of a borrowed slice: validated first, since the lossy decoder walks a
/// valid text a byte at a time (several times slower on a long history).
fn text_of_slice(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(b).into_owned(),
    }
}

/// Text from bytes, without a copy when they are UTF-8 (as tmux's output almost always
/// is); otherwise with U+FFFD for what is not. True when the text is the bytes unchanged.
fn text_of(b: Vec<u8>) -> (String, bool) {
    match String::from_utf8(b) {
        Ok(s) => (s, true),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), false),
    }
}

/// [`bound`] of `raw`'s text without its trailing blank lines ([`trim_trailing_blank`]),
/// taking `raw`: text that fits is kept where it is, not copied (a whole scrollback can be
/// megabytes).
pub fn bound_trimmed(raw: Vec<u8>, max: usize) -> Bounded {
    bound_owned(raw, max).0
}

/// [`bound_trimmed`], and whether the text is a prefix of `raw` byte for byte (nothing
/// cut from its front, nothing replaced): then a copy of `raw` made elsewhere holds it
/// without being compared.
pub fn bound_owned(mut raw: Vec<u8>, max: usize) -> (Bounded, bool) {
    let len = trim_trailing_blank(&raw).len();
    raw.truncate(len);
    if raw.len() <= max {
        let (text, exact) = text_of(raw);
        let b = Bounded {
            text,
            truncated: false,
            dropped: 0,
            dropped_at_least: false,
        };
        return (b, exact);
    }
    let cut = cut_point(&raw, raw.len() - max);
    raw.drain(..cut);
    let b = Bounded {
        text: text_of(raw).0,
        truncated: true,
        dropped: cut,
        dropped_at_least: false,
    };
    (b, false)
}

/// Keep the most recent `max` bytes of `b` (see the module invariants).
pub fn bound(b: &[u8], max: usize) -> Bounded {
    if b.len() <= max {
        return Bounded {
            text: text_of_slice(b),
            truncated: false,
            dropped: 0,
            dropped_at_least: false,
        };
    }
    let cut = cut_point(b, b.len() - max);
    Bounded {
        text: text_of_slice(&b[cut..]),
        truncated: true,
        dropped: cut,
        dropped_at_least: false,
    }
}

/// The first safe start at or after `min`: a line start if one is left, else a character
/// boundary outside any escape sequence of the last line.
fn cut_point(b: &[u8], min: usize) -> usize {
    // A line starts at `min` itself when the byte before it is a newline.
    if let Some(i) = b[min - 1..].iter().position(|&c| c == b'\n') {
        let p = min + i;
        if p < b.len() {
            return p;
        }
    }
    let mut p = min;
    while p < b.len() && (b[p] & 0xc0) == 0x80 {
        p += 1;
    }
    let line_start = b[..p]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    let mut i = line_start;
    while i < p {
        if b[i] == 0x1b {
            let end = escape_end(b, i);
            if end > p {
                return end;
            }
            i = end;
        } else {
            i += 1;
        }
    }
    p
}

#[cfg(test)]
mod tests {
    #[test]
    fn newlines_are_counted_in_every_block_and_remainder() {
        for len in [0, 1, 254, 255, 256, 509, 510, 511, 8160, 20_000, 70_001] {
            for every in [1, 2, 7, 83, 100_000] {
                let b: Vec<u8> = (0..len)
                    // Bytes next to a newline's in every bit (0x0b, 0x8a, 0x0e) and UTF-8.
                    .map(|i| match i % every {
                        0 => b'\n',
                        r => [b'x', 0x0b, 0x8a, 0x0e, 0xc3, 0xa9, 0xff, 0][r % 8],
                    })
                    .collect();
                let want = b.iter().filter(|&&c| c == b'\n').count();
                assert_eq!(newlines(&b), want, "len {len} every {every}");
            }
        }
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("a"), 1);
        assert_eq!(line_count("a\nb\n"), 3);
    }

    use super::*;

    #[test]
    fn lines_are_counted_as_split_counts_them_and_bad_utf8_is_replaced() {
        for t in ["", "a", "a\n", "\n", "a\nb", "\n\n\n", "é\n😀\nx"] {
            let want = if t.is_empty() {
                0
            } else {
                t.split('\n').count()
            };
            assert_eq!(line_count(t), want, "{t:?}");
        }
        let b = bound(b"ok \xff\xfe end", 100);
        assert_eq!(b.text, "ok \u{fffd}\u{fffd} end");
        let b = bound(b"cut \xff\nkept \xe2\x82", 8);
        assert_eq!(b.text, "kept \u{fffd}");
    }

    #[test]
    fn keeps_whole_text_within_budget() {
        let b = bound(b"a\nb", 3);
        assert_eq!(b.text, "a\nb");
        assert!(!b.truncated);
    }

    #[test]
    fn the_owning_bound_gives_what_the_borrowing_one_gives() {
        let inputs: [&[u8]; 6] = [
            b"a\nb\n\n   \n",
            "ééé\n日本\nxy\n\n".as_bytes(),
            b"\x1b[31mred\x1b[0m\nplain\n",
            b"not utf8 \xff\xfe here\nand more\n",
            b"",
            b"\n\n\n",
        ];
        for raw in inputs {
            for max in [0, 1, 3, 7, 10, 100] {
                let a = bound(trim_trailing_blank(raw), max);
                let b = bound_trimmed(raw.to_vec(), max);
                assert_eq!(
                    (a.text, a.truncated, a.dropped),
                    (b.text, b.truncated, b.dropped),
                    "{raw:?} {max}"
                );
            }
        }
        let b = bound(b"x\ny", 2);
        let mut out = Vec::new();
        b.write_line(&mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), format!("{}\n", b.render()));
    }

    #[test]
    fn cuts_on_line_boundary() {
        let b = bound("ééé\n日本\nxy".as_bytes(), 10);
        assert_eq!(b.text, "日本\nxy");
        assert!(b.truncated);
        assert_eq!(b.dropped, "ééé\n".len());
        assert_eq!(b.render(), "[... 7 earlier bytes truncated ...]\n日本\nxy");
    }

    #[test]
    fn long_last_line_cuts_on_char_boundary() {
        let b = bound("日本日本".as_bytes(), 7);
        assert_eq!(b.text, "日本");
        let b = bound("éééé".as_bytes(), 3);
        assert_eq!(b.text, "é");
    }

    #[test]
    fn never_inside_an_escape() {
        let s = b"\x1b[31mred\x1b[0m";
        for max in 1..s.len() {
            let t = bound(s, max).text;
            assert!(!t.starts_with(['[', '3', '1', '0', 'm']), "{max}: {t:?}");
        }
    }

    #[test]
    fn trims_blank_bottom() {
        assert_eq!(trim_trailing_blank(b"a\n\x1b[39m\n \n\n"), b"a");
        assert_eq!(trim_trailing_blank(b"\n\n"), b"");
        assert_eq!(trim_trailing_blank(b"a\n\nb\n"), b"a\n\nb");
    }

    #[test]
    fn budget_rules() {
        assert_eq!(budget_from(None, "").unwrap(), DEFAULT_MAX_BYTES);
        assert_eq!(budget_from(None, "42\n").unwrap(), 42);
        assert_eq!(budget_from(Some(7), "junk").unwrap(), 7);
        assert!(budget_from(None, "junk").is_err());
        assert_eq!(
            budget_from(Some(0), "").unwrap_err().kind,
            crate::error::Kind::Usage
        );
    }
}
