//! Names and paths are data: a hostile corpus through every command that takes one.
//!
//! For each value: the object tmux holds has exactly that name (or start directory),
//! no shell command or format in it ran, and the server is alive. Newlines and invalid
//! UTF-8 are refused with a clear usage error and leave nothing behind.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::bridge::Bridge;
use crate::server;
use crate::util::*;

/// Every hostile value; `NEVER` marks a command that must not run (relative: tmux and
/// the shell would run it in HOME or the server's cwd, which `nothing_ran` checks).
pub fn corpus() -> Vec<String> {
    let mut v: Vec<String> = [
        "x;",
        ";",
        "a;b",
        "\\;",
        "x\\;",
        "#{pane_id}",
        "#(cd;touch NEVER)",
        "#(touch NEVER)",
        "##",
        "#",
        "a#Sb",
        "#[fg=red]red",
        "it's \"quoted\"",
        "$(touch NEVER)",
        "`touch NEVER`",
        "-leading",
        "--",
        "%",
        "%1",
        ":",
        "a:b.c",
        ".",
        " spaced  out ",
        "日本語の名前",
        "🚀 emoji",
        "a;b #{pane_id}",
        "{",
        "}",
        "~",
        "=word",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push("long-".repeat(2048)); // 10 KB
    v
}

pub fn nothing_ran(s: &Server) {
    let mut places: Vec<PathBuf> = vec![
        s.home.clone(),
        s.dir.clone(),
        s.dir.join("tmp"),
        PathBuf::from(env!("CARGO_MANIFEST_DIR")),
    ];
    if let Ok(d) = std::env::current_dir() {
        places.push(d);
    }
    for p in places {
        assert!(
            !p.join("NEVER").exists(),
            "a payload ran in {}",
            p.display()
        );
    }
}

pub fn alive(s: &Server) {
    let out = s.tmux_output(&["list-sessions"]);
    assert!(out.status.success(), "the tmux server died");
}

fn json(out: &std::process::Output) -> serde_json::Value {
    let t = ok(out);
    serde_json::from_str(&t).unwrap_or_else(|e| panic!("not JSON ({e}): {t}"))
}

pub fn fmt_of(s: &Server, target: &str, f: &str) -> String {
    let v = s.tmux(&["display", "-p", "-t", target, f]);
    v.strip_suffix('\n').unwrap_or(&v).to_string()
}

fn window_count(s: &Server) -> usize {
    s.tmux(&["list-windows", "-a"]).lines().count()
}

#[test]
fn new_window_names_arrive_exactly() {
    let s = server!();
    for name in corpus() {
        // `--name=VALUE`: a value that starts with '-' is otherwise read as a flag.
        let out = s.run(&[
            "new-window",
            &format!("--name={name}"),
            "--json",
            "--",
            "cat",
        ]);
        let j = json(&out);
        let pane = j["paneId"].as_str().unwrap().to_string();
        assert_eq!(
            fmt_of(&s, &pane, "#{window_name}"),
            stored_name(&name),
            "name {name:?}"
        );
        s.tmux(&["kill-pane", "-t", &pane]);
        alive(&s);
    }
    nothing_ran(&s);
}

#[test]
fn a_trailing_semicolon_never_runs_the_next_argument() {
    let s = server!();
    // Once, this ended tmux's command at `x;` and ran `kill-server` as a tmux command.
    // Now `kill-server` is the pane's command: refused as not found before any pane
    // exists (or, were it found, run as a program in the pane, never by tmux).
    let exited = |out: std::process::Output| {
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() || e.contains("exited at once") || e.contains("not found"),
            "{e}"
        );
    };
    exited(s.run(&["new-window", "--name", "x;", "--", "kill-server"]));
    alive(&s);
    exited(s.run(&["new-window", "--name", ";", "--", "kill-server"]));
    alive(&s);
    let d = s.dir.join("d;");
    std::fs::create_dir_all(&d).unwrap();
    let ds = d.to_str().unwrap();
    let first = s.address("%0");
    exited(s.run(&["split", "-t", &first, "--cwd", ds, "--", "kill-server"]));
    alive(&s);
    exited(s.run(&["new-window", "--cwd", ds, "--", "kill-server"]));
    alive(&s);
}

