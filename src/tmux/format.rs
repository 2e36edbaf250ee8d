//! Robust multi-field tmux output.
//!
//! Owns: building `-F` formats whose every field is length-prefixed (`#{n:f}:#{f}`) and
//! parsing them back. Invariant: a field may hold any byte except NUL (tab, newline, the
//! separator, quotes, `#{`), and is either read back intact or the whole record is
//! refused as `BadOutput`; nothing is ever mis-split.

/// A format that prints each field as `<bytelen>:<value>`, and the record ends with `\n`.
pub fn record_format(fields: &[&str]) -> String {
    let mut s = String::new();
    for f in fields {
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
        let mut rec = Vec::with_capacity(n);
        for _ in 0..n {
            let start = i;
            while i < out.len() && out[i].is_ascii_digit() {
                i += 1;
            }
            if i == start || i >= out.len() || out[i] != b':' {
                return Err(format!("record {}: missing length prefix", records.len()));
            }
            let len: usize = std::str::from_utf8(&out[start..i])
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| "bad length".to_string())?;
            i += 1;
            if i + len > out.len() {
                return Err(format!("record {}: field runs past the end", records.len()));
            }
            rec.push(String::from_utf8_lossy(&out[i..i + len]).into_owned());
            i += len;
        }
        if i < out.len() && out[i] != b'\n' {
            return Err(format!("record {}: trailing bytes", records.len()));
        }
        i += 1;
        records.push(rec);
    }
    Ok(records)
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
            "#{n:pane_id}:#{pane_id}#{n:@x}:#{@x}"
        );
    }
}
