//! `watch start --host` (and MCP `tmux_watch` with a `host`): the job starts on the host
//! with its result kept for this machine's collector, and is recorded here for the
//! agents it notifies, so the per-turn pull (`super::pending`) brings its result in.
//!
//! Invariants: the addressees are this machine's agents, resolved here before anything
//! starts there; a job that cannot be recorded here is taken back (its watch stopped
//! there, and a window the start made removed): nothing here would ever fetch its
//! result.

use super::pending;
use crate::error::Error;
use crate::remote::call;
use crate::tmux::transport::ssh::Remote;
use crate::tmux::{Socket, Tmux};
use crate::watch::request::{Kept, Start, Stop};

/// A job started on a host and recorded here.
pub struct Started {
    pub job: String,
    pub pane: String,
    pub host: String,
    /// Why no agent may hear of it (the default addressee is not known here), for the
    /// caller to show.
    pub warning: Option<String>,
    /// What the host's tmuxmate said on stderr, made printable.
    pub said: String,
}

/// The agents the result goes to, and the warning about the default one.
fn addressees(local: &Tmux, a: &Start) -> Result<(Vec<String>, Option<String>), Error> {
    use crate::location::address;
    let (notify, warning) = match a.notify.as_deref() {
        Some(n) => (address::resolve(local, "--notify", n)?, None),
        None => {
            let me = address::caller(local).agent;
            let w = address::default_notify_warning(&me);
            (me, w)
        }
    };
    let mut to = vec![notify];
    for f in &a.forward {
        to.push(address::resolve(local, "--forward", f)?);
    }
    to.sort();
    to.dedup();
    Ok((to, warning))
}

/// The socket path of this machine's server `local` (none: outside tmux).
fn socket_path(local: &Tmux) -> Option<String> {
    if let Socket::Path(p) = &local.socket {
        return Some(p.to_string_lossy().into_owned());
    }
    local
        .run(&["display-message", "-p", "#{socket_path}"])
        .ok()
        .map(|s| s.trim_end_matches('\n').to_string())
}

/// Start `a` on `host`'s server `socket`; `local` is this machine's server (the one
/// whose status line counts the job, and where the addressees are resolved).
pub fn start(local: &Tmux, host: &str, socket: &Socket, a: &Start) -> Result<Started, Error> {
    let remote = Remote::new(host).map_err(Error::usage)?;
    let (to, warning) = addressees(local, a)?;
    let collector = pending::collector();
    let kept = Kept {
        collector: collector.clone(),
        start: Start {
            notify: None,
            forward: Vec::new(),
            ..a.clone()
        },
    };
    let done = call::op(&remote, socket, kept)?;
    let (job, pane) = (done.answer.job_id, done.answer.pane_id);
    let host = remote.host.to_string();
    let shown = pending::Shown {
        pane_id: &pane,
        command: &crate::watch::start::command_line(&a.cmd),
        local_socket: socket_path(local),
    };
    match pending::record(&host, socket, &job, &to, &collector, shown) {
        Ok(Some(local)) => crate::watch::status::refresh(&local),
        Ok(None) => {}
        Err(e) => {
            take_back(&remote, socket, &job, &pane, a.target.is_none());
            return Err(crate::error::state_io(
                "record the remote watch job in",
                &pending::dir(),
                e,
            ));
        }
    }
    Ok(Started {
        job,
        pane,
        host,
        warning,
        said: done.said,
    })
}

/// Stop watching `job` there, and remove the window the start made (`made`; a pane given
/// with -t is the user's).
fn take_back(remote: &Remote, socket: &Socket, job: &str, pane: &str, made: bool) {
    let _ = call::op(
        remote,
        socket,
        Stop {
            job: job.to_string(),
        },
    );
    if made {
        let t = Tmux::remote(socket.clone(), remote.clone());
        let _ = t.run(&crate::targs![
            "kill-pane",
            "-t",
            crate::tmux::Arg::id(pane)
        ]);
    }
}
