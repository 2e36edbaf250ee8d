//! The open-file limit of a resident process: raised for itself, restored for its children.
//!
//! Owns: raising the soft `RLIMIT_NOFILE` toward the hard one ([`raise`]) and giving every
//! program this process starts the soft limit it had before ([`restore_for_child`]). Why:
//! a resident server keeps a handle per pane's `/proc` file (`procfs::read_proc`), and
//! the usual soft limit (1024) left half of a 1000-pane listing opened afresh on every
//! call. Children get the old limit back because a program that `select()`s breaks on
//! descriptors past 1024, which a raised limit lets it open.
//! Invariants: the limit is only raised, never past the hard limit, and at most once
//! recorded (the first soft limit is what children get); a failure to raise leaves the
//! limit as it was and is not an error (fewer handles are kept).

use nix::sys::resource::{Resource, getrlimit, setrlimit};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::OnceLock;

/// The (soft, hard) limit before [`raise`] changed it; unset while nothing was raised.
static BEFORE: OnceLock<(u64, u64)> = OnceLock::new();

/// Raise the soft open-file limit to `want` (or the hard limit, if lower); the soft limit
/// in effect afterwards. Called before this process starts threads that start programs
/// (`tmuxmate mcp` does it first): a child started between the raise and its record
/// would keep the raised limit.
pub fn raise(want: u64) -> u64 {
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        // Not seen on Linux; the usual soft limit, so the caller stays within it.
        return 1024;
    };
    let to = want.min(hard);
    if to <= soft || setrlimit(Resource::RLIMIT_NOFILE, to, hard).is_err() {
        return soft;
    }
    // Only once raised: with nothing to restore, children start without a `pre_exec`
    // (which takes std off `posix_spawn`, onto fork + exec).
    BEFORE.get_or_init(|| (soft, hard));
    to
}

/// Have `cmd`'s program start with the soft limit this process had before [`raise`]
/// (nothing to do when it never raised it).
pub fn restore_for_child(cmd: &mut Command) {
    if let Some(&(soft, hard)) = BEFORE.get() {
        // SAFETY: setrlimit is async-signal-safe and the closure allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                // A failure (the hard limit lowered from outside since) must not make
                // every start fail: a child that keeps the raised limit is the lesser harm.
                let _ = setrlimit(Resource::RLIMIT_NOFILE, soft, hard);
                Ok(())
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raised_for_us_restored_for_a_child() {
        let (mut soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
        if soft >= hard && hard > 1024 && BEFORE.get().is_none() {
            // Room to raise (a machine whose soft limit is its hard one).
            soft = hard.min(1 << 20).saturating_sub(256);
            setrlimit(Resource::RLIMIT_NOFILE, soft, hard).unwrap();
        }
        if soft >= hard {
            eprintln!("skipped: the hard open-file limit ({hard}) leaves no room to raise");
            return;
        }
        let now = raise(soft.saturating_add(512));
        assert!(now > soft && now <= hard, "{soft} -> {now} (hard {hard})");
        assert_eq!(getrlimit(Resource::RLIMIT_NOFILE).unwrap().0, now);
        let mut c = crate::sys::process::command("/bin/sh");
        c.args(["-c", "ulimit -n"]);
        let f = crate::sys::process::run(c, None, std::time::Duration::from_secs(10)).unwrap();
        let first = BEFORE.get().map_or(soft, |b| b.0);
        let limit = if first == nix::libc::RLIM_INFINITY {
            "unlimited".to_string()
        } else {
            first.to_string()
        };
        assert_eq!(String::from_utf8_lossy(&f.stdout).trim(), limit);
        // Never lowered, never past the hard limit.
        assert_eq!(raise(1), now);
    }
}
