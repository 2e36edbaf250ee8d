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

    // One short line: id, age, pane, target, lines, the last line.
    let list = ok(s.run(&["snapshots"]));
    let mut lines = list.lines();
    let line = lines.next().unwrap();
    assert!(
        line.starts_with(&id) && line.contains(&format!(" {p} ")),
        "{list}"
    );
    assert!(line.ends_with(" 4L: kept 4"), "{list}");
    assert!(lines.next().is_none(), "{list}");
    let list = ok(s.run(&["snapshots", "--preview"]));
    let mut lines = list.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with(&id) && header.contains(" 4L "), "{list}");
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

/// A capture of a history far larger than the budget reads it from its end:
/// the text is exactly what bounding the whole capture gives, tmux is never asked for the
/// whole history, and the text-mode marker says the dropped count is a lower bound.
#[test]
fn a_long_history_is_read_from_its_end_with_the_same_text() {
    let s = server!();
    s.tmux(&["set-option", "-g", "history-limit", "50000"]);
    // 30 000 rows of 1 to 60 characters, some of them not ASCII.
    let p = s.window(
        "long",
        "awk 'BEGIN { for (i = 1; i <= 30000; i++) { s = sprintf(\"%d:\", i); \
         for (j = 0; j < i % 57; j++) s = s (j % 7 ? \"x\" : \"日\"); print s } }'; exec cat",
    );
    wait_history(&s, &p, 29_000);
    // The whole text, bounded by nothing: every later answer must be a cut of it.
    let whole = capture_json(&s, &["-t", &p, "--all", "--max-bytes", "100000000"]);
    assert!(!whole.truncated);
    let full = whole.text;
    assert!(
        full.starts_with("1:") && full.contains("\n30000:日"),
        "{}",
        &full[full.len() - 40..]
    );
    // What bounding the whole text to `max` keeps (no line here is longer than `max`).
    let expect = |full: &str, max: usize| -> String {
        if full.len() <= max {
            return full.to_string();
        }
        let min = full.len() - max;
        let b = full.as_bytes();
        let cut = if b[min - 1] == b'\n' {
            min
        } else {
            min + b[min..].iter().position(|&c| c == b'\n').unwrap() + 1
        };
        full[cut..].to_string()
    };
    // A tmux that logs what it is asked.
    let shim = s.dir.join("tmux-log-shim");
    let log = s.dir.join("tmux-args");
    write_script(
        &shim,
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec tmux \"$@\"\n",
            log.display()
        ),
    );
    for max in [100usize, 5_000, 100_000, 400_000] {
        std::fs::write(&log, "").unwrap();
        let m = max.to_string();
        let out = s
            .tmuxmate()
            .env("TMUXMATE_TMUX", &shim)
            .args(["capture", "--json", "-t", &p, "--all", "--max-bytes", &m])
            .output()
            .unwrap();
        let j: CaptureJson = serde_json::from_str(&ok(&out)).unwrap();
        assert_eq!(j.text, expect(&full, max), "max {max}");
        assert!(j.truncated, "max {max}");
        let asked = std::fs::read_to_string(&log).unwrap();
        assert!(
            asked.lines().any(|l| l.contains("capture-pane")),
            "max {max}: {asked}"
        );
        assert!(
            !asked
                .lines()
                .any(|l| l.contains("capture-pane") && l.ends_with("-S -")),
            "max {max}: the whole history was asked for: {asked}"
        );
        // Text mode says how much at least was left out.
        let text = ok(s.run(&["capture", "-t", &p, "--all", "--max-bytes", &m]));
        let first = text.lines().next().unwrap();
        assert!(
            first.starts_with("[... at least ") && first.ends_with(" earlier bytes truncated ...]"),
            "max {max}: {first}"
        );
    }
    // --lines N beyond the first window, and --join: the same cut of their whole text.
    let lines = capture_json(
        &s,
        &["-t", &p, "--lines", "20000", "--max-bytes", "100000000"],
    );
    let j = capture_json(&s, &["-t", &p, "--lines", "20000", "--max-bytes", "3000"]);
    assert_eq!(j.text, expect(&lines.text, 3000));
    let joined = capture_json(
        &s,
        &["-t", &p, "--all", "--join", "--max-bytes", "100000000"],
    );
    let j = capture_json(&s, &["-t", &p, "--all", "--join", "--max-bytes", "7000"]);
    assert_eq!(j.text, expect(&joined.text, 7000));
    // The newest rows are short (one character each): the first window holds less than
    // the budget, so it grows, and the cut is still that of the whole text.
    let q = s.window(
        "short-end",
        "awk 'BEGIN { for (i = 1; i <= 20000; i++) printf \"%06d %050d\\n\", i, i; \
         for (i = 1; i <= 9000; i++) print i % 10 }'; exec cat",
    );
    wait_history(&s, &q, 28_000);
    let whole_q = capture_json(&s, &["-t", &q, "--all", "--max-bytes", "100000000"]).text;
    std::fs::write(&log, "").unwrap();
    let out = s
        .tmuxmate()
        .env("TMUXMATE_TMUX", &shim)
        .args([
            "capture",
            "--json",
            "-t",
            &q,
            "--all",
            "--max-bytes",
            "100000",
        ])
        .output()
        .unwrap();
    let j: CaptureJson = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(j.text, expect(&whole_q, 100_000));
    let asked = std::fs::read_to_string(&log).unwrap();
    let windows = asked.lines().filter(|l| l.contains("capture-pane")).count();
    assert_eq!(windows, 2, "a first window, then a larger one: {asked}");
    // A budget larger than the whole text: all of it, not truncated.
    let j = capture_json(
        &s,
        &[
            "-t",
            &p,
            "--all",
            "--max-bytes",
            &(full.len() + 10).to_string(),
        ],
    );
    assert!(!j.truncated);
    assert_eq!(j.text, full);
}

