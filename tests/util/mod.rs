//! Sealed real-tmux test harness.
//!
//! Every test gets its own tmux server on a private socket (`-L` unique name inside a
//! private `TMUX_TMPDIR`), started with `-f /dev/null`, with `TMUX`/`TMUX_PANE` removed,
//! a temp `HOME` and state dir; the server is killed and its directory removed on drop.
//! Waits are conditions with deadlines. When tmux is missing, tests fail under `CI` and
//! are skipped (with a message) elsewhere.

#![allow(dead_code)]

pub mod contract;
pub mod sshd;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_tmuxmate");
static SEQ: AtomicU32 = AtomicU32::new(0);

/// The stand-in agent loop: runs `req.N` from its pane in order, writes `out.N`.
pub const AGENT_LOOP: &str = r#"D="$1"; i=1
while :; do
  while [ ! -e "$D/req.$i" ]; do sleep 0.01; done
  sh "$D/req.$i" > "$D/out.$i.tmp" 2>&1
  echo "$?" > "$D/rc.$i"
  mv "$D/out.$i.tmp" "$D/out.$i"
  i=$((i+1))
done
"#;

/// The stdout of a command that must have succeeded (else the test fails with its stderr).
/// Write an executable script (a stand-in program or a logging shim) at `path`.
pub fn write_script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

