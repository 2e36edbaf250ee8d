//! The watch capability's part of an agent's per-turn call (`crate::location::turn`, which
//! `cmd` hands these steps to).
//!
//! Owns: before the decision, repairing and re-attaching the pollers (free when no job
//! runs: one readdir) and bringing in the results of watch jobs on other hosts; after the
//! answer, dropping the status-line count of the jobs whose results it delivered (now, not
//! whenever a poller next looks: it may have exited). Invariant: both fail soft (a turn
//! never fails because of a watch).

/// Before a turn's decision: results that finished arrive in the ledgers.
pub fn gather() {
    super::poller::reattach_all(false);
    // Remote results arrived: the status line's remote count drops now (no poller watches
    // remote jobs).
    for socket in super::remote::pending::pull() {
        super::status::refresh(&socket);
    }
}

/// After a turn delivered the notes `keys`: the status lines of their jobs' servers.
pub fn delivered(keys: &[String]) {
    let mut sockets: Vec<String> = keys
        .iter()
        .filter_map(|k| k.strip_prefix("watch:"))
        .filter_map(super::job::load)
        .map(|j| j.socket)
        .collect();
    sockets.sort();
    sockets.dedup();
    for s in sockets {
        super::status::refresh(&s);
    }
}
