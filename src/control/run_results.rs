//! Where a run's script, exit status and output live: the one thing `run` does differently
//! for a server whose panes cannot see this machine's files
//! (`crate::tmux::transport::Transport::shares_files`, a server on another host).
//!
//! - [`Results::Here`]: this machine's state directory, `<state>/run/<id>/` (0700, ours
//!   alone): the script `cmd.sh` the pane sources, and the files the wrapper writes: `st`
//!   (the status), `out` (the kept output) and the end marker `done`, written only after
//!   the whole pipeline ended. A look is a `stat`: every millisecond for the first 50 ms,
//!   every 5 ms up to a second, then every 20 ms.
//! - [`Results::OnHost`]: everything stays on the host and travels through its tmux only
//!   (no tmuxmate there). The script is the pane's own `sh -c` command (tmux's command
//!   position, not format expanded; `Arg::literal` keeps a trailing `;` intact; the
//!   transport quotes it once more for the ssh login shell):
//!
//!   ```sh
//!   trap : INT; d=$(mktemp -d) || exit 1; WRAPPER with st/out in "$d"; \
//!     tmux load-buffer -b tmuxmate-ID-out "$d/out"; tmux load-buffer -b tmuxmate-ID-st "$d/st"; \
//!     rm -rf "$d"; tmux wait-for -S tmuxmate-ID; trap - INT; exec "${SHELL:-/bin/sh}"
//!   ```
//!
//!   Done = the status buffer exists (loaded after the output buffer, so the output is
//!   complete by then); the wait blocks on the `wait-for` channel over the connection
//!   ([`Waiter`]) and looks for the status buffer every [`HOST_POLL`] as the safety net.
//!   Both buffers are deleted once read; a timed-out run leaves them behind when its
//!   command ends later.
//!
//! Invariants: the user's words reach the pane only single-quoted for `sh`, inside a
//! script of ours (a file, or our own `sh -c` argument), never through tmux's parser or a
//! format; a run's names (directory, buffers, channel) are unique per call.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::sys::shell::{join as quote_words, quote};
use crate::sys::state;
use crate::targs;
use crate::tmux::{Arg, Tmux};

/// How often the host's status buffer is looked for (each look is one call over the
/// connection).
const HOST_POLL: Duration = Duration::from_millis(250);
/// How often a long local wait looks for the end marker.
pub(super) const POLL: Duration = Duration::from_millis(20);
/// Run directories older than this are leftovers of killed invocations.
const STALE_RUN_DIR: Duration = Duration::from_secs(24 * 3600);

/// A run's results, where the server's panes can leave them.
pub(super) enum Results {
    Here(RunDir),
    OnHost(HostRun),
}

impl Results {
    /// For a run on `tmux`'s server: our state directory when its panes see it.
    pub(super) fn for_server(tmux: &Tmux) -> Result<Results, Error> {
        Ok(if tmux.transport().shares_files() {
            Results::Here(RunDir::create()?)
        } else {
            Results::OnHost(HostRun::new())
        })
    }

    /// The new pane's command: the wrapper of `cmd` (its output kept up to `keep` bytes;
    /// `None`: not kept, the command gets the pane's terminal as its stdout), then an
    /// interactive shell. It never exits at once.
    pub(super) fn pane_command(
        &self,
        tmux: &Tmux,
        cmd: &[String],
        keep: Option<usize>,
    ) -> Result<Vec<String>, Error> {
        let boot = match self {
            Results::Here(rd) => rd.boot(cmd, keep)?,
            Results::OnHost(h) => h.script(tmux, cmd, keep),
        };
        Ok(vec!["/bin/sh".to_string(), "-c".to_string(), boot])
    }

    /// The line typed into an idle shell that runs `cmd` (kept up to `keep` bytes), and
    /// the marker the pane's text of this run starts after; `None` on a host (the line
    /// would name a script that is not there).
    pub(super) fn typed_line(
        &self,
        cmd: &[String],
        keep: usize,
    ) -> Option<Result<(String, &str), Error>> {
        let Results::Here(rd) = self else {
            return None;
        };
        Some(rd.typed_line(cmd, keep).map(|l| (l, rd.id.as_str())))
    }

    /// The wrapper has ended: its status and output are complete.
    pub(super) fn done(&self, tmux: &Tmux) -> bool {
        match self {
            Results::Here(rd) => rd.done(),
            Results::OnHost(h) => h.status(tmux).is_some(),
        }
    }