/// A directory named `name` under the test dir (a name with '/' is skipped: not a name).
fn dir_named(s: &Server, name: &str) -> Option<PathBuf> {
    if name.contains('/') || name == "." || name.len() > 200 {
        return None;
    }
    let d = s.dir.join("dirs").join(name);
    std::fs::create_dir_all(&d).ok()?;
    Some(d)
}

fn pwd_in_new_pane(s: &Server, args: &[&str], out_file: &Path) -> String {
    let _ = std::fs::remove_file(out_file);
    let script = format!("pwd > '{}'; exec cat", out_file.display());
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--", "sh", "-c", &script]);
    ok(s.run(&all));
    wait_until(
        "the pane to write its cwd",
        std::time::Duration::from_secs(10),
        || {
            std::fs::read_to_string(out_file)
                .ok()
                .filter(|t| t.ends_with('\n'))
        },
    )
    .trim_end_matches('\n')
    .to_string()
}

#[test]
fn start_directories_arrive_exactly() {
    let s = server!();
    let out_file = s.dir.join("pwd.out");
    // main's first pane by its address, as tmux numbers it (base-index, pane-base-index).
    let first = s.address("%0");
    for name in corpus() {
        let Some(d) = dir_named(&s, &name) else {
            continue;
        };
        let ds = d.to_str().unwrap();
        let got = pwd_in_new_pane(&s, &["new-window", "--cwd", ds], &out_file);
        assert_eq!(got, ds, "new-window --cwd {name:?}");
        let got = pwd_in_new_pane(&s, &["split", "-t", &first, "--cwd", ds], &out_file);
        assert_eq!(got, ds, "split --cwd {name:?}");
        alive(&s);
        // Keep the window count small: each pane keeps running `cat`.
        for w in s
            .tmux(&["list-windows", "-t", "main", "-F", "#{window_id}"])
            .lines()
            .skip(1)
        {
            s.tmux(&["kill-window", "-t", w]);
        }
        s.tmux(&["kill-pane", "-a", "-t", "%0"]);
    }
    nothing_ran(&s);
}

