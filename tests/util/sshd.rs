//! A private OpenSSH server for the remote (`--host`) tests.
//!
//! Owns: a real `sshd` (Debian's openssh-server) on 127.0.0.1 with a free port of its
//! own, host and user keys generated into the test's temp dir, its own authorized_keys,
//! `StrictModes no`, `UsePAM no`, run in the foreground (`-D -e -f`) with its log in a
//! file (connections are counted from it); a client ssh config and known_hosts next to
//! it. Skips outside CI when sshd is missing; fails under `CI=true`.
//!
//! Cleanup: the control masters tmuxmate started (found in the test's state dir) are told
//! to exit, then the sshd we started is killed by its pid.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::{Server, wait_until};

const SSHD: &str = "/usr/sbin/sshd";

pub struct Sshd {
    pub dir: PathBuf,
    pub port: u16,
    /// The ssh client config tmuxmate gets through TMUXMATE_SSH_CONFIG.
    pub config: PathBuf,
    pub log: PathBuf,
    /// Where tmuxmate keeps its control sockets (the test server's state dir).
    state: PathBuf,
    child: Child,
}

fn keygen(path: &Path) {
    let st = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .expect("ssh-keygen");
    assert!(st.success(), "ssh-keygen failed");
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().unwrap().port()
}

impl Sshd {
    /// Start sshd for the tests of `s`, or skip (None) outside CI when it is missing.
    pub fn start(s: &Server) -> Option<Sshd> {
        if !Path::new(SSHD).exists() {
            if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                panic!("{SSHD} is missing and CI is set: install openssh-server (.ci/run does)");
            }
            eprintln!(
                "SKIP: {SSHD} is not installed (apt-get install openssh-server); the --host tests need it"
            );
            return None;
        }
        let dir = s.dir.join("sshd");
        std::fs::create_dir_all(&dir).unwrap();
        keygen(&dir.join("host_key"));
        keygen(&dir.join("user_key"));
        keygen(&dir.join("stranger_key"));
        std::fs::copy(dir.join("user_key.pub"), dir.join("authorized_keys")).unwrap();
        // The remote login gets a home and a PATH head of its own (sshd's SetEnv): what a
        // remote tmuxmate installs and keeps stays in the test's dir, apart from this
        // machine's state, and a test can put a fake program (uname) first on its PATH.
        std::fs::create_dir_all(dir.join("home")).unwrap();
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        // Where a stand-in agent CLI started on the "host" records (tests/bridge.rs).
        std::fs::create_dir_all(dir.join("standin")).unwrap();
        // The host's own tmux directory: a host-side tmuxmate that lists "every server"
        // asks the default socket too, which must never be this machine's.
        std::fs::create_dir_all(dir.join("tmux-tmp")).unwrap();
        // sshd's privilege separation directory.
        let _ = std::fs::create_dir_all("/run/sshd");
        let log = dir.join("sshd.log");
        // The "host" runs the same tmux release as the tests' own servers (the suite runs
        // once per release with that release first on PATH): a client of another release
        // may not speak the server's message layout.
        let tmux_dir = std::env::var("PATH")
            .unwrap_or_default()
            .split(':')
            .find(|d| std::path::Path::new(d).join("tmux").is_file())
            .map(|d| format!("{d}:"))
            .unwrap_or_default();
        for _attempt in 0..5 {
            let port = free_port();
            let cfg = dir.join("sshd_config");
            std::fs::write(
                &cfg,
                format!(
                    "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\n\
                     AuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nUsePAM no\n\
                     PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                     MaxSessions 10\nPidFile none\nLogLevel VERBOSE\n\
                     SetEnv HOME={d}/home PATH={d}/bin:{tmux_dir}/usr/local/bin:/usr/bin:/bin \
                     STANDIN_DIR={d}/standin TMUX_TMPDIR={d}/tmux-tmp\n",
                    d = dir.display()
                ),
            )
            .unwrap();
            let logf = std::fs::File::create(&log).unwrap();
            let child = Command::new(SSHD)
                .arg("-D")
                .arg("-e")
                .arg("-f")
                .arg(&cfg)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(logf)
                .spawn()
                .expect("spawn sshd");
            let mut d = Sshd {
                config: dir.join("ssh_config"),
                dir: dir.clone(),
                port,
                log: log.clone(),
                state: s.state.clone(),
                child,
            };
            let up = wait_until("sshd to listen or fail", Duration::from_secs(20), || {
                let l = std::fs::read_to_string(&d.log).unwrap_or_default();
                if l.contains("Server listening on") {
                    Some(true)
                } else if matches!(d.child.try_wait(), Ok(Some(_))) {
                    Some(false)
                } else {
                    None
                }
            });
            if !up {
                continue; // the port was taken meanwhile
            }
            let host_pub = std::fs::read_to_string(dir.join("host_key.pub")).unwrap();
            let key: Vec<&str> = host_pub.split_whitespace().take(2).collect();
            std::fs::write(
                dir.join("known_hosts"),
                format!("[127.0.0.1]:{port} {}\n", key.join(" ")),
            )
            .unwrap();
            std::fs::write(dir.join("empty_known_hosts"), "").unwrap();
            d.write_config("ssh_config", "user_key", "known_hosts");
            return Some(d);
        }
        panic!(
            "sshd did not start: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// A client config named `name` using `key` and `known_hosts`; its path.
    pub fn write_config(&self, name: &str, key: &str, known_hosts: &str) -> PathBuf {
        let p = self.dir.join(name);
        std::fs::write(
            &p,
            format!(
                "Host *\n  IdentityFile {d}/{key}\n  IdentitiesOnly yes\n  IdentityAgent none\n\
                 \x20 UserKnownHostsFile {d}/{known_hosts}\n  GlobalKnownHostsFile /dev/null\n\
                 \x20 StrictHostKeyChecking yes\n  UpdateHostKeys no\n",
                d = self.dir.display()
            ),
        )
        .unwrap();
        p
    }

    /// The `--host` value for this sshd (as the current user).
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The remote login's home (sshd's SetEnv HOME).
    pub fn remote_home(&self) -> PathBuf {
        self.dir.join("home")
    }

    /// The first directory on the remote login's PATH (empty unless a test fills it).
    pub fn remote_bin(&self) -> PathBuf {
        self.dir.join("bin")
    }

    /// Connections sshd accepted so far.
    pub fn connections(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .matches("Connection from 127.0.0.1")
            .count()
    }

    /// Control sockets of the masters tmuxmate started for this test.
    pub fn masters(&self) -> Vec<PathBuf> {
        let dir = self.state.join("ssh");
        let Ok(rd) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        rd.flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.len() == 16 && !n.to_string_lossy().contains('.'))
            })
            .collect()
    }

    /// The pid of the live master on `socket` (`ssh -O check`), if any.
    pub fn master_pid(&self, socket: &Path) -> Option<i32> {
        let out = Command::new("ssh")
            .arg("-o")
            .arg(format!("ControlPath={}", socket.display()))
            .args(["-O", "check", "unused"])
            .stdin(Stdio::null())
            .output()
            .ok()?;
        let e = String::from_utf8_lossy(&out.stderr);
        e.split("pid=")
            .nth(1)?
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    }

    fn stop_masters(&self) {
        for sock in self.masters() {
            let _ = Command::new("ssh")
                .arg("-o")
                .arg(format!("ControlPath={}", sock.display()))
                .args(["-O", "exit", "unused"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.stop_masters();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
