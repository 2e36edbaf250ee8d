//! One-call snapshots of every pane on a server.
//!
//! Owns: the field list for `list-panes -a`, and the typed `PaneInfo` rows. Invariant: one
//! tmux invocation per snapshot whatever the number of panes; every field is read back
//! through the length-prefixed record format, so hostile names never mis-split. The
//! prefix makes tmux expand each field twice, so fields that make the server read
//! `/proc` (`pane_current_path`) stay out unless a caller needs them.

use super::client::Tmux;
use super::error::TmuxError;
use super::format::{parse_records, parse_tagged, record_format};
use super::options;
use crate::targs;
use crate::tmux::Arg;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaneInfo {
    pub session_id: String,
    pub session_name: String,
    pub session_attached: bool,
    pub window_id: String,
    pub window_index: String,
    pub window_name: String,
    pub window_active: bool,
    /// Set on the window's active pane only (see `ACTIVE_LAYOUT`).
    pub window_layout: String,
    pub pane_id: String,
    pub pane_index: String,
    pub pane_active: bool,
    pub pane_tty: String,
    pub pane_pid: String,
    pub width: String,
    pub height: String,
    /// Not asked of a local tmux (it would read `/proc` twice through the length prefix):
    /// filled from `/proc` by the callers that show it (`sys::foreground::of`). A remote
    /// server's `/proc` is not ours to read: there it is tmux's `#{pane_current_command}`.
    pub current_command: String,
    pub dead: bool,
    pub in_mode: bool,
    pub mode: String,
    pub created_by_us: String,
    pub job: String,
    /// The agent address whose per-turn call last came from this pane (`@tmuxmate-agent`).
    pub agent: String,
}

pub const FIELDS: &[&str] = &[
    "session_id",
    "session_name",
    "session_attached",
    "window_id",
    "window_index",
    "window_name",
    "window_active",
    super::format::ACTIVE_LAYOUT,
    "pane_id",
    "pane_index",
    "pane_active",
    "pane_tty",
    "pane_pid",
    "pane_width",
    "pane_height",
    "pane_dead",
    "pane_in_mode",
    "pane_mode",
    options::CREATED.name,
    options::JOB.name,
    options::AGENT.name,
];

impl PaneInfo {
    pub fn from_fields(f: Vec<String>) -> PaneInfo {
        let mut it = f.into_iter();
        let mut next = || it.next().unwrap_or_default();
        let flag = |s: String| s != "0" && !s.is_empty();
        PaneInfo {
            session_id: next(),
            session_name: next(),
            session_attached: flag(next()),
            window_id: next(),
            window_index: next(),
            window_name: next(),
            window_active: flag(next()),
            window_layout: next(),
            pane_id: next(),
            pane_index: next(),
            pane_active: flag(next()),
            pane_tty: next(),
            pane_pid: next(),
            width: next(),
            height: next(),
            current_command: String::new(),
            dead: flag(next()),
            in_mode: flag(next()),
            mode: next(),
            created_by_us: next(),
            job: next(),
            agent: next(),
        }
    }

    /// `session:window.pane` by indexes, for display only (never fed back to tmux).
    pub fn target(&self) -> String {
        format!(
            "{}:{}.{}",
            self.session_name, self.window_index, self.pane_index
        )
    }
}

/// Per-window fields of [`listing`] (one row per window link: a window linked into two
/// sessions has a row in each), with what the pane rows then need not repeat: how many
/// panes follow, the window's active pane and its `pane-base-index`.
const WINDOW_FIELDS: &[&str] = &[
    "session_id",
    "session_name",
    "session_attached",
    "window_id",
    "window_index",
    "window_name",
    "window_active",
    "window_layout",
    "window_panes",
    "pane_id",
    "pane-base-index",
];

/// Per-pane fields of [`listing`]: only the pane's own. Its window, index and whether it
/// is the active one follow from its place after its window's row (see [`listing`]);
/// `pane_in_mode` from `pane_mode` (a pane in a mode always has the mode's name).
const LISTING_PANE_FIELDS: &[&str] = &[
    "pane_id",
    "pane_pid",
    "pane_width",
    "pane_height",
    "pane_dead",
    "pane_mode",
    options::CREATED.name,
    options::JOB.name,
    options::AGENT.name,
];

