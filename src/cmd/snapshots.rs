//! `tmuxmate snapshots [--limit N] [--json]` and `tmuxmate snapshots show ID`.
//!
//! Invariants: everything printed comes from the stored log (`crate::control::snapshot`), never
//! from a pane, so a snapshot of a killed pane still shows; the listing is one short line
//! a snapshot (its last line clipped; `--preview` adds up to three lines under it, as the
//! popup shows) and `--json` lists omit `text`, so a listing stays small whatever was
//! captured.
//!
//! JSON (docs/json.md): list = `[{snapshotId, time, paneId, target, lineCount, truncated,
//! preview}]`, newest first, `time` in ms since the epoch; show = the same object plus
//! `text`; clear = `{cleared}`.

use crate::cli::JsonActions;
use crate::control::snapshot::{self, SnapshotsAction, SnapshotsAsk, Summary};
use crate::error::{CliResult, Error};
use crate::tmux::Tmux;

pub fn run(tmux: &Tmux, a: JsonActions<SnapshotsAction, SnapshotsAsk>) -> CliResult {
    match a.action {
        Some(SnapshotsAction::Show { id }) => show(&id, a.json),
        Some(SnapshotsAction::Clear) => {
            let n = snapshot::clear().map_err(Error::new)?;
            if a.json {
                super::out_json(&serde_json::json!({ "cleared": n }));
            } else {
                super::out_line(&format!(
                    "deleted {n} stored snapshot{} ({}); `tmux set -g {} off` stores none",
                    if n == 1 { "" } else { "s" },
                    snapshot::log_path().display(),
                    snapshot::OPTION
                ));
            }
            Ok(())
        }
        Some(SnapshotsAction::Popup { client }) => popup(tmux, &client),
        None => list(a.ask.limit, a.ask.preview, a.json),
    }
}

/// The key binding's popup: the listing through `$PAGER` (else less) on `client`.
fn popup(tmux: &Tmux, client: &str) -> CliResult {
    let r = std::env::current_exe()
        .map_err(Error::from)
        .and_then(|bin| {
            // The pager needs a shell; the path reaches it as "$0", never inside the text.
            let script = r#""$0" snapshots --limit 50 --preview | ${PAGER:-less}"#;
            let argv = vec![
                "/bin/sh".to_string(),
                "-c".to_string(),
                script.to_string(),
                bin.to_string_lossy().into_owned(),
            ];
            crate::tmux::popup::popup(tmux, client, " snapshots ", &argv).map_err(Error::from)
        });
    if let Err(e) = &r {
        crate::tmux::popup::tell(tmux, client, "snapshots", &e.msg);
    }
    r
}

fn show(id: &str, json: bool) -> CliResult {
    let Some(s) = snapshot::find(id).map_err(Error::new)? else {
        return Err(Error::new(format!(
            "no snapshot with id {id:?}; run `tmuxmate snapshots` to list the stored ones (old ones are dropped once the log grows past a few MB)"
        )));
    };
    if !json {
        if !s.text.is_empty() {
            super::out_line(&s.text);
        }
        return Ok(());
    }
    /// `snapshots show --json`: the listing row plus the full text.
    #[derive(serde::Serialize)]
    struct Shown {
        #[serde(flatten)]
        row: Summary,
        text: String,
    }
    let text = s.text.clone();
    super::out_json(&Shown {
        row: Summary::from(s),
        text,
    });
    Ok(())
}

fn list(limit: usize, preview: bool, json: bool) -> CliResult {
    let snaps = snapshot::list(limit).map_err(Error::new)?;
    if json {
        let rows: Vec<Summary> = snaps.into_iter().map(Summary::from).collect();
        super::out_json(&rows);
        return Ok(());
    }
    super::out(&listing(&snaps, preview, crate::sys::time::now_ms()));
    Ok(())
}

/// How much of a snapshot's last line its listing line shows.
const LAST_LINE_CHARS: usize = 32;

/// One line a snapshot: id, age, pane, target, lines (`+` when cut), and its last
/// non-blank line clipped; with `preview`, its preview lines under it.
fn listing(snaps: &[snapshot::Snapshot], preview: bool, now_ms: u64) -> String {
    if snaps.is_empty() {
        return "no stored snapshots\n".into();
    }
    let mut text = String::new();
    for s in snaps {
        let last = s.preview.lines().next_back().unwrap_or("");
        text.push_str(&format!(
            "{} {} {} {} {}L{}",
            s.id,
            crate::state::list::human(now_ms.saturating_sub(s.time) / 1000),
            s.pane_id,
            crate::sys::printable::clip(&s.target, 24),
            s.line_count,
            if s.truncated { "+" } else { "" },
        ));
        if preview {
            text.push_str(&format!("  {}\n", utc(s.time)));
            for l in s.preview.lines() {
                text.push_str("    ");
                text.push_str(l);
                text.push('\n');
            }
        } else {
            let last = crate::sys::printable::clip(last, LAST_LINE_CHARS);
            if !last.is_empty() {
                text.push_str(": ");
                text.push_str(&last);
            }
            text.push('\n');
        }
    }
    text
}

/// `YYYY-MM-DD HH:MM:SSZ` from epoch milliseconds (civil-from-days, proleptic Gregorian).
fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::{listing, utc};
    use crate::control::snapshot::Snapshot;

    fn snap(id: &str, time: u64, target: &str, preview: &str, truncated: bool) -> Snapshot {
        Snapshot {
            id: id.into(),
            time,
            pane_id: "%7".into(),
            target: target.into(),
            line_count: 1200,
            truncated,
            preview: preview.into(),
            text: String::new(),
            in_file: false,
        }
    }

    #[test]
    fn a_listing_is_one_short_line_a_snapshot_and_the_preview_on_asking() {
        let now = 1_709_210_096_000;
        let snaps = [
            snap(
                "s1",
                now - 5_000,
                "work:1.0",
                "a\nb\n$ cargo test\x1b[31m ok",
                false,
            ),
            snap(
                "s2",
                now - 7_200_000,
                &"long-session-name".repeat(3),
                "",
                true,
            ),
        ];
        assert_eq!(
            listing(&snaps, false, now),
            "s1 5s %7 work:1.0 1200L: $ cargo test[31m ok\n\
             s2 2h %7 long-session-namelong-se… 1200L+\n"
        );
        assert_eq!(
            listing(&snaps[..1], true, now),
            "s1 5s %7 work:1.0 1200L  2024-02-29 12:34:51Z\n    a\n    b\n    $ cargo test\x1b[31m ok\n"
        );
        assert_eq!(listing(&[], false, now), "no stored snapshots\n");
    }

    #[test]
    fn formats_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00:00Z");
        assert_eq!(utc(1_709_210_096_000), "2024-02-29 12:34:56Z");
    }
}
