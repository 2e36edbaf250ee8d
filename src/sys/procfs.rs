//! Process facts from `/proc`: controlling ttys, ancestry and real executables.
//!
//! Owns: finding the terminal a process belongs to without spawning `ps` on Linux (`ps`
//! is the fallback elsewhere), and the rule for hook subprocesses that have no tty.
//! Invariant: a tty is only borrowed from an ancestor across processes that are plain
//! launchers (the caller's test: `foreground::is_launcher`, shells, env, timeout…); a detached non-shell process in between (a shared
//! background server such as Codex's app-server daemon) serves many terminals, so the
//! answer there is "no terminal", never its parent's.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub pid: i32,
    pub comm: String,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    /// Linux `tty_nr` (0 = none).
    pub tty_nr: u64,
    pub tpgid: i32,
}

pub fn stat(pid: i32) -> Option<Stat> {
    let text = read_proc(pid, "stat", |b| b.ends_with(b"\n"))?;
    parse_stat(&String::from_utf8_lossy(&text))
}

/// `/proc/PID/NAME` read through a kept handle when [`keep_handles`] is on, else opened
/// afresh ([`read_small`]). A kept handle is not a cache of contents: each read of a
/// `/proc` file regenerates it (so an exec, a new foreground, a rewritten argv show at
/// once), and the handle names that one process for good (after it exits, reads fail and
/// the handle is dropped; a new process that gets the pid is opened afresh). Why: a
/// resident server listing 200 panes reads two such files per pane per call, and
/// `pread` on an open handle costs about a third of open + read + close (4.6 against
/// 12.6 us for `stat`, measured).
pub fn read_proc(
    pid: i32,
    name: &'static str,
    complete: impl Fn(&[u8]) -> bool,
) -> Option<Vec<u8>> {
    let Some(h) = HANDLES.get() else {
        return read_small(&format!("/proc/{pid}/{name}"), complete);
    };
    let key = (pid, name);
    let kept = h.lock().ok().and_then(|mut m| m.files.remove(&key));
    if let Some((f, _)) = kept
        && let Some(b) = read_from(&f, &complete)
        && !b.is_empty()
    {
        if let Ok(mut m) = h.lock() {
            m.put(key, f);
        }
        return Some(b);
    }
    let f = std::fs::File::open(format!("/proc/{pid}/{name}")).ok()?;
    let b = read_from(&f, &complete)?;
    if !b.is_empty()
        && let Ok(mut m) = h.lock()
    {
        m.put(key, f);
    }
    Some(b)
}

/// The whole file from offset 0 (`pread`), in as few calls as `complete` allows.
fn read_from(f: &std::fs::File, complete: &impl Fn(&[u8]) -> bool) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; 1024];
    let mut len = 0;
    loop {
        if len == buf.len() {
            buf.resize(len * 2, 0);
        }
        let n = f.read_at(&mut buf[len..], len as u64).ok()?;
        len += n;
        if n == 0 || complete(&buf[..len]) {
            break;
        }
    }
    buf.truncate(len);
    Some(buf)
}

