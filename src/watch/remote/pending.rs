//! This machine's remote watch jobs, and the per-turn step that brings their results in.
//!
//! Owns: one record per job started with `watch start --host` under
//! `<state>/remote/watches/` (host, server flags, job id, this machine's addressees, the
//! collector address the host queues its result for), moved to `<state>/remote/arrived/`
//! once its result is here (the newest [`ARRIVED_KEPT`] kept, for the local views), and
//! [`pull`], which the per-turn call runs first.
//!
//! Invariants:
//! - No record, no ssh: `pull` costs one `readdir` of a directory that usually does not
//!   exist.
//! - Exactly once, also across dropped connections: the host keeps a result until it is
//!   acknowledged; here it is queued under `remote-watch:<host>:<job id>` (a ledger
//!   refuses a key it has seen), then acknowledged, then the record goes. A failure at
//!   any step repeats only steps that are harmless to repeat, at the next turn.
//! - Unattended: every failure is logged and the turn goes on (exit 0); a host that
//!   failed is not asked again for [`RETRY_AFTER`] so a dead host cannot slow every turn.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::location::ledger::Ledger;
use crate::remote::call;
use crate::sys::state;
use crate::tmux::Socket;
use crate::tmux::transport::ssh::Remote;

/// Every collector address starts so (the host refuses others).
pub const COLLECTOR_PREFIX: &str = "tmuxmate-remote-collector:";
const RETRY_AFTER: Duration = Duration::from_secs(30);
const CALL_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RemoteWatch {
    pub v: u32,
    pub host: String,
    #[serde(default)]
    pub socket_name: Option<String>,
    #[serde(default)]
    pub socket_path: Option<String>,
    pub job_id: String,
    pub notify: Vec<String>,
    pub collector: String,
    pub at: u64,
    /// What the local views show while the host is not asked (records of v1 lack them).
    #[serde(default)]
    pub pane_id: Option<String>,
    #[serde(default)]
    pub command: Option<String>,
    /// The socket path of the local tmux server the job was started from: its status
    /// line counts the job until its result arrives.
    #[serde(default)]
    pub local_socket: Option<String>,
}

impl RemoteWatch {
    pub fn socket(&self) -> Socket {
        match (&self.socket_path, &self.socket_name) {
            (Some(p), _) => Socket::Path(p.into()),
            (None, Some(n)) => Socket::Name(n.clone()),
            _ => Socket::Default,
        }
    }
    fn server(&self) -> (String, Option<String>, Option<String>, String) {
        (
            self.host.clone(),
            self.socket_name.clone(),
            self.socket_path.clone(),
            self.collector.clone(),
        )
    }
}

pub fn dir() -> PathBuf {
    state::state_dir().join("remote").join("watches")
}

/// Where a record goes once its job's result has reached this machine (or none will
/// come): the local views still know the job's host from it (the MCP resource of a job
/// started from the CLI is read after delivery like one the MCP server started). Apart
/// from [`dir`], so nothing that counts or pulls waiting jobs sees these.
pub fn arrived_dir() -> PathBuf {
    state::state_dir().join("remote").join("arrived")
}

/// How many arrived records are kept (the newest; as `jobs/done` keeps local jobs).
pub const ARRIVED_KEPT: usize = crate::watch::job::DONE_KEPT;

/// This machine's (and state directory's) address on every host: results for it wait
/// there in a ledger of their own until this machine acknowledges them.
pub fn collector() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let id = format!(
        "{}\0{}\0{}",
        host.trim(),
        nix::unistd::getuid(),
        state::state_dir().display()
    );
    format!(
        "{COLLECTOR_PREFIX}{}",
        &crate::sys::hash::sha256_hex(id.as_bytes())[..24]
    )
}

fn key_of(host: &str, socket: &Socket, job: &str) -> String {
    let h =
        crate::sys::hash::sha256_hex(format!("{host}\0{}\0{job}", socket.describe()).as_bytes());
    h[..32].to_string()
}

/// What the local views need of a job besides its address (see [`RemoteWatch`]).
pub struct Shown<'a> {
    pub pane_id: &'a str,
    pub command: &'a str,
    pub local_socket: Option<String>,
}

