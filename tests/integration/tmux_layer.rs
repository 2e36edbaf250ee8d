//! The tmux layer: the direct socket path for read-only queries must answer exactly as the
//! tmux client does, errors included.

use crate::server;
use crate::util::ok;

#[test]
fn direct_socket_queries_match_the_tmux_client() {
    let s = server!();
    // tmux 3.7 refuses a tab in a window name; a backslash it stores escaped.
    let odd = if crate::util::tmux_release() >= (3, 7) {
        "w\\ith \"odd\" #{names} 🚀"
    } else {
        "w\tith \"odd\" #{names} 🚀"
    };
    let a = s.agent_pane(odd);
    s.tmux(&["split-window", "-d", "-t", &a.pane, "sh"]);
    // TMUXMATE_TMUX names the program: tmuxmate then always runs the real client.
    let via_client = |args: &[&str]| {
        s.tmuxmate()
            .env("TMUXMATE_TMUX", "tmux")
            .args(args)
            .output()
            .unwrap()
    };
    let direct = |args: &[&str]| s.run(args);
    for args in [&["list", "--json"][..], &["list"][..]] {
        let (x, y) = (direct(args), via_client(args));
        assert!(x.status.success() && y.status.success());
        assert_eq!(
            String::from_utf8_lossy(&x.stdout),
            String::from_utf8_lossy(&y.stdout),
            "{args:?}"
        );
    }
    let (x, y) = (
        a.sh("\"$TM\" where --json"),
        a.sh("TMUXMATE_TMUX=tmux \"$TM\" where --json"),
    );
    assert_eq!(x.out, y.out);
    assert_eq!(x.rc, 0);
    // A target that does not exist: the same clear error either way.
    let (x, y) = (
        direct(&["capture", "-t", "%99"]),
        via_client(&["capture", "-t", "%99"]),
    );
    assert_eq!(x.status.code(), y.status.code());
    assert_eq!(
        String::from_utf8_lossy(&x.stderr),
        String::from_utf8_lossy(&y.stderr)
    );
}

#[test]
fn a_hung_server_is_a_timeout_error_not_a_hang() {
    let s = server!();
    let a = s.agent_pane("w");
    let pid: i32 = s.tmux(&["display", "-p", "#{pid}"]).trim().parse().unwrap();
    std::process::Command::new("kill")
        .args(["-STOP", &pid.to_string()])
        .status()
        .unwrap();
    let start = std::time::Instant::now();
    let o = s
        .tmuxmate()
        .env("TMUXMATE_TIMEOUT_MS", "300")
        .args(["list"])
        .output()
        .unwrap();
    let took = start.elapsed();
    // The hook path stays silent and exits 0 even then.
    let h = s
        .tmuxmate()
        .env("TMUXMATE_TIMEOUT_MS", "300")
        .args(["hook", "claude"])
        .stdin(std::fs::File::open(a.fixture("hook-claude-UserPromptSubmit.json")).unwrap())
        .output()
        .unwrap();
    std::process::Command::new("kill")
        .args(["-CONT", &pid.to_string()])
        .status()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("did not answer within 300 ms"), "{e}");
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
    assert_eq!(h.status.code(), Some(0));
    assert!(h.stdout.is_empty());
}

