//! capture and snapshots against a real tmux server: ranges, the byte budget at UTF-8 and
//! escape-sequence boundaries, the JSON shape, target refusals, stored snapshots.

use std::time::Duration;

use crate::server;
use crate::util::contract::{CaptureJson, SnapshotFull, SnapshotRow};
use crate::util::*;

/// A new window whose pane runs `script` (from a file, so nothing is parsed twice) and
/// then stays open; returns once the pane shows `last`.
fn pane_showing(s: &Server, name: &str, script: &str, last: &str) -> String {
    let file = s.dir.join(format!("{name}.sh"));
    std::fs::write(&file, format!("{script}\nexec cat\n")).unwrap();
    let pane = s
        .tmux(&[
            "new-window",
            "-d",
            "-t",
            "main:",
            "-n",
            name,
            "-P",
            "-F",
            "#{pane_id}",
            &format!("sh '{}'", file.display()),
        ])
        .trim()
        .to_string();
    wait_until(
        &format!("pane {pane} to show {last:?}"),
        Duration::from_secs(20),
        || {
            s.tmux(&["capture-pane", "-p", "-S", "-", "-t", &pane])
                .contains(last)
                .then_some(())
        },
    );
    pane
}

fn capture_json(s: &Server, args: &[&str]) -> CaptureJson {
    let mut v = vec!["capture", "--json"];
    v.extend_from_slice(args);
    serde_json::from_str(&ok(s.run(&v))).expect("capture --json is one CaptureJson")
}

#[test]
fn captures_visible_screen_without_blank_bottom() {
    let s = server!();
    let p = pane_showing(&s, "screen", "printf 'one\\ntwo  \\nthree\\n'", "three");
    assert_eq!(ok(s.run(&["capture", "-t", &p])), "one\ntwo\nthree\n");
    let j = capture_json(&s, &["-t", &p]);
    assert_eq!(j.text, "one\ntwo\nthree");
    assert_eq!(j.pane_id, p);
    assert_eq!(j.line_count, 3);
    assert!(!j.truncated);
    assert_eq!(j.target, s.address(&p));
    assert!(j.target.starts_with("main:"), "{}", j.target);
}

#[test]
fn lines_reaches_into_scrollback_and_all_takes_everything() {
    let s = server!();
    // The test needs 1500 lines of scrollback in a pane tmux (not tmuxmate) creates: set
    // tmux's default limit for this session, which a user's config may have lowered (even
    // to 0). It applies to panes created after it.
    s.tmux(&["set-option", "-t", "=main:", "history-limit", "2000"]);
    let p = pane_showing(
        &s,
        "hist",
        "i=1; while [ $i -le 1500 ]; do echo \"n$i\"; i=$((i+1)); done",
        "n1500",
    );
    let screen = capture_json(&s, &["-t", &p]);
    let first: u32 = screen.text.lines().next().unwrap()[1..].parse().unwrap();
    assert!(first > 100, "the screen should start deep in the output");
    assert!(screen.text.ends_with("n1500"));

    let five = capture_json(&s, &["-t", &p, "--lines", "5"]);
    assert_eq!(
        five.text.lines().next().unwrap(),
        format!("n{}", first - 5),
        "--lines 5 adds exactly five history lines"
    );
    assert_eq!(five.line_count, screen.line_count + 5);

    let all = capture_json(&s, &["-t", &p, "--all", "--max-bytes", "1000000"]);
    let want: Vec<String> = (1..=1500).map(|i| format!("n{i}")).collect();
    assert_eq!(all.text, want.join("\n"));
    assert_eq!(all.line_count, 1500);
    assert!(!all.truncated);

    // The default budget also applies to --all, and keeps the newest lines.
    s.tmux(&["set", "-g", "@tmuxmate-capture-max-bytes", "100"]);
    let small = capture_json(&s, &["-t", &p, "--all"]);
    assert!(small.truncated);
    assert!(small.text.len() <= 100);
    assert!(small.text.ends_with("n1499\nn1500"));
    assert!(all.text.ends_with(&small.text));
}

