//! The per-pane follower: keeps a pane's `@tmuxmate-status` current from its agent's
//! transcript, and the cache that lets a restart resume without re-reading.
//!
//! Owns: `ensure_follower` (record the transcript in the pane's options and make sure a
//! follower runs), the follower loop (`tmuxmate digest follow -t %N`), its lock, cache,
//! heartbeat and status pushes. Invariants:
//! - at most one follower per pane: it holds an exclusive `flock` on
//!   `<state>/digest/<socket:pane>.lock` for its whole life; "is one running?" is a
//!   non-blocking attempt on the same lock (immune to pid reuse);
//! - it is started with `tmux run-shell -b` and `exec`, so the tmux server owns it;
//! - no polling while the transcript is idle: it sleeps on file notifications (inotify
//!   through `notify`, on the transcript's directory so a replaced file is seen too; only
//!   where the user has no inotify instance left does it look at them every second) and
//!   a slow heartbeat timer (one tmux call every `HEARTBEAT`, which also notices that its
//!   pane is gone); signals arrive on the same channel;
//! - it folds only appended bytes (`Fold::update`), and the cache (fold + transcript
//!   path) is written atomically, at most once a second and at exit, so it always holds a
//!   digest together with the offset it was folded to;
//! - `@tmuxmate-status` is set only when the text changes, at most once per `MIN_PUSH`,
//!   in the same tmux invocation as the `@tmuxmate-follower` record (pid, heartbeat,
//!   lines read by this process, pushes), so tests and tools can count pushes; `#` in the
//!   status is doubled because tmux's status drawing reads `#[` as style markup;
//! - a follower whose pane (or server) is gone exits and removes its cache; one stopped
//!   by a signal saves it first;
//! - the agent's own state file (`@tmuxmate-state-file`, Claude Code's session file),
//!   when the pane has one, is watched the same way (its directory, by file name) and
//!   handed to `agents::claude_file` on every change; the heartbeat re-reads the option,
//!   so a restarted agent's new file is followed within one beat.
//!
//! `TMUXMATE_FOLLOWER_HEARTBEAT_MS` (50 ms to 10 min) shortens the heartbeat for tests;
//! `TMUXMATE_NO_INOTIFY=1` makes a follower look at its files as it does without inotify.

use crate::targs;
use crate::tmux::Arg;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::dir;
use super::fold::{Fold, Format};
use super::render::status_line;
use crate::sys::state;
use crate::sys::wake::no_inotify;
use crate::tmux::format::{parse_records, record_format};
use crate::tmux::{Socket, Tmux, TmuxError};

/// How often the follower proves it is alive and checks that its pane still exists.
const HEARTBEAT: Duration = Duration::from_secs(5);
/// At most this often a status push (every set redraws every client).
const MIN_PUSH: Duration = Duration::from_millis(250);
/// At most this often a cache write.
const CACHE_EVERY: Duration = Duration::from_secs(1);

pub const OPT_TRANSCRIPT: &str = crate::tmux::options::TRANSCRIPT.name;
pub const OPT_FORMAT: &str = crate::tmux::options::TRANSCRIPT_FORMAT.name;
pub const OPT_STATUS: &str = crate::tmux::options::STATUS.name;
pub const OPT_FOLLOWER: &str = crate::tmux::options::FOLLOWER.name;
pub const OPT_TURNS: &str = crate::tmux::options::DIGEST_TURNS.name;
const OPT_STATE_FILE: &str = crate::tmux::options::STATE_FILE.name;

fn key(socket: &str, pane: &str) -> String {
    crate::location::ledger::file_name(&format!("{socket}:{pane}"))
}

pub fn lock_path(socket: &str, pane: &str) -> PathBuf {
    dir().join(format!("{}.lock", key(socket, pane)))
}

pub fn cache_path(socket: &str, pane: &str) -> PathBuf {
    dir().join(format!("{}.cache.json", key(socket, pane)))
}

/// The latest request from `ensure_follower`; a running follower watches it.
pub fn want_path(socket: &str, pane: &str) -> PathBuf {
    dir().join(format!("{}.want.json", key(socket, pane)))
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Want {
    pub transcript: String,
    pub format: Option<Format>,
}

#[derive(Serialize, Deserialize)]
pub struct Cache {
    pub v: u32,
    pub transcript: String,
    pub fold: Fold,
}

/// The `@tmuxmate-follower` record.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct FollowerInfo {
    pub v: u32,
    pub pid: u32,
    pub started: u64,
    pub heartbeat: u64,
    pub transcript: String,
    pub offset: u64,
    /// Lines in the digest (all folds since the transcript began, cache included).
    pub lines: u64,
    /// Lines this process folded (a restart from the cache starts at 0).
    pub read: u64,
    /// Status pushes by this process.
    pub pushes: u64,
}

