//! Agents on other machines: the hosts a server names in `@tmuxmate-hosts`, one follower
//! per (server, host) holding a long-poll open over that host's ssh master, and the
//! snapshot each follower keeps here for the status line and the listing.
//!
//! Owns: `<state>/agents/hosts/<server key>-<host key>.json` (the host's rows as its
//! tmuxmate listed them, whether it was reached and why not) and its `.lock`, starting a
//! follower where none runs, the follower's loop, and reading snapshots back as rows.
//!
//! Invariants:
//! - the status line and the listing never reach a host: they read snapshots. Only the
//!   follower, a process tmux started (`run-shell -b`), talks to the host, as one session
//!   of the host's one ssh connection (`crate::tmux::transport::ssh`), and only while the
//!   host is named in the server's option;
//! - at most one follower per (server, host): a non-blocking `flock` on its lock, held
//!   for its whole life (immune to pid reuse);
//! - never a host's last word as if it were news: a host not reached, or a snapshot not
//!   refreshed for [`STALE`], shows its agents as `unknown` with why; a snapshot older
//!   than [`FORGET`] (its follower long gone) is removed;
//! - a follower ends when its server is gone or no longer names the host, and takes its
//!   snapshot with it.

use std::fs::OpenOptions;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::machine::State;
use super::row::Row;
use crate::remote::call::{self, Missing};
use crate::sys::state;
use crate::targs;
use crate::tmux::options;
use crate::tmux::transport::ssh::{Host, Remote};
use crate::tmux::{Arg, Socket, Tmux};

/// How long the host holds one call open when nothing changes.
pub const WAIT: Duration = Duration::from_secs(25);
/// The longest wait a caller may ask a host for.
pub const WAIT_MAX_MS: u64 = 60_000;
/// The call's own deadline: the wait, and the way there and back.
const CALL: Duration = Duration::from_secs(45);
/// A snapshot not refreshed for this long is no longer news (two missed answers).
pub const STALE: Duration = Duration::from_secs(100);
/// A snapshot left this long by a follower that is gone is forgotten.
pub const FORGET: Duration = Duration::from_secs(600);
/// The longest pause between attempts at a host that did not answer.
const BACKOFF_MAX: Duration = Duration::from_secs(60);
/// A snapshot is the host's listing: far smaller than this.
const SNAPSHOT_MAX: u64 = 16 << 20;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Snapshot {
    v: u32,
    host: String,
    reached: bool,
    #[serde(default)]
    why: String,
    #[serde(default)]
    token: String,
    /// The host's rows (docs/json.md#agent-state), as it sent them.
    #[serde(default)]
    agents: Vec<Value>,
}

/// A host named in the option whose snapshot says it was not reached, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Unreached {
    pub host: String,
    pub why: String,
}

/// What the snapshots of one server's hosts hold.
#[derive(Debug, Default)]
pub struct Seen {
    pub rows: Vec<Row>,
    pub unreached: Vec<Unreached>,
    /// Hosts whose snapshot is stale (their follower may be gone).
    pub stale: Vec<String>,
}

fn dir() -> PathBuf {
    state::state_dir().join("agents").join("hosts")
}

fn key(s: &str) -> String {
    crate::sys::hash::sha256_hex(s.as_bytes())[..16].to_string()
}

fn snapshot_path(socket: &str, host: &str) -> PathBuf {
    dir().join(format!("{}-{}.json", key(socket), key(host)))
}

/// The hosts an option value names, each validated; a word that is no host is logged
/// and left out (the status line has no one to tell).
pub fn named(value: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in value.split_whitespace() {
        match Host::parse(w) {
            Ok(h) => {
                let h = h.to_string();
                if !out.contains(&h) {
                    out.push(h);
                }
            }
            Err(e) => state::log(&format!("agents: {}: {e}", options::HOSTS.name)),
        }
    }
    out
}

/// A row of a host's answer, as a local row.
fn row_of(host: &str, v: &Value) -> Option<Row> {
    let mut r = Row::from_json(v)?;
    r.host = host.to_string();
    Some(r)
}

