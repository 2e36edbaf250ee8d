//! send / paste / keys / split / new-window / swap / list against a raw-mode recorder.

use crate::server;
use crate::util::contract::{CreatedJson, ListJson};
use crate::util::*;
use std::time::Duration;

#[test]
fn send_is_byte_exact_for_hostile_text() {
    let s = server!();
    let r = s.recorder_pane("rec");
    let never = s.dir.join("NEVER");
    let cases: Vec<String> = vec![
        "ends with semicolon;".into(),
        ";".into(),
        "-----BEGIN leading dash".into(),
        format!("$(touch {}) `touch {}`", never.display(), never.display()),
        "100% : 'single' \"double\" \\back".into(),
        "日本語 CJK and emoji 🚀🎉".into(),
        "Enter".into(),
        "C-c".into(),
        "a\\;".into(),
    ];
    let mut want = Vec::new();
    for t in &cases {
        // Text that starts with `-` goes after `--` (without it, it is a flag: see below).
        ok(s.run(&["send", "-t", &r.pane, "--", t]));
        want.extend_from_slice(t.as_bytes());
        r.expect(&want);
    }
    let out = s.run(&["send", "-t", &r.pane, "-----BEGIN leading dash"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a leading dash without -- is a flag"
    );
    r.expect(&want);
    ok(s.run(&["send", "-t", &r.pane, "--enter", "x"]));
    want.extend_from_slice(b"x\r");
    r.expect(&want);
    assert!(!never.exists(), "a command hidden in text ran");
}

#[test]
fn send_refuses_control_characters_and_newlines() {
    let s = server!();
    let r = s.recorder_pane("rec");
    for bad in ["a\nb", "a\x1b[Ab", "\x03", "tab\there", ""] {
        let out = s.run(&["send", "-t", &r.pane, bad]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains("refused"), "{e}");
        if !bad.is_empty() {
            assert!(e.contains("paste") && e.contains("keys"), "{e}");
        }
    }
    ok(s.run(&["send", "-t", &r.pane, "still alive"]));
    r.expect(b"still alive");
}

#[test]
fn paste_is_one_bracketed_paste_and_cannot_be_escaped() {
    let s = server!();
    let r = s.recorder_pane("rec");
    ok(s.run(&[
        "paste",
        "-t",
        &r.pane,
        "line one\nline two;\n  indented\ttab",
    ]));
    let mut want = b"\x1b[200~line one\nline two;\n  indented\ttab\x1b[201~".to_vec();
    r.expect(&want);
    // An injection attempt: the payload tries to end the paste and type a command.
    let evil = "safe\x1b[201~\rrm -rf /tmp/x\r\x1b[200~more\x03";
    ok(s.run(&["paste", "-t", &r.pane, evil]));
    let (clean, _) = ("safe␛[201~\nrm -rf /tmp/x\n␛[200~more␃", ());
    want.extend_from_slice(b"\x1b[200~");
    want.extend_from_slice(clean.as_bytes());
    want.extend_from_slice(b"\x1b[201~");
    r.expect(&want);
    // --enter: exactly one Enter after the paste.
    ok(s.run(&[
        "paste",
        "-t",
        &r.pane,
        "--enter",
        "--settle-ms",
        "20",
        "a\nb",
    ]));
    want.extend_from_slice(b"\x1b[200~a\nb\x1b[201~\r");
    r.expect(&want);
}

#[test]
fn paste_one_mib_from_stdin_and_file_arrives_intact() {
    let s = server!();
    let r = s.recorder_pane("rec");
    let mut payload = String::new();
    let mut i = 0u64;
    while payload.len() < 1 << 20 {
        payload.push_str(&format!("line {i} 日本 — ;$(x) `y`\n"));
        i += 1;
    }
    let f = s.dir.join("big.txt");
    std::fs::write(&f, &payload).unwrap();
    ok(s.run(&["paste", "-t", &r.pane, "--file", f.to_str().unwrap()]));
    let mut want = b"\x1b[200~".to_vec();
    want.extend_from_slice(payload.as_bytes());
    want.extend_from_slice(b"\x1b[201~");
    wait_until(
        "1 MiB to arrive",
        std::time::Duration::from_secs(60),
        || (r.bytes().len() >= want.len()).then_some(()),
    );
    assert!(r.bytes() == want, "1 MiB payload differs");
    // stdin path, and the buffer is gone afterwards.
    let mut child = s
        .tmuxmate()
        .args(["paste", "-t", &r.pane, "-"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"from stdin\n")
        .unwrap();
    assert!(child.wait().unwrap().success());
    want.extend_from_slice(b"\x1b[200~from stdin\n\x1b[201~");
    r.expect(&want);
    assert_eq!(s.tmux(&["list-buffers", "-F", "#{buffer_name}"]).trim(), "");
}

#[test]
fn keys_only_from_the_list() {
    let s = server!();
    let r = s.recorder_pane("rec");
    ok(s.run(&[
        "keys", "-t", &r.pane, "Enter", "Escape", "Up", "C-a", "BSpace", "Tab", "BTab", "F1",
    ]));
    r.expect(b"\r\x1b\x1b[A\x01\x7f\t\x1b[Z\x1bOP");
    for bad in ["hello", "S-Tab", "M-x", "C-", ";", "Enter;ls", "-l"] {
        let out = s.run(&["keys", "-t", &r.pane, "Enter", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let e = String::from_utf8_lossy(&out.stderr);
        // `-l` is an unknown option (options go anywhere on `keys`), the rest bad names.
        assert!(
            e.contains("not an allowed key") || e.contains(&format!("'{bad}'")),
            "{bad}: {e}"
        );
    }
    r.expect(b"\r\x1b\x1b[A\x01\x7f\t\x1b[Z\x1bOP");
}

#[test]
fn copy_mode_is_refused_unless_cancelled() {
    let s = server!();
    let r = s.recorder_pane("rec");
    s.tmux(&["copy-mode", "-t", &r.pane]);
    let out = s.run(&["send", "-t", &r.pane, "abcq"]);
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("copy-mode") && e.contains("--cancel-mode"),
        "{e}"
    );
    assert_eq!(
        s.tmux(&["display", "-p", "-t", &r.pane, "#{pane_in_mode}"])
            .trim(),
        "1"
    );
    ok(s.run(&["send", "-t", &r.pane, "--cancel-mode", "abcq"]));
    r.expect(b"abcq");
}

#[test]
fn invalid_and_missing_targets_never_fall_back() {
    let s = server!();
    let r = s.recorder_pane("rec");
    for bad in [
        "codex;echo x",
        "../x",
        "",
        "%99",
        "nosuch:1.0",
        "main:0.9",
        "-t",
    ] {
        let out = s.run(&["send", "-t", bad, "x"]);
        assert!(!out.status.success(), "{bad:?} accepted");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(
            e.contains("target") || e.contains("argument"),
            "{bad:?}: {e}"
        );
    }
    let out = s.run(&["send", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no target given"));
    assert!(r.bytes().is_empty(), "nothing may reach any pane");
}

/// A window linked into two sessions has a row in each. A `%N` target is named by its
/// first row, as `list` shows it (sessions by name), not by the session tmux's own `-t`
/// picks (the latest active): the lookup in the pane's window alone must not change it.
#[test]
fn a_pane_in_a_window_of_two_sessions_is_named_as_the_listing_names_it() {
    let s = server!();
    let r = s.recorder_pane("rec");
    // A session grouped with "main" shares its windows; it is newer, and after it by name.
    s.tmux(&[
        "new-session",
        "-d",
        "-s",
        "zz-grp",
        "-t",
        "main",
        ";",
        "set-option",
        "-t",
        "=zz-grp:",
        "destroy-unattached",
        "off",
    ]);
    let grouped = s.tmux(&["display", "-p", "-t", &r.pane, "#{session_grouped}"]);
    assert_eq!(grouped.trim(), "1");
    // The premise: tmux's own lookup picks the other session.
    let best = s.tmux(&["display", "-p", "-t", &r.pane, "#{session_name}"]);
    assert_eq!(best.trim(), "zz-grp", "tmux's best session for {}", r.pane);
    let out = s.run(&["send", "-t", &r.pane, "--json", "hi"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let target = v["target"].as_str().unwrap();
    assert!(target.starts_with("main:"), "{target}");
    r.expect(b"hi");
}

#[test]
fn missing_target_with_explicit_off_means_our_newest_pane_only() {
    let s = server!();
    s.tmux(&["set", "-g", "@tmuxmate-require-explicit-target", "off"]);
    // No pane of ours yet: refused, even though panes exist.
    let out = s
        .tmuxmate()
        .env("TMUXMATE_AGENT", "ag")
        .args(["send", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let c: CreatedJson = serde_json::from_str(&ok(s
        .tmuxmate()
        .env("TMUXMATE_AGENT", "ag")
        .args([
            "new-window",
            "--json",
            "--",
            "sh",
            "-c",
            "stty raw -echo; exec cat > \"$0\"",
            s.dir.join("nw.bin").to_str().unwrap(),
        ])
        .output()
        .unwrap()))
    .unwrap();
    assert!(
        c.target.starts_with("tmuxmate:"),
        "outside any pane, new work goes to the tmuxmate session: {}",
        c.target
    );
    // The redirection creates the file after `stty raw` ran and just before cat starts.
    wait_until("cat to start", std::time::Duration::from_secs(10), || {
        s.dir.join("nw.bin").exists().then_some(())
    });
    ok(s.tmuxmate()
        .env("TMUXMATE_AGENT", "ag")
        .args(["send", "hi"])
        .output()
        .unwrap());
    wait_until(
        "text in the new pane",
        std::time::Duration::from_secs(10),
        || (std::fs::read(s.dir.join("nw.bin")).unwrap_or_default() == b"hi").then_some(()),
    );
    // Another agent has no pane of its own.
    let out = s
        .tmuxmate()
        .env("TMUXMATE_AGENT", "other")
        .args(["send", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_window_in_a_fresh_own_session_reports_its_address_after_renumbering() {
    // A user's `renumber-windows on` (set here for any config): from outside tmux the
    // window goes into a new `tmuxmate` session, whose placeholder window is removed once
    // ours exists, and ours moves down to the placeholder's index. The address reported
    // is where the pane is now.
    let s = server!();
    s.tmux(&["set-option", "-g", "renumber-windows", "on"]);
    let c: CreatedJson =
        serde_json::from_str(&ok(s.run(&["new-window", "--json", "--", "cat"]))).unwrap();
    assert_eq!(c.target, s.address(&c.pane_id));
    assert!(c.target.starts_with("tmuxmate:"), "{}", c.target);
    // The address works as a target (it names this pane, not another or none).
    let o = s.run(&["capture", "--json", "-t", &c.target]);
    let j: serde_json::Value = serde_json::from_str(&ok(o)).unwrap();
    assert_eq!(j["paneId"], c.pane_id.as_str());
}

#[test]
fn split_new_window_swap_and_list() {
    let s = server!();
    s.tmux(&["rename-session", "-t", "main", "my proj.v2:x 🚀"]);
    let name = s
        .tmux(&["display", "-p", "-t", "%0", "#{session_name}"])
        .trim()
        .to_string();
    s.tmux(&["set", "-g", "@tmuxmate-history-limit", "12345"]);
    // Without -t: a new window, not a split of the current one.
    let before = s
        .tmux(&["list-windows", "-a", "-F", "#{window_id}"])
        .lines()
        .count();
    let c: CreatedJson = serde_json::from_str(&ok(s.run(&["split", "--json"]))).unwrap();
    assert_eq!(
        s.tmux(&["list-windows", "-a", "-F", "#{window_id}"])
            .lines()
            .count(),
        before + 1
    );
    assert_eq!(
        s.tmux(&["display", "-p", "-t", &c.pane_id, "#{history_limit}"])
            .trim(),
        "12345"
    );
    let d: CreatedJson = serde_json::from_str(&ok(s.run(&[
        "split",
        "-t",
        &c.pane_id,
        "--horizontal",
        "--size",
        "30%",
        "--json",
        "--",
        "sh",
    ])))
    .unwrap();
    let l: ListJson = serde_json::from_str(&ok(s.run(&["list", "--json"]))).unwrap();
    assert_eq!(l.sessions.len(), 2);
    assert!(l.sessions.iter().any(|x| x.name == name));
    assert!(c.target.starts_with("tmuxmate:"), "{}", c.target);
    let win = l
        .windows
        .iter()
        .find(|w| {
            l.panes
                .iter()
                .any(|p| p.pane_id == c.pane_id && p.window_id == w.window_id)
        })
        .unwrap();
    assert_eq!(win.layout, format!("{{{},{}}}", c.pane_id, d.pane_id));
    let pc = l.panes.iter().find(|p| p.pane_id == c.pane_id).unwrap();
    assert!(pc.created_by_us);
    assert!(
        pc.executable.as_deref().is_some_and(|e| !e.is_empty()),
        "real executable from /proc"
    );
    assert!(
        !l.panes
            .iter()
            .find(|p| p.pane_id == "%0")
            .unwrap()
            .created_by_us
    );
    // swap is structural
    ok(s.run(&["swap", &c.pane_id, &d.pane_id]));
    let l: ListJson = serde_json::from_str(&ok(s.run(&["list", "--json"]))).unwrap();
    let win = l
        .windows
        .iter()
        .find(|w| w.window_id == win.window_id)
        .unwrap();
    assert_eq!(win.layout, format!("{{{},{}}}", d.pane_id, c.pane_id));
    let out = s.run(&["swap", &c.pane_id, &c.pane_id]);
    assert_eq!(out.status.code(), Some(2));
    // a hostile window name round-trips in list
    // (tmux 3.7 refuses a control character in a name: a backslash instead, stored escaped)
    let hostile = if tmux_release() >= (3, 7) {
        "a.b:c d\\🚀"
    } else {
        "a.b:c d\t🚀"
    };
    s.tmux(&["rename-window", "-t", &c.pane_id, hostile]);
    let l: ListJson = serde_json::from_str(&ok(s.run(&["list", "--json"]))).unwrap();
    let stored = s.tmux(&["display", "-p", "-t", &c.pane_id, "#{window_name}"]);
    assert!(
        l.windows
            .iter()
            .any(|w| w.name == stored.trim_end_matches('\n'))
    );
    assert!(ok(s.run(&["list"])).contains(&c.pane_id));
    // createdByUs survives every tmuxmate restart: it lives in tmux.
    assert!(
        s.tmux(&["show", "-pv", "-t", &c.pane_id, "@tmuxmate-created"])
            .contains("\"agent\"")
    );
}

#[test]
fn list_is_one_tmux_call_for_many_panes() {
    let s = server!();
    for _ in 0..30 {
        s.tmux(&["new-window", "-d", "-t", "main:", "sh"]);
    }
    // A tmux shim that counts invocations.
    let shim = s.dir.join("tmux-shim");
    let count = s.dir.join("count");
    write_script(
        &shim,
        &format!(
            "#!/bin/sh\necho x >> '{}'\nexec tmux \"$@\"\n",
            count.display()
        ),
    );
    // The first call of a state dir also asks `tmux -V` (the version gate, cached per
    // binary): count the calls of a warm one.
    let warm = s
        .tmuxmate()
        .env("TMUXMATE_TMUX", &shim)
        .args(["list", "--json"])
        .output()
        .unwrap();
    assert!(warm.status.success());
    std::fs::write(&count, "").unwrap();
    let out = s
        .tmuxmate()
        .env("TMUXMATE_TMUX", &shim)
        .args(["list", "--json"])
        .output()
        .unwrap();
    let l: ListJson = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(l.panes.len(), 31);
    let calls = std::fs::read_to_string(&count).unwrap().lines().count();
    assert_eq!(calls, 1, "list must be one tmux invocation");
}

/// The listing asks windows once and panes once and reads `/proc` during the
/// call: a window linked twice into one session keeps both targets, and a pane whose
/// foreground program changes shows the new one on the next listing (nothing cached).
/// The listing's pane rows carry no window fields: each pane's window, index, active flag
/// and mode come from its place after its window's row. Checked against tmux's own
/// answer for every pane, with panes split, one killed from the middle, a window of its
/// own `pane-base-index`, a second session, a linked window and a pane in copy mode.
#[test]
fn list_derives_each_panes_window_index_and_state_as_tmux_has_them() {
    let s = server!();
    let a = s.window("a", "sh");
    let mut split = Vec::new();
    for _ in 0..4 {
        split.push(
            s.tmux(&[
                "split-window",
                "-d",
                "-P",
                "-F",
                "#{pane_id}",
                "-t",
                &a,
                "sh",
            ])
            .trim()
            .to_string(),
        );
    }
    s.tmux(&["kill-pane", "-t", &split[1]]);
    s.tmux(&["select-pane", "-t", &split[2]]);
    s.tmux(&["set-option", "-w", "-t", &a, "pane-base-index", "5"]);
    let b = s.window("b", "sh");
    s.tmux(&["split-window", "-d", "-t", &b, "sh"]);
    s.tmux(&["copy-mode", "-t", &b]);
    // (In one command list: a hostile config's destroy-unattached would end it at once.)
    s.tmux(&[
        "new-session",
        "-d",
        "-s",
        "other",
        "sh",
        ";",
        "set-option",
        "-t",
        "other",
        "destroy-unattached",
        "off",
    ]);
    let w = s.tmux(&["display", "-p", "-t", &b, "#{window_id}"]);
    s.tmux(&["link-window", "-d", "-s", w.trim(), "-t", "other:9"]);
    let l: ListJson = serde_json::from_str(&ok(s.run(&["list", "--json"]))).unwrap();
    let fmt = "#{pane_id} #{session_name}:#{window_index}.#{pane_index} #{session_id} #{window_id} #{pane_active} #{pane_in_mode} #{pane_mode}";
    let mut want: Vec<String> = s
        .tmux(&["list-panes", "-a", "-F", fmt])
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            format!(
                "{} {} {} {} {} {} {}",
                f[0],
                f[1],
                f[2],
                f[3],
                f[4] == "1",
                f[5] != "0",
                f.get(6).unwrap_or(&"")
            )
        })
        .collect();
    let mut got: Vec<String> = l
        .panes
        .iter()
        .map(|p| {
            format!(
                "{} {} {} {} {} {} {}",
                p.pane_id, p.target, p.session_id, p.window_id, p.active, p.in_mode, p.mode
            )
        })
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert!(
        got.iter()
            .any(|p| p.contains(":9.") && p.contains("copy-mode")),
        "{got:?}"
    );
    assert!(
        got.iter().any(|p| p.contains(".5 ")),
        "pane-base-index 5: {got:?}"
    );
}

#[test]
fn list_joins_window_links_and_reads_each_foreground_afresh() {
    let s = server!();
    let pane = s.window("w", "sh");
    let w = s.tmux(&["display", "-p", "-t", &pane, "#{window_id}"]);
    let w = w.trim();
    s.tmux(&["link-window", "-d", "-s", w, "-t", "main:7"]);
    let list = || -> ListJson { serde_json::from_str(&ok(s.run(&["list", "--json"]))).unwrap() };
    let l = list();
    let mut targets: Vec<&str> = l
        .panes
        .iter()
        .filter(|p| p.pane_id == pane)
        .map(|p| p.target.as_str())
        .collect();
    targets.sort();
    // From tmux, not assumed: a config may set base-index and pane-base-index.
    let first = s.tmux(&[
        "display",
        "-p",
        "-t",
        &pane,
        "#{session_name}:#{window_index}.#{pane_index}",
    ]);
    let index = s.tmux(&["display", "-p", "-t", &pane, "#{pane_index}"]);
    let mut want = vec![first.trim().to_string(), format!("main:7.{}", index.trim())];
    want.sort();
    assert_eq!(targets, want, "both links of window {w}");
    assert_eq!(l.windows.iter().filter(|x| x.window_id == w).count(), 1);
    let fg = |l: &ListJson| {
        l.panes
            .iter()
            .find(|p| p.pane_id == pane)
            .map(|p| (p.current_command.clone(), p.executable.clone()))
    };
    // A pane just made may still be tmux's fork ("tmux: server") until its shell execs.
    wait_until("sh in the new pane", Duration::from_secs(10), || {
        fg(&list()).is_some_and(|(c, _)| c == "sh").then_some(())
    });
    // A child in the foreground (the pane's shell still runs), then an exec in place.
    s.tmux(&["send-keys", "-t", &pane, "-l", "cat"]);
    s.tmux(&["send-keys", "-t", &pane, "Enter"]);
    wait_until("cat in the foreground", Duration::from_secs(10), || {
        let l = list();
        (fg(&l) == Some(("cat".into(), Some("cat".into())))).then_some(())
    });
    s.tmux(&["send-keys", "-t", &pane, "C-c"]);
    wait_until(
        "the shell back in the foreground",
        Duration::from_secs(10),
        || fg(&list()).is_some_and(|(c, _)| c == "sh").then_some(()),
    );
    // A foreground job that replaces itself (same pid, another program).
    s.tmux(&[
        "send-keys",
        "-t",
        &pane,
        "-l",
        "sh -c 'sleep 0.2; exec sleep 300'",
    ]);
    s.tmux(&["send-keys", "-t", &pane, "Enter"]);
    wait_until("sleep exec'd in place", Duration::from_secs(10), || {
        let l = list();
        (fg(&l) == Some(("sleep".into(), Some("sleep".into())))).then_some(())
    });
}

#[test]
fn oversized_inputs_are_refused_and_nothing_reaches_the_pane() {
    let s = server!();
    let r = s.recorder_pane("rec");
    let too_many: Vec<String> = std::iter::repeat_n("Up".to_string(), 1001).collect();
    let mut args = vec!["keys", "-t", r.pane.as_str()];
    args.extend(too_many.iter().map(String::as_str));
    let out = s.run(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("1000-key limit"));
    let big = "x".repeat((1 << 20) + 1);
    let mut c = s.tmuxmate();
    c.args(["send", "-t", &r.pane, "--file", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), big.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("byte limit of one send"));
    let out = s.run(&[
        "paste",
        "-t",
        &r.pane,
        "--enter",
        "--settle-ms",
        "10001",
        "hi",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("10000 ms limit"));
    // A huge settle option waits the limit, not for ever (the Enter still comes).
    s.tmux(&["set", "-g", "@tmuxmate-paste-settle-ms", "99999999999"]);
    ok(s.run(&["paste", "-t", &r.pane, "--enter", "ok"]));
    r.expect(b"\x1b[200~ok\x1b[201~\r");
}
