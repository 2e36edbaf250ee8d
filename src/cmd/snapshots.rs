//! `tmuxmate snapshots [--limit N] [--json]` and `tmuxmate snapshots show ID`.
//!
//! Invariants: everything printed comes from the stored log (`crate::control::snapshot`), never
//! from a pane, so a snapshot of a killed pane still shows; the listing is folded (one
//! header line and a preview of at most three lines per snapshot) and `--json` lists
//! omit `text`, so a listing stays small whatever was captured.
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
        None => list(a.ask.limit, a.json),
    }
}

/// The key binding's popup: the listing through `$PAGER` (else less) on `client`.
fn popup(tmux: &Tmux, client: &str) -> CliResult {
    let r = std::env::current_exe()
        .map_err(Error::from)
        .and_then(|bin| {
            // The pager needs a shell; the path reaches it as "$0", never inside the text.
            let script = r#""$0" snapshots --limit 50 | ${PAGER:-less}"#;
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

fn list(limit: usize, json: bool) -> CliResult {
    let snaps = snapshot::list(limit).map_err(Error::new)?;
    if json {
        let rows: Vec<Summary> = snaps.into_iter().map(Summary::from).collect();
        super::out_json(&rows);
        return Ok(());
    }
    let mut text = String::new();
    for s in &snaps {
        text.push_str(&format!(
            "{}  {}  {} {}  {} line{}{}\n",
            s.id,
            utc(s.time),
            s.pane_id,
            s.target,
            s.line_count,
            if s.line_count == 1 { "" } else { "s" },
            if s.truncated { " (truncated)" } else { "" }
        ));
        for l in s.preview.lines() {
            text.push_str("    ");
            text.push_str(l);
            text.push('\n');
        }
    }
    super::out(&text);
    Ok(())
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
    use super::utc;

    #[test]
    fn formats_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00:00Z");
        assert_eq!(utc(1_709_210_096_000), "2024-02-29 12:34:56Z");
    }
}
