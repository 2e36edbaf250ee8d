//! `tmuxmate remote install HOST`: this binary, copied to the host's tmuxmate place.
//!
//! Owns: the architecture check (the host's `uname -s`/`uname -m` against what this
//! binary was built for), the "already installed" check (SHA-256 of the file there
//! against ours), and the copy: the bytes go over the stdin of one remote command that
//! writes a temp file next to the target, checks its size (and hash where the host has
//! `sha256sum`), makes it 0755, runs it once, and only then renames it into place.
//! Invariants: a refused or failed install leaves nothing on the host (the temp file is
//! removed on every exit of the remote command); two calls, one master connection.

use std::time::Duration;

use serde::Serialize;

use super::call::{self, REL_PATH};
use crate::error::Error;
use crate::sys::shell;
use crate::tmux::transport::ssh::Remote;

/// The longest a copy may take (a large debug binary over a slow link).
const COPY_TIMEOUT: Duration = Duration::from_secs(600);
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Installed {
    pub host: String,
    pub path: String,
    pub installed: bool,
    pub already_installed: bool,
    pub bytes: u64,
    pub sha256: String,
    pub version: &'static str,
}

impl Installed {
    /// The line people read.
    pub fn line(&self) -> String {
        if self.already_installed {
            format!(
                "already installed: tmuxmate {} on {} is ~/{REL_PATH} with the same SHA-256 ({}); nothing copied",
                self.version,
                self.host,
                &self.sha256[..12]
            )
        } else {
            format!(
                "installed tmuxmate {} on {} as ~/{REL_PATH} ({} bytes, SHA-256 {}); watch, agent and side status/history/report now work with --host {}",
                self.version,
                self.host,
                self.bytes,
                &self.sha256[..12],
                self.host
            )
        }
    }
}

/// The OS name Rust uses for a `uname -s` answer.
fn os_of(uname_s: &str) -> String {
    match uname_s.trim().to_ascii_lowercase().as_str() {
        "darwin" => "macos".into(),
        other => other.to_string(),
    }
}

/// The architecture name Rust uses for a `uname -m` answer.
fn arch_of(uname_m: &str) -> String {
    match uname_m.trim() {
        "amd64" => "x86_64".into(),
        "arm64" | "aarch64_be" => "aarch64".into(),
        "i386" | "i486" | "i586" | "i686" => "x86".into(),
        m if m.starts_with("armv") => "arm".into(),
        m => m.to_string(),
    }
}

/// SHA-256 of a file: the system's `sha256sum` when there is one (ours is slow on a
/// 70 MB unoptimised build), else ours.
pub fn sha256_of(path: &std::path::Path, bytes: &[u8]) -> String {
    if let Some(p) = crate::sys::which::which("sha256sum") {
        let mut cmd = crate::sys::process::command(&p);
        cmd.arg("--").arg(path);
        if let Ok(out) = crate::sys::process::run(cmd, None, Duration::from_secs(60))
            && out.status.success()
        {
            let t = String::from_utf8_lossy(&out.stdout);
            let h = t.split_whitespace().next().unwrap_or("");
            if h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()) {
                return h.to_ascii_lowercase();
            }
        }
    }
    crate::sys::hash::sha256_hex(bytes)
}

