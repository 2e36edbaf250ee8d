//! The MCP tools that, given `host`, run the host's tmuxmate rather than this one over
//! a remote tmux: each one's arguments become its operation's request, sent as JSON to
//! the host's `tmuxmate call` (`crate::remote::call::op`) as `--host` sends it; the
//! answer is the result, the host's error the refusal.
//!
//! Invariants: a call goes to the host once (never retried); the answer reads as the
//! local tool's does (`agent_ask`'s delivery, `side_chat_main_history`'s lines object,
//! `tmux_agents`' compact lines); nothing of this machine's state is read about the
//! host's panes (the agents listing is the host's own, from the host's state).

use serde_json::{Value, json};

use super::ctx::{Answer, Ctx, Tick};
use super::handlers::{self as h, Ask, Watch, args, ask_failed, done, failed, replied};
use super::{RpcError, Session};
use crate::bridge::asked;
use crate::op::{Failed, Failure, Operation};
use crate::side::request as side;
use crate::tmux::transport::ssh::Remote;

/// Runs one tool's operation on the host a call names (`Tick`: the call's progress and
/// cancel, for what waits here).
pub(super) type OnHost = fn(&Session, &Value, &Server, &Tick<'_>) -> Result<Answer, RpcError>;

/// The `host` and `hostSocket` a call names.
pub(super) struct Server {
    pub(super) host: String,
    pub(super) socket: Option<String>,
}

/// `req` run on the host's tmuxmate.
fn call<R: Operation>(h: &Server, req: R) -> Result<R::Answer, Failed> {
    let remote = Remote::new(&h.host)
        .map_err(crate::error::Error::usage)
        .map_err(Failure::nothing)?;
    let socket = super::host_socket(h.socket.as_deref());
    crate::remote::call::op(&remote, &socket, req).map(|done| done.answer)
}

/// The tool's answer of a host's answer (`shape`: the local tool's shape of it).
fn answered<A>(r: Result<A, Failed>, shape: impl FnOnce(A) -> Value) -> Result<Answer, RpcError> {
    Ok(Answer::Value(match r {
        Ok(a) => done(&shape(a)),
        Err(f) => failed(&f.error),
    }))
}

pub(super) fn tmux_watch(
    session: &Session,
    a: &Value,
    h: &Server,
    _: &Tick<'_>,
) -> Result<Answer, RpcError> {
    let a: Watch = args("tmux_watch", a)?;
    let socket = super::host_socket(h.socket.as_deref());
    let started =
        crate::watch::remote::on_host::start(&session.tmux, &h.host, &socket, &a.request());
    Ok(Answer::Value(match started {
        Ok(s) => {
            if let Some(w) = &s.warning {
                eprintln!("tmuxmate: {w}");
            }
            session
                .resources
                .started_remote(session, &s.job, &s.host, socket);
            done(
                &json!({"kind": "background", "jobId": s.job, "paneId": s.pane,
                "uri": super::resources::watch_uri(&s.job), "host": s.host}),
            )
        }
        Err(e) => failed(&e),
    }))
}

/// The listing is the host's tmuxmate's (`agents --host`: the host's servers and the
/// hosts they follow, from the host's state); the wait for one agent reads that agent's
/// pane on the host's server over ssh, as the local tool reads it here (its state is in
/// the pane's options: nothing of this machine's is read), with the call's progress and
/// cancel.
pub(super) fn tmux_agents(
    session: &Session,
    a: &Value,
    h: &Server,
    tick: &Tick<'_>,
) -> Result<Answer, RpcError> {
    let parsed: h::Agents = args("tmux_agents", a)?;
    if !parsed.is_listing() {
        let tmux = match session.remote(&h.host, h.socket.as_deref()) {
            Ok(t) => t,
            Err(e) => return Ok(Answer::Value(failed(&e))),
        };
        let c = Ctx {
            session,
            tmux: &tmux,
            tick,
            // Read by `tmux_capture` alone (how much text fits); not this handler.
            json: false,
        };
        return h::tmux_agents(&c, a);
    }
    Ok(match call(h, crate::state::request::Agents {}) {
        Ok(doc) => listed(doc),
        Err(f) => Answer::Value(failed(&f.error)),
    })
}

/// A host's listing as the local tool answers one: its compact lines (the CLI's text of
/// the document, the host's words made printable), then a line for each host it did not
/// reach; the document itself as the structured content.
fn listed(doc: Value) -> Answer {
    let (mut text, unreached) = crate::state::request::text(&doc, crate::sys::time::now_ms());
    for u in unreached {
        text.push_str(&u);
        text.push('\n');
    }
    Answer::Texted {
        text,
        sc: doc.to_string(),
    }
}

pub(super) fn agent_ask(
    _: &Session,
    a: &Value,
    h: &Server,
    _: &Tick<'_>,
) -> Result<Answer, RpcError> {
    let a: Ask = args("agent_ask", a)?;
    Ok(Answer::Value(match call(h, a.request()) {
        Ok(reply) => replied(&reply),
        Err(f) => {
            let o = asked::outcome(&h.host, *f);
            ask_failed(o.delivery, &o.text())
        }
    }))
}

pub(super) fn side_chat_main_status(
    _: &Session,
    a: &Value,
    h: &Server,
    _: &Tick<'_>,
) -> Result<Answer, RpcError> {
    let a: side::Status = args("side_chat_main_status", a)?;
    answered(call(h, a), |st| json!(st))
}

pub(super) fn side_chat_main_history(
    _: &Session,
    a: &Value,
    h: &Server,
    _: &Tick<'_>,
) -> Result<Answer, RpcError> {
    let a: side::History = args("side_chat_main_history", a)?;
    // As the local tool answers: the lines in an object.
    answered(call(h, a), |lines| json!({"lines": lines}))
}

pub(super) fn side_chat_report(
    _: &Session,
    a: &Value,
    h: &Server,
    _: &Tick<'_>,
) -> Result<Answer, RpcError> {
    let a: side::Report = args("side_chat_report", a)?;
    answered(call(h, a), |r| json!(r))
}