pub fn ok(out: impl std::borrow::Borrow<Output>) -> String {
    let out = out.borrow();
    assert!(
        out.status.success(),
        "exit {:?}: {}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `tmux -V` only: no server is contacted. (This and `Server::tmux_raw` are the harness's
/// only tmux spawns; every other test reaches tmux through them, on the private socket.)
pub fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// The release of the `tmux` on PATH as `(major, minor)`, for the few behaviours that
/// differ between releases (docs/tmux-versions.md).
pub fn tmux_release() -> (u32, u32) {
    let out = Command::new("tmux").arg("-V").output().expect("tmux -V");
    let text = String::from_utf8_lossy(&out.stdout);
    let word = text.split_whitespace().nth(1).unwrap_or("");
    let word = word.strip_prefix("next-").unwrap_or(word);
    let (major, rest) = word.split_once('.').unwrap_or(("99", "0"));
    let minor: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    (major.parse().unwrap_or(99), minor.parse().unwrap_or(0))
}

/// A window or session name as tmux stores it: from 3.7 tmux refuses names with control
/// characters and writes a backslash as `\\` (vis C style); before, as given.
pub fn stored_name(name: &str) -> String {
    if tmux_release() >= (3, 7) {
        name.replace('\\', "\\\\")
    } else {
        name.to_string()
    }
}

/// Start a server or skip the test (fail under CI).
#[macro_export]
macro_rules! server {
    () => {
        match $crate::util::Server::start() {
            Some(s) => s,
            None => return,
        }
    };
}

pub fn wait_until<T>(what: &str, deadline: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        if start.elapsed() > deadline {
            panic!("timed out after {deadline:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub struct Server {
    pub dir: PathBuf,
    pub name: String,
    pub home: PathBuf,
    pub state: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.tmux_raw(&["kill-server"]);
        // Processes the server's hooks started outside its panes (a digest follower, a
        // watch poller) outlive it for a moment and log their exit into the state dir,
        // making it again after it was removed: ~60 directories were left behind a suite.
        // They are ended first (they hold this directory in their environment), then the
        // directory is removed until it stays gone (bounded).
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            let left = users_of(&self.dir);
            if left.is_empty() || Instant::now() >= deadline {
                break;
            }
            for pid in left {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        while std::fs::remove_dir_all(&self.dir).is_err()
            && self.dir.exists()
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The processes (not this one) whose environment or command line names a path under
/// `dir`: an ssh connection master tmuxmate started for a `--host` test writes its title
/// over both (`ssh: <dir>/state/ssh/<hash> [mux]`), and would outlive the test by its
/// ControlPersist, 10 minutes.
fn users_of(dir: &Path) -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut want = dir.as_os_str().as_encoded_bytes().to_vec();
    want.push(b'/');
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            ["environ", "cmdline"].iter().any(|f| {
                std::fs::read(format!("/proc/{pid}/{f}"))
                    .is_ok_and(|b| b.windows(want.len()).any(|w| w == want.as_slice()))
            })
        })
        .collect()
}

impl Server {
    pub fn start() -> Option<Server> {
        if !tmux_available() {
            if std::env::var_os("CI").is_some() {
                panic!("tmux is not installed, and CI is set: the real-tmux tests cannot run");
            }
            eprintln!("SKIP: tmux is not installed");
            return None;
        }
        let n = SEQ.fetch_add(1, Ordering::SeqCst);
        let name = format!("tm{}x{}", std::process::id(), n);
        let dir = std::env::temp_dir().join(format!("tmuxmate-test-{name}"));
        let _ = std::fs::remove_dir_all(&dir);
        let home = dir.join("home");
        let state = dir.join("state");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&state).unwrap();
        // Private, as tmuxmate makes its own: a wider one would be closed (and logged) by
        // the first call, which tests of "writes nothing" would see.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        std::fs::write(dir.join("agent.sh"), AGENT_LOOP).unwrap();
        let s = Server {
            dir,
            name,
            home,
            state,
        };
        // TMUXMATE_TEST_TMUX_CONF: run the suite once against a hostile user config
        // (README, "Testing"); /dev/null otherwise. The test session itself must survive
        // such a config: a global `window-size manual` crashes tmux 3.3a on new-session
        // and `destroy-unattached` would end the detached session at once.
        let conf = std::env::var("TMUXMATE_TEST_TMUX_CONF").unwrap_or_else(|_| "/dev/null".into());
        let out = s.tmux_raw(&[
            "-f",
            &conf,
            "start-server",
            ";",
            "set-option",
            "-gF",
            "@test-saved-window-size",
            "#{window-size}",
            ";",
            "set-option",
            "-g",
            "window-size",
            "latest",
            ";",
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            "120",
            "-y",
            "40",
            "sh",
            ";",
            "set-option",
            "destroy-unattached",
            "off",
            ";",
            "set-option",
            "-gF",
            "window-size",
            "#{@test-saved-window-size}",
            ";",
            "set-option",
            "-gu",
            "@test-saved-window-size",
        ]);
        assert!(
            out.status.success(),
            "could not start tmux: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(s)
    }

    pub fn socket_path(&self) -> PathBuf {
        let uid = nix_uid();
        self.dir
            .join("tmp")
            .join(format!("tmux-{uid}"))
            .join(&self.name)
    }

    /// A sealed environment for any child: cleared, then the few things we control.
    pub fn env(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("LANG", "C.UTF-8")
            .env("TERM", "xterm-256color")
            .env("SHELL", "/bin/sh")
            .env("TMUX_TMPDIR", self.dir.join("tmp"))
            .env("TMUXMATE_STATE_DIR", &self.state)
            .env("TMPDIR", self.dir.join("tmp"));
    }

    /// Every test's tmux call: always `-L <this server's private name>` in the sealed
    /// environment (private TMUX_TMPDIR, TMUX/TMUX_PANE removed), never the default server.
    fn tmux_raw(&self, args: &[&str]) -> Output {
        let mut c = Command::new("tmux");
        self.env(&mut c);
        c.arg("-L").arg(&self.name).args(args).stdin(Stdio::null());
        c.output().expect("spawn tmux")
    }

    /// Run tmux on this server; panics with stderr on failure.
    pub fn tmux(&self, args: &[&str]) -> String {
        let out = self.tmux_raw(args);
        assert!(
            out.status.success(),
            "tmux {:?} failed: {}",
            args,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn tmux_output(&self, args: &[&str]) -> Output {
        self.tmux_raw(args)
    }

    /// `--notify`/`--forward` take only known agents: one per-turn call makes an address
    /// known (made once, before the first watch, so no test's deliveries are consumed).
    pub fn known_agent(&self, agent: &str) {
        let l = self.state.join(format!("agents/{agent}.jsonl"));
        if !std::fs::read_to_string(&l).is_ok_and(|t| t.contains("\"t\":\"turn\"")) {
            ok(self.run(&["turn", "--agent", agent]));
        }
    }

    /// tmux on another private server (`-L name`) in this server's sealed environment
    /// (same private TMUX_TMPDIR): for tests of a server that tmuxmate itself starts.
    pub fn tmux_other(&self, name: &str, args: &[&str]) -> Output {
        let mut c = Command::new("tmux");
        self.env(&mut c);
        c.arg("-L").arg(name).args(args).stdin(Stdio::null());
        c.output().expect("spawn tmux")
    }

    /// A `tmuxmate -L <this server>` command with the sealed environment.
    pub fn tmuxmate(&self) -> Command {
        let mut c = Command::new(BIN);
        self.env(&mut c);
        c.arg("-L").arg(&self.name).stdin(Stdio::null());
        c
    }

    /// Run tmuxmate from outside any pane.
    pub fn run(&self, args: &[&str]) -> Output {
        self.tmuxmate().args(args).output().expect("spawn tmuxmate")
    }

    /// A new window of session `main` named `name` running `cmd`; its pane id.
    pub fn window(&self, name: &str, cmd: &str) -> String {
        self.tmux(&[
            "new-window",
            "-d",
            "-t",
            "main:",
            "-n",
            name,
            "-P",
            "-F",
            "#{pane_id}",
            cmd,
        ])
        .trim()
        .to_string()
    }

    /// The `session:window.pane` address tmux gives pane `pane` (a user's `base-index` and
    /// `pane-base-index` decide the numbers: never assume 0).
    pub fn address(&self, pane: &str) -> String {
        self.tmux(&[
            "display",
            "-p",
            "-t",
            pane,
            "#{session_name}:#{window_index}.#{pane_index}",
        ])
        .trim()
        .to_string()
    }

    /// The `session:window` address of the window holding pane `pane`.
    pub fn window_address(&self, pane: &str) -> String {
        self.tmux(&[
            "display",
            "-p",
            "-t",
            pane,
            "#{session_name}:#{window_index}",
        ])
        .trim()
        .to_string()
    }

    /// A detached session named exactly `name` running `cmd`, made to survive a user's
    /// `destroy-unattached on` (set off in the same command list, by exact name: a config
    /// with that option would end it before a second tmux call).
    pub fn detached_session(&self, name: &str, cmd: &str) {
        let exact = format!("={name}:");
        self.tmux(&[
            "new-session",
            "-d",
            "-s",
            name,
            cmd,
            ";",
            "set-option",
            "-t",
            &exact,
            "destroy-unattached",
            "off",
        ]);
    }

    /// A new window running the stand-in agent loop; its pane id and request dir.
    pub fn agent_pane(&self, window_name: &str) -> Agent {
        self.agent_pane_as(window_name, "sh")
    }

    /// [`Server::agent_pane`] whose program tmux sees as `program` (`claude`, `codex`,
    /// `node`), as it sees a real agent CLI's: the stand-in's shell started by that name.
    pub fn agent_pane_as(&self, window_name: &str, program: &str) -> Agent {
        let n = SEQ.fetch_add(1, Ordering::SeqCst);
        let adir = self.dir.join(format!("agent{n}"));
        std::fs::create_dir_all(&adir).unwrap();
        let prog = if program == "sh" {
            "sh".to_string()
        } else {
            let p = adir.join(program);
            std::os::unix::fs::symlink("/bin/sh", &p).unwrap();
            // exec: tmux names a pane after its process group's leader, which is
            // otherwise the `sh -c` that tmux starts the command with.
            format!("exec '{}'", p.display())
        };
        let cmd = format!(
            "{prog} '{}' '{}'",
            self.dir.join("agent.sh").display(),
            adir.display()
        );
        let pane = self.window(window_name, &cmd);
        Agent {
            pane,
            dir: adir,
            n: std::cell::Cell::new(0),
            bin: BIN.to_string(),
        }
    }
}

pub fn nix_uid() -> u32 {
    // SAFETY-free: read our uid from /proc.
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|u| u.parse().ok())
        .unwrap_or(0)
}

/// A stand-in agent in a pane: scripts run with the pane's tty as controlling terminal.
pub struct Agent {
    pub pane: String,
    pub dir: PathBuf,
    n: std::cell::Cell<u32>,
    pub bin: String,
}

pub struct PaneRun {
    pub out: String,
    pub rc: i32,
}

impl Agent {
    /// Run a shell script inside the pane; `$TM` is the tmuxmate binary.
    pub fn sh(&self, script: &str) -> PaneRun {
        let n = self.n.get() + 1;
        self.n.set(n);
        let body = format!("TM='{}'\n{}\n", self.bin, script);
        let tmp = self.dir.join(format!("req.{n}.tmp"));
        std::fs::write(&tmp, body).unwrap();
        std::fs::rename(&tmp, self.dir.join(format!("req.{n}"))).unwrap();
        let out_path = self.dir.join(format!("out.{n}"));
        // A bound for a busy 2-core machine (some scripts run hundreds of commands).
        let out = wait_until(
            "the stand-in agent's answer",
            Duration::from_secs(120),
            || std::fs::read_to_string(&out_path).ok(),
        );
        let rc = std::fs::read_to_string(self.dir.join(format!("rc.{n}")))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(-1);
        PaneRun { out, rc }
    }

    /// One per-turn call from the pane.
    pub fn turn(&self, agent: &str) -> String {
        self.sh(&format!("\"$TM\" turn --agent '{agent}'")).out
    }

    pub fn fixture(&self, name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name)
    }
}

/// Stand-in for an agent TUI: raw mode, bracketed paste enabled, every byte recorded.
pub const RECORDER: &str = r#"stty raw -echo
printf '\033[?2004hstand-in ready\r\n'
exec cat > "$1"
"#;

pub struct Recorder {
    pub pane: String,
    pub file: PathBuf,
}

impl Recorder {
    pub fn bytes(&self) -> Vec<u8> {
        std::fs::read(&self.file).unwrap_or_default()
    }

    /// Wait until the recording holds exactly `want` (fails with the difference).
    pub fn expect(&self, want: &[u8]) {
        let start = Instant::now();
        loop {
            let got = self.bytes();
            if got == want {
                return;
            }
            if start.elapsed() > Duration::from_secs(10) || got.len() > want.len() {
                panic!(
                    "recorder got {:?}\nwanted {:?}",
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(want)
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Server {
    /// A new window running the raw-mode recorder; waits until it is ready.
    pub fn recorder_pane(&self, window_name: &str) -> Recorder {
        let n = SEQ.fetch_add(1, Ordering::SeqCst);
        let script = self.dir.join("recorder.sh");
        std::fs::write(&script, RECORDER).unwrap();
        let file = self.dir.join(format!("rec{n}.bin"));
        let cmd = format!("sh '{}' '{}'", script.display(), file.display());
        let pane = self.window(window_name, &cmd);
        wait_until("the recorder to be ready", Duration::from_secs(10), || {
            let s = self.tmux(&["capture-pane", "-p", "-t", &pane]);
            s.contains("stand-in ready").then_some(())
        });
        // The file exists once `cat` has opened it.
        wait_until("the recorder file", Duration::from_secs(10), || {
            file.exists().then_some(())
        });
        Recorder { pane, file }
    }
}

impl Server {
    /// The pane client `client` shows. Read from `list-clients`: on tmux 3.2
    /// `display-message -c` is a flag, not a client to name.
    pub fn client_pane(&self, client: &str) -> String {
        self.tmux(&["list-clients", "-F", "#{client_name} #{pane_id}"])
            .lines()
            .find_map(|l| l.strip_prefix(client)?.strip_prefix(' '))
            .unwrap_or_default()
            .to_string()
    }

    /// A real client attached to this server's session `session`, running in a new window
    /// of `outer` (so its screen is `outer`'s pane and keys reach it by `send-keys`).
    /// Returns that pane of `outer`.
    pub fn attach_in(&self, outer: &Server, session: &str) -> String {
        let cmd = format!(
            "env -u TMUX tmux -S '{}' attach -t '{}'",
            self.socket_path().display(),
            session
        );
        let pane = outer
            .tmux(&[
                "new-window",
                "-t",
                "main:",
                "-n",
                "att",
                "-P",
                "-F",
                "#{pane_id}",
                &cmd,
            ])
            .trim()
            .to_string();
        wait_until("the client to attach", Duration::from_secs(15), || {
            let c = self.tmux(&["list-clients", "-F", "#{client_name}"]);
            (!c.trim().is_empty()).then_some(())
        });
        pane
    }
}

/// Wait until pane `p`'s filler is done: its history holds at least `rows` rows, the
/// filler has given way to `cat`, and tmux has read all it wrote (the history no longer
/// grows between two looks). A capture taken while it still prints is cut short.
pub fn wait_history(s: &Server, p: &str, rows: u64) {
    let mut last = None;
    wait_until("the history to fill", Duration::from_secs(30), || {
        let o = s.tmux(&[
            "display",
            "-p",
            "-t",
            p,
            "#{history_size} #{pane_current_command}",
        ]);
        let (h, cmd) = o.trim().split_once(' ')?;
        let h = h.parse::<u64>().ok()?;
        let settled = cmd == "cat" && h >= rows && last == Some(h);
        last = Some(h);
        settled.then_some(())
    });
}
