//! tmux version parsing and the minimum-version gate.
//!
//! Owns: reading `tmux -V` (`tmux 3.3a`, `tmux next-3.8`, `tmux master`, `tmux 3.2-rc2`)
//! into a comparable value, and a cache keyed by the tmux binary's path, size and mtime so
//! the hot per-turn path does not pay a second spawn. Invariant: `master` and `next-X`
//! compare newer than any release; anything unparsable is treated as too old.

use std::path::PathBuf;

use std::time::Duration;

use super::error::TmuxError;
use super::transport::ssh::Remote;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    /// 0 for `3.3`, 1 for `3.3a`, 2 for `3.3b`…
    pub patch: u32,
}

impl Version {
    /// Setting a session's `history-limit` changes its existing panes too (3.7 and later;
    /// earlier releases apply it to panes created after). docs/tmux-versions.md.
    pub fn history_limit_applies_to_existing_panes(self) -> bool {
        (self.major, self.minor) >= (3, 7)
    }

    /// What a command prints for a client has each `$` that starts a variable name
    /// written `\$` (3.4 only: 3.5 escapes it only inside double quotes).
    pub fn escapes_dollar_in_printed_output(self) -> bool {
        (self.major, self.minor) == (3, 4)
    }

    /// `display-message -c` takes a client name (3.3 and later: 3.2 parses `-c` as a flag
    /// with no value, so the name becomes the message and the call fails).
    /// docs/tmux-versions.md.
    pub fn message_names_its_client(self) -> bool {
        (self.major, self.minor) >= (3, 3)
    }

    /// `display-popup -T` (a title) exists (3.3 and later; 3.2 refuses the command).
    pub fn popup_has_title(self) -> bool {
        (self.major, self.minor) >= (3, 3)
    }
}

pub const MINIMUM: Version = Version {
    major: 3,
    minor: 2,
    patch: 0,
};

/// The releases tmuxmate's suite runs against (CI builds each one; docs/tmux-versions.md):
/// the direct socket path is verified for exactly these (`super::transport::direct::Wire`).
pub const TESTED: [&str; 6] = ["3.2a", "3.3a", "3.4", "3.5a", "3.6b", "3.7c"];

/// Whether a `tmux -V` text names one of [`TESTED`] exactly.
pub fn is_tested(text: &str) -> bool {
    let mut words = text.split_whitespace();
    words.next() == Some("tmux")
        && words.next().is_some_and(|v| TESTED.contains(&v))
        && words.next().is_none()
}

