//! The split a side chat opens in when no client is attached to the main pane's session,
//! and giving the main window back when the side chat ends.
//!
//! Owns `@tmuxmate-side-split` on the main pane: the split's pane id, its window, and the
//! window's layout and panes from just before the split. Invariants: the split never
//! stays as a dead pane (its own `remain-on-exit` is off, whatever the window's or the
//! global value; a split that lingers is killed by `restore`); the window's layout is put
//! back only when the window holds exactly the panes it held before the split (a pane the
//! person added or closed meanwhile means their layout, which is left alone).

use crate::targs;
use crate::tmux::Arg;
use crate::tmux::Tmux;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

pub const OPT_SPLIT: &str = crate::tmux::options::SIDE_SPLIT.name;

/// How long `restore` lets the side chat's pane close on its own before killing it.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// The main window as it was before the split.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Before {
    pub window: String,
    pub layout: String,
    pub panes: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct Record {
    split: String,
    #[serde(flatten)]
    before: Before,
}

/// (pane id, dead) of every pane in `target`'s window.
fn panes_of(tmux: &Tmux, target: &str) -> Option<Vec<(String, bool)>> {
    let out = tmux
        .run(&targs![
            "list-panes",
            "-t",
            Arg::id(target),
            "-F",
            "#{pane_id} #{pane_dead}"
        ])
        .ok()?;
    Some(
        out.lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(p, d)| (p.to_string(), d == "1"))
            .collect(),
    )
}

/// The main pane's window before the split (read just before `split-window`).
pub fn before(tmux: &Tmux, main: &str) -> Option<Before> {
    let out = tmux
        .run(&targs![
            "display-message",
            "-p",
            "-t",
            Arg::id(main),
            "#{window_id} #{window_layout}"
        ])
        .ok()?;
    let (window, layout) = out.trim_end().split_once(' ')?;
    let mut panes: Vec<String> = panes_of(tmux, main)?.into_iter().map(|p| p.0).collect();
    panes.sort();
    Some(Before {
        window: window.to_string(),
        layout: layout.to_string(),
        panes,
    })
}

/// Right after the split exists: it must close when the side chat ends, even under
/// `remain-on-exit on`, and `restore` must know what to give back.
pub fn opened(tmux: &Tmux, main: &str, split: &str, before: Option<Before>) {
    let _ = tmux.run(&targs![
        "set-option",
        "-p",
        "-t",
        Arg::id(split),
        "remain-on-exit",
        "off"
    ]);
    // It may have ended before the option reached it: a dead pane stays dead.
    if panes_of(tmux, split).is_some_and(|ps| ps.iter().any(|(p, dead)| p == split && *dead)) {
        let _ = tmux.run(&targs!["kill-pane", "-t", Arg::id(split)]);
    }
    if let Some(before) = before {
        let rec = Record {
            split: split.to_string(),
            before,
        };
        let v = serde_json::to_string(&rec).unwrap_or_default();
        let _ = tmux.run(&targs![
            "set-option",
            "-p",
            "-t",
            Arg::id(main),
            "--",
            OPT_SPLIT,
            Arg::literal(&v)
        ]);
    }
}

/// After the side chat ended: the split gone (waited for, then killed), the main window's
/// layout as before when its panes are the same. Returns whether a split was recorded.
pub fn restore(tmux: &Tmux, main: &str) -> bool {
    let raw = tmux
        .run(&targs![
            "show-options",
            "-pqv",
            "-t",
            Arg::id(main),
            OPT_SPLIT
        ])
        .unwrap_or_default();
    let Ok(rec) = serde_json::from_str::<Record>(raw.trim_end()) else {
        return false;
    };
    let start = Instant::now();
    // Until the split is gone (or its window: then nothing is left to restore).
    while let Some(ps) = panes_of(tmux, &rec.before.window) {
        match ps.iter().find(|(p, _)| *p == rec.split) {
            None => break,
            Some((_, dead)) if *dead || start.elapsed() >= CLOSE_WAIT => {
                let _ = tmux.run(&targs!["kill-pane", "-t", Arg::id(&rec.split)]);
            }
            Some(_) => std::thread::sleep(Duration::from_millis(50)),
        }
        if start.elapsed() >= CLOSE_WAIT + Duration::from_secs(2) {
            break;
        }
    }
    if let Some(ps) = panes_of(tmux, &rec.before.window) {
        let mut now: Vec<String> = ps.into_iter().map(|p| p.0).collect();
        now.sort();
        if now == rec.before.panes {
            let _ = tmux.run(&targs![
                "select-layout",
                "-t",
                Arg::id(&rec.before.window),
                Arg::literal(&rec.before.layout)
            ]);
        }
    }
    let _ = tmux.run(&targs![
        "set-option",
        "-p",
        "-u",
        "-t",
        Arg::id(main),
        OPT_SPLIT
    ]);
    true
}
