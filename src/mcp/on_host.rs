//! The MCP tools that, given `host`, run the host's tmuxmate rather than this one over
//! a remote tmux: each one's arguments become its operation's request, sent as JSON to
//! the host's `tmuxmate call` (`crate::remote::call::op`) as `--host` sends it; the
//! answer is the result, the host's error the refusal.
//!
//! Invariants: a call goes to the host once (never retried); the answer reads as the
//! local tool's does (`agent_ask`'s delivery, `side_chat_main_history`'s lines object).

use serde_json::{Value, json};

use super::handlers::{Ask, Watch, args, ask_failed, done, failed, replied};
use super::{RpcError, Session};
use crate::bridge::asked;
use crate::op::{Failed, Failure, Operation};
use crate::side::request as side;
use crate::tmux::transport::ssh::Remote;

/// Runs one tool's operation on the host a call names.
pub(super) type OnHost = fn(&Session, &Value, &Server) -> Result<Value, RpcError>;

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
fn answered<A>(r: Result<A, Failed>, shape: impl FnOnce(A) -> Value) -> Value {
    match r {
        Ok(a) => done(&shape(a)),
        Err(f) => failed(&f.error),
    }
}

pub(super) fn tmux_watch(session: &Session, a: &Value, h: &Server) -> Result<Value, RpcError> {
    let a: Watch = args("tmux_watch", a)?;
    let socket = super::host_socket(h.socket.as_deref());
    let started =
        crate::watch::remote::on_host::start(&session.tmux, &h.host, &socket, &a.request());
    Ok(match started {
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
    })
}

pub(super) fn agent_ask(_: &Session, a: &Value, h: &Server) -> Result<Value, RpcError> {
    let a: Ask = args("agent_ask", a)?;
    Ok(match call(h, a.request()) {
        Ok(reply) => replied(&reply),
        Err(f) => {
            let o = asked::outcome(&h.host, *f);
            ask_failed(o.delivery, &o.text())
        }
    })
}

pub(super) fn side_chat_main_status(_: &Session, a: &Value, h: &Server) -> Result<Value, RpcError> {
    let a: side::Status = args("side_chat_main_status", a)?;
    Ok(answered(call(h, a), |st| json!(st)))
}

pub(super) fn side_chat_main_history(
    _: &Session,
    a: &Value,
    h: &Server,
) -> Result<Value, RpcError> {
    let a: side::History = args("side_chat_main_history", a)?;
    // As the local tool answers: the lines in an object.
    Ok(answered(call(h, a), |lines| json!({"lines": lines})))
}

pub(super) fn side_chat_report(_: &Session, a: &Value, h: &Server) -> Result<Value, RpcError> {
    let a: side::Report = args("side_chat_report", a)?;
    Ok(answered(call(h, a), |r| json!(r)))
}
