//! tmux version parsing and the minimum-version gate.
//!
//! Owns: reading `tmux -V` (`tmux 3.3a`, `tmux next-3.8`, `tmux master`, `tmux 3.2-rc2`)
//! into a comparable value, and a cache keyed by the tmux binary's path, size and mtime so
//! the hot per-turn path does not pay a second spawn. Invariant: `master` and `next-X`
//! compare newer than any release; anything unparsable is treated as too old.

use std::path::PathBuf;

use std::time::Duration;

use super::error::TmuxError;
use super::remote::Remote;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    /// 0 for `3.3`, 1 for `3.3a`, 2 for `3.3b`…
    pub patch: u32,
}

pub const MINIMUM: Version = Version {
    major: 3,
    minor: 2,
    patch: 0,
};

/// Parse the output of `tmux -V`.
pub fn parse(text: &str) -> Option<Version> {
    let word = text.split_whitespace().nth(1)?;
    if word == "master" {
        return Some(Version {
            major: u32::MAX,
            minor: 0,
            patch: 0,
        });
    }
    let word = word.strip_prefix("next-").unwrap_or(word);
    let word = word.split('-').next()?;
    let (major, rest) = word.split_once('.')?;
    let major: u32 = major.parse().ok()?;
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let minor: u32 = digits.parse().ok()?;
    let suffix = &rest[digits.len()..];
    let patch = match suffix.chars().next() {
        Some(c) if c.is_ascii_lowercase() => (c as u32) - ('a' as u32) + 1,
        _ => 0,
    };
    Some(Version {
        major,
        minor,
        patch,
    })
}

/// Check that tmux exists and is new enough. Cached per binary identity in the state dir.
pub fn check(program: &str, timeout: Duration) -> Result<(), TmuxError> {
    found(program, timeout).and_then(|(_, text)| gate(&text))
}

/// What `tmuxmate --version` says of tmux: its `-V` text and path, or why none was found.
pub fn described(program: &str, timeout: Duration) -> String {
    match found(program, timeout) {
        Ok((path, text)) => format!("{text} ({})", path.display()),
        Err(e) => format!("tmux: {e}"),
    }
}

/// The tmux binary and its `tmux -V` text (cached like [`check`]), for `--version` and doctor.
pub fn found(program: &str, timeout: Duration) -> Result<(PathBuf, String), TmuxError> {
    let Some(bin) = crate::sys::which::which(program) else {
        return Err(TmuxError::NotInstalled {
            program: program.to_string(),
        });
    };
    let key = std::fs::metadata(&bin).ok().map(|m| {
        use std::os::unix::fs::MetadataExt;
        format!("{}\t{}\t{}", bin.display(), m.size(), m.mtime())
    });
    let cache = crate::sys::state::state_dir().join("tmux-version");
    if let (Some(key), Ok(text)) = (&key, std::fs::read_to_string(&cache))
        && let Some((k, v)) = text.rsplit_once('\n')
        && k == key
    {
        return Ok((bin, v.to_string()));
    }
    // `-V` needs no server and no socket flags.
    let mut cmd = crate::sys::process::command(&bin);
    cmd.arg("-V");
    let argv = || vec![bin.display().to_string(), "-V".into()];
    let out = match crate::sys::process::run(cmd, None, timeout) {
        Ok(out) => out,
        Err(crate::sys::process::Failure::TimedOut) => {
            return Err(TmuxError::Timeout {
                argv: argv(),
                after: timeout,
            });
        }
        Err(e) => {
            return Err(TmuxError::Spawn {
                argv: argv(),
                reason: e.to_string(),
            });
        }
    };
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if let Some(key) = key {
        let _ = crate::sys::state::write_atomic(&cache, format!("{key}\n{text}").as_bytes());
    }
    Ok((bin, text))
}

/// How long a remote host's `tmux -V` answer is trusted (the binary there can change
/// without our seeing its mtime; asking on every call would double the cost of a call).
const REMOTE_TTL_MS: u64 = 10 * 60 * 1000;

/// The same gate for a server on another host: `tmux -V` over the connection, cached per
/// host in the state dir for [`REMOTE_TTL_MS`]. A missing tmux there is reported by the
/// transport ([`TmuxError::RemoteNoTmux`]).
/// `ask` runs `tmux -V` (`program`) on the host over the connection.
pub fn check_remote(
    r: &Remote,
    program: &str,
    ask: impl FnOnce() -> Result<String, TmuxError>,
) -> Result<(), TmuxError> {
    let host = r.host.to_string();
    let key = format!("{host}\t{program}");
    let cache = crate::sys::state::state_dir().join("ssh-tmux-versions");
    let cached = || {
        let now = crate::sys::state::now_ms();
        let text = std::fs::read_to_string(&cache).unwrap_or_default();
        let found = text.lines().find_map(|l| {
            let mut f = l.splitn(3, '\t');
            let (h, p, rest) = (f.next()?, f.next()?, f.next()?);
            let (at, v) = rest.split_once('\t')?;
            (format!("{h}\t{p}") == key && now.saturating_sub(at.parse().ok()?) < REMOTE_TTL_MS)
                .then(|| v.to_string())
        });
        (found, text, now)
    };
    let v = match cached().0 {
        Some(v) => v,
        // Cold: one process asks, the others (20 calls at once) wait for its answer.
        None => r.exclusive("version", || {
            let (found, text, now) = cached();
            if let Some(v) = found {
                return Ok(v);
            }
            let v = ask()?.trim().to_string();
            let mut lines: Vec<&str> = text
                .lines()
                .filter(|l| !l.starts_with(&format!("{key}\t")))
                .collect();
            let mine = format!("{key}\t{now}\t{v}");
            lines.push(&mine);
            let _ = crate::sys::state::write_atomic(
                &cache,
                format!("{}\n", lines.join("\n")).as_bytes(),
            );
            Ok(v)
        })?,
    };
    gate(&v).map_err(|_| TmuxError::RemoteTooOld { host, found: v })
}

fn gate(text: &str) -> Result<(), TmuxError> {
    match parse(text) {
        Some(v) if v >= MINIMUM => Ok(()),
        _ => Err(TmuxError::TooOld {
            found: text.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_versions() {
        assert_eq!(
            parse("tmux 3.3a"),
            Some(Version {
                major: 3,
                minor: 3,
                patch: 1
            })
        );
        assert!(parse("tmux 3.2").unwrap() >= MINIMUM);
        assert!(parse("tmux 3.1c").unwrap() < MINIMUM);
        assert!(parse("tmux next-3.8").unwrap() > parse("tmux 3.7c").unwrap());
        assert!(parse("tmux master").unwrap() > parse("tmux 9.9").unwrap());
        assert!(parse("tmux 3.2-rc2").unwrap() >= MINIMUM);
        assert_eq!(parse("garbage"), None);
        assert!(gate("tmux 2.9").is_err());
        assert!(gate("tmux 3.3a").is_ok());
    }
}