    /// The command's exit status, once recorded.
    pub(super) fn status(&self, tmux: &Tmux) -> Option<i32> {
        match self {
            Results::Here(rd) => rd.status(),
            Results::OnHost(h) => h.status(tmux).flatten(),
        }
    }

    /// The kept output of a run that is `done`; `None`: there is none to read (not done,
    /// or no output file), the pane's text is the answer.
    pub(super) fn output(&self, tmux: &Tmux, done: bool) -> Option<Vec<u8>> {
        if !done {
            return None;
        }
        match self {
            Results::Here(rd) => {
                let out = rd.file("out");
                out.exists().then(|| std::fs::read(out).unwrap_or_default())
            }
            Results::OnHost(h) => Some(h.output(tmux)),
        }
    }

    /// Forget what was read (the host's buffers; the local directory goes on drop).
    pub(super) fn release(&self, tmux: &Tmux) {
        if let Results::OnHost(h) = self {
            h.cleanup(tmux);
        }
    }

    /// How long to wait before the next look, `waited` into the wait.
    pub(super) fn poll(&self, waited: Duration) -> Duration {
        match self {
            Results::Here(_) => poll_interval(waited),
            Results::OnHost(_) => HOST_POLL,
        }
    }

    /// What ends a wait sooner than the next look: the host's `wait-for` channel.
    pub(super) fn waiter(&self, tmux: &Tmux, deadline: Instant) -> Waiter {
        match self {
            Results::Here(_) => Waiter::none(),
            Results::OnHost(h) => Waiter::on_channel(tmux, h.channel(), deadline),
        }
    }
}

/// How long to sleep before the next look at the end marker, `waited` into the wait: a
/// short command is seen within a millisecond, a long one costs a `stat` every 20 ms.
fn poll_interval(waited: Duration) -> Duration {
    if waited < Duration::from_millis(50) {
        Duration::from_millis(1)
    } else if waited < Duration::from_secs(1) {
        Duration::from_millis(5)
    } else {
        POLL
    }
}

/// The command with its status written to `st` and, with `out` (a path and a byte
/// count), its output through `tee` to the pane and `tail -c` into the path (see
/// `super::run`'s module docs). `st` and the path are shell words. Ctrl-C interrupts the
/// command only. No subshell (a fork) for the status: its directory is private.
fn wrapped(cmd: &[String], st: &str, out: Option<(&str, usize)>) -> String {
    let cmd = quote_words(cmd);
    let status = format!("echo \"$?\" 2>/dev/null >{st}");
    match out {
        Some((out, keep)) => format!(
            "{{ trap : INT; ( {cmd} ) 2>&1; {status}; }} | (trap '' INT; exec tee /dev/tty) | (trap '' INT; umask 077; exec tail -c {keep} >{out})"
        ),
        None => format!("( {cmd} ); {status}"),
    }
}

/// The per-run directory in our state directory and its files.
pub(super) struct RunDir {
    dir: PathBuf,
    id: String,
}