/// Read a cache for `transcript`, if one matches.
pub fn load_cache(
    socket: &str,
    pane: &str,
    transcript: &str,
    format: Option<Format>,
) -> Option<Fold> {
    let data = std::fs::read(cache_path(socket, pane)).ok()?;
    let c: Cache = serde_json::from_slice(&data).ok()?;
    (c.v == 1 && c.transcript == transcript && c.fold.format == format).then_some(c.fold)
}

fn save_cache(socket: &str, pane: &str, transcript: &str, fold: &Fold) {
    let c = Cache {
        v: 1,
        transcript: transcript.to_string(),
        fold: fold.clone(),
    };
    // A state directory removed under us (a test's, a user's reset) is not re-created.
    if !dir().is_dir() {
        return;
    }
    if let Ok(data) = serde_json::to_vec(&c)
        && let Err(e) = state::write_atomic(&cache_path(socket, pane), &data)
    {
        state::log(&format!("digest follower {pane}: cannot write cache: {e}"));
    }
}

/// True if a follower holds the lock for this pane.
pub fn is_running(socket: &str, pane: &str) -> bool {
    let Ok(f) = OpenOptions::new().read(true).open(lock_path(socket, pane)) else {
        return false;
    };
    nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusiveNonblock).is_err()
}

/// `%12` and nothing else: the follower's target is an id we recorded, never a name.
pub fn valid_pane_id(p: &str) -> bool {
    p.len() > 1 && p.starts_with('%') && p[1..].bytes().all(|b| b.is_ascii_digit())
}

/// The server's socket path: from the client's `-S`, else one tmux call.
pub fn socket_path(tmux: &Tmux) -> Result<String, TmuxError> {
    if let Socket::Path(p) = &tmux.socket {
        return Ok(p.to_string_lossy().into_owned());
    }
    Ok(tmux
        .run(&["display-message", "-p", "#{socket_path}"])?
        .trim_end_matches('\n')
        .to_string())
}

/// Record `transcript` (and its format) in the pane's options and make sure a follower
/// runs for the pane. Returns true when a follower was started. When nothing changed and
/// a follower runs, no tmux call is made (given a `-S` socket).
pub fn ensure_follower(
    tmux: &Tmux,
    pane_id: &str,
    transcript: &Path,
    format: Option<Format>,
) -> Result<bool, String> {
    if !valid_pane_id(pane_id) {
        return Err(format!("refused: {pane_id:?} is not a pane id like %3"));
    }
    let abs = if transcript.is_absolute() {
        transcript.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| format!("cannot resolve {}: {e}", transcript.display()))?
            .join(transcript)
    };
    let path = abs.to_string_lossy().into_owned();
    if path.ends_with(';') || path.contains('\n') {
        return Err(format!(
            "refused: transcript path {path:?} ends with ';' or holds a newline"
        ));
    }
    let socket = socket_path(tmux).map_err(|e| e.to_string())?;
    let want = Want {
        transcript: path.clone(),
        format,
    };
    let wp = want_path(&socket, pane_id);
    let known = std::fs::read(&wp)
        .ok()
        .and_then(|d| serde_json::from_slice::<Want>(&d).ok());
    let running = is_running(&socket, pane_id);
    // A running follower proves the options were recorded on this server's pane; without
    // one they are set again (a restarted server reuses pane ids and socket paths).
    if running && known.as_ref() == Some(&want) {
        return Ok(false);
    }
    let mut args: Vec<Arg> = targs![
        "set-option",
        "-p",
        "-t",
        Arg::id(pane_id),
        "--",
        OPT_TRANSCRIPT,
        Arg::literal(&path),
        Arg::SEP,
    ]
    .into();
    match format.map(Format::name) {
        Some(f) => args.extend(targs![
            "set-option",
            "-p",
            "-t",
            Arg::id(pane_id),
            "--",
            OPT_FORMAT,
            f
        ]),
        None => args.extend(targs![
            "set-option",
            "-pu",
            "-t",
            Arg::id(pane_id),
            "--",
            OPT_FORMAT
        ]),
    }
    tmux.run(&args).map_err(|e| e.to_string())?;
    if known.as_ref() != Some(&want) {
        let data = serde_json::to_vec(&want).map_err(|e| e.to_string())?;
        state::write_atomic(&wp, &data)
            .map_err(|e| format!("cannot write {}: {e}", wp.display()))?;
    }
    if running {
        return Ok(false);
    }
    start(&socket, pane_id).map_err(|e| e.to_string())?;
    Ok(true)
}

