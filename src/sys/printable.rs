//! Text from a pane, a file, a host or a model made safe to show on a terminal or to a
//! model: ESC, the other C0 controls but tab and newline, DEL and the C1 controls become
//! visible stand-ins, so nothing in it can move a cursor, clear a screen, set a clipboard
//! (OSC 52) or end a bracketed paste. Invariant: printable text, tabs and newlines pass
//! unchanged. `clip` makes one short line of a text for a listing (no control characters
//! at all, whitespace collapsed).

/// Replace ESC and C0 controls (but tab and newline) with visible control pictures;
/// CRLF and lone CR become newline. Returns the text and how many characters changed.
pub fn visible(text: &str) -> (String, usize) {
    let text = text.replace("\r\n", "\n");
    let mut out = String::with_capacity(text.len());
    let mut changed = 0;
    for c in text.chars() {
        match c {
            '\t' | '\n' => out.push(c),
            '\r' => {
                out.push('\n');
                changed += 1;
            }
            c if (c as u32) < 0x20 => {
                out.push(char::from_u32(0x2400 + c as u32).unwrap_or('?'));
                changed += 1;
            }
            '\u{7f}' => {
                out.push('\u{2421}');
                changed += 1;
            }
            // C1 controls (U+0080..U+009F) include single-character CSI.
            c if ('\u{80}'..='\u{9f}').contains(&c) => {
                out.push('\u{fffd}');
                changed += 1;
            }
            c => out.push(c),
        }
    }
    (out, changed)
}

/// Collapse whitespace, drop control characters, cut at `max` chars with a visible `…`.
/// Stops scanning once the bound is reached, so a megabyte of text costs `max` steps.
pub fn clip(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max * 4 + 4));
    let mut n = 0;
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if c.is_control() {
            continue;
        }
        let need = if space { 2 } else { 1 };
        if n + need > max {
            out.push('…');
            return out;
        }
        if space {
            out.push(' ');
            n += 1;
            space = false;
        }
        out.push(c);
        n += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn controls_become_visible_and_text_stays() {
        let (t, n) = super::visible("ok\ttab\nnew \x1b]52;c;eA==\x07 \x1b[2J \u{9b}x \x7f\r\n");
        assert_eq!(
            t,
            "ok\ttab\nnew \u{241b}]52;c;eA==\u{2407} \u{241b}[2J \u{fffd}x \u{2421}\n"
        );
        assert_eq!(n, 5);
    }
}
