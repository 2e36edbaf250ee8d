//! `tmuxmate call` (hidden): what another host's tmuxmate runs here for a `--host`
//! command or MCP tool. One operation as JSON on stdin (`{"op": NAME, "request": {...}}`,
//! sent by `crate::remote::call::op`), run by the same function its command runs here;
//! its answer (the command's `--json` document) on stdout.
//!
//! Invariants: stdin is read bounded (`remote::call::REQUEST_MAX`); an operation or a
//! field this tmuxmate does not know is refused as another version's (kind
//! `remote::call::OTHER_VERSION`), nothing run; the answer is one JSON line and exit 0; a
//! failure is its error document on stdout (with what the operation adds beside it:
//! `agent ask`'s delivery) and the command's exit status (2 for usage, else 1), and
//! nothing on stderr but the operation's own warnings, so the caller shows the error once.

use std::io::Read;

use serde::Deserialize;
use serde_json::Value;

use crate::bridge::request as agent;
use crate::error::{CliResult, Error, Kind};
use crate::remote::call::{OTHER_VERSION, REQUEST_MAX};
use crate::side::request as side;
use crate::tmux::Tmux;
use crate::watch::request as watch;

/// Every operation a host runs, by its `Operation::NAME`.
#[derive(Deserialize, Debug, PartialEq)]
#[serde(tag = "op", content = "request", deny_unknown_fields)]
pub enum Op {
    #[serde(rename = "watch.start")]
    WatchStart(watch::Kept),
    #[serde(rename = "watch.list")]
    WatchList(watch::List),
    #[serde(rename = "watch.show")]
    WatchShow(watch::Show),
    #[serde(rename = "watch.stop")]
    WatchStop(watch::Stop),
    #[serde(rename = "watch.reattach")]
    WatchReattach(watch::Reattach),
    #[serde(rename = "agent.start")]
    AgentStart(agent::Start),
    #[serde(rename = "agent.send")]
    AgentSend(agent::Send),
    #[serde(rename = "agent.wait")]
    AgentWait(agent::Wait),
    #[serde(rename = "agent.reply")]
    AgentReply(agent::Reply),
    #[serde(rename = "agent.ask")]
    AgentAsk(agent::Ask),
    #[serde(rename = "agent.list")]
    AgentList(agent::List),
    #[serde(rename = "agent.stop")]
    AgentStop(agent::Stop),
    #[serde(rename = "agent.name")]
    AgentName(agent::Name),
    #[serde(rename = "side.status")]
    SideStatus(side::Status),
    #[serde(rename = "side.history")]
    SideHistory(side::History),
    #[serde(rename = "side.report")]
    SideReport(side::Report),
    #[serde(rename = "agents")]
    Agents(crate::state::request::Agents),
    #[serde(rename = "send")]
    Send(crate::control::input::SendAsk),
}

/// The request on stdin, read bounded.
fn read_request(input: impl Read) -> Result<Op, Error> {
    let mut b = Vec::new();
    input
        .take(REQUEST_MAX as u64 + 1)
        .read_to_end(&mut b)
        .map_err(|e| Error::new(format!("cannot read the request on stdin: {e}")))?;
    if b.len() > REQUEST_MAX {
        return Err(Error::usage(format!(
            "refused: the request is larger than {} MiB",
            REQUEST_MAX >> 20
        )));
    }
    parse(&b)
}

/// A request as the caller sent it; one this tmuxmate cannot read came from another
/// version of it (the only sender is tmuxmate).
pub fn parse(b: &[u8]) -> Result<Op, Error> {
    serde_json::from_slice(b).map_err(|e| {
        Error::of(
            Kind::Tmux(OTHER_VERSION),
            format!(
                "tmuxmate {} cannot read this request: {e}",
                env!("CARGO_PKG_VERSION")
            ),
        )
    })
}

/// An answer, or the error document and the error.
type Done = Result<Value, Box<(Value, Error)>>;

