//! MCP resources: watch jobs (`tmuxmate://watch/<id>`) and stored snapshots
//! (`tmuxmate://snapshot/<id>`), listed in the CLI's folded form (`watch list`,
//! `snapshots`) and read in full (`watch show`, `snapshots show`); and the
//! `notifications/resources/updated` sent when a job this client started, or a resource
//! it subscribed to, ends.
//!
//! Invariants: reading goes through the same modules as the CLI (`watch::view`,
//! `snapshot`, and for a job on another host `remote::jobs`: listed from this machine's
//! records without ssh (also once its result arrived, from the kept record, whether the
//! CLI or this server started it), read by asking its host, or its last known state when
//! the host does not answer); the job watcher is one thread, started only once the client starts a
//! job or subscribes, that looks at each watched job's state every 200 ms and forgets a
//! job once it has notified its end. A remote job is "updated" once its result has
//! reached this machine (its local record is gone: no ssh to tell); its state on the
//! host is not followed.

use crate::watch::job::JobStatus;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::{INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError, Session};
use crate::control::snapshot;
use crate::tmux::Socket;
use crate::watch::remote::{jobs, pending};
use crate::watch::{job, view};

const WATCH: &str = "tmuxmate://watch/";
const SNAPSHOT: &str = "tmuxmate://snapshot/";
/// Snapshots listed (newest first), as `tmuxmate snapshots` does by default.
const SNAPSHOT_LIMIT: usize = 20;
const LOOK_EVERY: Duration = Duration::from_millis(200);

pub fn watch_uri(id: &str) -> String {
    format!("{WATCH}{id}")
}

/// Where a remote job runs: its host and the server there.
type OnHost = (String, Socket);

/// Running jobs this client should hear about, and whether the watcher thread runs.
#[derive(Default)]
pub struct Watched {
    jobs: Arc<Mutex<Vec<String>>>,
    /// Remote jobs this client started, watched until their result arrives.
    remote_jobs: Arc<Mutex<Vec<(String, OnHost)>>>,
    /// Every remote job this client started (read after its record went, too).
    hosts: Mutex<HashMap<String, OnHost>>,
    running: AtomicBool,
}

impl Watched {
    /// A job the client started on `host` (server `socket` there): notify it when its
    /// result has reached this machine.
    pub fn started_remote(&self, session: &Session, id: &str, host: &str, socket: Socket) {
        let on = (host.to_string(), socket);
        if let Ok(mut h) = self.hosts.lock() {
            h.insert(id.to_string(), on.clone());
        }
        if let Ok(mut j) = self.remote_jobs.lock()
            && !j.iter().any(|(x, _)| x == id)
        {
            j.push((id.to_string(), on));
        }
        self.watch(session);
    }

    /// Where remote job `id` runs, if this client started it or this machine has its record.
    fn host_of(&self, id: &str) -> Option<OnHost> {
        if let Some(on) = self.hosts.lock().ok().and_then(|h| h.get(id).cloned()) {
            return Some(on);
        }
        jobs::record_of(id).map(|rec| (rec.r.host.clone(), rec.r.socket()))
    }

    /// A job the client started (or subscribed to): notify it when it ends.
    pub fn started(&self, session: &Session, id: &str) {
        if job::load(id).is_none()
            && let Some((host, socket)) = self.host_of(id)
        {
            return self.started_remote(session, id, &host, socket);
        }
        if let Ok(mut j) = self.jobs.lock()
            && !j.iter().any(|x| x == id)
        {
            j.push(id.to_string());
        }
        self.watch(session);
    }

    fn watch(&self, session: &Session) {
        if self.running.swap(true, Ordering::SeqCst) {
            return;
        }
        let out = session.out.clone();
        let jobs = Arc::clone(&self.jobs);
        let remote_jobs = Arc::clone(&self.remote_jobs);
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(LOOK_EVERY);
                let ids: Vec<(String, OnHost)> =
                    remote_jobs.lock().map(|j| j.clone()).unwrap_or_default();
                for (id, (host, socket)) in ids {
                    if !pending::waiting(&host, &socket, &id) {
                        out.notify(
                            "notifications/resources/updated",
                            json!({"uri": watch_uri(&id)}),
                        );
                        if let Ok(mut j) = remote_jobs.lock() {
                            j.retain(|(x, _)| x != &id);
                        }
                    }
                }
                let ids: Vec<String> = jobs.lock().map(|j| j.clone()).unwrap_or_default();
                for id in ids {
                    if job::load(&id).is_none_or(|j| j.status != JobStatus::Running) {
                        out.notify(
                            "notifications/resources/updated",
                            json!({"uri": watch_uri(&id)}),
                        );
                        if let Ok(mut j) = jobs.lock() {
                            j.retain(|x| x != &id);
                        }
                    }
                }
            }
        });
    }

    fn forget(&self, id: &str) {
        if let Ok(mut j) = self.jobs.lock() {
            j.retain(|x| x != id);
        }
        if let Ok(mut j) = self.remote_jobs.lock() {
            j.retain(|(x, _)| x != id);
        }
    }
}