/// A `tmux` first on PATH that logs each call and runs the real binary: `-V` answers
/// `version` (or the real text when `None`).
fn logging_tmux(s: &crate::util::Server, version: Option<&str>) -> (std::path::PathBuf, String) {
    let real = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v tmux"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    let bin = s.dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = s.dir.join("tmux-calls.log");
    let v = match version {
        Some(v) => format!("[ \"$1\" = -V ] && {{ echo '{v}'; exit 0; }}\n"),
        None => String::new(),
    };
    crate::util::write_script(
        &bin.join("tmux"),
        &format!(
            "#!/bin/sh\n{v}printf '%s\\n' \"$*\" >> '{}'\nexec '{real}' \"$@\"\n",
            log.display()
        ),
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (log, path)
}

/// The identity the direct path keys a server binary's version by, for the server's pid.
fn server_binary_key(s: &crate::util::Server) -> String {
    use std::os::unix::fs::MetadataExt;
    let pid = s.tmux(&["display-message", "-p", "#{pid}"]);
    let m = std::fs::metadata(format!("/proc/{}/exe", pid.trim())).unwrap();
    format!("{}:{}:{}:{}", m.dev(), m.ino(), m.size(), m.mtime())
}

#[test]
fn a_server_run_by_another_tmux_binary_is_spoken_to_in_its_own_release() {
    // The PATH's `tmux` is another file than the server's binary (as after an upgrade that
    // left the old server running, or a wrapper script): the direct path asks the
    // server's own binary for its release, once, and speaks that release's layout.
    let s = server!();
    let rec = s.recorder_pane("rec");
    let (log, path) = logging_tmux(&s, None);
    for _ in 0..5 {
        let out = s
            .tmuxmate()
            .env("PATH", &path)
            .args(["paste", "-t", &rec.pane, "a;\nb"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let want: Vec<u8> = b"\x1b[200~a;\nb\x1b[201~".repeat(5);
    rec.expect(&want);
    // No client ran the writes (the wrapper logs each client it starts).
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!calls.contains("paste-buffer"), "{calls}");
    let cache = std::fs::read_to_string(s.state.join("tmux-server-versions")).unwrap();
    assert!(
        cache.starts_with(&format!("{}\ttmux ", server_binary_key(&s))),
        "{cache}"
    );
    let v = s
        .tmuxmate()
        .env("PATH", &path)
        .arg("doctor")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&v.stdout);
    assert!(
        text.contains("(another binary), direct socket path on for it"),
        "{text}"
    );
}

#[test]
fn an_untested_tmux_release_gets_the_real_client_and_says_so() {
    let s = server!();
    let rec = s.recorder_pane("rec");
    // The server's binary says an untested release (its answer as the cache keeps it).
    std::fs::write(
        s.state.join("tmux-server-versions"),
        format!("{}\ttmux 3.6a\n", server_binary_key(&s)),
    )
    .unwrap();
    let (log, path) = logging_tmux(&s, Some("tmux 3.6a"));
    for text in ["x;", "y\nz"] {
        let out = s
            .tmuxmate()
            .env("PATH", &path)
            .args(["paste", "-t", &rec.pane, text])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    rec.expect(b"\x1b[200~x;\x1b[201~\x1b[200~y\nz\x1b[201~");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(calls.matches("paste-buffer").count(), 2, "{calls}");
    let v = ok(s
        .tmuxmate()
        .env("PATH", &path)
        .arg("--version")
        .output()
        .unwrap());
    assert!(
        v.contains("tmux 3.6a") && v.contains("not a release tmuxmate was tested on"),
        "{v}"
    );
    let d = s
        .tmuxmate()
        .env("PATH", &path)
        .arg("doctor")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&d.stdout);
    assert!(
        text.contains("the running server is tmux 3.6a, not a tested release"),
        "{text}"
    );
}

#[test]
fn a_hundred_pastes_over_the_direct_path_all_arrive_and_start_no_client() {
    // Every write of the direct path on this tmux release (CI runs the suite on each
    // tested one): a paste is `set-buffer` + `paste-buffer` over the socket, a command
    // list the server must read whole, with our fds, in its own header layout.
    let s = server!();
    let rec = s.recorder_pane("rec");
    let (log, path) = logging_tmux(&s, None);
    let mut want = Vec::new();
    for i in 0..100 {
        let text = format!("p{i};\nline two");
        let out = s
            .tmuxmate()
            .env("PATH", &path)
            .args(["paste", "-t", &rec.pane, "--", &text])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "paste {i}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        want.extend_from_slice(b"\x1b[200~");
        want.extend_from_slice(text.as_bytes());
        want.extend_from_slice(b"\x1b[201~");
    }
    rec.expect(&want);
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    // Only the version question of the PATH's binary and of the server's, never a call.
    assert!(
        calls.lines().all(|l| l == "-V"),
        "tmux clients started: {calls}"
    );
}

#[test]
fn names_and_options_holding_dollar_words_read_back_exactly() {
    // tmux 3.4 prints `$HOME` as `\$HOME` in list/display/show output (not 3.3, not 3.5):
    // every reading of a name or option must give the value tmux holds.
    let s = server!();
    let name = "cost $HOME ${x} $_y $1 a$ \\$z";
    // Named through tmuxmate (the name is data there, as with every tmux call of ours).
    let j: serde_json::Value = serde_json::from_str(&ok(s.run(&[
        "new-window",
        &format!("--name={name}"),
        "--json",
        "--",
        "cat",
    ])))
    .unwrap();
    let pane = j["paneId"].as_str().unwrap().to_string();
    let stored = crate::util::stored_name(name);
    // tmux holds exactly that many bytes (a length is printed unescaped).
    assert_eq!(
        s.tmux(&["display", "-p", "-t", &pane, "#{n:window_name}"])
            .trim(),
        stored.len().to_string()
    );
    let l: serde_json::Value = serde_json::from_str(&ok(s.run(&["list", "--json"]))).unwrap();
    let names: Vec<&str> = l["windows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["name"].as_str())
        .collect();
    assert!(
        names.contains(&stored.as_str()),
        "{names:?} lacks {stored:?}"
    );
    // An approver command's `$VAR` reaches the shell as written.
    let rec = s.dir.join("op.txt");
    s.tmux(&[
        "set",
        "-g",
        "@tmuxmate-approve-command",
        &format!("printf '%s' \"$TMUXMATE_OP\" > '{}'; exit 1", rec.display()),
    ]);
    let out = s.run(&["kill", "window", "-t", &pane, "--confirm"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&rec).unwrap(), "kill-window");
}
