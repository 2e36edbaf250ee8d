//! A string written as a JSON string literal, byte for byte what `serde_json` writes
//! (`\"`, `\\`, `\b \f \n \r \t`, `\u00xx` for the other controls, everything else as
//! is), for texts of megabytes: a whole-history capture is escaped once, into a buffer
//! sized for it, eight bytes tested at a time, runs copied whole.
//!
//! Also how long a text is once escaped (`tail_within`: the newest part of a text that
//! fits a size, for an answer that must stay under a client's bound).
//!
//! Invariants: the output parses back to the input (a unit test compares with
//! `serde_json` on every byte that needs escaping); the lengths `tail_within` counts are
//! the bytes `push` writes (a unit test compares them).

/// `s` as a quoted JSON string, appended to `out`.
pub fn push(out: &mut String, s: &str) {
    let b = s.as_bytes();
    // Escapes grow a text little (a newline a line): one reserve, no regrowth.
    out.reserve(b.len() + b.len() / 32 + 2);
    out.push('"');
    let mut run = 0;
    let mut i = 0;
    while i < b.len() {
        if i + 8 <= b.len() {
            let w = u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
            if !needs_escape(w) {
                i += 8;
                continue;
            }
        }
        let c = b[i];
        if c < 0x20 || c == b'"' || c == b'\\' {
            // A run ends before an ASCII byte, so it ends on a char boundary.
            out.push_str(&s[run..i]);
            match c {
                b'"' => out.push_str("\\\""),
                b'\\' => out.push_str("\\\\"),
                b'\n' => out.push_str("\\n"),
                b'\r' => out.push_str("\\r"),
                b'\t' => out.push_str("\\t"),
                0x08 => out.push_str("\\b"),
                0x0c => out.push_str("\\f"),
                _ => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    out.push_str("\\u00");
                    out.push(HEX[(c >> 4) as usize] as char);
                    out.push(HEX[(c & 0xf) as usize] as char);
                }
            }
            run = i + 1;
        }
        i += 1;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

/// How many of the last bytes of `b` fit in `room` bytes once escaped (quotes aside): all
/// of `b` when it does, else a tail of it (its first byte may be inside a character; the
/// caller cuts at a line start within it). Escapes that `push` writes: six bytes for a
/// control other than `\b \f \n \r \t`, two for those and `"` `\`, one for the rest.
pub fn tail_within(b: &[u8], room: usize) -> usize {
    if b.len() <= room / 6 || escaped_len(b) <= room {
        return b.len();
    }
    let mut used = 0;
    for (n, &c) in b.iter().rev().enumerate() {
        used += cost(c);
        if used > room {
            return n;
        }
    }
    b.len()
}

/// What byte `c` is once escaped, in bytes.
fn cost(c: u8) -> usize {
    match c {
        b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
        0..0x20 => 6,
        _ => 1,
    }
}

/// `b` escaped, in bytes (quotes aside): eight bytes tested at a time, as `push` does
/// (a whole history is megabytes of which few bytes need escaping).
fn escaped_len(b: &[u8]) -> usize {
    let mut n = b.len();
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        if needs_escape(u64::from_le_bytes(w.try_into().unwrap_or([0; 8]))) {
            n += w.iter().map(|&c| cost(c) - 1).sum::<usize>();
        }
    }
    n + words
        .remainder()
        .iter()
        .map(|&c| cost(c) - 1)
        .sum::<usize>()
}

/// Whether any of the eight bytes is a control (< 0x20), `"` or `\`.
fn needs_escape(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    // A byte below 0x20 (a byte of 0x80 or more has its high bit set in `w` and is
    // masked out by `!w`).
    let below = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    below | zero(w ^ (ONES * b'"' as u64)) | zero(w ^ (ONES * b'\\' as u64)) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(s: &str) -> String {
        let mut o = String::new();
        push(&mut o, s);
        o
    }

    /// The tail `tail_within` gives escapes within the room, and one byte more would not.
    #[test]
    fn the_tail_that_fits_is_the_longest() {
        let text = format!("{}\u{1b}[1m\"q\"\\\té\n", "x".repeat(40)).repeat(20);
        let b = text.as_bytes();
        let escaped = |t: &[u8]| ours(&String::from_utf8_lossy(t)).len() - 2;
        assert_eq!(escaped_len(b), escaped(b));
        assert_eq!(tail_within(b, escaped(b)), b.len());
        for room in [0, 1, 5, 6, 7, 100, 333, escaped(b) - 1] {
            let n = tail_within(b, room);
            assert!(n < b.len(), "room {room}");
            // Whole characters only: a tail starting inside é is measured from its start.
            let at = (b.len() - n..b.len())
                .find(|&i| (b[i] & 0xc0) != 0x80)
                .unwrap_or(b.len());
            assert!(escaped(&b[at..]) <= room, "room {room}: {n}");
            assert!(
                escaped(&b[b.len() - n - 1..]) > room,
                "room {room}: {n} is not the longest"
            );
        }
    }

    #[test]
    fn every_byte_is_written_as_serde_json_writes_it() {
        let mut all = String::new();
        for c in 0u8..0x80 {
            all.push(c as char);
        }
        all.push_str("é€😀\u{7f}\u{80}\u{2028}");
        for s in [
            String::new(),
            all.clone(),
            all.repeat(3),
            format!("{}\n", "x".repeat(83)).repeat(50),
            "abcdefg\"".into(),
            "abcdefgh\\ijklmnop\u{1}".into(),
            "ééééé\nééé".into(),
        ] {
            assert_eq!(ours(&s), serde_json::to_string(&s).unwrap(), "{s:?}");
        }
        // Each escaped byte at each offset of a word.
        for c in [0u8, 0x1f, b'"', b'\\', b'\n'] {
            for at in 0..17 {
                let mut s = "a".repeat(17);
                s.replace_range(at..at + 1, &(c as char).to_string());
                assert_eq!(ours(&s), serde_json::to_string(&s).unwrap(), "{s:?}");
            }
        }
    }
}
