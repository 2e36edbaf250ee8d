//! Whether a shell is back at its prompt after a command typed into it.
//!
//! Owns: the "prompt returned" test of typed watch jobs. It must see commands that fork
//! nothing (`true`, `cd /tmp`, `echo x; true`), which leave no child to wait for. Every
//! signal is read without spawning anything:
//! - the shell consumed the whole typed line: its `rchar` reached its count from before
//!   the typing plus the typed bytes and the Enter;
//! - nothing is left in the tty's input queue (`FIONREAD` on the pane's tty);
//! - the tty's line mode (ICANON, ECHO) is the one the shell had at its idle prompt when
//!   the job started: line editors (bash's readline, zsh's zle, fish) switch to their mode
//!   only while they edit a line and give the cooked mode back while a command runs, so a
//!   builtin that waits for input (`read x`) is not taken for the prompt (dash edits in
//!   the cooked mode: there the two look alike);
//! - the shell sleeps, and where the kernel names what it waits in, it waits for input
//!   (poll/select, or a tty read): not for a lock, a disk write or a thread, as fish does
//!   between reading a line and starting its command (saving history), which on a busy
//!   machine can outlast two looks.
//!
//! Invariant: the tty is opened read-only with O_NOCTTY|O_NONBLOCK for one look and closed
//! again; it never becomes our controlling terminal and not one byte is read from it.

use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

/// The idle-shell list: `@tmuxmate-shells` (else the known shells) and `$SHELL`.
pub fn shells(tmux: &crate::tmux::Tmux) -> Vec<String> {
    crate::sys::foreground::idle_shells(
        &tmux
            .run(&["show-options", "-gqv", crate::tmux::options::SHELLS.name])
            .unwrap_or_default(),
    )
}

use nix::sys::termios::{LocalFlags, tcgetattr};

use crate::sys::procfs;

/// The line-mode bits compared (see the module header).
#[allow(clippy::unnecessary_cast)] // tcflag_t is u32 on Linux, wider elsewhere
fn mode_bits(f: LocalFlags) -> u32 {
    (f & (LocalFlags::ICANON | LocalFlags::ECHO)).bits() as u32
}

/// The tty's line mode and how many input bytes wait in its queue.
fn look_tty(path: &str) -> Option<(u32, u32)> {
    if !path.starts_with("/dev/") {
        return None;
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOCTTY | nix::libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let mode = mode_bits(tcgetattr(&f).ok()?.local_flags);
    let mut queued: nix::libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer, which lives across the call;
    // the fd is open for the whole call.
    let r = unsafe { nix::libc::ioctl(f.as_raw_fd(), nix::libc::FIONREAD, &mut queued) };
    if r != 0 {
        return None;
    }
    Some((mode, queued.max(0) as u32))
}

/// What a typed job records before its command is typed: the prompt's line mode and the
/// `rchar` the shell reaches once it has read `typed` bytes more. None when the shell or
/// its tty cannot be observed (then the poller falls back to child processes).
pub fn baseline(shell: i32, tty: &str, typed: usize) -> Option<(u32, u64)> {
    let (mode, _) = look_tty(tty)?;
    let read = procfs::read_bytes(shell)?;
    Some((mode, read + typed as u64))
}

/// One look: Some((back at the prompt, the shell's rchar now)), or None when it cannot be
/// observed any more.
pub fn at_prompt(shell: i32, tty: &str, mode: u32, read_target: u64) -> Option<(bool, u64)> {
    let read = procfs::read_bytes(shell)?;
    if read < read_target || procfs::state(shell)? != 'S' || !waits_for_input(shell) {
        return Some((false, read));
    }
    let (now_mode, queued) = look_tty(tty)?;
    Some((now_mode == mode && queued == 0, read))
}

/// Sleeping in poll/select or a tty read (what a line editor or dash's prompt does), or
/// the kernel does not say.
fn waits_for_input(pid: i32) -> bool {
    match procfs::wchan(pid) {
        Some(w) => ["poll", "select", "wait_woken", "tty"]
            .iter()
            .any(|k| w.contains(k)),
        None => true,
    }
}