pub fn install(spec: &str) -> Result<Installed, Error> {
    let remote = Remote::new(spec).map_err(Error::usage)?;
    let host = remote.host.to_string();
    let exe = std::env::current_exe()
        .map_err(|e| Error::new(format!("cannot find this tmuxmate binary: {e}")))?;
    let bytes = std::fs::read(&exe)
        .map_err(|e| Error::new(format!("cannot read this binary {}: {e}", exe.display())))?;
    let hash = sha256_of(&exe, &bytes);
    // One call: the host's system, architecture and what is installed there now.
    let probe = format!(
        "uname -s; uname -m; P=\"$HOME\"/{REL_PATH}; if [ ! -x \"$P\" ]; then echo none; \
         elif command -v sha256sum >/dev/null 2>&1; then sha256sum < \"$P\" | cut -c1-64; \
         else \"$P\" remote id 2>/dev/null | cut -d' ' -f3; fi"
    );
    let out = remote.run_line(&probe, None, PROBE_TIMEOUT)?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    let (sys, mach, there) = (
        lines.next().unwrap_or("").trim().to_string(),
        lines.next().unwrap_or("").trim().to_string(),
        lines.next().unwrap_or("").trim().to_string(),
    );
    if !out.status.success() || sys.is_empty() || mach.is_empty() {
        return Err(Error::new(format!(
            "cannot tell the system of host {host}: `uname -s; uname -m` there gave {:?} (exit {:?}, {}); \
             check that the login shell on that host is a POSIX shell",
            text.trim(),
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let (os, arch) = (std::env::consts::OS, std::env::consts::ARCH);
    if os_of(&sys) != os || arch_of(&mach) != arch {
        return Err(Error::refused(format!(
            "refused: host {host} is {sys} {mach}, this tmuxmate is built for {os} {arch}; \
             nothing was copied. Build tmuxmate for that host (e.g. `cargo build --release` \
             there) and put it at ~/{REL_PATH} on it"
        )));
    }
    let report = |installed: bool| Installed {
        host: host.clone(),
        path: format!("~/{REL_PATH}"),
        installed,
        already_installed: !installed,
        bytes: bytes.len() as u64,
        sha256: hash.clone(),
        version: env!("CARGO_PKG_VERSION"),
    };
    if there == hash {
        call::note(&host, true);
        return Ok(report(false));
    }
    let n = bytes.len();
    let q = shell::quote;
    // The temp file is removed on every way out; only a copy that has the right size
    // (and hash, where sha256sum exists) and runs here replaces the old one.
    let copy = format!(
        "umask 077; d=\"$HOME\"/{dir}; t=\"$d\"/.tmuxmate.tmp.$$; trap 'rm -f \"$t\"' EXIT; \
         mkdir -p \"$d\" || exit 3; cat > \"$t\" || exit 3; \
         n=$(wc -c < \"$t\" | tr -d ' '); [ \"$n\" = {n} ] || {{ echo \"tmuxmate-install: received $n of {n} bytes\" >&2; exit 3; }}; \
         if command -v sha256sum >/dev/null 2>&1; then h=$(sha256sum < \"$t\" | cut -c1-64); \
         [ \"$h\" = {h} ] || {{ echo \"tmuxmate-install: the copy's SHA-256 is $h, not {hash}\" >&2; exit 3; }}; fi; \
         chmod 755 \"$t\" || exit 3; \
         \"$t\" remote id >/dev/null 2>&1 || {{ echo 'tmuxmate-install: the copied binary does not run on this host' >&2; exit 4; }}; \
         mv -f \"$t\" \"$d\"/tmuxmate || exit 3; trap - EXIT; echo installed",
        dir = REL_PATH.trim_end_matches("/tmuxmate"),
        h = q(&hash),
    );
    let out = remote.run_line(&copy, Some(&bytes), COPY_TIMEOUT)?;
    if !out.status.success() || !String::from_utf8_lossy(&out.stdout).contains("installed") {
        return Err(Error::new(format!(
            "installing on host {host} failed (exit {:?}): {}; nothing was left there",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    call::note(&host, true);
    Ok(report(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uname_answers_map_to_rust_names() {
        assert_eq!(os_of("Linux\n"), "linux");
        assert_eq!(os_of("Darwin"), "macos");
        assert_eq!(arch_of("x86_64"), "x86_64");
        assert_eq!(arch_of("arm64"), "aarch64");
        assert_eq!(arch_of("aarch64"), "aarch64");
        assert_eq!(arch_of("i686"), "x86");
        assert_eq!(arch_of("armv7l"), "arm");
    }
}