/// The running server's tmux version, when it can be read.
pub fn of_server(tmux: &super::Tmux) -> Option<Version> {
    tmux.run(&["display-message", "-p", "#{version}"])
        .ok()
        .and_then(|v| parse(&format!("tmux {}", v.trim())))
}

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
/// Its `tmux -V` text when it passes.
pub fn check(program: &str, timeout: Duration) -> Result<String, TmuxError> {
    found(program, timeout).and_then(|(_, text)| gate(&text).map(|()| text))
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

/// Undo [`Version::escapes_dollar_in_printed_output`]: `\$` before a letter, `_` or `{`
/// becomes `$`; every other byte stays.
pub fn undo_dollar_escapes(out: &[u8]) -> Vec<u8> {
    let mut r = Vec::with_capacity(out.len());
    let mut i = 0;
    while i < out.len() {
        if out[i] == b'\\'
            && out.get(i + 1) == Some(&b'$')
            && out
                .get(i + 2)
                .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_' || c == b'{')
        {
            i += 1;
            continue;
        }
        r.push(out[i]);
        i += 1;
    }
    r
}

/// How many server binaries [`of_binary`] remembers.
const BINARIES_KEPT: usize = 8;

/// The `tmux -V` text of the binary `exe` (a running server's `/proc/<pid>/exe`, whose
/// metadata is `m`), asked once per file identity (device, inode, size, mtime) and kept
/// in memory and in the state dir, newest first. `None` when it does not answer.
pub fn of_binary(
    exe: &std::path::Path,
    m: &std::fs::Metadata,
    timeout: Duration,
) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    use std::sync::Mutex;
    static SEEN: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
    let key = format!("{}:{}:{}:{}", m.dev(), m.ino(), m.size(), m.mtime());
    if let Ok(seen) = SEEN.lock()
        && let Some((_, v)) = seen.iter().find(|(k, _)| *k == key)
    {
        return Some(v.clone());
    }
    let cache = crate::sys::state::state_dir().join("tmux-server-versions");
    let text = crate::sys::state::read_small(&cache, 4096).unwrap_or_default();
    let found = text.lines().find_map(|l| {
        let (k, v) = l.split_once('\t')?;
        (k == key).then(|| v.to_string())
    });
    let v = match found {
        Some(v) => v,
        None => {
            use std::os::unix::process::CommandExt;
            let mut cmd = crate::sys::process::command(exe);
            // tmux prints its argv[0]'s name before the release ("exe 3.3a" otherwise).
            cmd.arg0("tmux").arg("-V");
            let out = crate::sys::process::run(cmd, None, timeout).ok()?;
            let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if !out.status.success() || v.is_empty() || v.contains('\n') {
                return None;
            }
            let mut lines = vec![format!("{key}\t{v}")];
            lines.extend(
                text.lines()
                    .filter(|l| !l.starts_with(&format!("{key}\t")))
                    .take(BINARIES_KEPT - 1)
                    .map(str::to_string),
            );
            let _ = crate::sys::state::write_atomic(
                &cache,
                format!("{}\n", lines.join("\n")).as_bytes(),
            );
            v
        }
    };
    if let Ok(mut seen) = SEEN.lock() {
        seen.push((key, v.clone()));
    }
    Some(v)
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
) -> Result<String, TmuxError> {
    let host = r.host.to_string();
    let key = format!("{host}\t{program}");
    let cache = crate::sys::state::state_dir().join("ssh-tmux-versions");
    let cached = || {
        let now = crate::sys::time::now_ms();
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
    match gate(&v) {
        Ok(()) => Ok(v),
        Err(_) => Err(TmuxError::RemoteTooOld { host, found: v }),
    }
}

/// The version gate on a `tmux -V` text: `MINIMUM` or newer passes.
pub fn gate(text: &str) -> Result<(), TmuxError> {
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

    #[test]
    fn the_dollar_escapes_of_3_4_come_off_exactly() {
        // Printed by tmux 3.4 for the values `A$ B$x \$x ${y} $_z $1` (traced).
        let printed = br"A$ B\$x \\$x \${y} \$_z $1";
        assert_eq!(
            undo_dollar_escapes(printed),
            br"A$ B$x \$x ${y} $_z $1".to_vec()
        );
        assert!(
            parse("tmux 3.4")
                .unwrap()
                .escapes_dollar_in_printed_output()
        );
        assert!(
            !parse("tmux 3.3a")
                .unwrap()
                .escapes_dollar_in_printed_output()
        );
        assert!(
            !parse("tmux 3.5a")
                .unwrap()
                .escapes_dollar_in_printed_output()
        );
    }

    #[test]
    fn each_gate_falls_between_the_releases_it_names() {
        let v = |t: &str| parse(&format!("tmux {t}")).unwrap();
        assert!(!v("3.6b").history_limit_applies_to_existing_panes());
        assert!(v("3.7").history_limit_applies_to_existing_panes());
        assert!(v("3.7c").history_limit_applies_to_existing_panes());
        assert!(v("next-3.8").history_limit_applies_to_existing_panes());
        assert!(!v("3.2a").popup_has_title());
        assert!(v("3.3").popup_has_title());
        assert!(v("3.7c").popup_has_title());
    }

    #[test]
    fn only_the_exact_releases_tested_are_tested() {
        for v in TESTED {
            assert!(is_tested(&format!("tmux {v}")), "{v}");
        }
        for other in [
            "tmux 3.6",
            "tmux 3.6a",
            "tmux 3.3",
            "tmux next-3.8",
            "tmux master",
            "tmux 3.7c x",
            "3.7c",
            "",
        ] {
            assert!(!is_tested(other), "{other}");
        }
    }
}