/// A watch job id as tmuxmate makes them: letters, digits, `-` and `_`, at most 64.
pub fn plausible_job_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Record a job started on `host` (written before `watch start --host` answers). The
/// answer: the local server whose status-line count this changes (the caller refreshes
/// it: `control::watch::status` reads these records, so it is not called from here).
pub fn record(
    host: &str,
    socket: &Socket,
    job: &str,
    notify: &[String],
    collector: &str,
    shown: Shown,
) -> std::io::Result<Option<String>> {
    // The host's answer is data from another machine: an id becomes a file name here, a
    // resource URI and a line of `watch list`, so only an id of the shape tmuxmate makes
    // is kept, and the command is made printable.
    if !plausible_job_id(job) {
        return Err(std::io::Error::other(format!(
            "host {host} answered a job id that no tmuxmate makes ({:?}); nothing was recorded",
            crate::sys::printable::visible(&job.chars().take(80).collect::<String>()).0
        )));
    }
    if !(shown.pane_id.starts_with('%') && shown.pane_id[1..].bytes().all(|b| b.is_ascii_digit())) {
        return Err(std::io::Error::other(format!(
            "host {host} answered a pane id that is not one ({:?}); nothing was recorded",
            crate::sys::printable::visible(&shown.pane_id.chars().take(80).collect::<String>()).0
        )));
    }
    let command = crate::sys::printable::visible(shown.command).0;
    let (socket_name, socket_path) = match socket {
        Socket::Name(n) => (Some(n.clone()), None),
        Socket::Path(p) => (None, Some(p.to_string_lossy().into_owned())),
        Socket::Default => (None, None),
    };
    let r = RemoteWatch {
        v: 1,
        host: host.to_string(),
        socket_name,
        socket_path,
        job_id: job.to_string(),
        notify: notify.to_vec(),
        collector: collector.to_string(),
        at: crate::sys::time::now_ms(),
        pane_id: Some(shown.pane_id.to_string()),
        command: Some(command),
        local_socket: shown.local_socket,
    };
    let d = dir();
    state::private_dir(&d)?;
    let body = serde_json::to_vec(&r).map_err(std::io::Error::other)?;
    state::write_atomic(
        &d.join(format!("{}.json", key_of(host, socket, job))),
        &body,
    )?;
    Ok(r.local_socket)
}

/// Every remote job of this machine whose result has not arrived yet (local records
/// only: no ssh), oldest first.
pub fn all() -> Vec<RemoteWatch> {
    sorted(records(&dir()))
}

/// The remote jobs whose results have arrived (the newest [`ARRIVED_KEPT`]), oldest first.
pub fn arrived() -> Vec<RemoteWatch> {
    sorted(records(&arrived_dir()))
}

fn sorted(recs: Vec<(PathBuf, RemoteWatch)>) -> Vec<RemoteWatch> {
    let mut v: Vec<RemoteWatch> = recs.into_iter().map(|(_, r)| r).collect();
    v.sort_by(|a, b| (a.at, &a.job_id).cmp(&(b.at, &b.job_id)));
    v
}

/// A job's record leaves the waiting list: moved among the arrived ones (best effort:
/// when it cannot be moved it is removed, so the result is never fetched twice), the
/// oldest arrived ones beyond [`ARRIVED_KEPT`] dropped.
fn arrive(path: &Path) {
    let to = arrived_dir();
    let moved = state::private_dir(&to)
        .and_then(|()| std::fs::rename(path, to.join(path.file_name().unwrap_or_default())));
    if let Err(e) = moved {
        state::log(&format!(
            "remote watch record {}: cannot keep it among the arrived ones: {e}",
            path.display()
        ));
        let _ = std::fs::remove_file(path);
        return;
    }
    let mut recs = records(&to);
    if recs.len() > ARRIVED_KEPT {
        recs.sort_by(|a, b| (a.1.at, &a.1.job_id).cmp(&(b.1.at, &b.1.job_id)));
        let excess = recs.len() - ARRIVED_KEPT;
        for (p, _) in recs.into_iter().take(excess) {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// How many of them were started from the local server at `socket` (for its status
/// line: one `readdir`, no ssh).
pub fn count_for(socket: &str) -> usize {
    records(&dir())
        .iter()
        .filter(|(_, r)| r.local_socket.as_deref() == Some(socket))
        .count()
}

/// Whether the job's record is still here (its result has not arrived).
pub fn waiting(host: &str, socket: &Socket, job: &str) -> bool {
    dir()
        .join(format!("{}.json", key_of(host, socket, job)))
        .exists()
}

fn records(d: &Path) -> Vec<(PathBuf, RemoteWatch)> {
    let Ok(rd) = std::fs::read_dir(d) else {
        return Vec::new();
    };
    rd.flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| {
            let raw = state::read_private(&p, 1 << 20).ok()?;
            let r = serde_json::from_slice::<RemoteWatch>(&raw).ok()?;
            plausible_job_id(&r.job_id).then_some((p, r))
        })
        .collect()
}

/// The per-turn step: for every host with remote watch jobs of ours, fetch the finished
/// results, queue them for their agents here, acknowledge them there. Never fails; the
/// answer: the local servers whose status-line counts dropped (the caller refreshes them).
pub fn pull() -> Vec<String> {
    let d = dir();
    let recs = records(&d);
    if recs.is_empty() {
        return vec![];
    }
    // One puller at a time: the others wait (bounded by its calls) and then find the
    // records it left, so two turns never race to acknowledge.
    let _lock = match state::open_private(
        &d.join(".lock"),
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true),
    )
    .map(|f| nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusive))
    {
        Ok(Ok(l)) => l,
        _ => {
            state::log("remote results: cannot lock the remote watch list; next turn");
            return vec![];
        }
    };
    let recs = records(&d);
    let mut servers: Vec<(String, Option<String>, Option<String>, String)> =
        recs.iter().map(|(_, r)| r.server()).collect();
    servers.sort();
    servers.dedup();
    let mut changed = Vec::new();
    for srv in servers {
        let group: Vec<&(PathBuf, RemoteWatch)> =
            recs.iter().filter(|(_, r)| r.server() == srv).collect();
        let mark = d.join(format!(
            "{}.failed",
            key_of(&srv.0, &group[0].1.socket(), "")
        ));
        if recently(&mark) {
            continue;
        }
        match pull_server(&group) {
            Ok(sockets) => {
                let _ = std::fs::remove_file(&mark);
                changed.extend(sockets);
            }
            Err(e) => {
                state::log(&format!(
                    "remote results from host {}: {e}; asked again at a later turn",
                    srv.0
                ));
                let _ = state::write_private(&mark, b"");
            }
        }
    }
    changed.sort();
    changed.dedup();
    changed
}

