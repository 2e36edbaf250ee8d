//! Tty-verified "where am I" and its rendering.
//!
//! Owns: deciding which pane the calling process lives in and turning that into the
//! location text agents read. Invariant: a pane is reported only when the caller's
//! controlling terminal (or its nearest launcher ancestor's) is that pane's `pane_tty`;
//! `$TMUX_PANE` only picks which pane to check first. The hint path costs one tmux
//! invocation; only a missing or lying hint pays for a `list-panes -a`.

pub mod address;
pub mod delivered;
pub mod hook;
pub mod ledger;
pub mod turn;

use crate::targs;
use crate::tmux::Arg;
use serde::Serialize;

use crate::sys::procfs::{self, Terminal};
use crate::tmux::format::{parse_records, record_format};
use crate::tmux::layout;
use crate::tmux::target::Target;
use crate::tmux::{Tmux, TmuxError};

/// Fields of one location query, in order. The last ones are options read in the same call.
const FIELDS: &[&str] = &[
    "session_name",
    "window_index",
    "window_name",
    "pane_index",
    "pane_id",
    "window_active",
    "pane_active",
    "window_layout",
    "pane_tty",
    "socket_path",
    crate::tmux::options::REFRESH_INTERVAL_MS.name,
    crate::tmux::options::AGENT.name,
    "pane_dead",
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reading {
    pub session: String,
    pub window_index: String,
    pub window_name: String,
    pub pane_index: String,
    pub pane_id: String,
    pub window_active: bool,
    pub pane_active: bool,
    pub layout: String,
    pub socket_path: String,
    #[serde(skip)]
    pub refresh_option: String,
    /// The agent address the per-turn hook last recorded for this pane (`@tmuxmate-agent`).
    #[serde(skip)]
    pub agent_option: String,
}

impl Reading {
    /// The two lines that change detection compares.
    pub fn state(&self) -> String {
        format!(
            "session {}, window {} {}, pane {} {}\nwindow active={}, pane active={}, layout {}",
            escape_controls(&clipped(&self.session)),
            self.window_index,
            serde_json::to_string(&clipped(&self.window_name)).unwrap_or_default(),
            self.pane_index,
            self.pane_id,
            self.window_active as u8,
            self.pane_active as u8,
            self.layout
        )
    }

    pub fn render(&self, turn: u64) -> String {
        format!("tmux location (turn {turn}):\n{}", self.state())
    }
}

/// The most characters of a session or window name the per-turn text carries: a name of
/// kilobytes would fill the turn's budget and push queued results to a later turn.
const NAME_MAX_CHARS: usize = 200;

/// `s`, or its first [`NAME_MAX_CHARS`] characters, how long it was and a digest of it.
fn clipped(s: &str) -> std::borrow::Cow<'_, str> {
    if s.chars().count() <= NAME_MAX_CHARS {
        return std::borrow::Cow::Borrowed(s);
    }
    let head: String = s.chars().take(NAME_MAX_CHARS).collect();
    // The digest keeps a rename to another long name with the same start a change.
    let h = crate::sys::hash::sha256_hex(s.as_bytes());
    std::borrow::Cow::Owned(format!("{head}... ({} bytes, {})", s.len(), &h[..12]))
}

fn escape_controls(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// Why there is no location. Not an error of tmuxmate: a fact about the caller.
#[derive(Debug, Clone)]
pub enum NoLocation {
    NoTerminal(String),
    NotAPane(String),
    Tmux(TmuxError),
}

impl std::fmt::Display for NoLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoLocation::NoTerminal(r) => write!(f, "not in a tmux pane: {r}"),
            NoLocation::NotAPane(r) => write!(f, "not in a tmux pane: {r}"),
            NoLocation::Tmux(e) if e.is_no_server() => {
                write!(f, "not in a tmux pane: no tmux server is running ({e})")
            }
            NoLocation::Tmux(e) => write!(f, "not in a tmux pane: {e}"),
        }
    }
}

fn parse_one(fields: Vec<String>) -> Option<(Reading, String)> {
    let mut it = fields.into_iter();
    let mut n = || it.next().unwrap_or_default();
    let (session, window_index, window_name, pane_index, pane_id) = (n(), n(), n(), n(), n());
    let (wa, pa, raw_layout, tty, socket_path, refresh) = (n(), n(), n(), n(), n(), n());
    let agent_option = n();
    // A dead remain-on-exit pane keeps its pane_tty, and the kernel hands that pty to the
    // next new pane: only a live pane can be where a process is.
    if pane_id.is_empty() || n() == "1" {
        return None;
    }
    let layout = layout::tree(&raw_layout).unwrap_or_else(|_| pane_id.clone());
    Some((
        Reading {
            session,
            window_index,
            window_name,
            pane_index,
            pane_id,
            window_active: wa == "1",
            pane_active: pa == "1",
            layout,
            socket_path,
            refresh_option: refresh,
            agent_option,
        },
        tty,
    ))
}

