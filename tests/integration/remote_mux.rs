//! `--host` calls over a warm master go to its control socket directly (OpenSSH's mux
//! protocol, `src/tmux/transport/ssh_mux.rs`), without an ssh client process: the same bytes, exit
//! statuses and errors as through `ssh`, and the faults of a master that refuses, loses
//! or stalls a session.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::remote::{Rig, err};
use crate::util::*;

/// A directory holding an `ssh` that counts its starts in `count` and runs the real one.
fn counting_ssh(r: &Rig) -> (PathBuf, PathBuf) {
    let dir = r.s.dir.join("ssh-wrapper");
    std::fs::create_dir_all(&dir).unwrap();
    let count = dir.join("count");
    let real = which_ssh();
    let script = format!(
        "#!/bin/sh\necho x >> '{}'\nexec '{}' \"$@\"\n",
        count.display(),
        real.display()
    );
    write_script(&dir.join("ssh"), &script);
    (dir, count)
}

fn which_ssh() -> PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("ssh"))
        .find(|p| p.is_file())
        .expect("ssh on PATH")
}

fn starts(count: &Path) -> usize {
    std::fs::read_to_string(count)
        .unwrap_or_default()
        .lines()
        .count()
}

/// `tmuxmate --host ...` with the counting ssh first on PATH, the mux on or off.
fn cmd_with(r: &Rig, wrapper: &Path, mux: bool) -> Command {
    let mut c = r.cmd();
    let path = format!(
        "{}:{}",
        wrapper.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    c.env("PATH", path);
    if !mux {
        c.env("TMUXMATE_SSH_MUX", "0");
    }
    c
}

#[test]
fn warm_calls_start_no_ssh_client_and_answer_as_ssh_does() {
    let r = crate::remote::rig!();
    let (wrapper, count) = counting_ssh(&r);
    let run = |mux: bool, args: &[&str]| {
        cmd_with(&r, &wrapper, mux)
            .args(args)
            .output()
            .expect("spawn tmuxmate")
    };
    // The first call makes the connection: one ssh (the master).
    ok(run(true, &["list"]));
    assert_eq!(starts(&count), 1, "the cold call starts the master");

    let shell = r.s.window("sh", "sh");
    r.s.tmux(&[
        "send-keys",
        "-t",
        &shell,
        "-l",
        "printf '%s\\n' 'mux-7' \"x;y\" '#{pane_id}' '日本'",
    ]);
    r.s.tmux(&["send-keys", "-t", &shell, "Enter"]);
    wait_until("the printf", Duration::from_secs(10), || {
        ok(run(true, &["capture", "-t", &shell]))
            .contains("mux-7\nx;y\n#{pane_id}\n日本")
            .then_some(())
    });
    let warm = starts(&count);
    // A listing names each window; tmux 3.2a keeps the first window's automatic name
    // ("tmux", its name before the pane's exec) until the pane next prints, so the two
    // listings below could differ by a rename between them. A set name stays.
    r.s.tmux(&["rename-window", "-t", "main:^", "first"]);

    // The same answers both ways, byte for byte; the mux way starts no ssh at all.
    let same = |args: &[&str]| {
        let n = starts(&count);
        let a = run(true, args);
        assert_eq!(starts(&count), n, "the mux way starts no ssh: {args:?}");
        let b = run(false, args);
        assert!(starts(&count) > n, "the ssh way starts ssh: {args:?}");
        assert_eq!(
            a.status.code(),
            b.status.code(),
            "{args:?}: mux {} / {}; ssh {} / {}",
            String::from_utf8_lossy(&a.stdout),
            String::from_utf8_lossy(&a.stderr),
            String::from_utf8_lossy(&b.stdout),
            String::from_utf8_lossy(&b.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&a.stdout),
            String::from_utf8_lossy(&b.stdout),
            "{args:?}"
        );
        assert_eq!(
            String::from_utf8_lossy(&a.stderr),
            String::from_utf8_lossy(&b.stderr),
            "{args:?}"
        );
        a
    };
    same(&["list", "--json"]);
    same(&["capture", "-t", &shell]);
    same(&["capture", "-t", &shell, "--all", "--max-bytes", "20"]);
    let missing = same(&["capture", "-t", "%999"]);
    assert!(err(&missing).contains("%999"));
    let bad = same(&["send", "-t", "nosuch:9.9", "--", "x"]);
    assert!(!bad.status.success());

    // A long history over ssh: read from its end too, the same text as locally.
    r.s.tmux(&["set-option", "-g", "history-limit", "50000"]);
    let long = r.s.window(
        "long",
        "awk 'BEGIN { for (i = 1; i <= 30000; i++) printf \"%06d %040d\\n\", i, i; \
         for (i = 1; i <= 9000; i++) print i % 10 }'; exec cat",
    );
    wait_history(&r.s, &long, 38_000);
    let n0 = starts(&count);
    for max in ["300", "100000", "2000000", "100000000"] {
        let args = [
            "capture",
            "-t",
            &long,
            "--all",
            "--json",
            "--max-bytes",
            max,
        ];
        let here: serde_json::Value = serde_json::from_str(&ok(r.s.run(&args))).unwrap();
        let there: serde_json::Value = serde_json::from_str(&ok(run(true, &args))).unwrap();
        assert_eq!(here["text"], there["text"], "max {max}");
        assert_eq!(here["truncated"], there["truncated"], "max {max}");
    }
    assert_eq!(starts(&count), n0, "no ssh for the warm calls");

    // A remote command's own status and output through the session.
    let before = starts(&count);
    let v: serde_json::Value = serde_json::from_str(&ok(run(
        true,
        &[
            "run",
            "--json",
            "--",
            "sh",
            "-c",
            "printf 'a;b\\n日本'; exit 3",
        ],
    )))
    .unwrap();
    assert_eq!(v["exitStatus"], 3, "{v}");
    assert_eq!(v["text"], "a;b\n日本", "{v}");

    // (200 KB on stdin over this path: remote::control_commands_work_through_ssh_over_one_connection.)
    assert_eq!(starts(&count), before, "no ssh for the warm calls");
    assert!(warm <= 2, "{warm} ssh starts before the comparisons");
}

/// What a stand-in master does with a session request.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// `MUX_S_FAILURE` ("Session open refused by peer", as when sshd's MaxSessions is hit).
    Refuse,
    /// Hang up after the request and its descriptors (a master that died right then).
    Lose,
    /// Say the session opened, then never end it.
    Stall,
}