/// Start a follower through tmux (the server owns it).
pub fn start(socket: &str, pane_id: &str) -> Result<(), TmuxError> {
    let tmux = Tmux::new(Socket::Path(PathBuf::from(socket)));
    let bin = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "tmuxmate".into());
    let q = crate::sys::shell::readable;
    let mut env = format!(
        "TMUXMATE_STATE_DIR={}",
        q(&state::state_dir().to_string_lossy())
    );
    if let Ok(ms) = std::env::var("TMUXMATE_FOLLOWER_HEARTBEAT_MS") {
        env.push_str(&format!(" TMUXMATE_FOLLOWER_HEARTBEAT_MS={}", q(&ms)));
    }
    if no_inotify() {
        env.push_str(" TMUXMATE_NO_INOTIFY=1");
    }
    // run-shell expands formats, then runs a shell: our paths and ids, shell-quoted, then
    // encoded for the expansion.
    let cmd = format!(
        "exec env {env} {} -S {} digest follow -t {} >/dev/null 2>&1",
        q(&bin),
        q(socket),
        q(pane_id)
    );
    tmux.run(&targs!["run-shell", "-b", Arg::expanded(&cmd)])?;
    Ok(())
}

enum Msg {
    Fs(notify::Result<notify::Event>),
    /// Without inotify: time to look at the files.
    Look,
    Stop,
}

fn heartbeat_every() -> Duration {
    std::env::var("TMUXMATE_FOLLOWER_HEARTBEAT_MS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .filter(|&ms| (50..=600_000).contains(&ms))
        .map(Duration::from_millis)
        .unwrap_or(HEARTBEAT)
}

/// Status text as stored in the option: `#` doubled for tmux's status drawing.
/// The status option is a format fragment drawn in the status line: '#' doubled.
pub fn option_text(status: &str) -> String {
    crate::tmux::arg::escape_draw(status)
}

struct Follower<'a> {
    tmux: &'a Tmux,
    socket: String,
    pane: String,
    transcript: String,
    fold: Fold,
    info: FollowerInfo,
    /// The status text now in the option (undoubled).
    shown: Option<String>,
    last_push: Option<Instant>,
    cache_dirty: bool,
    last_cache: Instant,
    /// The agent's state file (`@tmuxmate-state-file`), when the pane has one.
    state_file: Option<PathBuf>,
    /// The glance last written (`super::glance`).
    glanced: Option<super::glance::Glance>,
}

impl<'a> Follower<'a> {
    fn info_json(&mut self) -> String {
        self.info.heartbeat = crate::sys::time::now_ms();
        self.info.transcript = self.transcript.clone();
        self.info.offset = self.fold.offset;
        self.info.lines = self.fold.digest.counts.lines;
        serde_json::to_string(&self.info).unwrap_or_default()
    }

