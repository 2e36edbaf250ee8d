//! Robust multi-field tmux output.
//!
//! Owns: building `-F` formats whose every field is length-prefixed (`#{n:f}:#{f}`) and
//! parsing them back. Invariant: a field may hold any byte except NUL (tab, newline, the
//! separator, quotes, `#{`), and is either read back intact or the whole record is
//! refused as `BadOutput`; nothing is ever mis-split.

/// The window's layout on its active pane's row only (empty on the others): a layout is
/// as long as the window's pane list, and repeating it on every pane made a 200-pane
/// listing megabytes. Callers that show layouts take it from the window's active row.
pub const ACTIVE_LAYOUT: &str = "?pane_active,#{window_layout},";

/// Fields tmux itself generates from a fixed alphabet (ids, numbers, flags, tty paths, the
/// layout string, mode names): none can hold `|`. They are framed as `=<value>|` so tmux
/// expands them once; the length prefix makes tmux expand a field twice, which on a
/// 500-pane server is most of a listing's cost.
const SAFE: &[&str] = &[
    "session_id",
    "session_attached",
    "window_id",
    "window_index",
    "window_active",
    "window_layout",
    ACTIVE_LAYOUT,
    "pane_id",
    "pane_index",
    "pane_active",
    "pane_tty",
    "pane_pid",
    "pane_width",
    "pane_height",
    "pane_dead",
    "pane_in_mode",
    "pane_mode",
    "history_size",
];

/// A format that prints each field as `<bytelen>:<value>` (or `=<value>|` for the fields
/// in `SAFE`; not `;`, which tmux's command line eats at the end of an argument); the
/// record ends with `\n`.
pub fn record_format(fields: &[&str]) -> String {
    let mut s = String::new();
    for f in fields {
        if SAFE.contains(f) {
            s.push_str("=#{");
            s.push_str(f);
            s.push_str("}|");
            continue;
        }
        s.push_str("#{n:");
        s.push_str(f);
        s.push_str("}:#{");
        s.push_str(f);
        s.push('}');
    }
    s
}

/// Parse output of `record_format(fields)` into records of exactly `n` fields.
pub fn parse_records(out: &[u8], n: usize) -> Result<Vec<Vec<String>>, String> {
    let mut records = Vec::new();
    let mut i = 0;
    while i < out.len() {
        records.push(parse_record(out, &mut i, n, records.len())?);
    }
    Ok(records)
}

/// Parse the output of several `-F` formats in one command list, each format being
/// `<tag>` + `record_format(fields)` with its own one-byte tag: `(tag, fields)` per
/// record, in output order. `kinds` gives each tag's field count; an unknown tag, like a
/// malformed record, refuses the whole output.
pub fn parse_tagged(out: &[u8], kinds: &[(u8, usize)]) -> Result<Vec<(u8, Vec<String>)>, String> {
    let mut records = Vec::new();
    let mut i = 0;
    while i < out.len() {
        let tag = out[i];
        let n = kinds
            .iter()
            .find(|k| k.0 == tag)
            .map(|k| k.1)
            .ok_or_else(|| format!("record {}: unknown record tag", records.len()))?;
        i += 1;
        let rec = parse_record(out, &mut i, n, records.len())?;
        records.push((tag, rec));
    }
    Ok(records)
}

/// One record of `n` fields starting at `*i` (record number `at`, for messages), with
/// its end of line; `*i` ends past it.
fn parse_record(out: &[u8], i: &mut usize, n: usize, at: usize) -> Result<Vec<String>, String> {
    let mut rec = Vec::with_capacity(n);
    for _ in 0..n {
        if out.get(*i) == Some(&b'=') {
            let end = out[*i + 1..]
                .iter()
                .position(|&b| b == b'|' || b == b'\n')
                .map(|p| p + *i + 1)
                .filter(|&e| out[e] == b'|')
                .ok_or_else(|| format!("record {at}: unterminated field"))?;
            rec.push(String::from_utf8_lossy(&out[*i + 1..end]).into_owned());
            *i = end + 1;
            continue;
        }
        let start = *i;
        while *i < out.len() && out[*i].is_ascii_digit() {
            *i += 1;
        }
        if *i == start || *i >= out.len() || out[*i] != b':' {
            return Err(format!("record {at}: missing length prefix"));
        }
        let len: usize = std::str::from_utf8(&out[start..*i])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| "bad length".to_string())?;
        *i += 1;
        if *i + len > out.len() {
            return Err(format!("record {at}: field runs past the end"));
        }
        rec.push(String::from_utf8_lossy(&out[*i..*i + len]).into_owned());
        *i += len;
    }
    if *i < out.len() && out[*i] != b'\n' {
        return Err(format!("record {at}: trailing bytes"));
    }
    *i += 1;
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_hostile_fields() {
        let out = "3:a\tb1:x\n6:\n:{#}\"0:\n".as_bytes();
        let r = parse_records(out, 2).unwrap();
        assert_eq!(r[0], vec!["a\tb", "x"]);
        assert_eq!(r[1], vec!["\n:{#}\"", ""]);
        assert!(parse_records(b"5:ab\n", 1).is_err());
        assert!(parse_records(b"x:ab\n", 1).is_err());
        assert!(parse_records(b"2:ab3:abc\n", 1).is_err());
    }

    #[test]
    fn builds_format() {
        assert_eq!(
            record_format(&["pane_id", "@x"]),
            "=#{pane_id}|#{n:@x}:#{@x}"
        );
    }

    #[test]
    fn mixed_framing() {
        let r = parse_records(b"=%3|5:a|b\nc=80x24,0,0,1|\n", 3).unwrap();
        assert_eq!(r[0], vec!["%3", "a|b\nc", "80x24,0,0,1"]);
        assert!(parse_records(b"=%3\n", 1).is_err());
        assert!(parse_records(b"=%3", 1).is_err());
    }

    #[test]
    fn tagged_records_keep_their_kind_and_order() {
        let r = parse_tagged(b"W=@1|3:a\nb\nP=%3|\nP=%4|\n", &[(b'W', 2), (b'P', 1)]).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r[0], (b'W', vec!["@1".to_string(), "a\nb".to_string()]));
        assert_eq!(r[2], (b'P', vec!["%4".to_string()]));
        // An unknown tag or a record of the wrong width refuses the whole output.
        assert!(parse_tagged(b"X=%3|\n", &[(b'P', 1)]).is_err());
        assert!(parse_tagged(b"P=%3|=x|\n", &[(b'P', 1)]).is_err());
    }
}
