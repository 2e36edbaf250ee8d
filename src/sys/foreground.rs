//! The one foreground detector and the one list of shells.
//!
//! Owns: which process a pane's terminal is running in the foreground (the leader of the
//! tty's foreground process group, read from `/proc`), what tmux would call its current
//! command, its real executable, and the table of shells every caller judges it by: `run
//! -t` (a POSIX shell it can type a command line into), typed watches (any idle shell,
//! plus `@tmuxmate-shells`) and the location's ancestor walk (launchers a tty may be
//! borrowed across). Invariants: every foreground question in the crate is answered here,
//! from the same `/proc` reading; a name is a real executable's base name (so `python3`
//! symlinked to `python3.11` is `python3.11`); `@tmuxmate-shells`' default is [`SHELLS`]'
//! names (a test holds the options table to it).

use super::procfs;

/// Known shells, and whether each reads POSIX `sh` syntax (what `run -t` types: `cmd;
/// printf ... $?`). fish, nu, elvish, xonsh, pwsh, csh and tcsh are shells at a prompt
/// but not POSIX ones.
pub const SHELLS: &[(&str, bool)] = &[
    ("bash", true),
    ("zsh", true),
    ("fish", false),
    ("sh", true),
    ("dash", true),
    ("ksh", true),
    ("ksh93", true),
    ("mksh", true),
    ("oksh", true),
    ("loksh", true),
    ("pdksh", true),
    ("ash", true),
    ("yash", true),
    ("posh", true),
    ("busybox", true),
    ("tcsh", false),
    ("csh", false),
    ("nu", false),
    ("elvish", false),
    ("xonsh", false),
    ("pwsh", false),
    ("powershell", false),
];

/// Programs that run one command for one caller without a terminal of their own, besides
/// shells: the location's ancestor walk may pass through them to the pane's tty.
const WRAPPERS: &[&str] = &[
    "env", "timeout", "nohup", "nice", "stdbuf", "setsid", "tmuxmate",
];

/// Whether `exe` is a shell that reads POSIX `sh` syntax.
pub fn is_posix_shell(exe: &str) -> bool {
    SHELLS.iter().any(|(n, posix)| *posix && *n == exe)
}

/// Whether the ancestor walk may look through `exe` for the caller's terminal.
pub fn is_launcher(exe: &str) -> bool {
    SHELLS.iter().any(|(n, _)| *n == exe) || WRAPPERS.contains(&exe)
}

/// The leader of the foreground process group on the terminal of `pane_pid` (the pane's
/// own process when nothing else holds the terminal, or when it has none).
pub fn leader(pane_pid: i32) -> Option<i32> {
    let st = procfs::stat(pane_pid)?;
    Some(if st.tpgid > 0 { st.tpgid } else { pane_pid })
}

/// The foreground leader's real executable (base name).
pub fn exe(pane_pid: i32) -> Option<String> {
    procfs::exe_name(leader(pane_pid)?)
}

/// What tmux calls `pane_current_command` (argv[0] of the terminal's foreground process
/// group leader, base name, leading `-` stripped) and that leader's real executable, for a
/// pane whose process is `pane_pid`. Read here rather than asked of tmux: `list` needs the
/// executable anyway, and tmux would read the same `/proc` files.
pub fn of(pane_pid: i32) -> Option<(String, Option<String>)> {
    let st = procfs::stat(pane_pid)?;
    let fg = if st.tpgid > 0 { st.tpgid } else { pane_pid };
    if fg == pane_pid && !st.comm.is_empty() {
        // The common case (an idle shell, or a program the pane runs directly): `comm`,
        // already read, is that name; a second /proc read per pane is what a 500-pane
        // `list` would spend its time on.
        return Some((st.comm.clone(), procfs::exe_name(fg)));
    }
    // Only argv[0] is needed: done at its NUL.
    let cmdline = procfs::read_proc(fg, "cmdline", |b| b.contains(&0)).unwrap_or_default();
    let argv0 = cmdline.split(|b| *b == 0).next().unwrap_or_default();
    let argv0 = String::from_utf8_lossy(argv0);
    let base = argv0
        .rsplit('/')
        .next()
        .unwrap_or("")
        .trim_start_matches('-')
        .to_string();
    let cmd = if base.is_empty() {
        procfs::stat(fg).map(|s| s.comm).unwrap_or_default()
    } else {
        base
    };
    Some((cmd, procfs::exe_name(fg)))
}

/// The foreground leader of `pane_pid` and whether its executable is one of `shells`.
pub fn shell_at(pane_pid: i32, shells: &[String]) -> Option<(i32, bool)> {
    let fg = leader(pane_pid)?;
    let exe = procfs::exe_name(fg)?;
    Some((fg, shells.contains(&exe)))
}

/// The idle-shell list from `@tmuxmate-shells`' value (`configured`; empty: the default),
/// plus the user's `$SHELL`.
pub fn idle_shells(configured: &str) -> Vec<String> {
    let mut v: Vec<String> = configured.split_whitespace().map(str::to_string).collect();
    if v.is_empty() {
        v = SHELLS.iter().map(|s| s.0.to_string()).collect();
    }
    if let Ok(sh) = std::env::var("SHELL")
        && let Some(b) = sh.rsplit('/').next()
        && !b.is_empty()
    {
        v.push(b.to_string());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posix_and_launchers_come_from_one_table() {
        assert!(is_posix_shell("bash") && is_posix_shell("dash") && is_posix_shell("busybox"));
        assert!(!is_posix_shell("fish") && !is_posix_shell("nu") && !is_posix_shell("python3"));
        // Every shell is a launcher (fish -c runs one command too); wrappers are not shells.
        assert!(is_launcher("fish") && is_launcher("env") && is_launcher("tmuxmate"));
        assert!(!is_launcher("codex") && !is_launcher("node"));
        assert!(!is_posix_shell("env"));
    }

    #[test]
    fn idle_shells_default_and_configured() {
        let d = idle_shells("");
        assert!(d.iter().any(|s| s == "fish") && d.iter().any(|s| s == "bash"));
        let c = idle_shells("  myshell  other ");
        assert_eq!(&c[..2], ["myshell", "other"]);
    }

    #[test]
    fn our_own_process_is_found() {
        let me = std::process::id() as i32;
        let (_, exe) = of(me).expect("our own /proc entry");
        assert!(exe.is_some());
        assert!(leader(me).is_some());
    }
}