/// A failure mark younger than [`RETRY_AFTER`] (`TMUXMATE_REMOTE_RETRY_MS` overrides it).
fn recently(mark: &Path) -> bool {
    let after = std::env::var("TMUXMATE_REMOTE_RETRY_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(RETRY_AFTER);
    std::fs::metadata(mark)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|e| e < after))
}

/// One `tmuxmate remote <what>` call on the host; a failure there as one line.
fn ask(
    remote: &Remote,
    socket: &Socket,
    args: &[String],
    what: &str,
) -> Result<crate::sys::process::Finished, String> {
    let out = call::run(
        remote,
        socket,
        &[],
        args,
        None,
        CALL_TIMEOUT,
        "watch results",
    )
    .map_err(|e| crate::error::Error::from(e).human())?;
    if !out.status.success() {
        return Err(format!(
            "`remote {what}` failed there (exit {:?}): {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out)
}

/// The local servers whose remote jobs' results arrived: their counts changed.
fn pull_server(group: &[&(PathBuf, RemoteWatch)]) -> Result<Vec<String>, String> {
    let first = &group[0].1;
    let remote = Remote::new(&first.host)?;
    let socket = first.socket();
    let mut args: Vec<String> = vec![
        "remote".into(),
        "results".into(),
        "--collector".into(),
        first.collector.clone(),
    ];
    for (_, r) in group {
        args.push("--job".into());
        args.push(r.job_id.clone());
    }
    let out = ask(&remote, &socket, &args, "results")?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("`remote results` answered no JSON ({e})"))?;
    let mut acked: Vec<String> = Vec::new();
    let mut done: Vec<&Path> = Vec::new();
    for (path, r) in group {
        let key = format!("watch:{}", r.job_id);
        let item = v["items"]
            .as_array()
            .and_then(|a| a.iter().find(|i| i["key"] == key.as_str()));
        match (
            item.and_then(|i| i["text"].as_str()),
            v["jobs"][&r.job_id].as_str(),
        ) {
            (Some(text), _) => {
                let local = format!("remote-watch:{}:{}", r.host, r.job_id);
                let text = format!("[host {}] {text}", r.host);
                let queued = r.notify.iter().all(|agent| {
                    Ledger::for_agent(agent)
                        .queue(&local, &text)
                        .map_err(|e| {
                            state::log(&format!(
                                "remote watch {}: cannot queue for {agent}: {e}",
                                r.job_id
                            ))
                        })
                        .is_ok()
                });
                if queued {
                    acked.push(key);
                    done.push(path);
                }
            }
            // Ended with nothing to deliver (stopped, or acknowledged before a crash
            // here), or gone from the host: nothing will come.
            (None, Some("ended" | "unknown")) => done.push(path),
            _ => {}
        }
    }
    if !acked.is_empty() {
        let mut args: Vec<String> = vec![
            "remote".into(),
            "ack".into(),
            "--collector".into(),
            first.collector.clone(),
        ];
        args.extend(acked.iter().cloned());
        ask(&remote, &socket, &args, "ack")?;
    }
    let mut sockets: Vec<&str> = Vec::new();
    for (path, r) in group {
        if done.contains(&path.as_path()) {
            arrive(path);
            sockets.extend(r.local_socket.as_deref());
        }
    }
    Ok(sockets.into_iter().map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_job_ids_of_our_shape_are_kept() {
        for ok in ["wmx5dgs0io9l", "w1-2_3", "W9"] {
            assert!(super::plausible_job_id(ok), "{ok}");
        }
        for bad in [
            "",
            "../../x",
            "a/b",
            "w\n1",
            "w\u{1b}]52",
            "w x",
            &"w".repeat(65),
        ] {
            assert!(!super::plausible_job_id(bad), "{bad:?}");
        }
    }
}