pub fn list() -> Value {
    let mut v = Vec::new();
    for l in view::all() {
        let j = &l.job;
        v.push(json!({
            "uri": watch_uri(&j.id),
            "name": format!("watch {}", j.id),
            "title": format!("{} {}: {}", j.id, l.outcome, j.command.chars().take(80).collect::<String>()),
            "mimeType": "application/json",
        }));
    }
    // Jobs on other hosts, from the local records (no ssh here; reading one asks its
    // host): those whose results have not arrived, then those whose results have (kept
    // as `jobs/done` keeps local ones, however the job was started).
    let waiting = pending::all().into_iter().map(|r| (r, ""));
    let arrived = pending::arrived()
        .into_iter()
        .rev()
        .map(|r| (r, ", result arrived"));
    for (r, state) in waiting.chain(arrived) {
        v.push(json!({
            "uri": watch_uri(&r.job_id),
            "name": format!("watch {}", r.job_id),
            "title": format!("{} on host {}{state}: {}", r.job_id, r.host,
                r.command.as_deref().unwrap_or("").chars().take(80).collect::<String>()),
            "mimeType": "application/json",
        }));
    }
    for s in snapshot::list(SNAPSHOT_LIMIT).unwrap_or_default() {
        v.push(json!({
            "uri": format!("{SNAPSHOT}{}", s.id),
            "name": format!("snapshot {}", s.id),
            "title": format!("{} {} ({} lines): {}", s.id, s.target, s.line_count, s.preview),
            "mimeType": "text/plain",
        }));
    }
    json!({"resources": v})
}

pub fn templates() -> Value {
    json!({"resourceTemplates": [
        {"uriTemplate": "tmuxmate://watch/{jobId}", "name": "watch job",
         "mimeType": "application/json"},
        {"uriTemplate": "tmuxmate://snapshot/{id}", "name": "snapshot",
         "mimeType": "text/plain"},
    ]})
}

fn uri_of(params: &Value) -> Result<&str, RpcError> {
    params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::new(INVALID_PARAMS, "needs a uri"))
}

pub fn read(session: &Session, params: &Value) -> Result<Value, RpcError> {
    let uri = uri_of(params)?;
    let not_found = |why: String| RpcError::new(RESOURCE_NOT_FOUND, why);
    if let Some(id) = uri.strip_prefix(WATCH) {
        let local = view::find(id);
        let text = match (local, session.resources.host_of(id)) {
            (Ok(j), _) => serde_json::to_string_pretty(&view::listed(j).json()),
            // A job on another host: its state there, else its last known one.
            (Err(_), Some((host, socket))) => match jobs::show_at(&host, &socket, id) {
                Ok(v) => serde_json::to_string_pretty(&v),
                Err(e) => match jobs::record_of(id) {
                    Some(r) => serde_json::to_string_pretty(&jobs::last_known(&r, e.human())),
                    None => return Err(not_found(e.human())),
                },
            },
            (Err(e), None) => return Err(not_found(e.human())),
        }
        .unwrap_or_default();
        return Ok(
            json!({"contents": [{"uri": uri, "mimeType": "application/json", "text": text}]}),
        );
    }
    if let Some(id) = uri.strip_prefix(SNAPSHOT) {
        let s = snapshot::find(id)
            .map_err(|e| not_found(format!("cannot read the snapshot log: {e}")))?
            .ok_or_else(|| not_found(format!("no snapshot {id}; see resources/list")))?;
        return Ok(json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": s.text}]}));
    }
    Err(not_found(format!(
        "unknown resource {uri:?}: tmuxmate serves {WATCH}<jobId> and {SNAPSHOT}<id>"
    )))
}

/// `resources/subscribe` and `unsubscribe`: a running watch job is then notified too.
pub fn subscribe(session: &Session, params: &Value, on: bool) -> Result<Value, RpcError> {
    let uri = uri_of(params)?;
    let Some(id) = uri.strip_prefix(WATCH) else {
        // Snapshots never change: subscribing is allowed and never notifies.
        return Ok(json!({}));
    };
    if !crate::watch::valid_id(id) {
        return Err(RpcError::new(
            RESOURCE_NOT_FOUND,
            format!("{id:?} is not a watch job id"),
        ));
    }
    if on {
        session.resources.started(session, id);
    } else {
        session.resources.forget(id);
    }
    Ok(json!({}))
}