    /// Fold what was appended; true if anything changed.
    fn fold(&mut self) -> bool {
        match self.fold.update(Path::new(&self.transcript)) {
            Ok(p) => {
                self.info.read += p.lines;
                if p.lines > 0 || p.reset {
                    self.cache_dirty = true;
                    return true;
                }
                false
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => {
                state::log(&format!(
                    "digest follower {}: cannot read {}: {e}",
                    self.pane, self.transcript
                ));
                false
            }
        }
    }

    /// Whether the fold changed what is shown: the status, or the glance.
    fn news(&self) -> bool {
        status_line(&self.fold.digest) != self.shown.clone().unwrap_or_default()
            || self.glanced.as_ref() != Some(&super::glance::Glance::of(&self.fold.digest))
    }

    /// Rewrite the glance file when it changed.
    fn glance(&mut self) {
        let g = super::glance::Glance::of(&self.fold.digest);
        if self.glanced.as_ref() != Some(&g) {
            super::glance::write(&self.socket, &self.pane, &g);
            self.glanced = Some(g);
        }
    }

    /// Push the status if it changed. `Err` when the pane or server is gone.
    fn push(&mut self) -> Result<(), TmuxError> {
        self.glance();
        let status = status_line(&self.fold.digest);
        if self.shown.as_deref() == Some(status.as_str()) {
            return Ok(());
        }
        self.info.pushes += 1;
        let info = self.info_json();
        let text = option_text(&status);
        let pane = self.pane.clone();
        self.tmux.run(&targs![
            "set-option",
            "-p",
            "-t",
            Arg::id(&pane),
            "--",
            OPT_STATUS,
            Arg::literal(&text),
            Arg::SEP,
            "set-option",
            "-p",
            "-t",
            Arg::id(&pane),
            "--",
            OPT_FOLLOWER,
            Arg::literal(&info),
        ])?;
        self.shown = Some(status);
        self.last_push = Some(Instant::now());
        Ok(())
    }

    /// Beat, and in the same call ask whether the pane's process has ended: a dead pane
    /// kept by `remain-on-exit` still takes options, but no agent will write again.
    /// `Ok(false)` when it is dead.
    fn heartbeat(&mut self) -> Result<bool, TmuxError> {
        let info = self.info_json();
        let pane = self.pane.clone();
        let out = self.tmux.run(&targs![
            "set-option",
            "-p",
            "-t",
            Arg::id(&pane),
            "--",
            OPT_FOLLOWER,
            Arg::literal(&info),
            Arg::SEP,
            "display-message",
            "-p",
            "-t",
            Arg::id(&pane),
            Arg::ours(format!("#{{pane_dead}}\t#{{{OPT_STATE_FILE}}}")),
        ])?;
        let line = out.strip_suffix('\n').unwrap_or(&out);
        let (dead, file) = line.split_once('\t').unwrap_or((line, ""));
        self.state_file = state_file(file);
        Ok(dead != "1")
    }

    /// The agent's state file changed (or may have): apply what it says now.
    fn state_changed(&self) {
        if let Some(f) = &self.state_file
            && let Err(e) =
                crate::state::claude_file::changed(self.tmux, &self.socket, &self.pane, f)
        {
            state::log(&format!("digest follower {}: {e}", self.pane));
        }
    }

    /// Does an event name the state file (its name, in its directory)?
    fn names_state_file(&self, paths: &[PathBuf]) -> bool {
        self.state_file.as_deref().is_some_and(|f| {
            paths
                .iter()
                .any(|p| p.file_name() == f.file_name() && p.parent() == f.parent())
        })
    }

    fn save(&mut self) {
        if self.cache_dirty {
            save_cache(&self.socket, &self.pane, &self.transcript, &self.fold);
            self.cache_dirty = false;
        }
        self.last_cache = Instant::now();
    }

    fn new(
        tmux: &'a Tmux,
        socket: String,
        pane: &str,
        transcript: String,
        format: Option<Format>,
        shown: &str,
        state_file_opt: &str,
    ) -> Follower<'a> {
        let fold =
            load_cache(&socket, pane, &transcript, format).unwrap_or_else(|| Fold::new(format));
        Follower {
            tmux,
            socket,
            pane: pane.to_string(),
            transcript,
            fold,
            info: FollowerInfo {
                v: 1,
                pid: std::process::id(),
                started: crate::sys::time::now_ms(),
                ..FollowerInfo::default()
            },
            shown: Some(shown.replace("##", "#")),
            last_push: None,
            cache_dirty: false,
            last_cache: Instant::now(),
            state_file: state_file(state_file_opt),
            glanced: None,
        }
    }

    /// The first beat (and push, when the status differs from the one shown). False
    /// (logged) when the follower must exit: the call failed, or the pane is dead.
    fn first_beat(&mut self) -> bool {
        self.glance();
        let first = if self.shown.as_deref() == Some(status_line(&self.fold.digest).as_str()) {
            self.heartbeat()
        } else {
            self.push().and_then(|()| self.heartbeat())
        };
        match first {
            Err(e) => {
                state::log(&format!("digest follower {}: {e}; exiting", self.pane));
                false
            }
            Ok(false) => {
                state::log(&format!(
                    "digest follower {}: the pane is dead (remain-on-exit); exiting",
                    self.pane
                ));
                false
            }
            Ok(true) => true,
        }
    }

    /// A tmux failure that ends the loop: forget the cache only when the pane (or its
    /// server) is gone, not for a failed call.
    fn exit_on(&self, e: &TmuxError) -> End {
        state::log(&format!("digest follower {}: {e}; exiting", self.pane));
        if pane_is_gone(e) {
            End::Forget
        } else {
            End::Keep
        }
    }

    /// Switch to another transcript (a new session in the same pane).
    fn retarget(&mut self, want: Want) {
        self.save();
        self.transcript = want.transcript;
        self.fold = load_cache(&self.socket, &self.pane, &self.transcript, want.format)
            .unwrap_or_else(|| Fold::new(want.format));
        self.cache_dirty = true;
    }
}