fn answer<T: serde::Serialize>(r: Result<T, Error>) -> Done {
    match r {
        Ok(v) => Ok(serde_json::to_value(v).unwrap_or(Value::Null)),
        Err(e) => Err(Box::new((e.to_json(), e))),
    }
}

/// Run `op` as its command runs here. `chosen`: `-L`/`-S` named the server.
fn run_op(tmux: &Tmux, op: Op, chosen: bool) -> Done {
    match op {
        Op::WatchStart(r) => answer(r.run(tmux)),
        Op::WatchList(r) => answer(Ok(super::watch::list_jobs(&r))),
        Op::WatchShow(r) => answer(r.run()),
        Op::WatchStop(r) => answer(r.run()),
        Op::WatchReattach(r) => {
            r.run();
            answer(Ok(()))
        }
        Op::AgentStart(r) => answer(r.run(tmux)),
        Op::AgentSend(r) => answer(r.run(tmux)),
        Op::AgentWait(r) => answer(super::agent::wait(tmux, &r)),
        Op::AgentReply(r) => answer(r.run(tmux)),
        Op::AgentAsk(r) => match r.run(tmux, None) {
            Ok(reply) => answer(Ok(reply)),
            Err(f) => Err(Box::new((f.to_json(), f.error))),
        },
        Op::AgentList(r) => answer(r.run(tmux)),
        Op::AgentStop(r) => answer(r.run(tmux)),
        Op::AgentName(r) => answer(r.run()),
        Op::SideStatus(r) => answer(r.run(tmux)),
        Op::SideHistory(r) => answer(r.run(tmux)),
        Op::SideReport(r) => answer(r.run(tmux)),
        Op::Agents(r) => answer(r.run(tmux, chosen)),
        Op::Send(r) => answer(r.run(tmux)),
    }
}