fn put(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_be_bytes());
}

fn send_packet(c: &mut UnixStream, body: &[u8]) -> std::io::Result<()> {
    let mut p = (body.len() as u32).to_be_bytes().to_vec();
    p.extend_from_slice(body);
    c.write_all(&p)
}

fn read_packet(c: &mut UnixStream) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    c.read_exact(&mut len).ok()?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    c.read_exact(&mut body).ok()?;
    Some(body)
}

/// A master on `sock` speaking the mux protocol (hello, alive check, session request) and
/// answering session requests as `mode` says; counts the session requests it got.
fn protocol_master(sock: &Path, mode: Mode) -> (Arc<AtomicUsize>, Arc<AtomicBool>) {
    let _ = std::fs::remove_file(sock);
    let l = UnixListener::bind(sock).expect("bind the stand-in master");
    l.set_nonblocking(true).unwrap();
    let sessions = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (n, s) = (sessions.clone(), stop.clone());
    std::thread::spawn(move || {
        let mut held: Vec<UnixStream> = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(120);
        while !s.load(Ordering::SeqCst) && Instant::now() < deadline {
            let Ok((mut c, _)) = l.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            c.set_nonblocking(false).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            while let Some(body) = read_packet(&mut c) {
                let kind = u32::from_be_bytes(body[..4].try_into().unwrap());
                let rid = body
                    .get(4..8)
                    .map(|b| u32::from_be_bytes(b.try_into().unwrap()));
                let mut out = Vec::new();
                match kind {
                    0x0000_0001 => {
                        put(&mut out, 1);
                        put(&mut out, 4);
                    }
                    0x1000_0004 => {
                        put(&mut out, 0x8000_0005);
                        put(&mut out, rid.unwrap_or(0));
                        put(&mut out, std::process::id());
                    }
                    0x1000_0002 => {
                        n.fetch_add(1, Ordering::SeqCst);
                        // The three descriptors come as one byte each.
                        let mut three = [0u8; 3];
                        let _ = c.read_exact(&mut three);
                        match mode {
                            Mode::Refuse => {
                                put(&mut out, 0x8000_0003);
                                put(&mut out, rid.unwrap_or(0));
                                let why = b"Session open refused by peer";
                                put(&mut out, why.len() as u32);
                                out.extend_from_slice(why);
                            }
                            Mode::Lose => break,
                            Mode::Stall => {
                                put(&mut out, 0x8000_0006);
                                put(&mut out, rid.unwrap_or(0));
                                put(&mut out, 1);
                                let _ = send_packet(&mut c, &out);
                                held.push(c);
                                break;
                            }
                        }
                    }
                    _ => break,
                }
                if send_packet(&mut c, &out).is_err() {
                    break;
                }
            }
        }
    });
    (sessions, stop)
}