/// Every cut of `full` to budgets 1..=len: valid UTF-8 (no replacement characters), a
/// suffix of the full text, within budget, on a line start when a whole line fits, and
/// the text-mode marker counts exactly the dropped bytes.
fn check_cuts(s: &Server, pane: &str, extra: &[&str], full: &str) {
    for max in 1..=full.len() + 1 {
        let m = max.to_string();
        let mut args = vec!["-t", pane, "--max-bytes", &m];
        args.extend_from_slice(extra);
        let j = capture_json(s, &args);
        assert!(!j.text.contains('\u{fffd}'), "max {max}: {:?}", j.text);
        assert!(full.ends_with(&j.text), "max {max}: {:?}", j.text);
        assert!(j.text.len() <= max, "max {max}: {:?}", j.text);
        assert_eq!(j.truncated, j.text.len() < full.len(), "max {max}");
        let cut = full.len() - j.text.len();
        let last_line_start = full.rfind('\n').map_or(0, |i| i + 1);
        if full.len() - last_line_start <= max && j.truncated {
            assert!(
                cut == 0 || full.as_bytes()[cut - 1] == b'\n',
                "max {max}: a whole line fits, so the cut must be on a line start: {:?}",
                j.text
            );
        }
        for (start, end) in escapes(full) {
            assert!(
                !(start < cut && cut < end),
                "max {max}: cut inside an escape sequence: {:?}",
                j.text
            );
        }
        let mut targs = vec!["capture"];
        targs.extend_from_slice(&args);
        let text = ok(s.run(&targs));
        if j.truncated {
            assert_eq!(
                text,
                format!(
                    "[... {cut} earlier bytes truncated ...]\n{}{}",
                    j.text,
                    if j.text.is_empty() { "" } else { "\n" }
                ),
                "max {max}"
            );
        }
    }
}

fn escapes(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut v = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == 0x1b && i + 1 < b.len() && b[i + 1] == b'[' {
            let mut j = i + 2;
            while j < b.len() && !(0x40..=0x7e).contains(&b[j]) {
                j += 1;
            }
            v.push((i, j + 1));
            i = j + 1;
        } else {
            i += 1;
        }
    }
    v
}

#[test]
fn budget_cuts_at_utf8_boundaries() {
    let s = server!();
    let p = pane_showing(
        &s,
        "utf8",
        "printf 'éééé\\n日本日本\\né日本é\\nab日本\\n'",
        "ab日本",
    );
    let full = capture_json(&s, &["-t", &p]).text;
    assert_eq!(full, "éééé\n日本日本\né日本é\nab日本");
    check_cuts(&s, &p, &[], &full);
}

#[test]
fn ansi_budget_never_cuts_inside_an_escape() {
    let s = server!();
    let p = pane_showing(
        &s,
        "ansi",
        "printf '\\033[31mred\\033[0m plain\\n\\033[32mg\\033[33my\\033[34mb\\033[1m日\\033[0m\\n'",
        "plain",
    );
    let full = capture_json(&s, &["-t", &p, "--ansi"]).text;
    assert!(full.contains("\x1b[31m"), "{full:?}");
    assert!(
        escapes(full.rsplit('\n').next().unwrap()).len() >= 3,
        "{full:?}"
    );
    check_cuts(&s, &p, &["--ansi"], &full);
    // Without --ansi no escape reaches the text.
    assert!(!capture_json(&s, &["-t", &p]).text.contains('\x1b'));
}

#[test]
fn invalid_and_missing_targets_are_refused() {
    let s = server!();
    for bad in ["codex;echo x", "../x", ""] {
        let out = s.run(&["capture", "-t", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("target") && err.contains("tmuxmate list"),
            "{bad:?}: {err}"
        );
    }
    let out = s.run(&["capture"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no target given"), "{err}");
    let out = s.run(&["capture", "-t", "%999"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
    let out = s.run(&["capture", "-t", "%0", "--max-bytes", "0"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn snapshots_keep_the_text_after_the_pane_is_gone() {
    let s = server!();
    let p = pane_showing(
        &s,
        "snap",
        "printf 'kept 1\\nkept 2\\nkept 3\\nkept 4\\n'",
        "kept 4",
    );
    let j = capture_json(&s, &["-t", &p]);
    let rows: Vec<SnapshotRow> =
        serde_json::from_str(&ok(s.run(&["snapshots", "--json", "--limit", "1"]))).unwrap();
    assert_eq!(rows.len(), 1);
    let id = rows[0].snapshot_id.clone();
    assert_eq!(rows[0].pane_id, p);
    assert_eq!(rows[0].line_count, 4);
    assert_eq!(rows[0].preview, "kept 2\nkept 3\nkept 4");

    s.tmux(&["kill-pane", "-t", &p]);
    assert_eq!(
        ok(s.run(&["snapshots", "show", &id])),
        format!("{}\n", j.text)
    );
    let full: SnapshotFull =
        serde_json::from_str(&ok(s.run(&["snapshots", "--json", "show", &id]))).unwrap();
    assert_eq!(full.text, j.text);

    let list = ok(s.run(&["snapshots"]));
    let mut lines = list.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with(&id) && header.contains(&p), "{list}");
    assert!(header.contains("4 lines"), "{list}");
    assert_eq!(
        lines.collect::<Vec<_>>(),
        vec!["    kept 2", "    kept 3", "    kept 4"]
    );

    // Newest first.
    // (An address as tmux numbers it: a user's base-index can make it `main:1`.)
    capture_json(&s, &["-t", &s.window_address("%0")]);
    let rows: Vec<SnapshotRow> =
        serde_json::from_str(&ok(s.run(&["snapshots", "--json"]))).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].snapshot_id, id);

    let out = s.run(&["snapshots", "show", "s0nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no snapshot with id"));
}
