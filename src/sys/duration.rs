//! Timeouts as the command line and the MCP tools write them (`500ms`, `30s`, `2m`,
//! `1h`), and which of a command's timeout spellings is in force.
//!
//! Invariant: a bare number is refused (which unit was meant is a guess), and so is
//! anything over a week or 0.

/// The longest timeout any command accepts (a week; `watch start`'s bound).
pub const MAX_TIMEOUT_MS: u64 = 7 * 24 * 60 * 60 * 1000;

/// A timeout: a positive whole number with a unit, `500ms`, `30s`, `2m` or `1h`, as
/// milliseconds. A bare number is refused: which unit was meant is a guess.
pub fn duration_ms(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let (num, unit) = t.split_at(digits);
    let scale = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "" if !num.is_empty() => {
            return Err(format!(
                "{s:?} has no unit: write it as {num}ms, {num}s, {num}m or {num}h"
            ));
        }
        _ => {
            return Err(format!(
                "{s:?} is not a duration: write a whole number with a unit, e.g. 500ms, 30s, 2m or 1h"
            ));
        }
    };
    let n: u64 = num.parse().map_err(|_| {
        format!(
            "{s:?} is not a duration: write a whole number with a unit, e.g. 500ms, 30s, 2m or 1h"
        )
    })?;
    match n.checked_mul(scale) {
        Some(0) => Err(format!("{s:?}: a timeout must be greater than 0")),
        Some(ms) if ms <= MAX_TIMEOUT_MS => Ok(ms),
        _ => Err(format!("{s:?} is longer than the maximum of 7 days (168h)")),
    }
}

/// The timeout in force: `--timeout` (ms), else the old hidden spelling (in its own unit
/// of `old_unit_ms`), else the default.
pub fn timeout_or(
    timeout: Option<u64>,
    old: Option<u64>,
    old_unit_ms: u64,
    default_ms: u64,
) -> u64 {
    timeout
        .or(old.map(|o| o.saturating_mul(old_unit_ms)))
        .unwrap_or(default_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_take_one_unit_scheme() {
        assert_eq!(duration_ms("500ms"), Ok(500));
        assert_eq!(duration_ms("30s"), Ok(30_000));
        assert_eq!(duration_ms("2m"), Ok(120_000));
        assert_eq!(duration_ms("1h"), Ok(3_600_000));
        assert_eq!(duration_ms("168h"), Ok(MAX_TIMEOUT_MS));
        for bad in [
            "30",
            "",
            "s",
            "1.5s",
            "-1s",
            "2 m",
            "1d",
            "0s",
            "169h",
            "99999999999999999999ms",
        ] {
            assert!(duration_ms(bad).is_err(), "{bad:?} accepted");
        }
        assert!(
            duration_ms("30").unwrap_err().contains("30s"),
            "names the fix"
        );
        assert_eq!(timeout_or(Some(5), Some(7), 1000, 9), 5);
        assert_eq!(timeout_or(None, Some(7), 1000, 9), 7000);
        assert_eq!(timeout_or(None, None, 1000, 9), 9);
    }
}
