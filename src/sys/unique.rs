//! Names no other call can get: run and job ids, temp-file and probe names.
//!
//! Owns the one way this binary makes a name that must differ between two calls, in one
//! process (an MCP server runs tool calls on several threads at once) or in two.
//!
//! Invariants: a token is the time in milliseconds (base 36, fixed width), the process id
//! (base 36, fixed width) and a per-process counter (base 36): the fixed widths keep the
//! concatenation unambiguous, the counter separates calls of one millisecond in one
//! process. Only `0-9a-z`, at most 22 characters, so a token is safe in file names, tmux
//! option and buffer names and formats. A token is a hint, not a lock: whoever creates a
//! file or directory by it still creates it exclusively and takes another token on
//! `EEXIST` (a pid can be reused, a clock can step back).

use std::sync::atomic::{AtomicU64, Ordering};

const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";

static SEQ: AtomicU64 = AtomicU64::new(0);

/// `n` in base 36, at least `width` digits (zero-padded).
pub fn base36(mut n: u64, width: usize) -> String {
    let mut v = Vec::new();
    loop {
        v.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    while v.len() < width {
        v.push(b'0');
    }
    v.reverse();
    String::from_utf8(v).unwrap_or_default()
}

/// A fresh token (see the module docs).
pub fn token() -> String {
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    // 36^9 ms reach the year 5000; 36^5 is above Linux's largest pid (2^22).
    format!(
        "{}{}{}",
        base36(crate::sys::time::now_ms(), 9),
        base36(std::process::id() as u64, 5),
        base36(seq, 1)
    )
}

/// Try `make` with fresh tokens until it does not fail with `AlreadyExists` (at most a
/// few times: a collision needs a reused pid and a repeated millisecond).
pub fn create_with<T>(
    mut make: impl FnMut(&str) -> std::io::Result<T>,
) -> std::io::Result<(String, T)> {
    let mut last = None;
    for _ in 0..8 {
        let t = token();
        match make(&t) {
            Ok(v) => return Ok((t, v)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no fresh name")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn tokens_of_many_threads_at_once_are_all_different() {
        let all: Vec<String> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..16)
                .map(|_| s.spawn(|| (0..2000).map(|_| token()).collect::<Vec<_>>()))
                .collect();
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let set: HashSet<&String> = all.iter().collect();
        assert_eq!(set.len(), all.len());
        for t in &all {
            assert!(t.len() <= 22, "{t}");
            assert!(
                t.bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
            );
        }
    }

    #[test]
    fn base36_pads_to_its_width() {
        assert_eq!(base36(0, 3), "000");
        assert_eq!(base36(35, 1), "z");
        assert_eq!(base36(36, 1), "10");
        assert_eq!(base36(u64::MAX, 1).len(), 13);
    }

    #[test]
    fn create_with_takes_a_new_token_on_eexist() {
        let mut seen = Vec::new();
        let (t, ()) = create_with(|t| {
            seen.push(t.to_string());
            if seen.len() < 3 {
                Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists))
            } else {
                Ok(())
            }
        })
        .unwrap();
        assert_eq!(seen.len(), 3);
        assert_eq!(&t, seen.last().unwrap());
        assert!(create_with(|_| Err::<(), _>(std::io::Error::other("x"))).is_err());
    }
}