/// Watch the transcript's directory (not the file: a replaced file must be seen too), or,
/// while it does not exist yet (Claude creates it at the first prompt), its nearest
/// existing ancestor, so its creation wakes us. After a watch is placed the search runs
/// again: a directory created between the look and the watch would otherwise never
/// produce an event.
fn rewatch(w: &mut dyn notify::Watcher, transcript: &str, watched: &mut Option<PathBuf>) {
    for _ in 0..16 {
        let mut dir = Path::new(transcript).parent().map(Path::to_path_buf);
        while let Some(d) = &dir {
            if d.is_dir() {
                break;
            }
            dir = d.parent().map(Path::to_path_buf);
        }
        if dir == *watched {
            return;
        }
        if let Some(old) = watched.take() {
            let _ = notify::Watcher::unwatch(w, &old);
        }
        match dir {
            Some(p)
                if notify::Watcher::watch(w, &p, notify::RecursiveMode::NonRecursive).is_ok() =>
            {
                *watched = Some(p);
            }
            _ => return,
        }
    }
}

/// The pane (or its whole server) no longer exists, as opposed to a failed call.
fn pane_is_gone(e: &TmuxError) -> bool {
    match e {
        TmuxError::TargetNotFound { .. } | TmuxError::NoServer { .. } => true,
        TmuxError::Failed { stderr, .. } => {
            stderr.contains("no such pane") || stderr.contains("can't find pane")
        }
        _ => false,
    }
}

fn gone(e: &TmuxError) -> bool {
    !matches!(e, TmuxError::Timeout { .. })
}

/// An absolute `@tmuxmate-state-file` value as a path; anything else is none.
fn state_file(opt: &str) -> Option<PathBuf> {
    Some(PathBuf::from(opt)).filter(|p| p.is_absolute())
}

/// What the follower reads of its pane at start: transcript, format, status shown, state
/// file.
struct PaneOptions {
    transcript: String,
    format: Option<Format>,
    status: String,
    state_file: String,
}

/// Read the pane's transcript, format, current status and state file with one tmux call.
fn pane_options(tmux: &Tmux, pane: &str) -> Result<PaneOptions, TmuxError> {
    let fmt = record_format(&[OPT_TRANSCRIPT, OPT_FORMAT, OPT_STATUS, OPT_STATE_FILE]);
    let out = tmux.run_bytes(
        &targs![
            "display-message",
            "-p",
            "-t",
            Arg::id(pane),
            Arg::ours(&fmt)
        ],
        None,
    )?;
    let rows = parse_records(&out, 4).map_err(|detail| TmuxError::BadOutput {
        argv: vec!["display-message".into()],
        detail,
    })?;
    let row = rows.into_iter().next().unwrap_or_default();
    let mut it = row.into_iter();
    let mut next = || it.next().unwrap_or_default();
    Ok(PaneOptions {
        transcript: next(),
        format: Format::parse(&next()),
        status: next(),
        state_file: next(),
    })
}

/// The follower loop (`tmuxmate digest follow -t %N`): setup (the lock, the pane's
/// options, the wake-ups, the first beat), `follow`, then `finish`.
pub fn run(tmux: &Tmux, pane: &str) -> Result<(), String> {
    if !valid_pane_id(pane) {
        return Err(format!("refused: {pane:?} is not a pane id like %3"));
    }
    let socket = socket_path(tmux).map_err(|e| e.to_string())?;
    let Some(_lock) = lock(&socket, pane)? else {
        return Ok(()); // another follower serves this pane
    };
    let Some(o) = read_pane(tmux, pane) else {
        return Ok(());
    };
    let (rx, mut wake) = wakeups(&socket, pane)?;
    let mut fl = Follower::new(
        tmux,
        socket,
        pane,
        o.transcript,
        o.format,
        &o.status,
        &o.state_file,
    );
    state::log(&format!(
        "digest follower {pane} started for {} at offset {}",
        fl.transcript, fl.fold.offset
    ));
    wake.rewatch(&fl.transcript);
    wake.watch_state(fl.state_file.as_deref());
    fl.state_changed();
    fl.fold();
    let beat = heartbeat_every();
    if !fl.first_beat() {
        fl.save();
        return Ok(());
    }
    let end = follow(&mut fl, &rx, &mut wake, beat);
    finish(&mut fl, &wake, end);
    Ok(())
}

/// The pane's lock, or `None` when another follower holds it.
fn lock(socket: &str, pane: &str) -> Result<Option<nix::fcntl::Flock<std::fs::File>>, String> {
    let f = state::open_private(
        &lock_path(socket, pane),
        OpenOptions::new().create(true).truncate(false).write(true),
    )
    .map_err(|e| e.to_string())?;
    Ok(nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusiveNonblock).ok())
}

