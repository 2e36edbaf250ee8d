//! Timestamps in transcripts, and how the digest shows them.
//!
//! Owns: reading the timestamp shapes the wire formats use (RFC 3339 strings, epoch
//! milliseconds, epoch seconds) into epoch milliseconds, and formatting those as local
//! wall-clock time. Invariants: a timestamp that does not parse is `None`, never a panic
//! or a guess; formatting depends only on the stored time and the zone, never on "now".

use serde_json::Value;

/// Epoch ms from a JSON value: an RFC 3339 string, or a number (ms when it is larger
/// Milliseconds since the epoch (0 when the clock is before it).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// than 10^11, seconds otherwise).
pub fn from_value(v: &Value) -> Option<u64> {
    match v {
        Value::String(s) => parse_rfc3339(s),
        Value::Number(n) => from_number(n.as_f64()?),
        _ => None,
    }
}

pub fn from_number(f: f64) -> Option<u64> {
    if !f.is_finite() || f <= 0.0 {
        return None;
    }
    if f > 1e11 {
        Some(f as u64)
    } else {
        Some((f * 1000.0) as u64)
    }
}

fn digits(b: &[u8], i: usize, n: usize) -> Option<i64> {
    let s = b.get(i..i + n)?;
    let mut v = 0i64;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(c - b'0');
    }
    Some(v)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `2026-11-29T21:02:20.665Z` (or with `+hh:mm`, a space for `T`, no fraction) to ms.
pub fn parse_rfc3339(s: &str) -> Option<u64> {
    let b = s.trim().as_bytes();
    let (y, mo, d) = (digits(b, 0, 4)?, digits(b, 5, 2)?, digits(b, 8, 2)?);
    if b.get(4) != Some(&b'-')
        || b.get(7) != Some(&b'-')
        || !matches!(b.get(10), Some(b'T' | b't' | b' '))
    {
        return None;
    }
    let (h, mi, sec) = (digits(b, 11, 2)?, digits(b, 14, 2)?, digits(b, 17, 2)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut ms = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let mut scale = 100;
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            ms += i64::from(c - b'0') * scale;
            scale /= 10;
            i += 1;
        }
    }
    let offset = match b.get(i) {
        None | Some(b'Z' | b'z') => 0,
        Some(&sign @ (b'+' | b'-')) => {
            let oh = digits(b, i + 1, 2)?;
            let om = if b.get(i + 3) == Some(&b':') {
                digits(b, i + 4, 2)?
            } else {
                digits(b, i + 3, 2).unwrap_or(0)
            };
            let o = (oh * 60 + om) * 60;
            if sign == b'+' { o } else { -o }
        }
        _ => return None,
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offset;
    u64::try_from(secs * 1000 + ms).ok()
}

/// Local broken-down time (year, month, day, hour, minute, second).
fn local(ms: u64) -> Option<(i32, u32, u32, u32, u32, u32)> {
    let t = nix::libc::time_t::try_from(ms / 1000).ok()?;
    // SAFETY: `tm` is plain old data that localtime_r fully initialises on success; both
    // pointers are valid for the duration of the call and not aliased.
    let mut tm: nix::libc::tm = unsafe { std::mem::zeroed() };
    let r = unsafe { nix::libc::localtime_r(&t, &mut tm) };
    if r.is_null() {
        return None;
    }
    Some((
        tm.tm_year + 1900,
        (tm.tm_mon + 1) as u32,
        tm.tm_mday as u32,
        tm.tm_hour as u32,
        tm.tm_min as u32,
        tm.tm_sec as u32,
    ))
}

/// `14:02` in local time.
pub fn hhmm(ms: u64) -> String {
    match local(ms) {
        Some((_, _, _, h, m, _)) => format!("{h:02}:{m:02}"),
        None => "?".into(),
    }
}

/// `14:02:31` in local time.
pub fn hhmmss(ms: u64) -> String {
    match local(ms) {
        Some((_, _, _, h, m, s)) => format!("{h:02}:{m:02}:{s:02}"),
        None => "?".into(),
    }
}

/// `2026-11-29 14:02:31` in local time.
pub fn full(ms: u64) -> String {
    match local(ms) {
        Some((y, mo, d, h, m, s)) => format!("{y}-{mo:02}-{d:02} {h:02}:{m:02}:{s:02}"),
        None => "?".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_transcript_timestamps() {
        assert_eq!(
            parse_rfc3339("2026-11-29T21:02:20.665Z"),
            Some(1_795_986_140_665)
        );
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01Z"), Some(1000));
        assert_eq!(parse_rfc3339("1970-01-01T01:00:01+01:00"), Some(1000));
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.5"), Some(1500));
        assert_eq!(parse_rfc3339("garbage"), None);
        assert_eq!(parse_rfc3339("2026-13-01T00:00:00Z"), None);
        assert_eq!(parse_rfc3339(""), None);
        assert_eq!(from_number(1_795_986_154.0), Some(1_795_986_154_000));
        assert_eq!(from_number(1_795_986_154_893.0), Some(1_795_986_154_893));
        assert_eq!(from_number(-1.0), None);
    }
}
