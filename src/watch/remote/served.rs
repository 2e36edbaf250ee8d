//! What runs on the host when another machine asks (hidden `tmuxmate remote ...`).
//!
//! Owns: `remote id` (version and SHA-256 of this binary), the `watch.start` operation of
//! `tmuxmate call` (a watch job whose result is queued for the asking machine's collector
//! address), `remote results` (the collector's results, not consumed, and the asked jobs'
//! states) and `remote ack` (those results are queued over there; done here).
//!
//! Invariants: a result stays in the collector's ledger until acknowledged, so a dropped
//! connection between `results` and `ack` repeats it (the asking side queues by key, so
//! the agent still gets it once); job states are read before the results, so a job
//! reported ended whose result is not listed has none to come (stopped, or acked).

use serde::Serialize;

use crate::error::Error;
use crate::location::ledger::{Ledger, Record};
use crate::tmux::Tmux;
use crate::watch::job::{self, JobStatus};
use crate::watch::start;
use crate::watch::{poller, valid_id};

/// `tmuxmate VERSION SHA256` of this binary.
pub fn id() -> Result<String, Error> {
    let exe = std::env::current_exe()?;
    let bytes = std::fs::read(&exe)?;
    let h = crate::remote::install::sha256_of(&exe, &bytes);
    Ok(format!("tmuxmate {} {h}", env!("CARGO_PKG_VERSION")))
}

fn check_collector(c: &str) -> Result<(), Error> {
    crate::location::ledger::check_address("--collector", c).map_err(Error::usage)?;
    if !c.starts_with(super::pending::COLLECTOR_PREFIX) {
        return Err(Error::usage(format!(
            "--collector {c:?} is not a collector address of tmuxmate's"
        )));
    }
    Ok(())
}

/// A watch job whose result is kept for `collector` (the asking machine), with the
/// request's other fields as given; `notify`/`forward` of the request are ignored.
pub fn watch_start(
    tmux: &Tmux,
    collector: &str,
    r: &start::Request,
) -> Result<start::Started, Error> {
    check_collector(collector)?;
    // Known here, so `--notify` takes it; the asking machine resolved its own agents.
    Ledger::for_agent(collector).seen()?;
    start::start(
        tmux,
        &start::Request {
            notify: Some(collector),
            forward: &[],
            ..*r
        },
    )
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Item {
    key: String,
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Results {
    /// Per asked job: `running`, `ended` (its result, if any, is queued) or `unknown`.
    jobs: std::collections::BTreeMap<String, &'static str>,
    items: Vec<Item>,
}

/// The collector's results (not consumed) and the asked jobs' states, as one JSON line.
pub fn results(collector: &str, jobs: &[String]) -> Result<String, Error> {
    check_collector(collector)?;
    // What the per-turn call does here too: repair interrupted completions, restart a
    // dead poller (the host may have rebooted since the job started).
    poller::reattach_all(false);
    let mut states = std::collections::BTreeMap::new();
    for id in jobs {
        if !valid_id(id) {
            return Err(Error::usage(format!("--job {id:?} is not a job id")));
        }
        let s = match job::load(id) {
            None => "unknown",
            Some(j) if j.status == JobStatus::Running || !j.queued => "running",
            Some(_) => "ended",
        };
        states.insert(id.clone(), s);
    }
    let items = Ledger::for_agent(collector)
        .peek()
        .pending
        .into_iter()
        .map(|p| Item {
            key: p.key,
            text: p.text,
        })
        .collect();
    Ok(serde_json::to_string(&Results {
        jobs: states,
        items,
    })
    .unwrap_or_default())
}

/// Mark `keys` delivered in the collector's ledger; how many were pending.
pub fn ack(collector: &str, keys: &[String]) -> Result<usize, Error> {
    check_collector(collector)?;
    let n = Ledger::for_agent(collector).transact(|t| {
        let pending: Vec<String> = t.state.pending.iter().map(|p| p.key.clone()).collect();
        let mut n = 0;
        for k in keys.iter().filter(|k| pending.contains(k)) {
            t.push(Record::Deliver {
                key: k.clone(),
                at: crate::sys::time::now_ms(),
            });
            n += 1;
        }
        n
    })?;
    Ok(n)
}