#[test]
fn newlines_and_invalid_utf8_are_refused_and_nothing_is_created() {
    let s = server!();
    let before = window_count(&s);
    for bad in ["a\nb", "a\rb", "tab\tname", "esc\x1b[31m"] {
        let out = s.run(&["new-window", "--name", bad, "--", "cat"]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains("--name"), "{e}");
    }
    let out = s.run(&["new-window", "--name", "a\nb", "--", "cat"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("line break"));
    // An invalid UTF-8 directory name.
    let bad = s.dir.join(std::ffi::OsStr::from_bytes(b"bad\xffdir"));
    std::fs::create_dir_all(&bad).unwrap();
    let out = s
        .tmuxmate()
        .args(["new-window", "--cwd"])
        .arg(&bad)
        .args(["--", "cat"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("UTF-8"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = s
        .tmuxmate()
        .args(["split", "-t", &s.address("%0"), "--cwd"])
        .arg(&bad)
        .args(["--", "cat"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // An invalid UTF-8 name is refused by the argument parser itself.
    let out = s
        .tmuxmate()
        .args(["new-window", "--name"])
        .arg(std::ffi::OsStr::from_bytes(b"n\xffame"))
        .args(["--", "cat"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("UTF-8"));
    assert_eq!(
        window_count(&s),
        before,
        "a refused command created a window"
    );
    assert_eq!(s.tmux(&["list-panes", "-a"]).lines().count(), 1);
}

fn session_names(s: &Server) -> Vec<String> {
    s.tmux(&["list-sessions", "-F", "#{session_name}"])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn agent_start_from_hostile_projects_and_branches_names_the_session_tmux_has() {
    let s = server!();
    let payloads = [
        ("p#(cd;touch NEVER)", "main"),
        ("plain", "fix#(touch${IFS}NEVER)"),
        ("semi;", "br;"),
        ("fmt#{pane_id}", "a;b #{pane_id}"),
        ("dots.and:colons", "feature/x.y:z"),
        ("q'uo\"te $(touch NEVER)", "`touch NEVER`"),
        ("日本 🚀", "ブランチ"),
    ];
    for (i, (project, branch)) in payloads.iter().enumerate() {
        let b = Bridge::new(&s, project, branch);
        let out = b.cmd(&s, &["agent", "start", "claude", "--json"]);
        assert!(
            out.status.success(),
            "{project:?} {branch:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let name = j["name"].as_str().unwrap();
        assert!(
            session_names(&s).iter().any(|n| n == name),
            "{name:?} is not a session tmux has: {:?}",
            session_names(&s)
        );
        assert_eq!(
            fmt_of(&s, j["sessionId"].as_str().unwrap(), "#{session_name}"),
            name
        );
        // The CLI started in the project directory, exactly.
        let proj = std::fs::canonicalize(&b.proj).unwrap();
        assert_eq!(j["project"].as_str().unwrap(), proj.to_str().unwrap());
        assert_eq!(
            fmt_of(&s, j["paneId"].as_str().unwrap(), "#{pane_current_path}"),
            proj.to_str().unwrap(),
            "case {i}"
        );
        alive(&s);
        ok(b.cmd(&s, &["agent", "stop", name, "--confirm"]));
    }
    nothing_ran(&s);
}

/// A `tmux` first on PATH that logs each invocation's first command word, then runs the
/// real one: which calls started a tmux client, and which went over the socket.
fn logging_tmux(s: &Server) -> (std::ffi::OsString, PathBuf) {
    let real = std::env::var_os("PATH")
        .unwrap_or_default()
        .to_string_lossy()
        .split(':')
        .map(|d| Path::new(d).join("tmux"))
        .find(|p| p.is_file())
        .expect("tmux on PATH");
    let bin = s.dir.join("logbin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = s.dir.join("tmux-calls.log");
    let script = format!(
        "#!/bin/sh\nfor a; do case \"$a\" in -*|{name}) ;; *) echo \"$a\" >>'{log}'; break ;; esac; done\nexec '{real}' \"$@\"\n",
        name = s.name,
        log = log.display(),
        real = real.display()
    );
    let p = bin.join("tmux");
    std::fs::write(&p, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut path = bin.into_os_string();
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    (path, log)
}

/// The buffer rule (`control::pane_input`): text under 12 KiB reaches its buffer as a
/// `set-buffer` argument over the server's socket (no tmux client starts, the text is in
/// no process's argv); larger text still goes `load-buffer -` on a client's stdin. Both
/// arrive byte for byte, for every value of the corpus (a trailing `;`, `\;`, formats,
/// `#(...)`, `$(...)`, a leading `-`, CJK, emoji, 10 KB), typed (`send`) and pasted
/// (`paste`).
#[test]
fn text_over_the_socket_and_on_stdin_arrives_byte_exact() {
    let s = server!();
    let r = s.recorder_pane("rec");
    let (path, log) = logging_tmux(&s);
    let run = |args: &[&str]| {
        let out = s
            .tmuxmate()
            .env("PATH", &path)
            .args(args)
            .output()
            .expect("spawn tmuxmate");
        ok(&out);
    };
    let mut want = Vec::new();
    let mut corpus = corpus();
    corpus.push(format!("{};", "big ".repeat(4096))); // 16 KiB: over the socket limit
    for v in &corpus {
        run(&["send", "-t", &r.pane, "--", v]);
        want.extend_from_slice(v.as_bytes());
        r.expect(&want);
        run(&["send", "-t", &r.pane, "--enter", "--", v]);
        want.extend_from_slice(v.as_bytes());
        want.push(b'\r');
        r.expect(&want);
        let multi = format!("{v}\nsecond line");
        run(&["paste", "-t", &r.pane, "--", &multi]);
        want.extend_from_slice(b"\x1b[200~");
        want.extend_from_slice(multi.as_bytes());
        want.extend_from_slice(b"\x1b[201~");
        r.expect(&want);
    }
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    // Only the 16 KiB value (three times) started a client, and it was load-buffer.
    let started: Vec<&str> = calls.lines().collect();
    assert_eq!(
        started,
        vec!["load-buffer"; 3],
        "tmux clients started: {calls}"
    );
    assert_eq!(s.tmux(&["list-buffers", "-F", "#{buffer_name}"]).trim(), "");
    nothing_ran(&s);
    alive(&s);
}