/// Kept `/proc` handles (see [`read_proc`]), by (pid, file), with the sweep each was
/// last used in.
struct Handles {
    files: std::collections::HashMap<(i32, &'static str), (std::fs::File, u64)>,
    sweep: u64,
    /// At most this many kept ([`handle_bound`]).
    max: usize,
}

impl Handles {
    fn put(&mut self, key: (i32, &'static str), f: std::fs::File) {
        if self.files.len() < self.max || self.files.contains_key(&key) {
            self.files.insert(key, (f, self.sweep));
        }
    }
}

/// How many handles to keep under an open-file limit of `limit`: half of it, the other
/// half left to everything else, and no more than [`MAX_HANDLES`].
fn handle_bound(limit: u64) -> usize {
    usize::try_from(limit / 2)
        .unwrap_or(usize::MAX)
        .min(MAX_HANDLES)
}

/// A `stat` per pane (and a `cmdline` where a program runs in a shell) of a listing of
/// 1,000 panes and more; the open-file limit is raised to twice this when the hard limit
/// allows. Not more: each kept handle holds the kernel's page-sized read buffer (about
/// 4 KiB of kernel memory a handle, 8 MiB at this bound).
const MAX_HANDLES: usize = 2048;

static HANDLES: std::sync::OnceLock<std::sync::Mutex<Handles>> = std::sync::OnceLock::new();

/// Keep `/proc` handles from now on (a resident process: `tmuxmate mcp`).
pub fn keep_handles() {
    // 1000 panes under the usual soft limit of 1024 kept 512 handles: the other panes were
    // opened afresh on every call (MCP list of 1000 panes, medians: 22.0 -> 20.6 ms).
    let limit = super::fdlimit::raise(2 * MAX_HANDLES as u64);
    let _ = HANDLES.set(std::sync::Mutex::new(Handles {
        files: Default::default(),
        sweep: 0,
        max: handle_bound(limit),
    }));
}

/// Close the handles not used since the previous sweep (processes that left the
/// listing), so the kept set follows the panes.
pub fn sweep_handles() {
    if let Some(h) = HANDLES.get()
        && let Ok(mut m) = h.lock()
    {
        let last = m.sweep;
        m.files.retain(|_, (_, used)| *used >= last);
        m.sweep += 1;
    }
}

/// A small `/proc` file in as few system calls as it takes: procfs reports size 0, so
/// `fs::read` probes with a `statx` and reads of 32, 32, 64... bytes (eight calls for one
/// `stat` line); a 1 KiB buffer holds a whole `stat` line at once, and `complete` says
/// when what was read is all that is needed (no read to find the end). A 500-pane `list`
/// reads one or two of these per pane.
pub fn read_small(path: &str, complete: impl Fn(&[u8]) -> bool) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let mut buf = vec![0u8; 1024];
    let mut len = 0;
    loop {
        if len == buf.len() {
            buf.resize(len * 2, 0);
        }
        let n = f.read(&mut buf[len..]).ok()?;
        len += n;
        if n == 0 || complete(&buf[..len]) {
            break;
        }
    }
    buf.truncate(len);
    Some(buf)
}

fn parse_stat(text: &str) -> Option<Stat> {
    // comm may hold spaces and parens; it ends at the last ')'.
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let comm = text[open + 1..close].to_string();
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // rest[0]=state, [1]=ppid, [2]=pgrp, [3]=session, [4]=tty_nr, [5]=tpgid
    Some(Stat {
        pid,
        comm,
        ppid: rest.get(1)?.parse().ok()?,
        pgrp: rest.get(2)?.parse().ok()?,
        session: rest.get(3)?.parse().ok()?,
        tty_nr: rest.get(4)?.parse::<i64>().ok()? as u64,
        tpgid: rest.get(5)?.parse().ok()?,
    })
}

/// `cminflt` (field 12): minor faults of waited-for children. Every reaped child adds
/// to it (an exec alone faults dozens of pages), so a change proves a child ran and
/// ended even if it lived for 5 ms between two looks.
pub fn children_faults(pid: i32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let close = text.rfind(')')?;
    // After ')': state(0) ppid(1) pgrp(2) session(3) tty(4) tpgid(5) flags(6) minflt(7) cminflt(8)
    text[close + 1..].split_whitespace().nth(8)?.parse().ok()
}

/// The scheduler state letter (`R` running, `S` sleeping, `Z` zombie, ...).
pub fn state(pid: i32) -> Option<char> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let close = text.rfind(')')?;
    text[close + 1..].split_whitespace().next()?.chars().next()
}

/// `starttime` (field 22, clock ticks since boot): with the pid, names one process for
/// good (a pid alone may be reused).
pub fn start_time(pid: i32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let close = text.rfind(')')?;
    text[close + 1..].split_whitespace().nth(19)?.parse().ok()
}

/// The children of `pid` (`/proc/PID/task/*/children`), e.g. a tmux server's pane
/// processes; None when the kernel does not tell (no `CONFIG_PROC_CHILDREN`).
pub fn children(pid: i32) -> Option<Vec<i32>> {
    let mut v = Vec::new();
    let mut any = false;
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let Ok(text) = std::fs::read_to_string(t.path().join("children")) else {
            continue;
        };
        any = true;
        v.extend(
            text.split_whitespace()
                .filter_map(|c| c.parse::<i32>().ok()),
        );
    }
    any.then_some(v)
}

/// `rchar` of `/proc/PID/io`: bytes the process has read so far (any fd). A shell reads
/// what is typed into it, so this grows past "before + typed" only once it consumed the
/// whole typed line. None when `/proc/PID/io` is not readable (another user, hidepid).
pub fn read_bytes(pid: i32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("rchar:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The kernel function a sleeping process waits in (`/proc/PID/wchan`), e.g.
/// `poll_schedule_timeout` or `wait_woken`; None when unknown (running, or the kernel
/// does not tell: it then reads `0`).
pub fn wchan(pid: i32) -> Option<String> {
    let w = std::fs::read_to_string(format!("/proc/{pid}/wchan")).ok()?;
    let w = w.trim();
    (!w.is_empty() && w != "0").then(|| w.to_string())
}

/// (major, minor) of a Linux `tty_nr`.
pub fn tty_nr_dev(nr: u64) -> (u64, u64) {
    let major = (nr >> 8) & 0xfff;
    let minor = (nr & 0xff) | ((nr >> 12) & 0xfff00);
    (major, minor)
}

/// (major, minor) of a device node such as `/dev/pts/3`.
pub fn device_of(path: &str) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(path).ok()?.rdev();
    Some((
        nix::sys::stat::major(rdev) as u64,
        nix::sys::stat::minor(rdev) as u64,
    ))
}

/// Base name of the real executable (`/proc/PID/exe`), else `comm`.
pub fn exe_name(pid: i32) -> Option<String> {
    if let Ok(p) = std::fs::read_link(format!("/proc/{pid}/exe")) {
        let s = p.to_string_lossy();
        let s = s.strip_suffix(" (deleted)").unwrap_or(&s);
        return s.rsplit('/').next().map(str::to_string);
    }
    stat(pid).map(|s| s.comm)
}

/// Does process group `pgrp` (a tty's foreground group) hold one of the executables
/// `wanted`? Its leader is asked first, one read; the whole process table (1,500
/// processes on a busy build machine: ~20 ms) only when the leader is not one of them
/// (an npm wrapper's child). `Err`: every real executable name in the group.
pub fn group_holds(pgrp: i32, wanted: &[String]) -> Result<(), Vec<String>> {
    if stat(pgrp).is_some_and(|s| s.pgrp == pgrp)
        && exe_name(pgrp).is_some_and(|n| wanted.contains(&n))
    {
        return Ok(());
    }
    let exes = group_exes(pgrp);
    if exes.iter().any(|e| wanted.contains(e)) {
        Ok(())
    } else {
        Err(exes)
    }
}

/// Real executable names of every process in process group `pgrp` (the tty's
/// foreground group): an npm wrapper (`node`) and the real CLI it spawned share it.
pub fn group_exes(pgrp: i32) -> Vec<String> {
    let mut v = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            if stat(pid).is_some_and(|s| s.pgrp == pgrp)
                && let Some(n) = exe_name(pid)
            {
                v.push(n);
            }
        }
    }
    v
}