/// The rows of the hosts `socket`'s server follows, from their snapshots.
pub fn seen(socket: &str) -> Seen {
    let mut out = Seen::default();
    let Ok(rd) = std::fs::read_dir(dir()) else {
        return out;
    };
    let prefix = format!("{}-", key(socket));
    let now = SystemTime::now();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with(&prefix) || !name.ends_with(".json") {
            continue;
        }
        let p = e.path();
        let Ok(bytes) = state::read_private(&p, SNAPSHOT_MAX) else {
            continue;
        };
        let Ok(snap) = serde_json::from_slice::<Snapshot>(&bytes) else {
            state::log(&format!("agents: {} does not parse: left out", p.display()));
            continue;
        };
        let age = std::fs::symlink_metadata(&p)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .unwrap_or_default();
        if age > FORGET {
            let _ = std::fs::remove_file(&p);
            continue;
        }
        let mut why = String::new();
        if !snap.reached {
            why = format!("host {} not reached: {}", snap.host, snap.why);
            out.unreached.push(Unreached {
                host: snap.host.clone(),
                why: snap.why.clone(),
            });
        } else if age > STALE {
            why = format!("no word from host {} for {} s", snap.host, age.as_secs());
        }
        if age > STALE {
            out.stale.push(snap.host.clone());
        }
        for v in &snap.agents {
            if let Some(mut r) = row_of(&snap.host, v) {
                if !why.is_empty() && r.state != State::Exited.name() {
                    r.state = State::Unknown.name();
                    r.why = why.clone();
                }
                out.rows.push(r);
            }
        }
    }
    out
}

fn lock_path(socket: &str, host: &str) -> PathBuf {
    snapshot_path(socket, host).with_extension("lock")
}

/// Take the follower's lock for (`socket`, `host`); `None` when a follower holds it.
fn take_lock(
    socket: &str,
    host: &str,
) -> std::io::Result<Option<nix::fcntl::Flock<std::fs::File>>> {
    let f = state::open_private(
        &lock_path(socket, host),
        OpenOptions::new().read(true).write(true).create(true),
    )?;
    match nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusiveNonblock) {
        Ok(l) => Ok(Some(l)),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, e)) => Err(std::io::Error::from(e)),
    }
}

/// Start a follower through tmux for each of `hosts` that has none (cheap when they
/// run: one `flock` attempt each).
pub fn ensure(tmux: &Tmux, socket: &str, hosts: &[String]) {
    for host in hosts {
        match take_lock(socket, host) {
            Ok(Some(l)) => drop(l),
            Ok(None) => continue,
            Err(e) => {
                state::log(&format!("agents: follower lock for {host}: {e}"));
                continue;
            }
        }
        if let Err(e) = start(tmux, socket, host) {
            state::log(&format!("agents: cannot start the follower of {host}: {e}"));
        }
    }
}

/// Every host `tmux`'s server names: their followers started where none runs.
pub fn ensure_named(tmux: &Tmux) {
    let hosts = named(&options::HOSTS.global(tmux));
    if hosts.is_empty() {
        return;
    }
    match super::socket_of(tmux) {
        Ok(socket) => ensure(tmux, &socket, &hosts),
        Err(e) => state::log(&format!("agents: hosts: {e}")),
    }
}

fn start(tmux: &Tmux, socket: &str, host: &str) -> Result<(), crate::tmux::TmuxError> {
    let bin = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "tmuxmate".into());
    let q = crate::sys::shell::readable;
    // The ssh config chosen here (TMUXMATE_SSH_CONFIG) goes with it: the follower must
    // reach the host the way this process would.
    let config = std::env::var("TMUXMATE_SSH_CONFIG")
        .ok()
        .filter(|c| !c.is_empty())
        .map(|c| format!(" TMUXMATE_SSH_CONFIG={}", q(&c)))
        .unwrap_or_default();
    // run-shell expands formats, then runs a shell: our paths and a validated host,
    // shell-quoted, then encoded for the expansion.
    let cmd = format!(
        "exec env TMUXMATE_STATE_DIR={}{config} {} -S {} agents follow-host -- {} >/dev/null 2>&1",
        q(&state::state_dir().to_string_lossy()),
        q(&bin),
        q(socket),
        q(host)
    );
    tmux.run(&targs!["run-shell", "-b", Arg::expanded(&cmd)])?;
    Ok(())
}

fn write(socket: &str, snap: &Snapshot) {
    let path = snapshot_path(socket, &snap.host);
    let r = serde_json::to_vec(snap)
        .map_err(std::io::Error::other)
        .and_then(|b| state::write_atomic(&path, &b));
    match r {
        Ok(()) => crate::sys::wake::poke(),
        Err(e) => state::log(&format!("agents: snapshot of {}: {e}", snap.host)),
    }
}

/// The same snapshot is still true: only its time moves (no write of the rows).
fn touch(socket: &str, host: &str) {
    let path = snapshot_path(socket, host);
    let r = state::open_private(&path, OpenOptions::new().write(true))
        .and_then(|f| f.set_modified(SystemTime::now()));
    match r {
        // A view shows a snapshot's age (stale past STALE): it moved.
        Ok(()) => crate::sys::wake::poke(),
        Err(e) => state::log(&format!("agents: snapshot of {host}: {e}")),
    }
}

