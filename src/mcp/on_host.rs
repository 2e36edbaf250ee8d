//! The MCP tools that, given `host`, run the host's tmuxmate rather than this one over
//! a remote tmux: each one's arguments become the CLI command they stand for, run by the
//! CLI's own `--host` route (`crate::cli::forward`: every word quoted for the remote
//! shell, long text over stdin); the host's JSON answer is the result, its error text
//! the refusal.
//!
//! Invariants: a call goes to the host once (never retried); the answer reads as the
//! local tool's does (`agent_ask`'s delivery, `side_chat_main_history`'s lines object).

use serde_json::{Value, json};

use super::handlers::{
    Ask, DEFAULT_WAIT_MS, Minutes, SideHistory, SideReport, SideTarget, Watch, args, ask_failed,
    done, failed,
};
use super::{RpcError, Session};
use crate::cli::{AgentAction, Command, MessageArgs, SideAction, WatchAction, WatchStartArgs};

/// Builds the CLI command a host runs for one tool's arguments.
pub(super) type Build = fn(&Value) -> Result<Command, RpcError>;

/// The `host` and `hostSocket` a call names.
pub(super) struct Server {
    pub(super) host: String,
    pub(super) socket: Option<String>,
}

pub(super) fn tmux_watch(a: &Value) -> Result<Command, RpcError> {
    let a: Watch = args("tmux_watch", a)?;
    Ok(Command::Watch {
        action: WatchAction::Start(WatchStartArgs {
            target: a.target,
            done_regex: a.done_regex,
            timeout: None,
            timeout_min: a.timeout_min.map(Minutes::into_word),
            notify: a.notify,
            forward: a.forward,
            cancel_mode: a.cancel_mode,
            json: true,
            cmd: a.cmd.into_given(),
        }),
    })
}

pub(super) fn agent_ask(a: &Value) -> Result<Command, RpcError> {
    let a: Ask = args("agent_ask", a)?;
    Ok(Command::Agent {
        action: AgentAction::Ask {
            target: a.target,
            msg: MessageArgs {
                message: Some(a.message),
                message_file: None,
                stdin: None,
            },
            project: a.project,
            permission_mode: a.permission_mode,
            timeout: None,
            timeout_s: Some(a.timeout_s.unwrap_or(DEFAULT_WAIT_MS / 1000)),
            json: true,
        },
    })
}

pub(super) fn side_chat_main_status(a: &Value) -> Result<Command, RpcError> {
    let a: SideTarget = args("side_chat_main_status", a)?;
    Ok(Command::Side {
        action: SideAction::Status {
            target: a.target,
            json: true,
        },
    })
}

pub(super) fn side_chat_main_history(a: &Value) -> Result<Command, RpcError> {
    let a: SideHistory = args("side_chat_main_history", a)?;
    Ok(Command::Side {
        action: SideAction::History {
            target: a.target,
            turn: a.turn,
            contains: a.contains,
            limit: a.limit.unwrap_or(crate::side::HISTORY_DEFAULT),
            json: true,
        },
    })
}

pub(super) fn side_chat_report(a: &Value) -> Result<Command, RpcError> {
    let a: SideReport = args("side_chat_report", a)?;
    Ok(Command::Side {
        action: SideAction::Report {
            target: a.target,
            text: a.text,
            json: true,
        },
    })
}

/// Run tool `name`'s command (built by `build`) on the host and read its answer.
pub(super) fn call(
    session: &Session,
    name: &str,
    build: Build,
    a: &Value,
    h: Server,
) -> Result<Value, RpcError> {
    let cmd = build(a)?;
    let socket = super::host_socket(h.socket.as_deref());
    let answer = crate::cli::forward::run_from(&session.tmux, &h.host, socket.clone(), cmd);
    if name == "agent_ask" {
        use crate::cli::asked::{self, Asked};
        return Ok(match asked::read(&h.host, answer) {
            Asked::Reply(mut v) => {
                v["delivery"] = json!("delivered");
                done(&v)
            }
            Asked::Failed { delivery, text } => ask_failed(delivery, &text),
        });
    }
    let answer = match answer {
        Ok(a) => a,
        Err(e) => return Ok(failed(&e)),
    };
    Ok(match answer {
        crate::cli::forward::Answer::Started {
            job, pane, host, ..
        } => {
            session
                .resources
                .started_remote(session, &job, &host, socket);
            done(&json!({"kind": "background", "jobId": job, "paneId": pane,
                "uri": super::resources::watch_uri(&job), "host": host}))
        }
        crate::cli::forward::Answer::Passed(out) => {
            let v = serde_json::from_slice::<Value>(&out.stdout).ok();
            let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
            match v {
                // As the local tool answers: the lines in an object.
                Some(v) if out.status.success() && name == "side_chat_main_history" => {
                    done(&json!({"lines": v}))
                }
                Some(v) if out.status.success() => done(&v),
                // With --json the host prints its error object on stdout, not stderr.
                Some(v) if v["error"].is_object() => {
                    let text = crate::cli::asked::human_of(&v["error"]);
                    json!({"content": [{"type": "text", "text": text}], "isError": true})
                }
                _ => json!({"content": [{"type": "text", "text": stderr}], "isError": true}),
            }
        }
    })
}