/// The pane's transcript, format and status, or `None` (logged) when there is nothing
/// to follow.
fn read_pane(tmux: &Tmux, pane: &str) -> Option<PaneOptions> {
    let o = match pane_options(tmux, pane) {
        Ok(v) => v,
        Err(e) => {
            state::log(&format!(
                "digest follower {pane}: pane unreadable, exiting: {e}"
            ));
            return None;
        }
    };
    if o.transcript.is_empty() {
        state::log(&format!(
            "digest follower {pane}: no {OPT_TRANSCRIPT}, exiting"
        ));
        return None;
    }
    Some(o)
}

/// What wakes the loop, all on one channel: signals, and file notifications for the
/// digest directory (the want file) and the transcript's directory.
struct Wake {
    watcher: Box<dyn notify::Watcher + Send>,
    /// The directory watched for the transcript (it, or its nearest existing ancestor).
    watched: Option<PathBuf>,
    /// The pane's want file (`ensure_follower`'s latest request).
    want: PathBuf,
    /// The directory watched for the agent's state file.
    state_dir: Option<PathBuf>,
    /// Without inotify: the state file's length and mtime at the last look.
    state_seen: Option<(u64, std::time::SystemTime)>,
}

impl Wake {
    /// Without inotify: has the state file changed since the last look? (Reading it means
    /// tmux calls: not every second for nothing.)
    fn state_file_moved(&mut self, file: Option<&Path>) -> bool {
        let now = file
            .and_then(|f| std::fs::metadata(f).ok())
            .and_then(|m| Some((m.len(), m.modified().ok()?)));
        let moved = now.is_some() && now != self.state_seen;
        self.state_seen = now;
        moved
    }

    fn rewatch(&mut self, transcript: &str) {
        let before = self.watched.clone();
        rewatch(self.watcher.as_mut(), transcript, &mut self.watched);
        // One directory watched for both: unwatching the transcript's unwatched it.
        if before != self.watched
            && let Some(d) = self
                .state_dir
                .as_deref()
                .filter(|d| before.as_deref() == Some(*d))
        {
            let _ = self.watcher.watch(d, notify::RecursiveMode::NonRecursive);
        }
    }

    /// Watch the state file's directory (a file Claude replaces must be seen too).
    fn watch_state(&mut self, file: Option<&Path>) {
        let dir = file.and_then(Path::parent).map(Path::to_path_buf);
        if dir == self.state_dir {
            return;
        }
        if let Some(old) = self.state_dir.take()
            && self.watched.as_ref() != Some(&old)
        {
            let _ = self.watcher.unwatch(&old);
        }
        if let Some(d) = dir
            && (self.watched.as_ref() == Some(&d)
                || self
                    .watcher
                    .watch(&d, notify::RecursiveMode::NonRecursive)
                    .is_ok())
        {
            self.state_dir = Some(d);
        }
    }
}

/// How often a follower without an inotify instance looks at its files.
const POLL_EVERY: Duration = Duration::from_secs(1);

/// No notifications: a [`Msg::Look`] every [`POLL_EVERY`] instead. Not notify's own
/// poller: it compares whole-second mtimes (an append within the second is missed unless
/// it hashes every file of the directory, every time), where a look here costs a read of
/// the want file, the state file and the transcript's new bytes, if any.
fn looker(pane: &str, why: &str, tx: mpsc::Sender<Msg>) -> Box<dyn notify::Watcher + Send> {
    crate::sys::state::log(&format!(
        "digest follower {pane}: no inotify ({why}; see fs.inotify.max_user_instances): looking at its files every {} ms",
        POLL_EVERY.as_millis()
    ));
    std::thread::spawn(move || {
        while tx.send(Msg::Look).is_ok() {
            std::thread::sleep(POLL_EVERY);
        }
    });
    Box::new(notify::NullWatcher)
}

fn wakeups(socket: &str, pane: &str) -> Result<(mpsc::Receiver<Msg>, Wake), String> {
    let (tx, rx) = mpsc::channel::<Msg>();
    let stx = tx.clone();
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
    ])
    .map_err(|e| e.to_string())?;
    std::thread::spawn(move || {
        if signals.forever().next().is_some() {
            let _ = stx.send(Msg::Stop);
        }
    });
    let ftx = tx.clone();
    let handler = move |r| {
        let _ = ftx.send(Msg::Fs(r));
    };
    let inotify = if no_inotify() {
        Err("TMUXMATE_NO_INOTIFY".to_string())
    } else {
        notify::recommended_watcher(handler).map_err(|e| e.to_string())
    };
    let mut watcher: Box<dyn notify::Watcher + Send> = match inotify {
        Ok(w) => Box::new(w),
        // The kernel's inotify instances are per user (128 by default) and each
        // follower holds one: past them, a follower that looked at its files instead
        // beats one that never started (its pane would have no digest at all).
        Err(e) => looker(pane, &e, tx.clone()),
    };
    let _ = watcher.watch(&dir(), notify::RecursiveMode::NonRecursive);
    let wake = Wake {
        watcher,
        watched: None,
        want: want_path(socket, pane),
        state_dir: None,
        state_seen: None,
    };
    Ok((rx, wake))
}