/// The rig with its real master gone and `mode`'s stand-in on the master's socket.
fn with_stand_in(r: &Rig, mode: Mode) -> (Arc<AtomicUsize>, Arc<AtomicBool>) {
    let sock = r.master_gone();
    protocol_master(&sock, mode)
}

#[test]
fn a_session_the_master_refuses_runs_nothing_and_opens_no_connection() {
    let r = crate::remote::rig!();
    let (sessions, stop) = with_stand_in(&r, Mode::Refuse);
    let before = r.d.connections();
    let e = err(&r.run(&["list"]));
    stop.store(true, Ordering::SeqCst);
    // Ours was refused, then ssh's (the fallback that repeats ssh's own handling).
    assert!(sessions.load(Ordering::SeqCst) >= 2, "{e}");
    assert!(
        e.contains("127.0.0.1") && e.contains("nothing ran") && e.contains("TMUXMATE_SSH_SESSIONS"),
        "{e}"
    );
    assert_eq!(r.d.connections(), before, "no connection of its own");
}

#[test]
fn a_master_lost_after_the_request_is_not_asked_again() {
    let r = crate::remote::rig!();
    let (wrapper, count) = counting_ssh(&r);
    let (sessions, stop) = with_stand_in(&r, Mode::Lose);
    let n0 = starts(&count);
    let out = cmd_with(&r, &wrapper, true)
        .args(["send", "-t", "%0", "--", "once"])
        .output()
        .unwrap();
    stop.store(true, Ordering::SeqCst);
    let e = err(&out);
    // It may have started over there: said so, and neither repeated nor sent through ssh.
    assert_eq!(sessions.load(Ordering::SeqCst), 1, "{e}");
    assert_eq!(
        starts(&count),
        n0,
        "no ssh client after a lost session: {e}"
    );
    assert!(
        e.contains("127.0.0.1") && e.contains("may or may not have reached"),
        "{e}"
    );
}

#[test]
fn a_stalled_session_ends_at_the_call_deadline() {
    let r = crate::remote::rig!();
    let (sessions, stop) = with_stand_in(&r, Mode::Stall);
    let t0 = Instant::now();
    let out = r
        .cmd()
        .env("TMUXMATE_TIMEOUT_MS", "1500")
        .args(["list"])
        .output()
        .unwrap();
    let took = t0.elapsed();
    stop.store(true, Ordering::SeqCst);
    let e = err(&out);
    assert_eq!(sessions.load(Ordering::SeqCst), 1, "{e}");
    assert!(e.contains("1500 ms"), "{e}");
    assert!(took < Duration::from_secs(20), "{took:?}");
}