/// The follower of `host` for `tmux`'s server: until the server is gone or no longer
/// names the host, keep the host's listing here, one long-poll at a time; `push_counts`
/// after each change (the status line's counts, `super::summary::refresh`, which starts
/// these followers and so is above this module).
pub fn follow(tmux: &Tmux, host: &str, push_counts: fn(&Tmux)) -> Result<(), String> {
    let socket = super::socket_of(tmux)?;
    let remote = Remote::new(host)?;
    let host = remote.host.to_string();
    let Some(_lock) = take_lock(&socket, &host).map_err(|e| e.to_string())? else {
        return Ok(());
    };
    let mut last: Option<Snapshot> = None;
    let mut backoff = Duration::ZERO;
    loop {
        let value = match tmux.run(&["show-options", "-gqv", options::HOSTS.name]) {
            Ok(v) => v,
            Err(e) => {
                // Its server is gone: nothing shows the snapshot any more.
                let _ = std::fs::remove_file(snapshot_path(&socket, &host));
                crate::sys::wake::poke();
                return Err(format!("follower of {host}: {e}"));
            }
        };
        if !named(&value).contains(&host) {
            let _ = std::fs::remove_file(snapshot_path(&socket, &host));
            crate::sys::wake::poke();
            push_counts(tmux);
            return Ok(());
        }
        let after = last
            .as_ref()
            .filter(|s| s.reached)
            .map(|s| s.token.clone())
            .unwrap_or_default();
        let began = std::time::Instant::now();
        let got = ask(&remote, &after);
        let snap = match got {
            Ok((token, agents)) => Snapshot {
                v: 1,
                host: host.clone(),
                reached: true,
                why: String::new(),
                token,
                agents,
            },
            Err(why) => Snapshot {
                v: 1,
                host: host.clone(),
                reached: false,
                why,
                token: String::new(),
                // The agents last seen stay listed, shown unknown.
                agents: last.as_ref().map(|s| s.agents.clone()).unwrap_or_default(),
            },
        };
        if last.as_ref() == Some(&snap) {
            touch(&socket, &host);
        } else {
            write(&socket, &snap);
            push_counts(tmux);
        }
        backoff = if snap.reached {
            Duration::ZERO
        } else {
            (backoff * 2).clamp(Duration::from_secs(5), BACKOFF_MAX)
        };
        // An answer at once every time would be a loop: a few a second at most.
        let pause = backoff.max(Duration::from_millis(200).saturating_sub(began.elapsed()));
        last = Some(snap);
        std::thread::sleep(pause);
    }
}

/// One long-poll: the host's token and rows, or why there are none.
fn ask(remote: &Remote, after: &str) -> Result<(String, Vec<Value>), String> {
    let args = vec![
        "agents".to_string(),
        "changes".to_string(),
        format!("--after={after}"),
        format!("--wait-ms={}", WAIT.as_millis()),
    ];
    let out = call::run(
        remote,
        &Socket::Default,
        &[],
        &args,
        None,
        CALL,
        "the agents of a host",
    )
    .map_err(|e| match e {
        Missing::NotInstalled(e) | Missing::Other(e) => e.msg,
    })?;
    if !out.status.success() {
        let e = String::from_utf8_lossy(&out.stderr);
        return Err(crate::state::signal::one_line(e.trim()));
    }
    let v: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("its tmuxmate answered no JSON ({e})"))?;
    let token = v["token"].as_str().unwrap_or("").to_string();
    let agents = v["agents"].as_array().cloned().unwrap_or_default();
    Ok((token, agents))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_names_valid_hosts_once() {
        assert_eq!(
            named("dev@build1:2222  box\tbox -oProxyCommand=x a;b"),
            ["dev@build1:2222", "box"]
        );
        assert!(named("").is_empty());
    }

    #[test]
    fn a_hosts_row_keeps_its_fields_and_refuses_unknown_states() {
        let v = serde_json::json!({
            "paneId": "%3", "target": "w:1.0", "harness": "codex",
            "state": "needs-you", "since": 5, "why": "permission: rm\u{1b}[2J",
            "socket": "/tmp/s",
        });
        let r = row_of("box", &v).unwrap();
        assert_eq!(
            (
                r.pane_id.as_str(),
                r.state,
                r.host.as_str(),
                r.socket.as_str()
            ),
            ("%3", "needs-you", "box", "/tmp/s")
        );
        assert!(!r.why.contains('\u{1b}'), "{:?}", r.why);
        assert!(row_of("box", &serde_json::json!({"state": "bogus"})).is_none());
    }
}