/// How the loop ended: keep the cache for a restart, or forget it with the want file
/// (the pane or its server is gone for good: nothing will resume from these).
#[derive(Debug, PartialEq)]
enum End {
    Keep,
    Forget,
}

/// What one wake-up (and all queued behind it) brought.
#[derive(Debug, Default, PartialEq)]
struct Woke {
    stop: bool,
    /// The transcript may have changed: fold.
    changed: bool,
    /// The agent's state file may have changed.
    state: bool,
}

/// When the loop acts next.
struct Schedule {
    beat: Duration,
    next_beat: Instant,
    /// A status push waiting for `MIN_PUSH` since the last one.
    push_at: Option<Instant>,
}

/// The loop: sleep until the next wake-up or due time, then fold, push, beat and save
/// as due.
fn follow(fl: &mut Follower, rx: &mpsc::Receiver<Msg>, wake: &mut Wake, beat: Duration) -> End {
    let mut s = Schedule {
        beat,
        next_beat: Instant::now() + beat,
        push_at: None,
    };
    loop {
        let cache_due = fl.cache_dirty.then(|| fl.last_cache + CACHE_EVERY);
        let due = next_due(s.next_beat, s.push_at, cache_due);
        let first = rx.recv_timeout(due.saturating_duration_since(Instant::now()));
        let woke = drain(first, rx, fl, wake);
        if woke.stop {
            return End::Keep;
        }
        if woke.state {
            fl.state_changed();
        }
        if woke.changed && fl.fold() && fl.news() {
            s.push_at
                .get_or_insert(push_time(fl.last_push, Instant::now()));
        }
        let now = Instant::now();
        if s.push_at.is_some_and(|p| p <= now) {
            s.push_at = None;
            if let Err(e) = fl.push()
                && gone(&e)
            {
                return fl.exit_on(&e);
            }
        }
        if now >= s.next_beat
            && let Some(end) = beat_step(fl, wake, &mut s, now)
        {
            return end;
        }
        if fl.cache_dirty && fl.last_cache.elapsed() >= CACHE_EVERY {
            fl.save();
        }
    }
}

/// The earliest of the next beat, a waiting push and a due cache write.
fn next_due(next_beat: Instant, push_at: Option<Instant>, cache_due: Option<Instant>) -> Instant {
    [push_at, cache_due]
        .into_iter()
        .flatten()
        .fold(next_beat, Instant::min)
}

/// A push is due `MIN_PUSH` after the last one, or now when there was none.
fn push_time(last_push: Option<Instant>, now: Instant) -> Instant {
    last_push.map_or(now, |t| t + MIN_PUSH)
}