/// Every pane on the server as [`list_all`] gives it, except `pane_tty` (empty), for the
/// listing (`crate::control::list`), in one invocation of two commands: `list-windows -a`
/// for the session and window fields, `list-panes -a` for the pane's own. Why: tmux
/// expands every field of a `list-panes` row per pane (about 1.5 us each on tmux 3.3a),
/// and asking the window's fields once per window instead of on each of its panes took
/// a third of a 200-pane listing's server time (14.9 -> 10.2 ms, measured). The pane rows
/// carry no window fields at all (10 -> 7.7 ms more): both commands walk the same
/// sessions, window links and pane lists in the same order (cmd-list-windows.c,
/// cmd-list-panes.c), and run in one pass of the server's command queue, so they see the
/// same state; each window row says how many pane rows follow it, their indexes count
/// from its `pane-base-index` (as `window_pane_index` does), and its active pane must be
/// among them, else the answer is refused as `BadOutput`. `rows` gives `window_layout` on
/// the window's first pane row only, as `list_all` gives it on one.
/// `on_sent`, called once the command is on its way (with the server's pid when the
/// direct socket carried it), may do other work meanwhile: its result is returned.
pub fn listing<R: Send>(
    tmux: &Tmux,
    on_sent: impl FnOnce(Option<i32>) -> R + Send,
) -> Result<(Vec<PaneInfo>, R), TmuxError> {
    // The server's processes are not ours to read: tmux names each pane's command.
    let with_command = !tmux.transport().sees_processes();
    let mut pfields = LISTING_PANE_FIELDS.to_vec();
    if with_command {
        pfields.push("pane_current_command");
    }
    let wfmt = format!("W{}", record_format(WINDOW_FIELDS));
    let pfmt = format!("P{}", record_format(&pfields));
    let args: Vec<Arg> = targs![
        "list-windows",
        "-a",
        "-F",
        Arg::ours(&wfmt),
        ";",
        "list-panes",
        "-a",
        "-F",
        Arg::ours(&pfmt),
    ]
    .into();
    let (out, r) = tmux.query_while(&args, on_sent);
    let out = out?;
    let bad = |detail: String| TmuxError::BadOutput {
        argv: tmux.argv(&args),
        detail,
    };
    let recs =
        parse_tagged(&out, &[(b'W', WINDOW_FIELDS.len()), (b'P', pfields.len())]).map_err(bad)?;
    let (windows, panes): (Vec<_>, Vec<_>) = recs.into_iter().partition(|(t, _)| *t == b'W');
    let windows = windows.into_iter().map(|(_, f)| f);
    let panes = panes.into_iter().map(|(_, f)| f);
    Ok((assemble(windows, panes, with_command).map_err(bad)?, r))
}

/// A window row of [`listing`] ([`WINDOW_FIELDS`]).
struct WindowRow {
    session_id: String,
    session_name: String,
    session_attached: bool,
    window_id: String,
    window_index: String,
    window_name: String,
    window_active: bool,
    window_layout: String,
    /// How many pane rows follow.
    panes: usize,
    active_pane: String,
    pane_base_index: u64,
}

impl WindowRow {
    fn parse(w: Vec<String>) -> Result<WindowRow, String> {
        let flag = |s: &str| s != "0" && !s.is_empty();
        let [
            sid,
            sname,
            attached,
            wid,
            widx,
            wname,
            wactive,
            layout,
            n,
            active,
            base,
        ] = <[String; 11]>::try_from(w).map_err(|_| "a short window row".to_string())?;
        let (Ok(panes), Ok(pane_base_index)) = (n.parse::<usize>(), base.parse::<u64>()) else {
            return Err(format!(
                "window {wid}: pane count {n:?}, pane-base-index {base:?}"
            ));
        };
        Ok(WindowRow {
            session_id: sid,
            session_name: sname,
            session_attached: flag(&attached),
            window_id: wid,
            window_index: widx,
            window_name: wname,
            window_active: flag(&wactive),
            window_layout: layout,
            panes,
            active_pane: active,
            pane_base_index,
        })
    }

    /// The `k`th pane row after this window's ([`LISTING_PANE_FIELDS`], then
    /// `pane_current_command` when `with_command`), with `layout` when it is the window's first.
    fn pane(
        &self,
        k: usize,
        f: Vec<String>,
        layout: Option<String>,
        with_command: bool,
    ) -> PaneInfo {
        let flag = |s: &str| s != "0" && !s.is_empty();
        let cmd = if with_command {
            f.last().cloned()
        } else {
            None
        };
        let mut it = f.into_iter();
        let mut next = || it.next().unwrap_or_default();
        let pane_id = next();
        let pane_active = pane_id == self.active_pane;
        let (pane_pid, width, height, dead, mode) = (next(), next(), next(), next(), next());
        PaneInfo {
            session_id: self.session_id.clone(),
            session_name: self.session_name.clone(),
            session_attached: self.session_attached,
            window_id: self.window_id.clone(),
            window_index: self.window_index.clone(),
            window_name: self.window_name.clone(),
            window_active: self.window_active,
            window_layout: layout.unwrap_or_default(),
            pane_id,
            pane_index: (self.pane_base_index + k as u64).to_string(),
            pane_active,
            pane_tty: String::new(),
            pane_pid,
            width,
            height,
            current_command: cmd.unwrap_or_default(),
            dead: flag(&dead),
            in_mode: !mode.is_empty(),
            mode,
            created_by_us: next(),
            job: next(),
            agent: next(),
        }
    }
}