fn query(tmux: &Tmux, args: &[Arg]) -> Result<Vec<(Reading, String)>, NoLocation> {
    let fmt = record_format(FIELDS);
    let mut argv = args.to_vec();
    argv.extend(targs!["-F", Arg::ours(&fmt)]);
    let out = tmux.run_bytes(&argv, None).map_err(NoLocation::Tmux)?;
    let recs = parse_records(&out, FIELDS.len()).map_err(|detail| {
        NoLocation::Tmux(TmuxError::BadOutput {
            argv: tmux.argv(&argv),
            detail,
        })
    })?;
    Ok(recs.into_iter().filter_map(parse_one).collect())
}

fn same_tty(path: &str, dev: (u64, u64)) -> bool {
    !path.is_empty() && procfs::device_of(path) == Some(dev)
}

/// The reading for the calling process.
pub fn read(tmux: &Tmux) -> Result<Reading, NoLocation> {
    read_for(tmux, std::process::id() as i32)
}

pub fn read_for(tmux: &Tmux, pid: i32) -> Result<Reading, NoLocation> {
    // A local terminal is never a pane of a server on another host (and a tty path
    // there names a different device than the same path here).
    if !tmux.transport().sees_processes() {
        let host = tmux.transport().host().map(|h| h.to_string());
        return Err(NoLocation::NotAPane(format!(
            "this process runs on this machine, not in a pane of the tmux server on host {}",
            host.unwrap_or_default()
        )));
    }
    // No tmux (or one too old) is the first thing to say, before terminals.
    tmux.check_version().map_err(NoLocation::Tmux)?;
    let dev = match procfs::terminal_of(pid, crate::sys::foreground::is_launcher) {
        Terminal::Tty { dev, .. } => dev,
        Terminal::None(reason) => return Err(NoLocation::NoTerminal(reason)),
    };
    // The hint only counts when it points at the server we are asking.
    let hint = std::env::var("TMUX_PANE").ok().filter(|_| {
        crate::tmux::socket::tmux_env_socket().is_some_and(|p| match &tmux.socket {
            crate::tmux::Socket::Path(s) => *s == p,
            crate::tmux::Socket::Default => true,
            crate::tmux::Socket::Name(n) => p.file_name().is_some_and(|f| f == n.as_str()),
        })
    });
    if let Some(h) = hint
        && let Ok(Target::Pane(_)) = Target::parse(&h)
    {
        let rows = query(tmux, &targs!["display-message", "-p", "-t", Arg::id(&h)])?;
        if let Some((r, tty)) = rows.into_iter().next()
            && same_tty(&tty, dev)
        {
            return Ok(r);
        }
    }
    let rows = query(tmux, &targs!["list-panes", "-a"])?;
    rows.into_iter()
        .find(|(_, tty)| same_tty(tty, dev))
        .map(|(r, _)| r)
        .ok_or_else(|| {
            NoLocation::NotAPane(format!(
                "this process's terminal (device {}:{}) is not a pane of the tmux server {} ($TMUX_PANE, if set, was inherited from another terminal)",
                dev.0,
                dev.1,
                tmux.socket.describe()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(session: &str, window: &str) -> Reading {
        Reading {
            session: session.into(),
            window_index: "1".into(),
            window_name: window.into(),
            pane_index: "0".into(),
            pane_id: "%4".into(),
            window_active: true,
            pane_active: false,
            layout: "b25d,80x24,0,0,4".into(),
            socket_path: "/tmp/tmux-0/default".into(),
            refresh_option: String::new(),
            agent_option: String::new(),
        }
    }

    #[test]
    fn renders_the_two_state_lines_under_a_turn_header() {
        let r = reading("work", "editor");
        assert_eq!(
            r.render(3),
            "tmux location (turn 3):\nsession work, window 1 \"editor\", pane 0 %4\n\
             window active=1, pane active=0, layout b25d,80x24,0,0,4"
        );
    }

    #[test]
    fn a_name_of_kilobytes_takes_a_bounded_share_of_the_turn() {
        let long = "n".repeat(15_000);
        let s = reading(&long, &long).state();
        assert!(s.len() < 700, "{} bytes", s.len());
        assert!(s.contains("... (15000 bytes, "), "{s}");
        // Two different long names still read as different states.
        let other = format!("{}x", "n".repeat(14_999));
        assert_ne!(reading(&other, "w").state(), reading(&long, "w").state());
    }

    #[test]
    fn names_cannot_forge_lines_or_fields() {
        // A window name with a newline and quotes stays one JSON string; a session name's
        // control characters are escaped: the state is always exactly two lines.
        let r = reading("a\nwindow active=1", "x\"\nsession evil");
        let s = r.state();
        assert_eq!(s.lines().count(), 2, "{s}");
        assert!(
            s.starts_with("session a\\nwindow active=1, window 1 \"x\\\"\\nsession evil\""),
            "{s}"
        );
    }

    #[test]
    fn the_state_changes_with_every_field_an_agent_cares_about() {
        let base = reading("s", "w");
        let mut moved = base.clone();
        moved.pane_active = true;
        let mut renamed = base.clone();
        renamed.window_name = "w2".into();
        let mut resized = base.clone();
        resized.layout = "c0de,100x30,0,0,4".into();
        for other in [moved, renamed, resized] {
            assert_ne!(base.state(), other.state());
        }
        // The socket and the options read with it are not part of what the agent is told.
        let mut same = base.clone();
        same.refresh_option = "5000".into();
        assert_eq!(base.state(), same.state());
    }
}