impl RunDir {
    fn create() -> Result<RunDir, Error> {
        let root = state::state_dir().join("run");
        sweep(&root);
        // Exclusively ours: two runs started in one millisecond never share files.
        let (id, dir) = state::new_private_dir(&root, "r").map_err(|e| {
            Error::new(format!(
                "could not create a run directory in {}: {e}; check that the state directory is writable (TMUXMATE_STATE_DIR or XDG_STATE_HOME)",
                root.display()
            ))
        })?;
        Ok(RunDir { dir, id })
    }
    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
    /// The path quoted for `sh` (state paths are ours, but may hold spaces).
    fn q(&self, name: &str) -> String {
        quote(&self.file(name).to_string_lossy())
    }
    fn status(&self) -> Option<i32> {
        std::fs::read_to_string(self.file("st"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }
    /// The wrapper's pipeline has ended (`st` and `out` are complete).
    fn done(&self) -> bool {
        self.file("done").exists()
    }

    /// The wrapper body (see `super::run`'s module docs). The end marker is written by
    /// `echo` (a regular builtin: a failed redirection does not end the pane's shell, as
    /// it would for `:`), and no tmux client is started.
    fn wrapper(&self, cmd: &[String], keep: Option<usize>) -> String {
        let out = self.q("out");
        let body = wrapped(cmd, &self.q("st"), keep.map(|k| (out.as_str(), k)));
        format!("{body}; echo 2>/dev/null >{done}\n", done = self.q("done"))
    }

    fn write_script(&self, body: &str) -> Result<(), Error> {
        state::write_private(&self.file("cmd.sh"), body.as_bytes()).map_err(|e| {
            Error::new(format!(
                "could not write {}: {e}; check that the state directory is writable",
                self.file("cmd.sh").display()
            ))
        })
    }

    /// The script, run from the caller's working directory (a `cd` in the script keeps
    /// the path out of tmux, whose -c start directory is format-expanded), and the pane's
    /// `sh -c` line that sources it, then becomes an interactive shell.
    fn boot(&self, cmd: &[String], keep: Option<usize>) -> Result<String, Error> {
        let mut script = String::new();
        if let Ok(cwd) = std::env::current_dir()
            && let Some(c) = cwd.to_str()
        {
            script.push_str(&format!("cd {} 2>/dev/null\n", quote(c)));
        }
        script.push_str(&self.wrapper(cmd, keep));
        self.write_script(&script)?;
        Ok(format!(
            "trap : INT; . {}; trap - INT; exec \"${{SHELL:-/bin/sh}}\"",
            self.q("cmd.sh")
        ))
    }

    /// The script, and the line that sources it: the leading space keeps the line out of
    /// history where `ignorespace` is set; the line itself is ours (a quoted path), so no
    /// user text is ever typed.
    fn typed_line(&self, cmd: &[String], keep: usize) -> Result<String, Error> {
        self.write_script(&self.wrapper(cmd, Some(keep)))?;
        Ok(format!(" . {}", self.q("cmd.sh")))
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        // A still-running (timed-out) command keeps its open files; nothing reads them.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Remove run directories left behind by invocations that were killed.
fn sweep(root: &Path) {
    let Ok(rd) = std::fs::read_dir(root) else {
        return;
    };
    for e in rd.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_RUN_DIR);
        if old {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A run whose results stay on the host: its buffers and `wait-for` channel.
pub(super) struct HostRun {
    id: String,
}

impl HostRun {
    fn new() -> HostRun {
        HostRun {
            id: format!("r{}", crate::sys::unique::token()),
        }
    }
    fn channel(&self) -> String {
        format!("tmuxmate-{}", self.id)
    }
    fn buffer(&self, what: &str) -> String {
        format!("tmuxmate-{}-{what}", self.id)
    }
    /// `Some(status)` once the wrapper loaded its status buffer (`None` inside: unparsable).
    fn status(&self, tmux: &Tmux) -> Option<Option<i32>> {
        let b = self.buffer("st");
        tmux.run(&targs!["show-buffer", "-b", Arg::id(&b)])
            .ok()
            .map(|s| s.trim().parse().ok())
    }
    fn output(&self, tmux: &Tmux) -> Vec<u8> {
        let b = self.buffer("out");
        // No buffer: the command printed nothing (tmux loads no empty buffer).
        tmux.run_bytes(&targs!["show-buffer", "-b", Arg::id(&b)], None)
            .unwrap_or_default()
    }
    fn cleanup(&self, tmux: &Tmux) {
        for what in ["out", "st"] {
            let b = self.buffer(what);
            let _ = tmux.run(&targs!["delete-buffer", "-b", Arg::id(&b)]);
        }
    }

    /// The pane's script (see the module docs) for `cmd`, its output kept up to `keep`
    /// bytes, or not kept (the command gets the terminal).
    fn script(&self, tmux: &Tmux, cmd: &[String], keep: Option<usize>) -> String {
        let q = crate::sys::shell::readable;
        let prog = q(&tmux.program);
        let (st_file, out_file) = ("\"$d/st\"", "\"$d/out\"");
        let body = match keep {
            Some(keep) => format!(
                "{}; [ -s {out_file} ] && {prog} load-buffer -b {out} {out_file} 2>/dev/null; ",
                wrapped(cmd, st_file, Some((out_file, keep))),
                out = q(&self.buffer("out")),
            ),
            None => format!("{}; ", wrapped(cmd, st_file, None)),
        };
        format!(
            "trap : INT; d=$(mktemp -d) || exit 1; {body}\
             {prog} load-buffer -b {st} {st_file} 2>/dev/null; rm -rf \"$d\"; \
             {prog} wait-for -S {ch} 2>/dev/null; trap - INT; exec \"${{SHELL:-/bin/sh}}\"",
            st = q(&self.buffer("st")),
            ch = q(&self.channel()),
        )
    }
}

/// What can end a wait before its next look: a `tmux wait-for` on the host's channel,
/// run on its own thread over the connection (`None` for a run here, or once it ended).
pub(super) struct Waiter {
    channel: Option<String>,
    /// The waiter's answer: true when the channel was signalled.
    rx: Option<mpsc::Receiver<bool>>,
    handle: Option<std::thread::JoinHandle<()>>,
    signalled: bool,
}

impl Waiter {
    fn none() -> Waiter {
        Waiter {
            channel: None,
            rx: None,
            handle: None,
            signalled: false,
        }
    }

    fn on_channel(tmux: &Tmux, channel: String, deadline: Instant) -> Waiter {
        let (tx, rx) = mpsc::channel::<bool>();
        let mut waiter = tmux.clone();
        waiter.timeout =
            deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(5);
        let ch = channel.clone();
        let handle = std::thread::spawn(move || {
            let _ = tx.send(waiter.run(&targs!["wait-for", Arg::id(&ch)]).is_ok());
        });
        Waiter {
            channel: Some(channel),
            rx: Some(rx),
            handle: Some(handle),
            signalled: false,
        }
    }

    /// The wrapper signalled its end (its status was loaded before the signal).
    pub(super) fn signalled(&self) -> bool {
        self.signalled
    }

    /// Sleep for `d`, or less when the channel is signalled meanwhile.
    pub(super) fn pause(&mut self, d: Duration) {
        let Some(rx) = &self.rx else {
            std::thread::sleep(d);
            return;
        };
        match rx.recv_timeout(d) {
            Ok(true) => {
                self.signalled = true;
                self.rx = None;
            }
            // The waiter failed (connection dropped, server gone): looking carries on.
            Ok(false) | Err(mpsc::RecvTimeoutError::Disconnected) => self.rx = None,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }

    /// The wait is over: a waiter still blocked on the host is released (our own signal
    /// on its channel) rather than left there, and joined.
    pub(super) fn end(mut self, tmux: &Tmux) {
        if self.rx.is_some()
            && let Some(ch) = &self.channel
        {
            let _ = tmux.run(&targs!["wait-for", "-S", Arg::id(ch)]);
        }
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_local_wrapper_keeps_its_shape() {
        let rd = RunDir {
            dir: PathBuf::from("/s/run/r1"),
            id: "r1".into(),
        };
        let cmd = words(&["printf", "%s;", "it's"]);
        assert_eq!(
            rd.wrapper(&cmd, Some(100)),
            "{ trap : INT; ( 'printf' '%s;' 'it'\\''s' ) 2>&1; echo \"$?\" 2>/dev/null >'/s/run/r1/st'; } \
             | (trap '' INT; exec tee /dev/tty) | (trap '' INT; umask 077; exec tail -c 100 >'/s/run/r1/out'); \
             echo 2>/dev/null >'/s/run/r1/done'\n"
        );
        assert_eq!(
            rd.wrapper(&cmd, None),
            "( 'printf' '%s;' 'it'\\''s' ); echo \"$?\" 2>/dev/null >'/s/run/r1/st'; \
             echo 2>/dev/null >'/s/run/r1/done'\n"
        );
    }

    #[test]
    fn the_host_script_keeps_everything_on_the_host() {
        let h = HostRun { id: "rX".into() };
        let tmux = Tmux::new(crate::tmux::Socket::Default);
        let s = h.script(&tmux, &words(&["echo", "$(x)"]), Some(10));
        assert!(s.starts_with("trap : INT; d=$(mktemp -d) || exit 1; { trap : INT; ( 'echo' '$(x)' ) 2>&1; echo \"$?\" 2>/dev/null >\"$d/st\"; }"), "{s}");
        assert!(s.contains("exec tail -c 10 >\"$d/out\")"), "{s}");
        assert!(
            s.contains("load-buffer -b tmuxmate-rX-out \"$d/out\""),
            "{s}"
        );
        assert!(s.contains("load-buffer -b tmuxmate-rX-st \"$d/st\""), "{s}");
        assert!(
            s.ends_with(
                "wait-for -S tmuxmate-rX 2>/dev/null; trap - INT; exec \"${SHELL:-/bin/sh}\""
            ),
            "{s}"
        );
        let s = h.script(&tmux, &words(&["vi"]), None);
        assert!(
            s.contains("( 'vi' ); echo \"$?\" 2>/dev/null >\"$d/st\"; tmux load-buffer"),
            "{s}"
        );
        assert!(!s.contains("tee"), "{s}");
    }
}