/// Where the calling process's terminal comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Terminal {
    /// The device (major, minor), and the pid whose controlling tty it is.
    Tty { dev: (u64, u64), owner: i32 },
    /// No terminal, with the reason.
    None(String),
}

/// The controlling terminal of `pid`, or of its nearest ancestor that has one, looking
/// through ancestors whose executable `launcher` accepts (`foreground::is_launcher`).
pub fn terminal_of(pid: i32, launcher: fn(&str) -> bool) -> Terminal {
    if !std::path::Path::new("/proc/self/stat").exists() {
        return ps_fallback(pid);
    }
    let mut cur = pid;
    for depth in 0..64 {
        let Some(st) = stat(cur) else {
            return Terminal::None(format!("process {cur} vanished while reading /proc"));
        };
        if st.tty_nr != 0 {
            return Terminal::Tty {
                dev: tty_nr_dev(st.tty_nr),
                owner: cur,
            };
        }
        if depth > 0 {
            let name = exe_name(cur).unwrap_or_else(|| st.comm.clone());
            if !launcher(&name) {
                // Only Codex's app-server daemon is known to do this; naming it for
                // any other caller (a CI runner, cron, an IDE) would send people astray.
                let advice = if name.contains("codex") {
                    "; for Codex, run it with --no-daemon"
                } else {
                    "; run tmuxmate from a shell inside the tmux pane"
                };
                return Terminal::None(format!(
                    "called through '{name}' (pid {cur}), a process without a terminal (it may serve several panes){advice}"
                ));
            }
        }
        if st.ppid <= 1 {
            return Terminal::None("no process in the ancestry has a controlling terminal".into());
        }
        cur = st.ppid;
    }
    Terminal::None("process ancestry too deep".into())
}

fn ps_fallback(pid: i32) -> Terminal {
    // Non-Linux: `ps -o tty=` for the process and its parent only.
    let mut cur = pid;
    for _ in 0..2 {
        let mut cmd = crate::sys::process::command("ps");
        cmd.args(["-o", "tty=,ppid=", "-p", &cur.to_string()]);
        let out = crate::sys::process::run(cmd, None, std::time::Duration::from_secs(5));
        let Ok(out) = out else {
            return Terminal::None("ps is not available".into());
        };
        let text = String::from_utf8_lossy(&out.stdout);
        let mut it = text.split_whitespace();
        let tty = it.next().unwrap_or("?");
        let ppid: i32 = it.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        if tty != "?" && tty != "??" {
            let path = if tty.starts_with('/') {
                tty.to_string()
            } else {
                format!("/dev/{tty}")
            };
            return match device_of(&path) {
                Some(dev) => Terminal::Tty { dev, owner: cur },
                None => Terminal::None(format!("cannot stat {path}")),
            };
        }
        cur = ppid;
    }
    Terminal::None("no controlling terminal".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_take_half_the_limit_up_to_their_bound() {
        assert_eq!(handle_bound(1024), 512);
        assert_eq!(handle_bound(2048), 1024);
        assert_eq!(handle_bound(1 << 20), MAX_HANDLES);
        assert_eq!(handle_bound(nix::libc::RLIM_INFINITY), MAX_HANDLES);
        assert_eq!(handle_bound(0), 0);
    }

    #[test]
    fn parses_stat_with_odd_comm() {
        let s = parse_stat("42 (a (b) c) S 1 42 42 34817 42 4194560 0").unwrap();
        assert_eq!(s.comm, "a (b) c");
        assert_eq!(s.ppid, 1);
        assert_eq!(s.tty_nr, 34817);
        assert_eq!(tty_nr_dev(34817), (136, 1));
    }
}