/// `tmuxmate call`: read, run, answer.
pub fn run(tmux: &Tmux, chosen: bool) -> CliResult {
    let done = match read_request(std::io::stdin().lock()) {
        Ok(op) => run_op(tmux, op, chosen),
        Err(e) => Err(Box::new((e.to_json(), e))),
    };
    match done {
        Ok(v) => {
            super::out_line(&v.to_string());
            Ok(())
        }
        Err(failed) => {
            let (doc, e) = *failed;
            if let Some(d) = &e.detail {
                crate::sys::state::log(&format!("call: {} [{d}]", e.human()));
            }
            super::out_line(&doc.to_string());
            std::process::exit(super::entry::exit_code(&e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::Operation;

    /// A request as `remote::call::op` sends it, read back by `call`.
    fn sent<R: Operation>(r: &R) -> Op {
        let body = serde_json::to_vec(&serde_json::json!({"op": R::NAME, "request": r})).unwrap();
        parse(&body).unwrap_or_else(|e| panic!("{}: {}", R::NAME, e.msg))
    }

    fn some<T: Default>() -> T {
        T::default()
    }

    /// Every operation a host runs: each field given (none left at its default), sent
    /// and read back, is the same request under the same name.
    #[test]
    fn every_forwarded_request_reads_back_as_sent() {
        let s = |v: &str| Some(v.to_string());
        let p = || Some(std::path::PathBuf::from("/srv/proj dir"));
        let msg = agent::Message {
            message: s("hi \u{1b}[2J \"there\"\n-- $(x)"),
            ..some()
        };
        let start = watch::Start {
            target: s("%3"),
            done_regex: s("^GO$"),
            timeout: Some(1500),
            timeout_min: s("0.5"),
            notify: s("agent-a"),
            forward: vec!["b".into()],
            cancel_mode: true,
            cmd: vec!["sh".into(), "-c".into(), "echo '$HOME'".into()],
        };
        let kept = watch::Kept {
            collector: "tmuxmate-remote-collector:abc".into(),
            start: start.clone(),
        };
        assert_eq!(sent(&kept), Op::WatchStart(kept));
        assert_eq!(sent(&watch::List {}), Op::WatchList(watch::List {}));
        let show = watch::Show { job: "w1a".into() };
        assert_eq!(sent(&show), Op::WatchShow(show));
        let stop = watch::Stop { job: "w1b".into() };
        assert_eq!(sent(&stop), Op::WatchStop(stop));
        assert_eq!(
            sent(&watch::Reattach {}),
            Op::WatchReattach(watch::Reattach {})
        );
        let a = agent::Start {
            adapter: "custom".into(),
            project: p(),
            permission_mode: s("plan"),
            cli: s("/bin/cat"),
            ready_regex: s(">>> ?$"),
            timeout: Some(2000),
            timeout_s: Some(3),
        };
        assert_eq!(sent(&a), Op::AgentStart(a));
        let a = agent::Send {
            name: "claude-x".into(),
            msg: msg.clone(),
            project: p(),
            permission_mode: s("plan"),
        };
        assert_eq!(sent(&a), Op::AgentSend(a));
        let a = agent::Wait {
            name: "%4".into(),
            until: s("needs-you,done"),
            timeout: Some(9),
            timeout_s: Some(10),
        };
        assert_eq!(sent(&a), Op::AgentWait(a));
        let a = agent::Reply { name: "n".into() };
        assert_eq!(sent(&a), Op::AgentReply(a));
        let a = agent::Ask {
            target: "codex".into(),
            msg,
            project: p(),
            permission_mode: s("m"),
            timeout: Some(5),
            timeout_s: Some(6),
        };
        assert_eq!(sent(&a), Op::AgentAsk(a));
        assert_eq!(sent(&agent::List {}), Op::AgentList(agent::List {}));
        let a = agent::Stop {
            name: "n".into(),
            confirm: true,
        };
        assert_eq!(sent(&a), Op::AgentStop(a));
        let a = agent::Name {
            adapter: "gemini".into(),
            project: p(),
        };
        assert_eq!(sent(&a), Op::AgentName(a));
        let a = side::Status { target: s("%1") };
        assert_eq!(sent(&a), Op::SideStatus(a));
        let a = side::History {
            target: s("%1"),
            turn: Some(3),
            contains: s("err"),
            limit: 7,
        };
        assert_eq!(sent(&a), Op::SideHistory(a));
        let a = side::Report {
            target: s("%1"),
            text: "-- note".into(),
        };
        assert_eq!(sent(&a), Op::SideReport(a));
        let a = crate::state::request::Agents {};
        assert_eq!(sent(&a), Op::Agents(a));
        let a = crate::control::input::SendAsk {
            target: s("%2"),
            text: s("-n x"),
            keys: None,
            enter: true,
            cancel_mode: true,
            file: None,
        };
        assert_eq!(sent(&a), Op::Send(a));
    }

    /// What only the caller's machine can read is not sent: a host reads text only.
    #[test]
    fn a_local_file_or_stdin_is_never_sent() {
        let a = agent::Send {
            name: "n".into(),
            msg: agent::Message {
                message: None,
                message_file: Some("/etc/passwd".into()),
                stdin: Some("-".into()),
            },
            project: None,
            permission_mode: None,
        };
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(v["msg"], serde_json::json!({"message": null}), "{v}");
    }

    /// An operation or a field this tmuxmate does not know is another version's, and
    /// so is anything that is not a request.
    #[test]
    fn an_unknown_operation_or_field_is_another_versions() {
        for bad in [
            r#"{"op": "agent.teleport", "request": {}}"#,
            r#"{"op": "watch.show", "request": {"job": "w1", "since": 3}}"#,
            r#"{"op": "watch.show", "request": {"job": "w1"}, "more": 1}"#,
            r#"{"op": "watch.show"}"#,
            "not json",
        ] {
            let e = parse(bad.as_bytes()).unwrap_err();
            assert_eq!(e.kind, Kind::Tmux(OTHER_VERSION), "{bad}");
        }
        let big = vec![b' '; REQUEST_MAX + 1];
        assert_eq!(read_request(&big[..]).unwrap_err().kind, Kind::Usage);
    }
}