/// A whole-history capture far over the log's share is stored as the text itself, in
/// its own file, while tmux sends it: `snapshots show` gives back the very bytes printed,
/// by a `%N` target and by a name alike; with storing off no file (not even a temp one)
/// is left; a cut capture stores the cut text, not what was streamed.
#[test]
fn a_long_capture_is_stored_whole_in_its_own_file() {
    let s = server!();
    s.tmux(&["set-option", "-g", "history-limit", "20000"]);
    let p = s.window(
        "big",
        "awk 'BEGIN { for (i = 1; i <= 6000; i++) printf \"%05d 日本 %060d\\n\", i, i }'; exec cat",
    );
    wait_history(&s, &p, 5_900);
    let files = s.state.join("snapshots");
    let listed = |dir: &std::path::Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .map(|r| {
                r.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    for target in [p.clone(), s.window_address(&p)] {
        let printed = ok(s.run(&["capture", "-t", &target, "--all", "--max-bytes", "10000000"]));
        assert!(
            printed.len() > 400_000 && printed.starts_with("00001 日本"),
            "{}",
            printed.len()
        );
        let rows: Vec<SnapshotRow> =
            serde_json::from_str(&ok(s.run(&["snapshots", "--json", "--limit", "1"]))).unwrap();
        let id = &rows[0].snapshot_id;
        assert_eq!(ok(s.run(&["snapshots", "show", id])), printed, "{target}");
        let stored = std::fs::read_to_string(files.join(format!("{id}.txt"))).unwrap();
        assert_eq!(format!("{stored}\n"), printed);
        // The log holds a stub line only.
        let log = std::fs::metadata(s.state.join("snapshots.jsonl"))
            .unwrap()
            .len();
        assert!(log < 10_000, "{log}");
    }
    // Nothing but the stored texts and the folder's size ledger: no temp file is left.
    assert!(
        listed(&files)
            .iter()
            .all(|f| f.ends_with(".txt") || f == ".bytes"),
        "{:?}",
        listed(&files)
    );

    // Cut to a budget: the stored text is the cut one.
    let j = capture_json(&s, &["-t", &p, "--all", "--max-bytes", "200000"]);
    assert!(j.truncated);
    let rows: Vec<SnapshotRow> =
        serde_json::from_str(&ok(s.run(&["snapshots", "--json", "--limit", "1"]))).unwrap();
    let full: SnapshotFull = serde_json::from_str(&ok(s.run(&[
        "snapshots",
        "--json",
        "show",
        &rows[0].snapshot_id,
    ])))
    .unwrap();
    assert_eq!(full.text, j.text);

    // A whole history that turns out short: its file, made while tmux worked on the
    // capture, is not kept (the log line holds the text) and not left as a temp file.
    let short = pane_showing(&s, "short", "echo short-history", "short-history");
    let before = listed(&files);
    let printed = ok(s.run(&["capture", "-t", &short, "--all"]));
    assert!(printed.contains("short-history"), "{printed}");
    let rows: Vec<SnapshotRow> =
        serde_json::from_str(&ok(s.run(&["snapshots", "--json", "--limit", "1"]))).unwrap();
    assert_eq!(
        ok(s.run(&["snapshots", "show", &rows[0].snapshot_id])),
        printed
    );
    assert_eq!(listed(&files), before, "a short capture left a file");

    s.tmux(&["set", "-g", "@tmuxmate-snapshots", "off"]);
    let before = listed(&files);
    let printed = ok(s.run(&["capture", "-t", &p, "--all", "--max-bytes", "10000000"]));
    assert!(printed.len() > 400_000);
    assert_eq!(listed(&files), before, "storing off wrote a file");
}
