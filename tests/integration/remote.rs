//! `--host`: the control commands against a tmux server reached through a real sshd.
//!
//! The "remote" host is this machine through `sshd` on 127.0.0.1 (tests/util/sshd.rs);
//! the remote tmux is the test's private server, selected with `-S` on that host. Each
//! test checks what arrived in tmux (or in a raw-mode recorder) byte for byte, and counts
//! the connections sshd accepted.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::hostile::{alive, corpus, fmt_of, nothing_ran};
use crate::server;
use crate::util::sshd::{Sshd, free_port};
use crate::util::*;

/// A test server and the sshd in front of it (dropped first: masters, then sshd).
pub(crate) struct Rig {
    pub d: Sshd,
    pub s: Server,
}

macro_rules! rig {
    () => {{
        let s = $crate::server!();
        match $crate::util::sshd::Sshd::start(&s) {
            Some(d) => $crate::remote::Rig { d, s },
            None => return,
        }
    }};
}
pub(crate) use rig;

impl Rig {
    /// `tmuxmate --host <sshd> -S <the test server's socket>`, sealed env, ssh config set.
    pub fn cmd(&self) -> Command {
        let mut c = self.bare();
        c.arg("--host")
            .arg(self.d.host())
            .arg("-S")
            .arg(self.s.socket_path())
            .stdin(Stdio::null());
        c
    }
    /// Sealed env and ssh config, no flags.
    fn bare(&self) -> Command {
        let mut c = Command::new(BIN);
        self.s.env(&mut c);
        c.env("TMUXMATE_SSH_CONFIG", &self.d.config)
            .stdin(Stdio::null());
        c
    }
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().expect("spawn tmuxmate")
    }
    /// Make the connection with one call, then end its master (`ssh -O exit`, which
    /// removes the socket file); the master's socket path.
    pub fn master_gone(&self) -> std::path::PathBuf {
        ok(self.run(&["list"]));
        let masters = self.d.masters();
        assert_eq!(masters.len(), 1, "{masters:?}");
        let sock = masters[0].clone();
        let _ = Command::new("ssh")
            .arg("-o")
            .arg(format!("ControlPath={}", sock.display()))
            .args(["-O", "exit", "unused"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .status();
        wait_until("the master to exit", Duration::from_secs(20), || {
            self.d.master_pid(&sock).is_none().then_some(())
        });
        // It stops answering before it is gone: its exit then unlinks the socket path,
        // which would take a stand-in's socket bound there in the meantime with it (the
        // call then sees no master and connects by itself). Wait for the unlink (soft: a
        // master killed outright leaves the file, and a stand-in replaces it).
        let t = std::time::Instant::now();
        while sock.exists() && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        sock
    }
    fn json(&self, args: &[&str]) -> serde_json::Value {
        let t = ok(self.run(args));
        serde_json::from_str(&t).unwrap_or_else(|e| panic!("not JSON ({e}): {t}"))
    }
}

pub(crate) fn err(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "expected a failure, got: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn control_commands_work_through_ssh_over_one_connection() {
    let r = rig!();
    let rec = r.s.recorder_pane("rec");
    let before = r.d.connections();

    // list: tmux's current command (the host's /proc is not ours), no executable.
    let l = r.json(&["list", "--json"]);
    let p = l["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["paneId"] == rec.pane.as_str())
        .expect("the recorder pane is listed");
    let tmux_says = fmt_of(&r.s, &rec.pane, "#{pane_current_command}");
    assert_eq!(p["currentCommand"], tmux_says.as_str(), "{p}");
    assert!(p["executable"].is_null(), "{p}");

    // send: byte-exact for text that a remote shell or tmux would otherwise read.
    let never = r.s.dir.join("NEVER");
    let cases: Vec<String> = vec![
        "ends with semicolon;".into(),
        ";".into(),
        "-----BEGIN leading dash".into(),
        format!("$(touch {}) `touch {}`", never.display(), never.display()),
        "100% : 'single' \"double\" \\back 'it'\\''s'".into(),
        "=word ~ {a,b} * ?".into(),
        "日本語 CJK and emoji 🚀🎉".into(),
        "#{pane_id} #(touch NEVER)".into(),
        "Enter".into(),
        "a\\;".into(),
    ];
    let mut want = Vec::new();
    for t in &cases {
        // `--`: text that starts with '-' is never read as a flag.
        ok(r.run(&["send", "-t", &rec.pane, "--", t]));
        want.extend_from_slice(t.as_bytes());
        rec.expect(&want);
    }
    ok(r.run(&["send", "-t", &rec.pane, "--enter", "x"]));
    want.extend_from_slice(b"x\r");
    rec.expect(&want);

    // paste: one bracketed paste; the text goes over stdin, the injection is defused.
    ok(r.run(&["paste", "-t", &rec.pane, "line one\nline two;\n 'q' $(x)"]));
    want.extend_from_slice(b"\x1b[200~line one\nline two;\n 'q' $(x)\x1b[201~");
    rec.expect(&want);
    let evil = "safe\x1b[201~\rrm -rf /tmp/x\r";
    ok(r.run(&["paste", "-t", &rec.pane, evil]));
    want.extend_from_slice("\x1b[200~safe␛[201~\nrm -rf /tmp/x\n\x1b[201~".as_bytes());
    rec.expect(&want);
    // 200 KB from stdin, intact.
    let big: String = (0..4000)
        .map(|i| format!("line {i:05} ;'\"$`#{{x}}\n"))
        .collect::<String>()
        .trim_end()
        .to_string();
    let mut c = r.cmd();
    c.args(["paste", "-t", &rec.pane, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(big.as_bytes())
        .unwrap();
    ok(child.wait_with_output().unwrap());
    want.extend_from_slice(b"\x1b[200~");
    want.extend_from_slice(big.as_bytes());
    want.extend_from_slice(b"\x1b[201~");
    rec.expect(&want);

    // keys: named keys only.
    ok(r.run(&["keys", "-t", &rec.pane, "Enter", "Up", "C-a"]));
    want.extend_from_slice(b"\r\x1b[A\x01");
    rec.expect(&want);

    // capture.
    let shell = r.s.window("sh", "sh");
    r.s.tmux(&["send-keys", "-t", &shell, "-l", "echo captured-$((6*7))"]);
    r.s.tmux(&["send-keys", "-t", &shell, "Enter"]);
    wait_until("the echo", Duration::from_secs(10), || {
        let c = r.json(&["capture", "-t", &shell, "--json"]);
        c["text"]
            .as_str()
            .is_some_and(|t| t.contains("captured-42"))
            .then_some(())
    });

    // split / new-window: marked as ours on the remote server.
    let sp = r.json(&["split", "-t", &shell, "--json", "--", "cat"]);
    let sp_id = sp["paneId"].as_str().unwrap().to_string();
    assert!(!fmt_of(&r.s, &sp_id, "#{@tmuxmate-created}").is_empty());
    let nw = r.json(&["new-window", "--name", "remote;win", "--json", "--", "cat"]);
    let nw_id = nw["paneId"].as_str().unwrap().to_string();
    assert_eq!(fmt_of(&r.s, &nw_id, "#{window_name}"), "remote;win");

    // swap.
    let win_before = fmt_of(&r.s, &sp_id, "#{window_id}");
    ok(r.run(&["swap", &sp_id, &nw_id]));
    assert_eq!(fmt_of(&r.s, &nw_id, "#{window_id}"), win_before);

    // kill: without --confirm nothing; with it, the pane is gone.
    let e = err(&r.run(&["kill", "pane", "-t", &sp_id]));
    assert!(e.contains("--confirm"), "{e}");
    ok(r.run(&["kill", "pane", "-t", &sp_id, "--confirm"]));
    let panes = r.s.tmux(&["list-panes", "-a", "-F", "#{pane_id}"]);
    assert!(!panes.lines().any(|l| l == sp_id), "{panes}");

    // A remote server's approver command is never run on this machine.
    r.s.tmux(&[
        "set",
        "-g",
        "@tmuxmate-approve-command",
        &format!("touch {}", never.display()),
    ]);
    let e = err(&r.run(&["kill", "window", "-t", &nw_id, "--confirm"]));
    assert!(e.contains("another host") && e.contains("refused"), "{e}");
    assert!(!never.exists(), "a remote option ran a command here");

    alive(&r.s);
    nothing_ran(&r.s);
    assert!(!r.d.remote_home().join("NEVER").exists());
    // Every call above went over the one master connection.
    assert_eq!(r.d.connections() - before, 1, "connections opened");
}

#[test]
fn remote_run_reports_exit_status_and_exact_output() {
    let r = rig!();
    let words = corpus();
    let mut args = vec!["run", "--json", "--", "printf", "[%s]\\n"];
    args.extend(words.iter().map(|s| s.as_str()));
    let j = r.json(&args);
    let want: String = words.iter().map(|w| format!("[{w}]\n")).collect();
    assert_eq!(j["text"].as_str().unwrap(), want.trim_end(), "{j}");
    assert_eq!(j["exitStatus"], 0);
    assert_eq!(j["timedOut"], false);

    let j = r.json(&[
        "run",
        "--json",
        "--",
        "sh",
        "-c",
        "echo out; echo err >&2; exit 7",
    ]);
    assert_eq!(j["exitStatus"], 7, "{j}");
    assert_eq!(j["text"], "out\nerr");

    // No output at all.
    let j = r.json(&["run", "--json", "--", "true"]);
    assert_eq!(
        (j["exitStatus"].as_i64(), j["text"].as_str()),
        (Some(0), Some(""))
    );

    // Timeout: reported, the command keeps running in its pane.
    let j = r.json(&["run", "--json", "--timeout-ms", "300", "--", "sleep", "30"]);
    assert_eq!(j["timedOut"], true, "{j}");
    assert!(j["exitStatus"].is_null());

    // --until-stable in a fresh pane.
    let j = r.json(&[
        "run",
        "--json",
        "--until-stable",
        "300",
        "--",
        "sh",
        "-c",
        "echo tui; sleep 30",
    ]);
    assert_eq!(j["stabilized"], true, "{j}");
    assert!(j["text"].as_str().unwrap().contains("tui"));

    // -t (typed into an idle shell) needs /proc on the host: refused, nothing typed.
    let shell = r.s.window("sh", "sh");
    let out = r.run(&["run", "-t", &shell, "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    let e = err(&out);
    assert!(e.contains("--host") && e.contains("/proc"), "{e}");

    // Our buffers are gone once read.
    let bufs = r.s.tmux(&["list-buffers", "-F", "#{buffer_name}"]);
    assert!(!bufs.contains("tmuxmate-r"), "{bufs}");
    nothing_ran(&r.s);
    assert!(!r.d.remote_home().join("NEVER").exists());
}

#[test]
fn hostile_names_arrive_exactly_on_the_remote_server() {
    let r = rig!();
    for name in corpus() {
        let j = r.json(&[
            "new-window",
            &format!("--name={name}"),
            "--json",
            "--",
            "cat",
        ]);
        let pane = j["paneId"].as_str().unwrap().to_string();
        assert_eq!(
            fmt_of(&r.s, &pane, "#{window_name}"),
            crate::util::stored_name(&name),
            "name {name:?}"
        );
        r.s.tmux(&["kill-pane", "-t", &pane]);
        alive(&r.s);
    }
    // Start directories with hostile names (those that can be directory names).
    for name in [
        "x;",
        "#(touch NEVER)",
        "$(touch NEVER)",
        "it's \"q\"",
        "=word",
        " sp ",
    ] {
        let dir = r.s.dir.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let j = r.json(&[
            "new-window",
            &format!("--cwd={}", dir.display()),
            "--json",
            "--",
            "cat",
        ]);
        let pane = j["paneId"].as_str().unwrap().to_string();
        assert_eq!(
            fmt_of(&r.s, &pane, "#{pane_current_path}"),
            dir.display().to_string(),
            "cwd {name:?}"
        );
        r.s.tmux(&["kill-pane", "-t", &pane]);
    }
    // Newlines are refused remotely exactly as locally: nothing created.
    let n = r.s.tmux(&["list-windows", "-a"]).lines().count();
    let out = r.run(&["new-window", "--name", "a\nb", "--", "cat"]);
    assert_eq!(out.status.code(), Some(2), "{}", err(&out));
    assert_eq!(r.s.tmux(&["list-windows", "-a"]).lines().count(), n);
    nothing_ran(&r.s);
    assert!(!r.d.remote_home().join("NEVER").exists());
}

#[test]
fn refusals_name_the_host_and_say_what_to_do() {
    let r = rig!();
    let host = r.d.host();

    // Unreachable: nothing listens on the port.
    let dead = format!("127.0.0.1:{}", free_port());
    let mut c = r.bare();
    c.args(["--host", &dead, "list"]);
    let e = err(&c.output().unwrap());
    assert!(e.contains("cannot reach host") && e.contains(&dead), "{e}");

    // Auth failed: a key the server does not know; never a prompt (stdin is closed anyway).
    let stranger =
        r.d.write_config("stranger_config", "stranger_key", "known_hosts");
    let mut c = r.cmd();
    c.env("TMUXMATE_SSH_CONFIG", &stranger).arg("list");
    let e = err(&c.output().unwrap());
    assert!(
        e.contains("could not log in") && e.contains(&host) && e.contains("BatchMode"),
        "{e}"
    );

    // Host key unknown: says how to add it.
    let unknown =
        r.d.write_config("unknown_config", "user_key", "empty_known_hosts");
    let mut c = r.cmd();
    c.env("TMUXMATE_SSH_CONFIG", &unknown).arg("list");
    let e = err(&c.output().unwrap());
    assert!(
        e.contains("host key") && e.contains("ssh-keyscan") && e.contains(&host),
        "{e}"
    );

    // No tmux on the host.
    let mut c = r.cmd();
    c.env("TMUXMATE_REMOTE_TMUX", "/nonexistent/tmux")
        .arg("list");
    let e = err(&c.output().unwrap());
    assert!(e.contains("has no tmux") && e.contains(&host), "{e}");

    // tmux too old on the host.
    let old = r.s.dir.join("old-tmux");
    std::fs::write(&old, "#!/bin/sh\necho 'tmux 2.9'\n").unwrap();
    Command::new("chmod").arg("755").arg(&old).status().unwrap();
    let mut c = r.cmd();
    c.env("TMUXMATE_REMOTE_TMUX", &old).arg("list");
    let e = err(&c.output().unwrap());
    assert!(
        e.contains("too old") && e.contains("2.9") && e.contains(&host),
        "{e}"
    );

    // The remote server is not running.
    let mut c = r.bare();
    c.args(["--host", &host, "-S", "/nonexistent/sock", "list"]);
    let e = err(&c.output().unwrap());
    assert!(e.contains("no tmux server") && e.contains(&host), "{e}");

    // Host values that are not plain names never reach ssh.
    for bad in [
        "-oProxyCommand=touch NEVER",
        "h;touch NEVER",
        "a b",
        "h:99999",
        "u@h@h",
    ] {
        let mut c = r.bare();
        c.arg(format!("--host={bad}")).arg("list");
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let e = err(&out);
        assert!(
            e.contains("refused") && e.contains("[user@]host[:port]"),
            "{e}"
        );
    }

    // Commands that need this machine refuse --host and say which ones work.
    for args in [
        vec!["where"],
        vec!["digest", "show", "-t", "%0"],
        vec!["agent", "attach", "x"],
    ] {
        let out = r.run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = err(&out);
        assert!(
            e.contains("does not work with --host")
                && e.contains("capture")
                && e.contains("remote install"),
            "{e}"
        );
    }
    // The hook fails soft: exit 0, nothing printed.
    let out = r.run(&["hook", "claude"]);
    assert!(out.status.success() && out.stdout.is_empty());
    // TMUXMATE_HOST is the default; an empty --host means this machine.
    let mut c = Command::new(BIN);
    r.s.env(&mut c);
    c.env("TMUXMATE_SSH_CONFIG", &r.d.config)
        .env("TMUXMATE_HOST", &host)
        .arg("-S")
        .arg("/nonexistent/sock")
        .arg("list");
    let e = err(&c.output().unwrap());
    assert!(e.contains(&format!("on host {host}")), "{e}");
    let mut c = Command::new(BIN);
    r.s.env(&mut c);
    c.env("TMUXMATE_HOST", &host)
        .args(["--host", "", "-S"])
        .arg(r.s.socket_path())
        .arg("list");
    ok(c.output().unwrap());
    nothing_ran(&r.s);
}

#[test]
fn twenty_parallel_calls_from_cold_share_one_connection() {
    let r = rig!();
    let before = r.d.connections();
    let children: Vec<_> = (0..20)
        .map(|_| {
            r.cmd()
                .args(["list", "--json"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        ok(c.wait_with_output().unwrap());
    }
    assert_eq!(
        r.d.connections() - before,
        1,
        "20 cold calls at once must open exactly one connection (sshd log: {})",
        std::fs::read_to_string(&r.d.log).unwrap_or_default()
    );
    // And 20 more at once over the warm master (MaxSessions 10): still that one.
    let children: Vec<_> = (0..20)
        .map(|_| {
            r.cmd()
                .args(["list"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(!e.contains("refused by peer"), "{e}");
        ok(out);
    }
    assert_eq!(r.d.connections() - before, 1);
}

#[test]
fn a_dropped_connection_is_reestablished_and_an_inflight_run_still_finishes() {
    let r = rig!();
    ok(r.run(&["list"]));
    let before = r.d.connections();
    let masters = r.d.masters();
    assert_eq!(masters.len(), 1, "{masters:?}");
    // A run that outlives the master: its waiter dies with the connection, the next
    // look at the status buffer reconnects and finds the result.
    let run = r
        .cmd()
        .args([
            "run",
            "--json",
            "--",
            "sh",
            "-c",
            "sleep 2; echo finished; exit 4",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Past the window's creation (its answer may still be on its way when the window
    // shows): the run's waiter, a `tmux -S <this test's socket> wait-for tmuxmate-r...` on
    // the host, is running. Only this server's: another test's run has a waiter of its
    // own, and killing the master on seeing that one lands anywhere in this run (in its
    // window's creation, whose loss is rightly an error).
    let socket = format!("\0{}\0", r.s.socket_path().display());
    wait_until(
        "the run's waiter on the host",
        Duration::from_secs(20),
        || {
            std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
                let c = std::fs::read(e.path().join("cmdline")).ok()?;
                let c = String::from_utf8_lossy(&c);
                (c.contains("\0wait-for\0tmuxmate-r") && c.contains(&socket)).then_some(())
            })
        },
    );
    let pid = r.d.master_pid(&masters[0]).expect("a live master");
    Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    let out = run.wait_with_output().unwrap();
    let j: serde_json::Value = serde_json::from_str(&ok(out)).unwrap();
    assert_eq!(j["exitStatus"], 4, "{j}");
    assert_eq!(j["text"], "finished");
    // The next call works, over one new connection.
    ok(r.run(&["list"]));
    ok(r.run(&["list"]));
    assert_eq!(
        r.d.connections() - before,
        1,
        "one reconnection; sshd's log:\n{}",
        std::fs::read_to_string(&r.d.log).unwrap_or_default()
    );
    assert!(r.d.master_pid(&masters[0]).is_some_and(|p| p != pid));
}

/// A stand-in for a master on `sock` that drops what ssh sends (its mux hello) until it
/// has dropped `hellos` of them or `stop` is set, then closes and leaves its socket file
/// behind, stale: a master that dies between a call's `connect()` and its session.
/// `connect()`-only probes (tmuxmate's own master check) are let go unharmed.
fn fake_master(
    sock: &std::path::Path,
    hellos: usize,
) -> (
    std::thread::JoinHandle<usize>,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    use std::io::Read;
    use std::sync::atomic::Ordering;
    let _ = std::fs::remove_file(sock);
    let l = std::os::unix::net::UnixListener::bind(sock).expect("bind the stand-in");
    l.set_nonblocking(true).unwrap();
    let mut l = Some(l);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    let h = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        let mut dropped = 0;
        while dropped < hellos
            && !stop2.load(Ordering::SeqCst)
            && std::time::Instant::now() < deadline
        {
            let Some(listener) = l.as_ref() else { break };
            match listener.accept() {
                Ok((mut c, _)) => {
                    c.set_nonblocking(false).unwrap();
                    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                    let mut b = [0u8; 1];
                    if matches!(c.read(&mut b), Ok(1)) {
                        dropped += 1; // ssh's hello: hang up on it
                        if dropped == hellos {
                            // A dying master stops listening as it hangs up (its process
                            // ends): close the listener first, leaving the file.
                            l = None;
                        }
                    }
                    drop(c);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        dropped // the listener closes here; UnixListener leaves the file
    });
    (h, stop)
}

#[test]
fn a_master_lost_before_the_session_starts_opens_no_second_connection() {
    let r = rig!();
    // The real master goes (and takes its socket file with it).
    let sock = r.master_gone();
    let before = r.d.connections();
    let log = || std::fs::read_to_string(&r.d.log).unwrap_or_default();

    // A master that answers connect() but never a session, for a whole call: the call
    // fails saying nothing ran, and ssh opened no connection of its own meanwhile.
    let (h, stop) = fake_master(&sock, usize::MAX);
    let e = err(&r.run(&["list"]));
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let n = h.join().unwrap();
    assert!(
        n >= 2,
        "the call was made again once: {n} hellos dropped; {e}"
    );
    assert!(
        e.contains("127.0.0.1") && e.contains("nothing ran") && e.contains("run it again"),
        "{e}"
    );
    assert_eq!(r.d.connections(), before, "no second connection: {}", log());

    // A master that dies during one call's handshake and leaves its socket file: that
    // call is made again over the one new connection, and the next call shares it.
    let (h, _stop) = fake_master(&sock, 1);
    ok(r.run(&["list"]));
    assert_eq!(h.join().unwrap(), 1);
    ok(r.run(&["list"]));
    assert_eq!(r.d.connections() - before, 1, "one reconnection: {}", log());
}

/// tmuxmate's place on the rig's remote login.
fn installed_at(r: &Rig) -> std::path::PathBuf {
    r.d.remote_home().join(".local/share/tmuxmate/bin/tmuxmate")
}

/// `tmuxmate remote install <the rig's host>`.
fn install(r: &Rig) -> Output {
    let mut c = r.bare();
    c.args(["remote", "install", &r.d.host()]);
    c.output().unwrap()
}

/// Files left in the remote tmuxmate directory (temp files of a failed copy included).
fn remote_bin_files(r: &Rig) -> Vec<String> {
    std::fs::read_dir(installed_at(r).parent().unwrap())
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// A local `turn` for `agent` against the test server (this machine's per-turn call).
fn turn(r: &Rig, agent: &str) -> Output {
    let mut c = r.bare();
    c.env("TMUXMATE_REMOTE_RETRY_MS", "0")
        .args(["-S"])
        .arg(r.s.socket_path())
        .args(["turn", "--agent", agent]);
    c.output().unwrap()
}

/// The remote tmuxmate's state dir (the remote login's default: apart from ours).
fn remote_state(r: &Rig) -> std::path::PathBuf {
    r.d.remote_home().join(".local/state/tmuxmate")
}

#[test]
fn remote_install_checks_the_architecture_copies_once_and_says_so() {
    let r = rig!();
    let before = r.d.connections();
    ok(turn(&r, "nobody"));
    // Without tmuxmate on the host: what needs it is refused, naming what still works.
    for args in [
        vec!["watch", "list"],
        vec!["agent", "list"],
        vec!["side", "status", "-t", "%0"],
        vec!["watch", "start", "--notify", "nobody", "--", "true"],
    ] {
        let out = r.run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let e = err(&out);
        assert!(
            e.contains(&format!("tmuxmate remote install {}", r.d.host()))
                && e.contains(
                    "list, send, paste, keys, capture, split, new-window, swap, run, kill"
                ),
            "{args:?}: {e}"
        );
    }
    // A host of another architecture (a fake uname first on its PATH): refused, nothing copied.
    let other = if std::env::consts::ARCH == "aarch64" {
        "riscv64"
    } else {
        "aarch64"
    };
    let uname = r.d.remote_bin().join("uname");
    std::fs::write(
        &uname,
        format!("#!/bin/sh\ncase \"$1\" in -s) echo Linux ;; -m) echo {other} ;; *) echo Linux ;; esac\n"),
    )
    .unwrap();
    Command::new("chmod")
        .arg("755")
        .arg(&uname)
        .status()
        .unwrap();
    let e = err(&install(&r));
    assert!(
        e.contains("refused")
            && e.contains(other)
            && e.contains(std::env::consts::ARCH)
            && e.contains("nothing was copied"),
        "{e}"
    );
    assert!(!installed_at(&r).exists());
    assert!(
        remote_bin_files(&r).is_empty(),
        "{:?}",
        remote_bin_files(&r)
    );
    // Another system: refused too.
    std::fs::write(
        &uname,
        "#!/bin/sh\ncase \"$1\" in -s) echo Darwin ;; *) echo arm64 ;; esac\n",
    )
    .unwrap();
    let e = err(&install(&r));
    assert!(e.contains("refused") && e.contains("Darwin"), "{e}");
    std::fs::remove_file(&uname).unwrap();

    // The real install: the same bytes, 0755, and it says so.
    let t = ok(install(&r));
    assert!(
        t.contains("installed tmuxmate") && t.contains(&r.d.host()),
        "{t}"
    );
    let there = std::fs::read(installed_at(&r)).unwrap();
    assert!(there == std::fs::read(BIN).unwrap(), "the copy differs");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(installed_at(&r))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o755);
    assert_eq!(
        remote_bin_files(&r),
        vec!["tmuxmate".to_string()],
        "no temp file left"
    );
    // A second install of the same binary copies nothing.
    let mut c = r.bare();
    c.args(["remote", "install", &r.d.host(), "--json"]);
    let text = ok(c.output().unwrap());
    let j: crate::util::contract::RemoteInstalledJson = serde_json::from_str(&text).unwrap();
    assert!(j.already_installed && !j.installed, "{text}");
    assert_eq!(
        (j.host.as_str(), j.sha256.len()),
        (r.d.host().as_str(), 64),
        "{text}"
    );
    assert_eq!(
        r.d.connections() - before,
        1,
        "every call of this test shares one connection"
    );
    // And what needed it works now.
    let j = r.json(&["watch", "list", "--json"]);
    assert!(j.as_array().is_some_and(|a| a.is_empty()), "{j}");
    // `remote install` takes the host as its argument, never --host.
    let out = r.run(&["remote", "install", "x"]);
    assert_eq!(out.status.code(), Some(2));
    nothing_ran(&r.s);
}

#[test]
fn a_remote_watch_result_reaches_the_local_turn_exactly_once() {
    let r = rig!();
    ok(install(&r));
    // A local agent (known from its per-turn call).
    ok(turn(&r, "agent-a"));
    let words: Vec<String> = corpus().into_iter().filter(|w| w.len() < 60).collect();
    let mut args = vec![
        "watch", "start", "--notify", "agent-a", "--json", "--", "printf", "[%s]\\n",
    ];
    args.extend(words.iter().map(String::as_str));
    let j = r.json(&args);
    let pinned: crate::util::contract::WatchStartedRemoteJson =
        serde_json::from_value(j.clone()).unwrap();
    assert_eq!(pinned.host, r.d.host(), "{j}");
    let job = j["jobId"].as_str().unwrap().to_string();
    // The job lives on the host: its state is in the remote tmuxmate's state dir and the
    // remote server's pane option, not in this machine's jobs.
    let pane = j["paneId"].as_str().unwrap().to_string();
    assert!(
        !r.s.state
            .join("jobs/active")
            .join(format!("{job}.json"))
            .exists()
    );
    wait_until("the remote job to end", Duration::from_secs(30), || {
        remote_state(&r)
            .join("jobs/done")
            .join(format!("{job}.json"))
            .exists()
            .then_some(())
    });
    let opt = fmt_of(&r.s, &pane, "#{@tmuxmate-job}");
    assert!(opt.contains(&job), "{opt}");
    // watch show over --host: the host's view, JSON as is.
    let shown = r.json(&["watch", "show", &job, "--json"]);
    assert_eq!(shown["jobId"], job.as_str(), "{shown}");
    // The next local turn gets it, once; later turns do not.
    let got = ok(turn(&r, "agent-a"));
    assert!(
        got.contains(&format!("[host {}]", r.d.host())) && got.contains(&job),
        "{got}"
    );
    for w in &words {
        assert!(got.contains(&format!("[{w}]")), "{w:?} missing from {got}");
    }
    let s0 = sessions(&r);
    for _ in 0..3 {
        let again = ok(turn(&r, "agent-a"));
        assert!(!again.contains(&job), "delivered twice: {again}");
    }
    assert_eq!(
        sessions(&r),
        s0,
        "turns with no remote job make no ssh call"
    );
    // Acknowledged on the host, and the local record is gone (turns need no ssh now).
    let left: Vec<_> = std::fs::read_dir(r.s.state.join("remote/watches"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // A job stopped on the host has no result to come: the next turn drops its record.
    let j = r.json(&[
        "watch", "start", "--notify", "agent-a", "--json", "--", "sleep", "60",
    ]);
    let stopped = j["jobId"].as_str().unwrap().to_string();
    ok(r.run(&["watch", "stop", &stopped]));
    let t = ok(turn(&r, "agent-a"));
    assert!(!t.contains(&stopped), "{t}");
    let left = std::fs::read_dir(r.s.state.join("remote/watches"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .count();
    assert_eq!(left, 0, "the stopped job's record stays");
    // A job this machine cannot record is taken back on the host (nothing would ever
    // fetch its result): the start fails saying so.
    let watches = r.s.state.join("remote/watches");
    std::fs::remove_dir_all(&watches).unwrap();
    std::fs::write(&watches, "not a directory").unwrap();
    let out = r.run(&[
        "watch", "start", "--notify", "agent-a", "--json", "--", "sleep", "30",
    ]);
    let e = String::from_utf8_lossy(&out.stdout).into_owned() + &err(&out);
    assert!(e.contains("record the remote watch job"), "{e}");
    let jobs = r.json(&["watch", "list", "--json"]);
    let sleeping: Vec<_> = jobs
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| {
            j["command"]
                .as_str()
                .is_some_and(|c| c.contains("sleep") && c.contains("30"))
        })
        .collect();
    assert_eq!(sleeping.len(), 1, "{jobs}");
    assert_eq!(sleeping[0]["status"], "stopped", "{jobs}");
    let gone = sleeping[0]["paneId"].as_str().unwrap().to_string();
    let panes = r.s.tmux(&["list-panes", "-a", "-F", "#{pane_id}"]);
    assert!(
        !panes.lines().any(|l| l == gone),
        "the job's window stays: {panes}"
    );
    nothing_ran(&r.s);
    assert!(!r.d.remote_home().join("NEVER").exists());
}

#[test]
fn a_master_killed_mid_watch_still_delivers_the_result_once() {
    let r = rig!();
    ok(install(&r));
    ok(turn(&r, "agent-b"));
    let go = r.s.dir.join("GO");
    let script = format!(
        "while [ ! -e '{}' ]; do sleep 0.1; done; echo after-the-drop",
        go.display()
    );
    let j = r.json(&[
        "watch", "start", "--notify", "agent-b", "--json", "--", &script,
    ]);
    let job = j["jobId"].as_str().unwrap().to_string();
    // A turn while the job runs: nothing yet, and the record stays.
    let t = ok(turn(&r, "agent-b"));
    assert!(!t.contains(&job), "{t}");
    let masters = r.d.masters();
    assert_eq!(masters.len(), 1, "{masters:?}");
    let pid = r.d.master_pid(&masters[0]).expect("a live master");
    Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    std::fs::write(&go, "").unwrap();
    wait_until("the remote job to end", Duration::from_secs(30), || {
        remote_state(&r)
            .join("jobs/done")
            .join(format!("{job}.json"))
            .exists()
            .then_some(())
    });
    // The connection fails for a turn (a key the host refuses): the turn fails soft.
    let stranger =
        r.d.write_config("stranger_config", "stranger_key", "known_hosts");
    let mut c = r.bare();
    c.env("TMUXMATE_SSH_CONFIG", &stranger)
        .env("TMUXMATE_REMOTE_RETRY_MS", "0")
        .arg("-S")
        .arg(r.s.socket_path())
        .args(["turn", "--agent", "agent-b"]);
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains(&job));
    let log = std::fs::read_to_string(r.s.state.join("log")).unwrap_or_default();
    assert!(log.contains("remote results from host"), "{log}");
    // Back: the next turn reconnects and gets it, once.
    let before = r.d.connections();
    let got = ok(turn(&r, "agent-b"));
    assert!(
        got.contains(&job) && got.contains("after-the-drop"),
        "{got}"
    );
    for _ in 0..3 {
        assert!(!ok(turn(&r, "agent-b")).contains(&job));
    }
    assert_eq!(r.d.connections() - before, 1, "one reconnection");
}

#[test]
fn agent_and_side_over_host_answer_as_they_do_on_the_host() {
    let r = rig!();
    ok(install(&r));
    // The same answer as the host's own tmuxmate gives: stdout and exit status.
    let local = |args: &[&str]| {
        let mut c = Command::new(installed_at(&r));
        c.env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", r.d.remote_home())
            .env("LANG", "C.UTF-8")
            .arg("-S")
            .arg(r.s.socket_path())
            .args(args)
            .stdin(Stdio::null());
        c.output().unwrap()
    };
    let shell = r.s.window("sh", "sh");
    let proj = r.s.dir.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let proj = proj.to_string_lossy().into_owned();
    for args in [
        vec!["agent", "list", "--json"],
        vec!["agent", "name", "claude", "--project", proj.as_str()],
        vec!["side", "status", "-t", shell.as_str(), "--json"],
        vec!["side", "history", "-t", shell.as_str(), "--json"],
        vec!["agent", "reply", "no-such-session", "--json"],
        vec!["agent", "stop", "no-such-session"],
        vec!["watch", "show", "wnosuchjob"],
    ] {
        let there = local(&args);
        let here = r.run(&args);
        assert_eq!(
            here.status.code(),
            there.status.code(),
            "{args:?}: {}",
            String::from_utf8_lossy(&here.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&here.stdout),
            String::from_utf8_lossy(&there.stdout),
            "{args:?}"
        );
    }
    // A path on the host must be given: this machine's directory means nothing there.
    for args in [
        vec!["agent", "start", "claude"],
        vec!["agent", "ask", "codex", "--message", "hi"],
    ] {
        let out = r.run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(err(&out).contains("--project"), "{args:?}");
    }
    // Hostile names and texts through the forwarded commands: the same refusal or
    // answer on both sides, nothing run, the server alive.
    for w in corpus() {
        for args in [
            vec![
                "agent",
                "send",
                w.as_str(),
                "--project",
                "/",
                "--message",
                w.as_str(),
            ],
            vec!["agent", "reply", w.as_str()],
            vec!["agent", "reply", "--json", "--", w.as_str()],
            vec!["watch", "show", "--", w.as_str()],
            vec![
                "side",
                "history",
                "-t",
                shell.as_str(),
                "--contains",
                w.as_str(),
            ],
        ] {
            let there = local(&args);
            let here = r.run(&args);
            assert_eq!(
                here.status.code(),
                there.status.code(),
                "{args:?}: {}{} / {}{}",
                String::from_utf8_lossy(&here.stdout),
                String::from_utf8_lossy(&here.stderr),
                String::from_utf8_lossy(&there.stdout),
                String::from_utf8_lossy(&there.stderr)
            );
            assert_eq!(here.stdout, there.stdout, "{args:?}");
        }
    }
    // Bulk text goes over stdin (a 200 KB message from a local file reaches the host's
    // refusal intact: it names its size).
    let big = r.s.dir.join("big.txt");
    std::fs::write(&big, "x".repeat(200_000)).unwrap();
    let send = [
        "agent",
        "send",
        "no-such-session",
        "--project",
        "/",
        "--file",
        big.to_str().unwrap(),
    ];
    let here = r.run(&send);
    let there = local(&send);
    assert_eq!(here.status.code(), there.status.code());
    alive(&r.s);
    nothing_ran(&r.s);
    assert!(!r.d.remote_home().join("NEVER").exists());
}

/// sshd's count of sessions (one per remote command over the master).
fn sessions(r: &Rig) -> usize {
    std::fs::read_to_string(&r.d.log)
        .unwrap_or_default()
        .matches("Starting session")
        .count()
}

#[test]
fn capture_and_send_are_one_remote_call() {
    let r = rig!();
    let rec = r.s.recorder_pane("rec");
    let shell = r.s.window("sh", "sh");
    r.s.tmux(&[
        "send-keys",
        "-t",
        &shell,
        "-l",
        "printf '%s\\n' 'fast-42' \"x;y\" '#{pane_id}' '日本'",
    ]);
    r.s.tmux(&["send-keys", "-t", &shell, "Enter"]);
    ok(r.run(&["list"]));
    // capture -t %N: one tmux command list, nothing needed on the host but tmux.
    let fast = wait_until("the printf", Duration::from_secs(10), || {
        let c = r.json(&["capture", "-t", &shell, "--json"]);
        c["text"]
            .as_str()
            .is_some_and(|t| t.contains("fast-42\nx;y\n#{pane_id}\n日本"))
            .then_some(c)
    });
    let s0 = sessions(&r);
    let again = r.json(&["capture", "-t", &shell, "--json"]);
    assert_eq!(sessions(&r) - s0, 1, "capture: one remote call");
    // The same answer as the several-call path (a session:window.pane target takes it).
    let named = fmt_of(
        &r.s,
        &shell,
        "#{session_name}:#{window_index}.#{pane_index}",
    );
    let slow = r.json(&["capture", "-t", &named, "--json"]);
    assert_eq!(again, slow);
    assert_eq!(fast["target"], named.as_str());
    for args in [
        vec!["--lines", "3"],
        vec!["--all", "--max-bytes", "20"],
        vec!["--join"],
    ] {
        let mut f = vec!["capture", "-t", &shell, "--json"];
        f.extend(args.iter().copied());
        let mut n = vec!["capture", "-t", named.as_str(), "--json"];
        n.extend(args.iter().copied());
        assert_eq!(r.json(&f), r.json(&n), "{args:?}");
    }
    // Its snapshot is stored here, as for any capture.
    let stored = || {
        let mut c = r.bare();
        c.args(["snapshots", "--json", "--limit", "1000"]);
        let v: serde_json::Value = serde_json::from_str(&ok(c.output().unwrap())).unwrap();
        v.as_array()
            .map(|a| a.len())
            .unwrap_or_else(|| panic!("{v}"))
    };
    let n = stored();
    ok(r.run(&["capture", "-t", &shell]));
    assert_eq!(stored(), n + 1, "the capture's snapshot");
    // No such pane: the usual error.
    let e = err(&r.run(&["capture", "-t", "%999"]));
    assert!(e.contains("%999"), "{e}");

    // send -t: plain tmux without tmuxmate there (after one call that finds it missing),
    // one call to the host's tmuxmate after `remote install`.
    ok(r.run(&["send", "-t", &rec.pane, "--", "a;b"]));
    rec.expect(b"a;b");
    ok(install(&r));
    let s0 = sessions(&r);
    ok(r.run(&[
        "send",
        "-t",
        &rec.pane,
        "--",
        "$(touch NEVER) 'q' #{pane_id}",
    ]));
    rec.expect(b"a;b$(touch NEVER) 'q' #{pane_id}");
    assert_eq!(sessions(&r) - s0, 1, "send: one remote call");
    let s0 = sessions(&r);
    ok(r.run(&["send", "-t", &rec.pane, "--enter", "--", "-dash"]));
    rec.expect(b"a;b$(touch NEVER) 'q' #{pane_id}-dash\r");
    assert_eq!(sessions(&r) - s0, 1);
    nothing_ran(&r.s);
    assert!(!r.d.remote_home().join("NEVER").exists());
}

#[test]
fn a_managed_agent_on_the_host_is_started_asked_and_stopped_over_host() {
    let r = rig!();
    ok(install(&r));
    // A stand-in Claude first on the host's PATH, a project (a git checkout) there.
    std::fs::copy(
        crate::bridge::standin_bin(),
        r.d.remote_bin().join("claude"),
    )
    .unwrap();
    let proj = r.s.dir.join("remote-proj");
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    std::fs::write(proj.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let p = proj.to_string_lossy().into_owned();
    let st = r.json(&["agent", "start", "claude", "--project", &p, "--json"]);
    let name = st["name"].as_str().unwrap().to_string();
    let listed = r.json(&["agent", "list", "--json"]);
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["name"] == name.as_str()),
        "{listed}"
    );
    // A message with shell and tmux syntax in it, byte-exact; the reply as the host reads it.
    let msg = "hello host; $(touch NEVER) #{pane_id} 'q' 日本";
    let reply = r.json(&[
        "agent",
        "ask",
        &name,
        "--project",
        &p,
        "--message",
        msg,
        "--timeout",
        "60s",
        "--json",
    ]);
    // (The stand-in replies with the prompt's first 40 characters; it records it whole.)
    let head: String = msg.chars().take(40).collect();
    assert_eq!(
        reply["text"],
        format!("stand-in reply to: {head}").as_str(),
        "{reply}"
    );
    let prompts = || -> Vec<String> {
        std::fs::read_to_string(r.d.dir.join("standin/prompts"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    assert_eq!(prompts().last().map(String::as_str), Some(msg));
    // A message from a local file goes over stdin.
    let f = r.s.dir.join("msg.txt");
    std::fs::write(&f, "from a file\nwith two lines").unwrap();
    ok(r.run(&[
        "agent",
        "send",
        &name,
        "--project",
        &p,
        "--file",
        f.to_str().unwrap(),
    ]));
    ok(r.run(&["agent", "wait", &name, "--timeout", "60s"]));
    let reply = r.json(&["agent", "reply", &name, "--json"]);
    assert_eq!(
        reply["text"], "stand-in reply to: from a file\nwith two lines",
        "{reply}"
    );
    assert_eq!(
        prompts().last().map(String::as_str),
        Some("from a file\nwith two lines")
    );
    ok(r.run(&["agent", "stop", &name, "--confirm"]));
    let listed = r.json(&["agent", "list", "--json"]);
    assert!(
        !listed
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["name"] == name.as_str()),
        "{listed}"
    );
    nothing_ran(&r.s);
    assert!(!r.d.remote_home().join("NEVER").exists());
}

/// The MCP server's tmux tools take `host` (and `hostSocket`, the server there): the
/// same listing, byte-exact typing and capture as on this machine, over one connection
/// kept for the whole server process; the tools that need tmuxmate on the host refuse
/// `host` and say what to use, as `tmux_dashboard` does; a host that is not one is
/// refused before ssh runs.
#[test]
fn mcp_tools_take_a_host() {
    let r = rig!();
    let rec = r.s.recorder_pane("rec");
    let shell = r.s.window("sh", "sh");
    let mut c = r.bare();
    c.stderr(Stdio::null());
    let mut m = crate::mcp::Client::spawn(c);
    m.initialize();
    let at = |mut v: serde_json::Value| {
        v["host"] = r.d.host().into();
        v["hostSocket"] = r.s.socket_path().to_string_lossy().into_owned().into();
        v
    };
    let before = r.d.connections();
    let l = m.ok("tmux_list", at(serde_json::json!({})));
    let panes = l["panes"].as_array().unwrap();
    assert!(
        panes.iter().any(|p| p["paneId"] == rec.pane.as_str()),
        "{l}"
    );
    let text = "x; kill-server #{pane_id} $(touch NEVER) 日本";
    let sent = m.ok(
        "tmux_send_keys",
        at(serde_json::json!({"target": rec.pane, "text": text})),
    );
    assert_eq!(sent["paneId"], rec.pane.as_str());
    rec.expect(text.as_bytes());
    r.s.tmux(&["send-keys", "-t", &shell, "-l", "printf 'mcp-%s\\n' remote"]);
    r.s.tmux(&["send-keys", "-t", &shell, "Enter"]);
    wait_until("the capture over host", Duration::from_secs(10), || {
        let c = m.ok("tmux_capture", at(serde_json::json!({"target": shell})));
        c["text"]
            .as_str()
            .is_some_and(|t| t.contains("mcp-remote"))
            .then_some(())
    });
    let run = m.ok(
        "tmux_run",
        at(serde_json::json!({"cmd": ["sh", "-c", "echo ran-there; exit 3"]})),
    );
    assert_eq!(
        (run["exitStatus"].as_i64(), run["text"].as_str()),
        (Some(3), Some("ran-there"))
    );
    assert_eq!(
        r.d.connections() - before,
        1,
        "one connection for every call"
    );
    // agent_ask over host needs the project there (this machine's directory means
    // nothing on the host): refused before anything runs.
    let e = m.refused(
        "agent_ask",
        at(serde_json::json!({"target": "claude", "message": "hi"})),
    );
    assert!(e.contains("refused") && e.contains("project"), "{e}");
    // A wait for one agent reads its pane on the host over ssh (no tmuxmate needed
    // there): a pane without agent state is said to be one.
    let e = m.refused("tmux_agents", at(serde_json::json!({"target": shell})));
    assert!(e.contains("has no agent state"), "{e}");
    // The dashboard already holds the hosts it follows: refused as `dashboard --host` is,
    // never this machine's files read against the host's tmux.
    let e = m.refused("tmux_dashboard", at(serde_json::json!({})));
    assert!(
        e.contains("refused") && e.contains("@tmuxmate-hosts"),
        "{e}"
    );
    let e = m.refused(
        "tmux_list",
        serde_json::json!({"host": "-oProxyCommand=touch NEVER"}),
    );
    assert!(e.contains("-oProxyCommand"), "{e}");
    m.finish();
    alive(&r.s);
    nothing_ran(&r.s);
    assert!(!r.d.remote_home().join("NEVER").exists());
}

/// The MCP tools that run tmuxmate on the host (`tmux_watch`, `agent_ask`, the side
/// tools) take `host` too, through the CLI's `--host` route: without tmuxmate there they
/// are refused (naming the install, nothing run, nothing recorded); after `remote
/// install` a watch started through MCP reaches the local agent's next turn exactly once
/// and its resource is listed and read with the host's state; agent_ask carries hostile
/// text byte-exact; the side tools answer as the host's CLI does; one connection for all.
#[test]
fn mcp_watch_agent_and_side_take_a_host() {
    let r = rig!();
    let shell = r.s.window("sh", "sh");
    ok(turn(&r, "agent-m"));
    let mut c = r.bare();
    c.stderr(Stdio::null());
    let mut m = crate::mcp::Client::spawn(c);
    m.initialize();
    let at = |mut v: serde_json::Value| {
        v["host"] = r.d.host().into();
        v["hostSocket"] = r.s.socket_path().to_string_lossy().into_owned().into();
        v
    };
    let before = r.d.connections();
    let windows = || r.s.tmux(&["list-panes", "-a", "-F", "#{pane_id}"]);
    let panes0 = windows();
    // No tmuxmate on the host: each is refused naming the install; nothing ran.
    for (tool, args) in [
        (
            "tmux_watch",
            serde_json::json!({"cmd": ["touch", "NEVER"], "notify": "agent-m"}),
        ),
        (
            "side_chat_main_status",
            serde_json::json!({"target": shell}),
        ),
        (
            "side_chat_main_history",
            serde_json::json!({"target": shell}),
        ),
        (
            "side_chat_report",
            serde_json::json!({"target": shell, "text": "note"}),
        ),
        (
            "agent_ask",
            serde_json::json!({"target": "claude", "message": "hi", "project": "/"}),
        ),
        ("tmux_agents", serde_json::json!({})),
    ] {
        let e = m.refused(tool, at(args));
        assert!(
            e.contains(&format!("tmuxmate remote install {}", r.d.host())),
            "{tool}: {e}"
        );
    }
    assert_eq!(windows(), panes0, "a refused watch made no window");
    let records = || {
        std::fs::read_dir(r.s.state.join("remote/watches"))
            .map(|rd| {
                rd.flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                    .count()
            })
            .unwrap_or(0)
    };
    assert_eq!(records(), 0, "a refused watch is not recorded");
    ok(install(&r));

    // tmux_watch over host: hostile words reach the result byte-exact, once.
    let words: Vec<String> = corpus().into_iter().filter(|w| w.len() < 60).collect();
    let mut cmd: Vec<String> = vec!["printf".into(), "[%s]\\n".into()];
    cmd.extend(words.iter().cloned());
    let go = r.s.dir.join("GO-MCP");
    cmd = vec![
        "sh".into(),
        "-c".into(),
        format!(
            "while [ ! -e '{}' ]; do sleep 0.1; done; \"$0\" \"$@\"",
            go.display()
        ),
    ]
    .into_iter()
    .chain(cmd)
    .collect();
    let w = m.ok(
        "tmux_watch",
        at(serde_json::json!({"cmd": cmd, "notify": "agent-m"})),
    );
    let job = w["jobId"].as_str().unwrap().to_string();
    assert_eq!(w["host"], r.d.host().as_str(), "{w}");
    assert_eq!(w["uri"], format!("tmuxmate://watch/{job}").as_str());
    // Listed (from the local record, no ssh) and read (the host's state) while it runs.
    let l = m.request("resources/list", serde_json::json!({}));
    let listed = l["result"]["resources"].as_array().unwrap();
    assert!(
        listed.iter().any(|x| x["uri"] == w["uri"]
            && x["title"].as_str().is_some_and(|t| t.contains(&r.d.host()))),
        "{l}"
    );
    let read = |m: &mut crate::mcp::Client| {
        let v = m.request("resources/read", serde_json::json!({"uri": w["uri"]}));
        let text = v["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{v}"))
            .to_string();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    let running = read(&mut m);
    assert_eq!(
        (running["status"].as_str(), running["host"].as_str()),
        (Some("running"), Some(r.d.host().as_str())),
        "{running}"
    );
    let _: crate::util::contract::JobJson = serde_json::from_value(running.clone()).unwrap();
    // The local watch list shows it, marked with its host.
    let mut lc = r.bare();
    lc.arg("-S")
        .arg(r.s.socket_path())
        .args(["watch", "list", "--json"]);
    let local: serde_json::Value = serde_json::from_str(&ok(lc.output().unwrap())).unwrap();
    assert!(
        local
            .as_array()
            .unwrap()
            .iter()
            .any(|j| j["jobId"] == job.as_str()
                && j["host"] == r.d.host().as_str()
                && j["status"] == "running"),
        "{local}"
    );
    std::fs::write(&go, "").unwrap();
    wait_until("the remote job to end", Duration::from_secs(30), || {
        remote_state(&r)
            .join("jobs/done")
            .join(format!("{job}.json"))
            .exists()
            .then_some(())
    });
    let got = ok(turn(&r, "agent-m"));
    assert!(
        got.contains(&format!("[host {}]", r.d.host())) && got.contains(&job),
        "{got}"
    );
    for w in &words {
        assert!(got.contains(&format!("[{w}]")), "{w:?} missing from {got}");
    }
    for _ in 0..2 {
        assert!(!ok(turn(&r, "agent-m")).contains(&job), "delivered twice");
    }
    // The client hears that the resource changed once the result is here, and can
    // still read the job's final state from its host.
    wait_until("the updated notification", Duration::from_secs(10), || {
        let _ = m.request("ping", serde_json::json!({}));
        m.notes()
            .iter()
            .any(|n| {
                n["method"] == "notifications/resources/updated" && n["params"]["uri"] == w["uri"]
            })
            .then_some(())
    });
    let ended = read(&mut m);
    assert_eq!(ended["status"], "finished", "{ended}");

    // The side tools answer as the host's CLI does (JSON, or its refusal word for word).
    let host_cli = |args: &[&str]| {
        let mut c = Command::new(installed_at(&r));
        c.env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", r.d.remote_home())
            .env("LANG", "C.UTF-8")
            .arg("-S")
            .arg(r.s.socket_path())
            .args(args)
            .stdin(Stdio::null());
        c.output().unwrap()
    };
    let same = |m: &mut crate::mcp::Client, tool: &str, args: serde_json::Value, cli: &[&str]| {
        let there = host_cli(cli);
        let res = m.call(tool, at(args));
        if there.status.success() {
            let mut want: serde_json::Value = serde_json::from_slice(&there.stdout).unwrap();
            if tool == "side_chat_main_history" {
                want = serde_json::json!({"lines": want});
            }
            assert_eq!(res["isError"], false, "{tool}: {res}");
            let mut got = res["structuredContent"].clone();
            if tool == "side_chat_report" {
                // Each report has a key of its own (time and process).
                assert!(got["key"].as_str().is_some_and(|k| k.starts_with("side:")));
                got["key"] = want["key"].clone();
            }
            assert_eq!(got, want, "{tool}");
        } else {
            assert_eq!(res["isError"], true, "{tool}: {res}");
            // With --json the host's CLI prints its error object on stdout.
            let e = match serde_json::from_slice::<serde_json::Value>(&there.stdout) {
                Ok(v) if v["error"].is_object() => {
                    let (m, h) = (&v["error"]["message"], &v["error"]["hint"]);
                    match h.as_str() {
                        Some(h) if !h.is_empty() => format!("{}; {h}", m.as_str().unwrap()),
                        _ => m.as_str().unwrap().to_string(),
                    }
                }
                _ => String::from_utf8_lossy(&there.stderr).trim().to_string(),
            };
            assert!(!e.is_empty(), "{tool}: the host said why");
            assert_eq!(
                res["content"][0]["text"].as_str(),
                Some(e.as_str()),
                "{tool}"
            );
        }
    };
    same(
        &mut m,
        "side_chat_main_status",
        serde_json::json!({"target": shell}),
        &["side", "status", "-t", &shell, "--json"],
    );
    for w in corpus()
        .into_iter()
        .filter(|w| !w.trim().is_empty())
        .take(12)
    {
        same(
            &mut m,
            "side_chat_main_history",
            serde_json::json!({"target": shell, "contains": w}),
            &["side", "history", "-t", &shell, "--contains", &w, "--json"],
        );
        same(
            &mut m,
            "side_chat_report",
            serde_json::json!({"target": shell, "text": w}),
            &["side", "report", "-t", &shell, "--json", "--", &w],
        );
    }
    // The notes arrived byte-exact in the host's ledger (twice each: MCP and host CLI).
    let ledgers: String = std::fs::read_dir(remote_state(&r).join("agents"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    for w in corpus()
        .into_iter()
        .filter(|w| !w.trim().is_empty())
        .take(12)
    {
        let enc = serde_json::to_string(w.trim()).unwrap();
        let enc = &enc[1..enc.len() - 1];
        assert!(ledgers.matches(enc).count() >= 2, "{w:?} not in {ledgers}");
    }

    // agent_ask over host: a managed stand-in Claude there, hostile text byte-exact.
    std::fs::copy(
        crate::bridge::standin_bin(),
        r.d.remote_bin().join("claude"),
    )
    .unwrap();
    let proj = r.s.dir.join("mcp-proj");
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    std::fs::write(proj.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let p = proj.to_string_lossy().into_owned();
    let msg = "mcp host; $(touch NEVER) #{pane_id} 'q' \"d\" \\ 日本 -x --flag";
    let reply = m.ok(
        "agent_ask",
        at(serde_json::json!({"target": "claude", "message": msg, "project": p, "timeoutS": 60})),
    );
    let head: String = msg.chars().take(40).collect();
    assert_eq!(reply["delivery"], "delivered", "{reply}");
    assert_eq!(
        reply["text"],
        format!("stand-in reply to: {head}").as_str(),
        "{reply}"
    );
    let prompts: Vec<String> = std::fs::read_to_string(r.d.dir.join("standin/prompts"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(prompts.last().map(String::as_str), Some(msg));
    // A long message travels over stdin, whole: the stand-in records it byte-exact.
    let long: String = (0..3000).map(|i| format!("{i}:$(x);'q' ")).collect();
    assert!(long.len() > 20_000);
    let reply = m.ok(
        "agent_ask",
        at(serde_json::json!({"target": reply["name"], "message": long, "project": p, "timeoutS": 60})),
    );
    assert_eq!(reply["delivery"], "delivered", "{reply}");
    let prompts: Vec<String> = std::fs::read_to_string(r.d.dir.join("standin/prompts"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // (The stand-in records a long paste inside its pasted-content marker, as Claude
    // shows one.)
    let got = prompts.last().cloned().unwrap_or_default();
    assert!(
        got.contains(&long),
        "the long message arrived changed: {} vs {} bytes, ends {:?}, {} prompts",
        got.len(),
        long.len(),
        &got[got.len().saturating_sub(40)..],
        prompts.len()
    );
    let name = reply["name"].as_str().unwrap().to_string();
    ok(r.run(&["agent", "stop", &name, "--confirm"]));

    assert_eq!(
        r.d.connections() - before,
        1,
        "one connection for every call"
    );
    m.finish();
    alive(&r.s);
    nothing_ran(&r.s);
    assert!(!r.d.remote_home().join("NEVER").exists());
}

/// Remote jobs this machine started show in its own views: the local `watch list` (text
/// and `--json`, marked with their host, fresh state asked once per host) and the status
/// line's count (from the local records only: no ssh however often it is computed); a
/// host that cannot be reached gets one error line and its jobs their last known state
/// while the local jobs still print.
#[test]
fn remote_jobs_show_in_the_local_watch_list_and_status_line() {
    let r = rig!();
    ok(install(&r));
    // This machine's own server (apart from the host's, whose watch poller writes its
    // own status there), with its agent.
    let here = server!();
    here.known_agent("agent-l");
    let cli = |args: &[&str]| -> Output {
        let mut c = Command::new(BIN);
        here.env(&mut c);
        c.env("TMUXMATE_SSH_CONFIG", &r.d.config)
            .env("TMUX", format!("{},1,0", here.socket_path().display()))
            .env("TMUXMATE_REMOTE_RETRY_MS", "0")
            .args(args)
            .stdin(Stdio::null());
        c.output().unwrap()
    };
    let host = r.d.host();
    let sock = r.s.socket_path().to_string_lossy().into_owned();
    let status = || {
        here.tmux(&["show", "-gqv", "@tmuxmate-watch-status"])
            .trim_end_matches('\n')
            .to_string()
    };
    let wait_status = |want: &str| {
        wait_until(&format!("status {want:?}"), Duration::from_secs(15), || {
            (status() == want).then_some(())
        })
    };
    let go = r.s.dir.join("GO-LIST");
    let script = format!(
        "while [ ! -e '{}' ]; do sleep 0.1; done; echo remote-done",
        go.display()
    );
    let started = ok(cli(&[
        "--host", &host, "-S", &sock, "watch", "start", "--notify", "agent-l", "--json", "--",
        &script,
    ]));
    let v: serde_json::Value = serde_json::from_str(&started).unwrap();
    let job = v["jobId"].as_str().unwrap().to_string();
    // Counted at once (the start itself pushes the count), as remote.
    assert_eq!(status(), "watch 1 remote");
    // A local job: its poller recomputes the line from then on, remote count included.
    let local = ok(cli(&[
        "watch", "start", "--notify", "agent-l", "--json", "--", "sleep", "300",
    ]));
    let local: serde_json::Value = serde_json::from_str(&local).unwrap();
    let local_job = local["jobId"].as_str().unwrap().to_string();
    wait_status("watch 1 running · 1 remote");
    // A job on a host that cannot be reached (a port nothing listens on): its record.
    let dead = format!("127.0.0.1:{}", free_port());
    let rec = std::fs::read_dir(here.state.join("remote/watches"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    let mut fake: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&rec).unwrap()).unwrap();
    fake["host"] = dead.clone().into();
    fake["jobId"] = "wdead00".into();
    std::fs::write(
        rec.with_file_name("fake.json"),
        serde_json::to_vec(&fake).unwrap(),
    )
    .unwrap();
    // The poller's later counts see it; they make no ssh call.
    let s0 = sessions(&r);
    let c0 = r.d.connections();
    wait_status("watch 1 running · 2 remote");
    assert_eq!(
        (sessions(&r), r.d.connections()),
        (s0, c0),
        "the status line asked a host"
    );

    // watch list --json: local jobs, then the remote ones with their host; the dead
    // host gets its line on stderr and its job its last known state.
    let out = cli(&["watch", "list", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains(&format!("host {dead}")) && e.contains("cannot ask") && !e.contains(&host),
        "{e}"
    );
    let all: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    for j in &all {
        let _: crate::util::contract::JobJson = serde_json::from_value(j.clone())
            .unwrap_or_else(|e| panic!("not the documented shape ({e}): {j}"));
    }
    let find = |id: &str| {
        all.iter()
            .find(|j| j["jobId"] == id)
            .unwrap_or_else(|| panic!("{id} not in {all:?}"))
    };
    let l = find(&local_job);
    assert!(l.get("host").is_none() && l["status"] == "running", "{l}");
    let there = find(&job);
    assert_eq!(
        (there["host"].as_str(), there["status"].as_str()),
        (Some(host.as_str()), Some("running")),
        "{there}"
    );
    let gone = find("wdead00");
    assert_eq!(
        (gone["host"].as_str(), gone["status"].as_str()),
        (Some(dead.as_str()), Some("unknown")),
        "{gone}"
    );
    assert!(
        gone["unreadable"]
            .as_str()
            .is_some_and(|u| u.contains("not reachable")),
        "{gone}"
    );
    // The text form says the same, one line each.
    let out = cli(&["watch", "list"]);
    assert!(out.status.success());
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(
        t.lines()
            .any(|l| l.starts_with(&local_job) && l.contains("sleep 300")),
        "{t}"
    );
    assert!(
        t.lines().any(|l| l.starts_with(&job)
            && l.contains("running")
            && l.ends_with(&format!("(host {host})"))),
        "{t}"
    );
    assert!(
        t.lines()
            .any(|l| l.starts_with("wdead00") && l.ends_with(&format!("(host {dead})"))),
        "{t}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("host {dead}")));

    // The result arrives at a turn: the count drops by one at once.
    std::fs::write(&go, "").unwrap();
    wait_until("the remote job to end", Duration::from_secs(30), || {
        remote_state(&r)
            .join("jobs/done")
            .join(format!("{job}.json"))
            .exists()
            .then_some(())
    });
    let got = ok(cli(&["turn", "--agent", "agent-l"]));
    assert!(got.contains(&job) && got.contains("remote-done"), "{got}");
    assert_eq!(status(), "watch 1 running · 1 remote");
    ok(cli(&["watch", "stop", &local_job]));
    std::fs::remove_file(rec.with_file_name("fake.json")).unwrap();
    ok(cli(&["turn", "--agent", "agent-l"]));
    wait_status("");
}

/// The host's own tmuxmate run directly (its login's home and state; `-S` the test
/// server), for answers to compare with the forwarded ones.
fn host_cli(r: &Rig, args: &[&str]) -> Output {
    let mut c = Command::new(installed_at(r));
    c.env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", r.d.remote_home())
        .env("LANG", "C.UTF-8")
        .arg("-S")
        .arg(r.s.socket_path())
        .args(args)
        .stdin(Stdio::null());
    c.output().unwrap()
}

/// A failed `agent_ask` / `agent ask` over a host says how far the message got, as it
/// does here: `not-delivered` when the host refused (no such session, mid-turn) or nothing
/// ran there (no tmuxmate), `unconfirmed` when Enter was pressed but the CLI did not record
/// the prompt in time, a delivered one with an unfinished turn answers its incomplete reply;
/// a host whose tmuxmate does not report it gives `null` and a text that says so. The CLI's
/// `--json` failure carries the same `delivery`, its text for people is the host's.
#[test]
fn a_failed_remote_ask_says_how_far_the_message_got() {
    let r = rig!();
    let mut c = r.bare();
    c.stderr(Stdio::null());
    let mut m = crate::mcp::Client::spawn(c);
    m.initialize();
    let at = |mut v: serde_json::Value| {
        v["host"] = r.d.host().into();
        v["hostSocket"] = r.s.socket_path().to_string_lossy().into_owned().into();
        v
    };
    let failed = |m: &mut crate::mcp::Client, args: serde_json::Value| {
        let res = m.call("agent_ask", at(args.clone()));
        assert_eq!(res["isError"], true, "{args}: {res}");
        res
    };
    let proj = r.s.dir.join("ask-proj");
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    std::fs::write(proj.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let p = proj.to_string_lossy().into_owned();

    // No tmuxmate on the host: nothing ran there.
    let res = failed(
        &mut m,
        serde_json::json!({"target": "claude", "message": "hi", "project": p}),
    );
    assert_eq!(
        res["structuredContent"]["delivery"], "not-delivered",
        "{res}"
    );
    let text = res["structuredContent"]["text"].as_str().unwrap();
    assert!(text.contains("tmuxmate remote install"), "{res}");
    assert_eq!(
        res["content"][0]["text"],
        format!("not-delivered: {text}").as_str()
    );
    let out = r.run(&[
        "agent",
        "ask",
        "claude",
        "--project",
        &p,
        "--message",
        "hi",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["delivery"].as_str(), v["error"]["kind"].as_str()),
        (Some("not-delivered"), Some("remote-no-tmuxmate")),
        "{v}"
    );
    ok(install(&r));

    // No such managed session there: the host refused before typing anything.
    let args = [
        "agent",
        "ask",
        "no-such-agent",
        "--project",
        &p,
        "--message",
        "hi",
    ];
    let there = host_cli(&r, &args);
    let said = String::from_utf8_lossy(&there.stderr).trim().to_string();
    let human = said.strip_prefix("tmuxmate: ").unwrap_or(&said).to_string();
    assert!(human.contains("no-such-agent"), "{said}");
    let res = failed(
        &mut m,
        serde_json::json!({"target": "no-such-agent", "message": "hi", "project": p}),
    );
    assert_eq!(
        res["structuredContent"],
        serde_json::json!({"delivery": "not-delivered", "text": human}),
        "{res}"
    );
    assert_eq!(
        res["content"][0]["text"],
        format!("not-delivered: {human}").as_str()
    );
    // The CLI: for people the host's words, unchanged; with --json the delivery.
    let here = r.run(&args);
    assert_eq!(here.status.code(), there.status.code());
    assert_eq!(String::from_utf8_lossy(&here.stderr).trim(), said);
    assert!(here.stdout.is_empty());
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let here = r.run(&json_args);
    assert_eq!(here.status.code(), Some(1));
    let v: crate::util::contract::AskFailedJson =
        crate::util::contract::parse("agent ask", &here.stdout);
    assert_eq!(v.delivery.as_deref(), Some("not-delivered"), "{v:?}");
    assert!(human.starts_with(&v.error.message), "{v:?}");
    // ... as it prints on the host itself.
    assert_eq!(here.stdout, host_cli(&r, &json_args).stdout);

    // A managed stand-in Claude there whose turn does not finish: the ask is delivered
    // and answers its incomplete reply; the next one is refused (mid-turn).
    std::fs::copy(
        crate::bridge::standin_bin(),
        r.d.remote_bin().join("claude"),
    )
    .unwrap();
    let st = r.json(&["agent", "start", "claude", "--project", &p, "--json"]);
    let name = st["name"].as_str().unwrap().to_string();
    let sd = r.d.dir.join("standin");
    std::fs::write(sd.join("busy"), "").unwrap();
    let res = m.call(
        "agent_ask",
        at(serde_json::json!({"target": name, "message": "long task", "project": p, "timeoutS": 2})),
    );
    assert_eq!(res["isError"], false, "{res}");
    assert_eq!(
        (
            res["structuredContent"]["delivery"].as_str(),
            res["structuredContent"]["complete"].as_bool()
        ),
        (Some("delivered"), Some(false)),
        "{res}"
    );
    let prompts = || -> Vec<String> {
        std::fs::read_to_string(sd.join("prompts"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let n = prompts().len();
    let res = failed(
        &mut m,
        serde_json::json!({"target": name, "message": "again", "project": p}),
    );
    assert_eq!(
        res["structuredContent"]["delivery"], "not-delivered",
        "{res}"
    );
    assert!(
        res["structuredContent"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("mid-turn")),
        "{res}"
    );
    let out = r.run(&[
        "agent",
        "ask",
        &name,
        "--project",
        &p,
        "--message",
        "again",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["delivery"].as_str(), v["error"]["kind"].as_str()),
        (Some("not-delivered"), Some("refused")),
        "{v}"
    );
    assert_eq!(prompts().len(), n, "a refused ask typed nothing");
    std::fs::remove_file(sd.join("busy")).unwrap();
    ok(r.run(&["agent", "wait", &name, "--timeout", "60s"]));

    // Enter pressed, the prompt recorded only after tmuxmate stopped looking (15 s for a
    // short message): unconfirmed, never sent twice.
    std::fs::write(sd.join("record-ms"), "17000").unwrap();
    let res = failed(
        &mut m,
        serde_json::json!({"target": name, "message": "late one", "project": p, "timeoutS": 60}),
    );
    assert_eq!(res["structuredContent"]["delivery"], "unconfirmed", "{res}");
    assert!(
        res["structuredContent"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Do not send it again")),
        "{res}"
    );
    std::fs::remove_file(sd.join("record-ms")).unwrap();
    ok(r.run(&["agent", "wait", &name, "--timeout", "60s"]));
    assert_eq!(
        prompts()
            .iter()
            .filter(|p| p.as_str() == "late one")
            .count(),
        1,
        "the late message arrived once"
    );
    ok(r.run(&["agent", "stop", &name, "--confirm"]));

    // A host tmuxmate that does not report it (an older one): no outcome, and the text
    // says the host did not say; the CLI passes its answer on and adds a line saying so.
    let real = installed_at(&r);
    let kept = real.with_extension("real");
    std::fs::rename(&real, &kept).unwrap();
    std::fs::write(
        &real,
        "#!/bin/sh\necho '{\"error\":{\"kind\":\"refused\",\"message\":\"refused: old words\",\"hint\":null}}'\n\
         echo 'tmuxmate: refused: old words' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &real,
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
    )
    .unwrap();
    let res = failed(
        &mut m,
        serde_json::json!({"target": "claude", "message": "hi", "project": p}),
    );
    assert!(res["structuredContent"]["delivery"].is_null(), "{res}");
    let text = res["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("refused: old words; ")
            && text.contains("did not report how far the message got")
            && text.contains(&format!("tmuxmate remote install {}", r.d.host())),
        "{res}"
    );
    let out = r.run(&[
        "agent",
        "ask",
        "claude",
        "--project",
        &p,
        "--message",
        "hi",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("delivery").is_none(), "passed on as it came: {v}");
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("tmuxmate: refused: old words") && e.contains("did not report how far"),
        "{e}"
    );
    // One that answers nothing readable: the same.
    std::fs::write(&real, "#!/bin/sh\necho 'segfault' >&2\nexit 139\n").unwrap();
    let res = failed(
        &mut m,
        serde_json::json!({"target": "claude", "message": "hi", "project": p}),
    );
    assert!(res["structuredContent"]["delivery"].is_null(), "{res}");
    let text = res["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("segfault; ") && text.contains("did not report how far"),
        "{res}"
    );
    std::fs::rename(&kept, &real).unwrap();
    m.finish();
    alive(&r.s);
    nothing_ran(&r.s);
}

/// A remote watch started from the CLI (`watch start --host`) is an MCP resource like one
/// the MCP server started: listed and read while it runs, and still listed ("result
/// arrived") and read (its final state from the host; its last known one from the kept
/// record when the host does not answer) after its result reached the local turn.
#[test]
fn a_cli_started_remote_watch_stays_a_resource_after_its_result_arrived() {
    let r = rig!();
    ok(install(&r));
    ok(turn(&r, "agent-c"));
    let go = r.s.dir.join("GO-RES");
    let script = format!(
        "while [ ! -e '{}' ]; do sleep 0.1; done; echo res-done",
        go.display()
    );
    let j = r.json(&[
        "watch", "start", "--notify", "agent-c", "--json", "--", "sh", "-c", &script,
    ]);
    let job = j["jobId"].as_str().unwrap().to_string();
    let uri = format!("tmuxmate://watch/{job}");
    // An MCP server that did not start it.
    let mut c = r.bare();
    c.stderr(Stdio::null());
    let mut m = crate::mcp::Client::spawn(c);
    m.initialize();
    let listed = |m: &mut crate::mcp::Client| -> Option<String> {
        let l = m.request("resources/list", serde_json::json!({}));
        l["result"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["uri"] == uri.as_str())
            .map(|x| x["title"].as_str().unwrap_or("").to_string())
    };
    let read = |m: &mut crate::mcp::Client| {
        let v = m.request("resources/read", serde_json::json!({"uri": uri}));
        let text = v["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{v}"))
            .to_string();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    let t = listed(&mut m).expect("listed while it runs");
    assert!(
        t.contains(&r.d.host()) && !t.contains("result arrived"),
        "{t}"
    );
    assert_eq!(read(&mut m)["status"], "running");
    std::fs::write(&go, "").unwrap();
    wait_until("the remote job to end", Duration::from_secs(30), || {
        remote_state(&r)
            .join("jobs/done")
            .join(format!("{job}.json"))
            .exists()
            .then_some(())
    });
    let got = ok(turn(&r, "agent-c"));
    assert!(got.contains(&job), "{got}");
    // The result is here: the record left the waiting list (turns need no ssh for it)...
    let waiting = std::fs::read_dir(r.s.state.join("remote/watches"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .count();
    assert_eq!(waiting, 0);
    // ... and the job is still a resource: listed, read from its host.
    let t = listed(&mut m).expect("listed after its result arrived");
    assert!(
        t.contains(&r.d.host()) && t.contains("result arrived"),
        "{t}"
    );
    let ended = read(&mut m);
    assert_eq!(
        (ended["status"].as_str(), ended["host"].as_str()),
        (Some("finished"), Some(r.d.host().as_str())),
        "{ended}"
    );
    let _: crate::util::contract::JobJson = serde_json::from_value(ended.clone()).unwrap();
    // The host unreachable (its record pointed at a port nothing listens on): the last
    // known state, saying its result arrived.
    let arrived = r.s.state.join("remote/arrived");
    let rec = std::fs::read_dir(&arrived)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&rec).unwrap()).unwrap();
    let dead = format!("127.0.0.1:{}", free_port());
    v["host"] = dead.clone().into();
    std::fs::write(&rec, serde_json::to_vec(&v).unwrap()).unwrap();
    let last = read(&mut m);
    assert_eq!(last["status"], "unknown", "{last}");
    assert!(
        last["outcome"]
            .as_str()
            .is_some_and(|o| o.contains("result reached this machine")),
        "{last}"
    );
    assert_eq!(last["host"], dead.as_str());
    // Later turns: no ssh for an arrived job, and never its result again.
    let s0 = sessions(&r);
    assert!(!ok(turn(&r, "agent-c")).contains(&job));
    assert_eq!(sessions(&r), s0);
    m.finish();
}

#[test]
fn what_a_host_prints_is_shown_not_obeyed_and_bounded() {
    let r = rig!();
    // A host "tmuxmate" that is not ours: an OSC 52 clipboard write and a clear-screen on
    // stdout and stderr, then one that prints without end.
    let fake = installed_at(&r);
    std::fs::create_dir_all(fake.parent().unwrap()).unwrap();
    write_script(
        &fake,
        "#!/bin/sh\nprintf 'jobs \\033]52;c;aGk=\\007 \\033[2J done\\n'; printf 'warn \\033[31m\\n' >&2\n",
    );
    // Its answer is not tmuxmate's JSON: refused, what it printed shown (on stderr) and
    // the fix named; nothing of it on stdout.
    let out = r.run(&["watch", "list"]);
    assert!(!out.status.success(), "{out:?}");
    let (o, e) = (out.stdout.clone(), out.stderr.clone());
    assert!(
        !o.contains(&0x1b) && !e.contains(&0x1b),
        "an ESC reached the terminal: {out:?}"
    );
    assert!(o.is_empty(), "{out:?}");
    let e = String::from_utf8(e).unwrap();
    assert!(
        e.contains("jobs \u{241b}]52;c;aGk=\u{2407} \u{241b}[2J done")
            && e.contains("warn \u{241b}[31m")
            && e.contains(&format!("tmuxmate remote install {}", r.d.host())),
        "{e}"
    );
    write_script(&fake, "#!/bin/sh\nexec yes 0123456789abcdef\n");
    let t0 = std::time::Instant::now();
    let out = r.run(&["watch", "list"]);
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("answered more than 64 MiB"), "{e}");
    assert!(out.stdout.is_empty(), "nothing of it was printed");
    assert!(t0.elapsed() < Duration::from_secs(60));
}

/// A host whose tmuxmate predates `tmuxmate call` (its parser refuses the subcommand, as
/// every older release does): a command that needs it is refused naming `tmuxmate remote
/// install HOST`, nothing ran there (`agent ask --json` says not-delivered), and `send -t
/// TEXT` types its line with plain tmux instead.
#[test]
fn an_older_tmuxmate_on_the_host_is_refused_naming_the_update() {
    let r = rig!();
    let rec = r.s.recorder_pane("rec");
    let old = installed_at(&r);
    std::fs::create_dir_all(old.parent().unwrap()).unwrap();
    write_script(
        &old,
        "#!/bin/sh\nprintf \"error: unrecognized subcommand '%s'\\n\\nUsage: tmuxmate [OPTIONS] <COMMAND>\\n\" \"$3\" >&2\nexit 2\n",
    );
    let fix = format!("tmuxmate remote install {}", r.d.host());
    for args in [
        vec!["watch", "list"],
        vec!["agents"],
        vec!["agent", "list"],
        vec!["side", "status", "-t", rec.pane.as_str()],
    ] {
        let e = err(&r.run(&args));
        assert!(
            e.contains("another version") && e.contains("'call'") && e.contains(&fix),
            "{args:?}: {e}"
        );
    }
    let out = r.run(&[
        "agent",
        "ask",
        "claude",
        "--project",
        "/",
        "--message",
        "hi",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["delivery"].as_str(), v["error"]["kind"].as_str()),
        (Some("not-delivered"), Some("remote-tmuxmate-version")),
        "{v}"
    );
    ok(r.run(&["send", "-t", &rec.pane, "--", "old;host"]));
    rec.expect(b"old;host");
    nothing_ran(&r.s);
    assert!(!r.d.remote_home().join("NEVER").exists());
}

#[test]
fn agents_on_a_host_are_listed_through_its_tmuxmate() {
    let r = rig!();
    // An agent on the host's server, its state from its own hook.
    let a = r.s.agent_pane_as("claude", "claude");
    let perm = r.s.dir.join("perm.json");
    std::fs::write(
        &perm,
        serde_json::json!({
            "session_id": "5eed0000-0000-4000-8000-00000000c1a1",
            "hook_event_name": "PermissionRequest",
            "tool_name": "Bash",
            "tool_input": {"command": "make", "description": "build"},
        })
        .to_string(),
    )
    .unwrap();
    let hook = a.sh(&format!(
        "setsid sh -c '\"$0\" hook claude < \"$1\"; true' \"$TM\" '{}'",
        perm.display()
    ));
    assert_eq!(hook.rc, 0);
    // Without tmuxmate on the host: refused, saying what to do.
    let out = r.run(&["agents", "--json"]);
    assert_ne!(out.status.code(), Some(0));
    // With --json the error is a JSON document on stdout.
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["error"]["kind"], "remote-no-tmuxmate", "{e}");
    assert!(e.to_string().contains("remote install"), "{e}");
    ok(install(&r));
    let j = r.json(&["agents", "--json"]);
    let rows = j["agents"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{j}");
    assert_eq!(rows[0]["paneId"], a.pane.as_str());
    assert_eq!(rows[0]["state"], "needs-you");
    assert_eq!(rows[0]["why"], "permission: Bash: make");
    let text = ok(r.run(&["agents"]));
    assert!(text.starts_with("needs-you "), "{text}");
}

/// The host's hook for the agent in `a`, written to the host's own state (as a hook
/// installed on that host writes it).
fn host_hook(r: &Rig, a: &Agent, name: &str, v: serde_json::Value) {
    hook_into(&remote_state(r), &r.s.dir, a, name, v);
}

/// The hook for the agent in `a` with the state dir `state` (the event's file in `dir`).
fn hook_into(
    state: &std::path::Path,
    dir: &std::path::Path,
    a: &Agent,
    name: &str,
    v: serde_json::Value,
) {
    let f = dir.join(format!("{name}.json"));
    std::fs::write(&f, v.to_string()).unwrap();
    let out = a.sh(&format!(
        "TMUXMATE_STATE_DIR='{}' setsid sh -c '\"$0\" hook claude < \"$1\"; true' \"$TM\" '{}'",
        state.display(),
        f.display()
    ));
    assert_eq!(out.rc, 0);
}

/// `tmux_agents` with `host` is the host's listing as `agents --host` prints it (the
/// host's tmuxmate answers it), never this machine's: an agent on a server only this
/// machine's state remembers is not listed as the host's. The wait for one agent reads
/// the host's pane. Without `host`, the same MCP server lists this machine's agent.
#[test]
fn mcp_agents_with_a_host_are_the_hosts_not_this_machines() {
    let r = rig!();
    ok(install(&r));
    // The host's agent, its hook run with the host's state: it needs the person.
    let a = r.s.agent_pane_as("claude", "claude");
    host_hook(
        &r,
        &a,
        "perm",
        serde_json::json!({
            "session_id": "5eed0000-0000-4000-8000-00000000c1a3",
            "hook_event_name": "PermissionRequest",
            "tool_name": "Bash",
            "tool_input": {"command": "make", "description": "build"},
        }),
    );
    // This machine's own server and agent, working; its hook ran with the state dir the
    // MCP server reads, which so remembers that server.
    let here = server!();
    let b = here.agent_pane_as("claude", "claude");
    hook_into(
        &r.s.state,
        &here.dir,
        &b,
        "local",
        serde_json::json!({
            "session_id": "5eed0000-0000-4000-8000-00000000c1a4",
            "hook_event_name": "UserPromptSubmit",
            "prompt": "go",
        }),
    );
    let mut c = r.bare();
    c.stderr(Stdio::null());
    let mut m = crate::mcp::Client::spawn(c);
    m.initialize();
    let at = |mut v: serde_json::Value| {
        v["host"] = r.d.host().into();
        v["hostSocket"] = r.s.socket_path().to_string_lossy().into_owned().into();
        v
    };
    // Without host: this machine's agent (the server its state remembers).
    let mine = m.call("tmux_agents", serde_json::json!({"json": true}));
    let here_socket = here.socket_path().to_string_lossy().into_owned();
    assert!(
        mine["structuredContent"]["agents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["paneId"] == b.pane.as_str()
                && x["state"] == "working"
                && x["socket"] == here_socket.as_str()),
        "{mine}"
    );
    // With host: the host's agent alone, as the host's tmuxmate lists it.
    let res = m.call("tmux_agents", at(serde_json::json!({"json": true})));
    assert_eq!(res["isError"], false, "{res}");
    let got = &res["structuredContent"];
    let rows = got["agents"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "only the host's agent: {got}");
    assert_eq!(
        (
            rows[0]["paneId"].as_str(),
            rows[0]["state"].as_str(),
            rows[0]["why"].as_str()
        ),
        (
            Some(a.pane.as_str()),
            Some("needs-you"),
            Some("permission: Bash: make")
        ),
        "{got}"
    );
    assert!(
        !got.to_string().contains(&here_socket),
        "this machine's server in the host's listing: {got}"
    );
    assert_eq!(
        *got,
        r.json(&["agents", "--json"]),
        "as `agents --host` says"
    );
    let text = res["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("needs-you ") && text.lines().count() == 1,
        "{text}"
    );
    m.ok("tmux_agents", at(serde_json::json!({})));
    // The wait for one agent over host: the host's pane, as it is now.
    let w = m.ok("tmux_agents", at(serde_json::json!({"target": a.pane})));
    assert_eq!(
        (w["paneId"].as_str(), w["state"].as_str()),
        (Some(a.pane.as_str()), Some("needs-you")),
        "{w}"
    );
    let w = m.ok(
        "tmux_agents",
        at(serde_json::json!({"target": a.pane, "until": ["needs-you"], "timeoutMs": 10000})),
    );
    assert_eq!(w["state"], "needs-you", "{w}");
    m.finish();
}

#[test]
fn agents_on_a_followed_host_are_listed_and_counted_here() {
    let r = rig!();
    ok(install(&r));
    let host = r.d.host();
    let sid = "5eed0000-0000-4000-8000-00000000c1a2";
    let a = r.s.agent_pane_as("claude", "claude");
    host_hook(
        &r,
        &a,
        "perm",
        serde_json::json!({
            "session_id": sid,
            "hook_event_name": "PermissionRequest",
            "tool_name": "Bash",
            "tool_input": {"command": "make", "description": "build"},
        }),
    );
    // This machine's own server, following the host.
    let here = server!();
    let cli = |args: &[&str]| -> Output {
        let mut c = Command::new(BIN);
        here.env(&mut c);
        c.env("TMUXMATE_SSH_CONFIG", &r.d.config)
            .env("TMUX", format!("{},1,0", here.socket_path().display()))
            .args(args)
            .stdin(Stdio::null());
        c.output().unwrap()
    };
    let status = || {
        here.tmux(&["show", "-gqv", "@tmuxmate-agents-status"])
            .trim_end_matches('\n')
            .to_string()
    };
    let wait_status = |want: &str| {
        wait_until(&format!("status {want:?}"), Duration::from_secs(30), || {
            (status() == want).then_some(())
        })
    };
    let before = r.d.connections();
    // Nothing is followed until the option names the host.
    ok(cli(&["agents"]));
    assert!(!here.state.join("agents/hosts").exists());
    here.tmux(&["set", "-g", "@tmuxmate-hosts", &host]);
    // The listing starts the follower; the status line counts the host's agent.
    ok(cli(&["agents"]));
    wait_status("1 needs you");
    let j: serde_json::Value = serde_json::from_str(&ok(cli(&["agents", "--json"]))).unwrap();
    let rows = j["agents"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{j}");
    assert_eq!(rows[0]["host"], host.as_str(), "{j}");
    assert_eq!(rows[0]["paneId"], a.pane.as_str(), "{j}");
    assert_eq!(rows[0]["state"], "needs-you", "{j}");
    assert_eq!(rows[0]["why"], "permission: Bash: make", "{j}");
    let text = ok(cli(&["agents"]));
    // The host's agent is on that host's test server, not its default one: named in full.
    let at = format!("(--host {host} -S {})", r.s.socket_path().display());
    assert!(
        text.starts_with("needs-you ") && text.contains(&at),
        "{text}"
    );
    // A change on the host reaches the counts here on its own (the long-poll answers it).
    host_hook(
        &r,
        &a,
        "stop",
        serde_json::json!({"session_id": sid, "hook_event_name": "Stop"}),
    );
    wait_status("1 done");
    // A second host that cannot be reached: said so, and it counts nothing.
    let dead = format!("127.0.0.1:{}", free_port());
    here.tmux(&["set", "-g", "@tmuxmate-hosts", &format!("{host} {dead}")]);
    ok(cli(&["agents"]));
    let unreached = wait_until("the dead host reported", Duration::from_secs(60), || {
        let j: serde_json::Value = serde_json::from_str(&ok(cli(&["agents", "--json"]))).unwrap();
        j["unreachedHosts"].as_array().cloned()
    });
    assert_eq!(unreached.len(), 1, "{unreached:?}");
    assert_eq!(unreached[0]["host"], dead.as_str());
    assert_eq!(status(), "1 done");
    // The host loses its tmuxmate: its agent is unknown, never its last word.
    let bin = installed_at(&r);
    std::fs::rename(&bin, bin.with_extension("gone")).unwrap();
    host_hook(
        &r,
        &a,
        "prompt",
        serde_json::json!({"session_id": sid, "hook_event_name": "UserPromptSubmit", "prompt": "go"}),
    );
    wait_status("1 unknown");
    let j: serde_json::Value = serde_json::from_str(&ok(cli(&["agents", "--json"]))).unwrap();
    let row = &j["agents"][0];
    assert_eq!(row["state"], "unknown", "{j}");
    assert!(row["why"].as_str().unwrap().contains("not reached"), "{j}");
    // No longer named: the followers end and take their snapshots with them.
    here.tmux(&["set", "-g", "@tmuxmate-hosts", ""]);
    wait_status("");
    wait_until("the snapshots removed", Duration::from_secs(90), || {
        let left = std::fs::read_dir(here.state.join("agents/hosts"))
            .map(|rd| {
                rd.flatten()
                    .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                    .count()
            })
            .unwrap_or(0);
        (left == 0).then_some(())
    });
    // All of it over the host's one connection.
    assert!(
        r.d.connections() <= before + 1,
        "{} connections",
        r.d.connections() - before
    );
}

/// The rig host's login directory: sshd starts the session in the account's home from
/// passwd (not the SetEnv'd HOME), and a tmux client started there resolves a relative
/// start directory against it.
fn host_login_dir(r: &Rig) -> std::path::PathBuf {
    let out = Command::new("ssh")
        .arg("-F")
        .arg(&r.d.config)
        .arg("-p")
        .arg(r.d.port.to_string())
        .args(["-o", "BatchMode=yes", "127.0.0.1", "--", "pwd"])
        .stdin(Stdio::null())
        .output()
        .expect("ssh");
    let t = ok(out);
    std::path::PathBuf::from(t.trim_end_matches('\n'))
}

/// Every pane of the test server.
fn all_panes(r: &Rig) -> Vec<String> {
    let t = r.s.tmux(&["list-panes", "-a", "-F", "#{pane_id}"]);
    t.lines().map(String::from).collect()
}

/// `--cwd` of split and new-window over `--host` is a directory of the host, checked
/// there before anything is created: one that only the host has is taken, one only this
/// machine has is refused naming the host, and no pane is left. The "host" shares this
/// machine's files, so the two sides differ by where a relative path starts: here the
/// directory tmuxmate runs in, there the login's directory.
#[test]
fn split_over_host_checks_the_directory_on_the_host() {
    let r = rig!();
    let shell = r.s.window("sh", "sh");
    let login = host_login_dir(&r);
    let here = r.s.dir.join("here");
    std::fs::create_dir_all(here.join("only-here-dir")).unwrap();
    assert!(!login.join("only-here-dir").exists(), "{}", login.display());
    let run = |args: &[&str]| r.cmd().current_dir(&here).args(args).output().unwrap();

    // Only on this machine: refused on the host's word, nothing created.
    let before = all_panes(&r);
    for args in [
        &["split", "-t", &shell, "--cwd", "only-here-dir", "--", "cat"][..],
        &["new-window", "--cwd", "only-here-dir", "--", "cat"][..],
        &[
            "split",
            "-t",
            &shell,
            "--cwd",
            "$(touch NEVER) it's",
            "--",
            "cat",
        ][..],
    ] {
        let e = err(&run(args));
        assert!(
            e.contains("is not a directory on host 127.0.0.1") && e.contains("nothing was created"),
            "{args:?}: {e}"
        );
        assert_eq!(all_panes(&r), before, "{args:?} left a pane");
    }
    assert!(e_never(&login) && e_never(&here));

    // Only on the host: `../<name of the login dir>` is the login dir there, and a
    // directory that does not exist here.
    let Some(name) = login.file_name().and_then(|n| n.to_str()) else {
        eprintln!("SKIP: the host login directory is /");
        return;
    };
    let rel = format!("../{name}");
    assert!(!here.join(&rel).exists());
    let want = std::fs::canonicalize(&login).unwrap();
    for args in [
        &["split", "-t", &shell, "--cwd", &rel, "--json", "--", "cat"][..],
        &["new-window", "--cwd", &rel, "--json", "--", "cat"][..],
    ] {
        let out = run(args);
        let v: serde_json::Value = serde_json::from_str(&ok(out)).unwrap();
        let pane = v["paneId"].as_str().unwrap().to_string();
        assert_eq!(
            fmt_of(&r.s, &pane, "#{pane_current_path}"),
            want.to_string_lossy(),
            "{args:?}"
        );
    }
    alive(&r.s);
    nothing_ran(&r.s);
}

/// No `NEVER` in `dir`.
fn e_never(dir: &std::path::Path) -> bool {
    !dir.join("NEVER").exists()
}

/// The program of split and new-window over `--host` (and the MCP `tmux_split` with
/// `host`) is looked up on the host's PATH, as tmux there starts it: one only the host has
/// runs, one only this machine has is refused naming the host, and no pane is left.
#[test]
fn split_over_host_finds_the_program_on_the_host() {
    let r = rig!();
    let shell = r.s.window("sh", "sh");
    let ran = r.s.dir.join("host-only-ran");
    let host_only = r.d.remote_bin().join("tmuxmate-host-only-prog");
    std::fs::write(
        &host_only,
        format!("#!/bin/sh\necho \"$1\" >> '{}'\nexec cat\n", ran.display()),
    )
    .unwrap();
    let local_bin = r.s.dir.join("local-bin");
    std::fs::create_dir_all(&local_bin).unwrap();
    let here_only = local_bin.join("tmuxmate-here-only-prog");
    std::fs::write(&here_only, "#!/bin/sh\nexec cat\n").unwrap();
    for p in [&host_only, &here_only] {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        local_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |args: &[&str]| r.cmd().env("PATH", &path).args(args).output().unwrap();

    let before = all_panes(&r);
    for args in [
        &["split", "-t", &shell, "--", "tmuxmate-here-only-prog"][..],
        &["new-window", "--", "tmuxmate-here-only-prog", "x"][..],
    ] {
        let e = err(&run(args));
        assert!(
            e.contains("command not found")
                && e.contains("host 127.0.0.1")
                && e.contains("nothing was created"),
            "{args:?}: {e}"
        );
        assert_eq!(all_panes(&r), before, "{args:?} left a pane");
    }
    ok(run(&[
        "split",
        "-t",
        &shell,
        "--",
        "tmuxmate-host-only-prog",
        "split",
    ]));
    ok(run(&[
        "new-window",
        "--",
        "tmuxmate-host-only-prog",
        "window",
    ]));

    // The MCP tool, with `host`.
    let mut c = r.bare();
    c.env("PATH", &path).stderr(Stdio::null());
    let mut m = crate::mcp::Client::spawn(c);
    m.initialize();
    let at = |mut v: serde_json::Value| {
        v["host"] = r.d.host().into();
        v["hostSocket"] = r.s.socket_path().to_string_lossy().into_owned().into();
        v
    };
    let before = all_panes(&r);
    let e = m.refused(
        "tmux_split",
        at(serde_json::json!({"target": shell, "cmd": ["tmuxmate-here-only-prog"]})),
    );
    assert!(
        e.contains("command not found") && e.contains("host 127.0.0.1"),
        "{e}"
    );
    assert_eq!(all_panes(&r), before, "the MCP refusal left a pane");
    m.ok(
        "tmux_split",
        at(serde_json::json!({"target": shell, "cmd": ["tmuxmate-host-only-prog", "mcp"]})),
    );
    m.finish();
    wait_until("the host's program to run", Duration::from_secs(10), || {
        let t = std::fs::read_to_string(&ran).unwrap_or_default();
        let mut l: Vec<&str> = t.lines().collect();
        l.sort();
        (l == ["mcp", "split", "window"]).then_some(())
    });
    alive(&r.s);
}