/// [`listing`]'s rows from its window and pane records: each window's pane rows follow
/// it in order, as many as it says, its active pane among them, and no pane row is left
/// over; else the answer is not what the two commands give and is refused. A window
/// linked into several sessions carries its layout on its first row only.
fn assemble(
    windows: impl Iterator<Item = Vec<String>>,
    mut panes: impl ExactSizeIterator<Item = Vec<String>>,
    with_command: bool,
) -> Result<Vec<PaneInfo>, String> {
    let mut rows = Vec::with_capacity(panes.len());
    let mut laid_out = std::collections::HashSet::new();
    for w in windows {
        let w = WindowRow::parse(w)?;
        let mut layout = laid_out
            .insert(w.window_id.clone())
            .then(|| w.window_layout.clone());
        let mut seen_active = false;
        for k in 0..w.panes {
            let f = panes.next().ok_or_else(|| {
                format!("window {}: {} panes, only {k} listed", w.window_id, w.panes)
            })?;
            let row = w.pane(k, f, layout.take(), with_command);
            seen_active |= row.pane_active;
            rows.push(row);
        }
        if !seen_active {
            return Err(format!(
                "window {}: its active pane {} is not among its pane rows",
                w.window_id, w.active_pane
            ));
        }
    }
    if panes.next().is_some() {
        return Err("pane rows beyond the windows' pane counts".into());
    }
    Ok(rows)
}

/// Every pane on the server, in one invocation.
pub fn list_all(tmux: &Tmux) -> Result<Vec<PaneInfo>, TmuxError> {
    query(tmux, &targs!["list-panes", "-a"])
}

/// Panes matched by extra `list-panes` arguments (e.g. `-t %3`), same fields.
pub fn query(tmux: &Tmux, base: &[Arg]) -> Result<Vec<PaneInfo>, TmuxError> {
    let with_command = !tmux.transport().sees_processes();
    let mut fields = FIELDS.to_vec();
    if with_command {
        fields.push("pane_current_command");
    }
    let fmt = record_format(&fields);
    let mut args: Vec<Arg> = base.to_vec();
    args.extend(targs!["-F", Arg::ours(&fmt)]);
    let out = tmux.run_bytes(&args, None)?;
    let recs = parse_records(&out, fields.len()).map_err(|detail| TmuxError::BadOutput {
        argv: tmux.argv(&args),
        detail,
    })?;
    Ok(recs
        .into_iter()
        .map(|mut f| {
            let cmd = if with_command { f.pop() } else { None };
            let mut p = PaneInfo::from_fields(f);
            if let Some(c) = cmd {
                p.current_command = c;
            }
            p
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    fn window(wid: &str, session: &str, panes: &str, active: &str) -> Vec<String> {
        words(&[
            "$1", session, "1", wid, "0", "w", "1", "LAYOUT", panes, active, "1",
        ])
    }

    fn pane(id: &str) -> Vec<String> {
        words(&[id, "100", "80", "24", "0", "", "", "", ""])
    }

    #[test]
    fn pane_rows_take_their_window_index_and_layout_from_its_row() {
        let windows = vec![window("@1", "a", "2", "%2"), window("@1", "b", "1", "%1")];
        let panes = vec![pane("%1"), pane("%2"), pane("%1")];
        let rows = assemble(windows.into_iter(), panes.into_iter(), false).unwrap();
        let got: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r.session_name.as_str(),
                    r.pane_id.as_str(),
                    r.pane_index.as_str(),
                    r.pane_active,
                    r.window_layout.as_str(),
                )
            })
            .collect();
        // Indexes count from pane-base-index; the layout is on the window's first row only,
        // and on one link of a window linked twice.
        assert_eq!(
            got,
            [
                ("a", "%1", "1", false, "LAYOUT"),
                ("a", "%2", "2", true, ""),
                ("b", "%1", "1", true, ""),
            ]
        );
        assert!(
            rows.iter()
                .all(|r| r.session_attached && r.pane_tty.is_empty())
        );
    }

    #[test]
    fn a_remote_listing_carries_the_current_command_last() {
        let mut p = pane("%1");
        p.push("vim".into());
        let rows = assemble(
            vec![window("@1", "a", "1", "%1")].into_iter(),
            vec![p].into_iter(),
            true,
        )
        .unwrap();
        assert_eq!(rows[0].current_command, "vim");
        assert_eq!(rows[0].agent, "");
    }

    #[test]
    fn an_answer_whose_counts_do_not_add_up_is_refused() {
        let short = assemble(
            vec![window("@1", "a", "2", "%1")].into_iter(),
            vec![pane("%1")].into_iter(),
            false,
        );
        assert_eq!(short.unwrap_err(), "window @1: 2 panes, only 1 listed");
        let extra = assemble(
            vec![window("@1", "a", "1", "%1")].into_iter(),
            vec![pane("%1"), pane("%2")].into_iter(),
            false,
        );
        assert_eq!(
            extra.unwrap_err(),
            "pane rows beyond the windows' pane counts"
        );
        let elsewhere = assemble(
            vec![window("@1", "a", "1", "%9")].into_iter(),
            vec![pane("%1")].into_iter(),
            false,
        );
        assert!(elsewhere.unwrap_err().contains("active pane %9"));
        let unreadable = assemble(
            vec![window("@1", "a", "x", "%1")].into_iter(),
            Vec::new().into_iter(),
            false,
        );
        assert!(unreadable.unwrap_err().contains("pane count \"x\""));
    }
}