/// Handle `first` and every message queued behind it: one fold for a burst of writes.
fn drain(
    mut msg: Result<Msg, mpsc::RecvTimeoutError>,
    rx: &mpsc::Receiver<Msg>,
    fl: &mut Follower,
    wake: &mut Wake,
) -> Woke {
    let mut w = Woke::default();
    loop {
        match msg {
            Ok(Msg::Stop) => w.stop = true,
            Ok(Msg::Fs(Ok(ev))) => {
                w.state |= fl.names_state_file(&ev.paths);
                w.changed |= on_fs_event(fl, wake, &ev.paths);
            }
            Ok(Msg::Fs(Err(_))) => w.changed = true,
            Ok(Msg::Look) => {
                let want = wake.want.clone();
                on_fs_event(fl, wake, &[want]);
                w.changed = true;
                w.state |= wake.state_file_moved(fl.state_file.as_deref());
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => w.stop = true,
        }
        msg = match rx.try_recv() {
            Ok(m) => Ok(m),
            Err(_) => return w,
        };
    }
}

/// One file notification: a new want retargets the follower; an event on the
/// transcript's name, or a directory appearing on the way to it, means fold.
fn on_fs_event(fl: &mut Follower, wake: &mut Wake, paths: &[PathBuf]) -> bool {
    let mut changed = false;
    if paths.iter().any(|p| p == &wake.want)
        && let Some(w) = std::fs::read(&wake.want)
            .ok()
            .and_then(|d| serde_json::from_slice::<Want>(&d).ok())
            .filter(|w| w.transcript != fl.transcript || w.format != fl.fold.format)
    {
        fl.retarget(w);
        wake.rewatch(&fl.transcript);
        changed = true;
    }
    if names_transcript(paths, &wake.want, &fl.transcript) {
        changed = true;
    }
    if wake.watched.as_deref() != Path::new(&fl.transcript).parent() {
        // Watching an ancestor: a directory on the way may have appeared.
        wake.rewatch(&fl.transcript);
        changed = true;
    }
    changed
}

/// Does an event name the transcript (by file name, in whichever directory is watched),
/// the want file aside?
fn names_transcript(paths: &[PathBuf], want: &Path, transcript: &str) -> bool {
    let name = Path::new(transcript).file_name();
    paths.iter().any(|p| p != want && p.file_name() == name)
}

/// The heartbeat: catch a missed notification, fold, beat; `Some` when the loop ends.
fn beat_step(fl: &mut Follower, wake: &mut Wake, s: &mut Schedule, now: Instant) -> Option<End> {
    s.next_beat = now + s.beat;
    // A missed notification (the directory appeared later) is caught here.
    wake.rewatch(&fl.transcript);
    if fl.fold() {
        s.push_at.get_or_insert(push_time(fl.last_push, now));
    }
    let before = fl.state_file.clone();
    let beat = fl.heartbeat();
    if fl.state_file != before {
        // A new agent in the pane (a new pid, a new file), or the first one recorded.
        wake.watch_state(fl.state_file.as_deref());
        fl.state_changed();
    }
    match beat {
        Err(e) if gone(&e) => Some(fl.exit_on(&e)),
        Ok(false) => {
            // Its process ended and tmux keeps the pane only to show it: no agent
            // writes to this transcript from here (a respawn starts a new follower).
            state::log(&format!(
                "digest follower {}: the pane is dead (remain-on-exit); exiting",
                fl.pane
            ));
            Some(End::Keep)
        }
        _ => None,
    }
}

/// Save the cache, or forget it and the want file when the pane is gone for good.
fn finish(fl: &mut Follower, wake: &Wake, end: End) {
    match end {
        End::Forget => {
            let _ = std::fs::remove_file(cache_path(&fl.socket, &fl.pane));
            let _ = std::fs::remove_file(&wake.want);
            super::glance::remove(&fl.socket, &fl.pane);
        }
        End::Keep => fl.save(),
    }
    state::log(&format!("digest follower {} exiting", fl.pane));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loop_wakes_at_the_earliest_due_time() {
        let t = Instant::now();
        let s = Duration::from_secs;
        assert_eq!(next_due(t + s(5), None, None), t + s(5));
        assert_eq!(next_due(t + s(5), Some(t + s(1)), None), t + s(1));
        assert_eq!(next_due(t + s(5), Some(t + s(3)), Some(t + s(2))), t + s(2));
        assert_eq!(next_due(t + s(1), Some(t + s(3)), Some(t + s(2))), t + s(1));
    }

    #[test]
    fn pushes_are_min_push_apart() {
        let t = Instant::now();
        assert_eq!(push_time(None, t), t);
        assert_eq!(push_time(Some(t), t + MIN_PUSH * 4), t + MIN_PUSH);
    }

    #[test]
    fn an_event_names_the_transcript_by_file_name_but_not_the_want_file() {
        let want = Path::new("/s/digest/x.want.json");
        let tr = "/home/p/session.jsonl";
        let ev = |p: &[&str]| p.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert!(names_transcript(&ev(&["/home/p/session.jsonl"]), want, tr));
        // A replaced file shows under the same name, wherever it was watched from.
        assert!(names_transcript(&ev(&["/other/session.jsonl"]), want, tr));
        assert!(!names_transcript(&ev(&["/home/p/other.jsonl"]), want, tr));
        assert!(!names_transcript(&ev(&["/s/digest/x.want.json"]), want, tr));
        assert!(!names_transcript(&[], want, tr));
    }

    #[test]
    fn only_a_vanished_pane_or_server_forgets_the_cache() {
        let argv = Vec::new;
        let failed = |stderr: &str| TmuxError::Failed {
            argv: argv(),
            status: Some(1),
            stderr: stderr.into(),
        };
        assert!(pane_is_gone(&failed("can't find pane: %3")));
        assert!(pane_is_gone(&failed("no such pane")));
        assert!(!pane_is_gone(&failed("server exited unexpectedly")));
        let timeout = TmuxError::Timeout {
            argv: argv(),
            after: Duration::from_secs(1),
        };
        assert!(!pane_is_gone(&timeout));
        // A timed-out call does not end the loop at all.
        assert!(!gone(&timeout));
        assert!(gone(&failed("anything")));
    }
}
