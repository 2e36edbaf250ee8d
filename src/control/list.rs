//! Listing: sessions, windows (with layout) and panes from one tmux invocation, as the
//! typed result both `tmuxmate list --json` and the MCP `tmux_list` tool return.
//!
//! Invariant: exactly one tmux call (`list-windows -a ; list-panes -a`) whatever the
//! number of panes; the real executable of each pane's foreground process comes from
//! `/proc`, not from tmux, read during the call: while the server formats the listing,
//! other threads read `/proc` for the server's children (the panes' processes, found from
//! the socket's peer pid), so the two costs overlap instead of adding up. Nothing is kept
//! between calls (no cache to go stale): a pane whose process the early reading missed
//! (it started meanwhile) is read after the answer. On a remote server (`--host`) the
//! host's `/proc` is out of reach: the current command is tmux's
//! `#{pane_current_command}` and the executable is unknown (null).

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::tmux::panes::{self, PaneInfo};
use crate::tmux::{Tmux, layout};

// What a listing asks for: nothing (the CLI's `list` takes only `--json`, the MCP tool no
// arguments). A plain comment: clap would make a doc comment the `list --help` text.
#[derive(clap::Args, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Ask {}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionJson {
    pub session_id: String,
    pub name: String,
    pub attached: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowJson {
    pub window_id: String,
    pub session_id: String,
    pub index: u32,
    pub name: String,
    pub active: bool,
    pub layout: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PaneJson {
    pub pane_id: String,
    pub target: String,
    pub session_id: String,
    pub window_id: String,
    pub width: u32,
    pub height: u32,
    pub current_command: String,
    pub executable: Option<String>,
    pub active: bool,
    pub dead: bool,
    pub in_mode: bool,
    pub mode: String,
    pub created_by_us: bool,
    /// The pane's watch job (`@tmuxmate-job`), as `watch show` prints one; `null` when
    /// none (or its option does not parse: `watch list` says why).
    pub watch: Option<serde_json::Value>,
    /// Its watch job is running (text mode marks the pane "watched").
    #[serde(skip)]
    pub watch_running: bool,
    /// The pane has an `@tmuxmate-job` option that does not parse (text mode says so).
    #[serde(skip)]
    pub watch_unreadable: bool,
    /// The agent address of the pane (where `--notify %N` delivers), if one is known.
    pub agent: Option<String>,
    /// The agent address that created the pane (its `@tmuxmate-created` mark), when
    /// `with_creator` (the CLI and the MCP listing both ask); else `null`.
    pub created_by: Option<String>,
}

#[derive(Serialize)]
pub struct ListJson {
    pub sessions: Vec<SessionJson>,
    pub windows: Vec<WindowJson>,
    pub panes: Vec<PaneJson>,
}

/// A pane process's `(current command, executable)` (`sys::foreground::of`).
type Foreground = (String, Option<String>);

/// `f` of every item, split across the available cores when there are many (reading
/// `/proc` dominates a big listing), less `busy` cores that other work holds meanwhile.
fn on_cores<T: Sync, R: Send + Default>(
    items: &[T],
    busy: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    // Asked once per process: each answer reads the cgroup's cpu quota files again, and a
    // resident server lists many times.
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let threads = cores.saturating_sub(busy).clamp(1, 4);
    if items.len() < 64 || threads < 2 {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|sc| {
        let hs: Vec<_> = items
            .chunks(chunk)
            .map(|c| sc.spawn(move || c.iter().map(f).collect::<Vec<_>>()))
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// The foreground of every child of the tmux server `server` (its panes' processes,
/// and any job it runs), read while the server works on the listing: on the cores the
/// server leaves free (it formats on one). On two cores a second reader only took CPU
/// from the server, whose answer is what the listing waits for (1000 panes, tmux 3.3a,
/// medians: 57.6/53.8 -> 51.6/46.9 ms against 45.5 for the raw client; our CPU 30 -> 23 ms).
fn early_foregrounds(server: i32) -> Vec<(i32, Option<Foreground>)> {
    let Some(children) = crate::sys::procfs::children(server) else {
        return Vec::new();
    };
    let fg = on_cores(&children, 1, |&pid| crate::sys::foreground::of(pid));
    children.into_iter().zip(fg).collect()
}

/// `(current command, executable)` for every live pane: from `early` (read during the
/// call) when it has the pane's process, else read now (on several cores when many are).
fn foregrounds(rows: &[PaneInfo], early: &[(i32, Option<Foreground>)]) -> Vec<Foreground> {
    let early: std::collections::HashMap<i32, &Foreground> = early
        .iter()
        .filter_map(|(pid, fg)| fg.as_ref().map(|fg| (*pid, fg)))
        .collect();
    let mut out = Vec::with_capacity(rows.len());
    let mut missed = Vec::new();
    for (i, p) in rows.iter().enumerate() {
        let pid = p.pane_pid.parse::<i32>().ok();
        out.push(match pid {
            _ if p.dead => (String::new(), None),
            None => Foreground::default(),
            Some(pid) => match early.get(&pid) {
                Some(fg) => (*fg).clone(),
                None => {
                    missed.push((i, pid));
                    Foreground::default()
                }
            },
        });
    }
    let late = on_cores(&missed, 0, |&(_, pid)| {
        crate::sys::foreground::of(pid).unwrap_or_default()
    });
    for ((i, _), fg) in missed.into_iter().zip(late) {
        out[i] = fg;
    }
    out
}

/// A pane's watch job as the listing shows it, read from its `@tmuxmate-job` option by
/// the watch capability (which sits above this one): the job's JSON and whether it runs;
/// `None` when the option does not parse.
pub type WatchView = fn(&str) -> Option<(serde_json::Value, bool)>;

fn build(
    rows: &[PaneInfo],
    sees_processes: bool,
    with_creator: bool,
    watch_view: WatchView,
    early: &[(i32, Option<Foreground>)],
) -> ListJson {
    let fg = if sees_processes {
        foregrounds(rows, early)
    } else {
        rows.iter()
            .map(|p| (p.current_command.clone(), None))
            .collect()
    };
    let mut sessions: Vec<SessionJson> = Vec::new();
    let mut windows: Vec<WindowJson> = Vec::new();
    let mut panes = Vec::with_capacity(rows.len());
    // Sets and one pass for the layouts: scanning the lists per pane was ~3 ms of
    // string comparisons in a 500-pane listing (perf).
    let mut seen_sessions = std::collections::HashSet::new();
    let mut seen_windows = std::collections::HashSet::new();
    let mut layouts: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    for r in rows.iter().filter(|r| !r.window_layout.is_empty()) {
        layouts.entry(&r.window_id).or_insert(&r.window_layout);
    }
    for (p, (current_command, executable)) in rows.iter().zip(fg) {
        if seen_sessions.insert(p.session_id.as_str()) {
            sessions.push(SessionJson {
                session_id: p.session_id.clone(),
                name: p.session_name.clone(),
                attached: p.session_attached,
            });
        }
        if seen_windows.insert((p.window_id.as_str(), p.session_id.as_str())) {
            windows.push(WindowJson {
                window_id: p.window_id.clone(),
                session_id: p.session_id.clone(),
                index: p.window_index.parse().unwrap_or(0),
                name: p.window_name.clone(),
                active: p.window_active,
                // tmux gives the layout on the window's active pane's row only.
                layout: layouts
                    .get(p.window_id.as_str())
                    .and_then(|l| layout::tree(l).ok())
                    .unwrap_or_default(),
            });
        }
        let watch = if p.job.is_empty() {
            None
        } else {
            watch_view(&p.job)
        };
        panes.push(PaneJson {
            pane_id: p.pane_id.clone(),
            target: p.target(),
            session_id: p.session_id.clone(),
            window_id: p.window_id.clone(),
            width: p.width.parse().unwrap_or(0),
            height: p.height.parse().unwrap_or(0),
            current_command,
            executable,
            active: p.pane_active,
            dead: p.dead,
            in_mode: p.in_mode,
            mode: p.mode.clone(),
            created_by_us: !p.created_by_us.is_empty(),
            watch: watch.as_ref().map(|(v, _)| v.clone()),
            watch_running: watch.as_ref().is_some_and(|(_, running)| *running),
            watch_unreadable: !p.job.is_empty() && watch.is_none(),
            agent: (!p.agent.is_empty()).then(|| p.agent.clone()),
            created_by: if with_creator && !p.created_by_us.is_empty() {
                serde_json::from_str::<crate::control::policy::CreatedMark>(&p.created_by_us)
                    .ok()
                    .map(|m| m.agent)
            } else {
                None
            },
        });
    }
    ListJson {
        sessions,
        windows,
        panes,
    }
}

impl ListJson {
    /// The listing for people and models: a tree, one short line a session, a window and
    /// a pane (what choosing a target needs; the rest is in the JSON). A pane's line starts
    /// with its id alone: the `%` says what it is, and the word cost 5 bytes a pane. Every
    /// name is quoted with its controls escaped.
    pub fn text(&self) -> String {
        let mut text = String::new();
        for s in &self.sessions {
            text.push_str(&format!(
                "session {} {:?}{}\n",
                s.session_id,
                s.name,
                if s.attached { " (attached)" } else { "" }
            ));
            for w in self.windows.iter().filter(|w| w.session_id == s.session_id) {
                // A one-pane window's layout is its pane id: said once, on the pane's line.
                let layout = if w.layout.starts_with('%') {
                    String::new()
                } else {
                    format!(" layout {}", w.layout)
                };
                text.push_str(&format!(
                    "  window {} {} {:?}{}{layout}\n",
                    w.window_id,
                    w.index,
                    w.name,
                    if w.active { " (active)" } else { "" },
                ));
                for p in self
                    .panes
                    .iter()
                    .filter(|p| p.window_id == w.window_id && p.session_id == s.session_id)
                {
                    let mut flags = Vec::new();
                    if p.active {
                        flags.push("active");
                    }
                    if p.dead {
                        flags.push("dead");
                    }
                    if p.in_mode {
                        flags.push(p.mode.as_str());
                    }
                    if p.created_by_us {
                        flags.push("ours");
                    }
                    // The option stays after a job ends (it records the outcome): a pane is
                    // "watched" only while its job runs.
                    if p.watch_running {
                        flags.push("watched");
                    } else if p.watch_unreadable {
                        flags.push("watch unreadable");
                    }
                    text.push_str(&format!(
                        "    {} {}x{} {:?} ({}){}{}\n",
                        p.pane_id,
                        p.width,
                        p.height,
                        p.current_command,
                        p.executable.as_deref().unwrap_or("?"),
                        if flags.is_empty() {
                            String::new()
                        } else {
                            format!(" [{}]", flags.join(", "))
                        },
                        p.agent
                            .as_deref()
                            .map(|a| format!(" agent {a:?}"))
                            .unwrap_or_default()
                    ));
                }
            }
        }
        text
    }
}

/// Every session, window and pane of the server (one tmux call); `with_creator` adds
/// each created pane's creator (`createdBy`).
pub fn list(tmux: &Tmux, with_creator: bool, watch_view: WatchView) -> Result<ListJson, Error> {
    let sees = tmux.transport().sees_processes();
    let (rows, early) = panes::listing(tmux, |server| match server {
        Some(pid) if sees => early_foregrounds(pid),
        _ => Vec::new(),
    })?;
    let l = build(&rows, sees, with_creator, watch_view, &early);
    crate::sys::procfs::sweep_handles();
    Ok(l)
}
