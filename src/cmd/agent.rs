//! `tmuxmate agent ...`: the bridge to other agent CLIs in their own managed sessions.

use crate::targs;
use crate::tmux::Arg;
use std::io::Read;
use std::time::Duration;

use serde::Serialize;

use crate::bridge::{adapters, ask, contract, deliver, launch, naming, turns};
use crate::cli::{AgentAction, AgentStartArgs, MessageArgs};
use crate::error::{CliError, CliResult};
use crate::policy;
use crate::tmux::{Tmux, version};

/// Bound on one message (a 1 MiB message is fine; 16 MiB is surely a mistake).
const MAX_MESSAGE: usize = 16 << 20;
/// `agent wait`'s and `agent ask`'s default `--timeout`: ten minutes.
const DEFAULT_WAIT_MS: u64 = 600_000;

fn read_message(m: &MessageArgs) -> Result<String, CliError> {
    let raw = match (&m.message, &m.message_file, &m.stdin) {
        (Some(t), _, _) => t.clone().into_bytes(),
        (None, Some(f), _) => std::fs::read(f)
            .map_err(|e| CliError::new(format!("cannot read --file {}: {e}", f.display())))?,
        (None, None, Some(_)) => {
            let mut b = Vec::new();
            std::io::stdin()
                .take(MAX_MESSAGE as u64 + 1)
                .read_to_end(&mut b)?;
            b
        }
        _ => {
            return Err(CliError::usage(
                "no message: give --message TEXT, --file FILE, or - to read stdin",
            ));
        }
    };
    if raw.len() > MAX_MESSAGE {
        return Err(CliError::usage(
            "refused: the message is larger than 16 MiB",
        ));
    }
    let s = String::from_utf8(raw)
        .map_err(|_| CliError::usage("refused: the message is not valid UTF-8"))?;
    if s.trim().is_empty() {
        return Err(CliError::usage(
            "refused: the message is empty; nothing was sent",
        ));
    }
    Ok(s)
}

fn adapter_for(a: &AgentStartArgs) -> Result<adapters::Adapter, CliError> {
    if a.adapter == "custom" {
        let (Some(cli), Some(re)) = (&a.cli, &a.ready_regex) else {
            return Err(CliError::usage(
                "the custom adapter needs --cli PATH and --ready-regex RE",
            ));
        };
        regex::Regex::new(re)
            .map_err(|e| CliError::usage(format!("--ready-regex does not compile: {e}")))?;
        return Ok(adapters::custom(cli, re));
    }
    adapters::by_name(&a.adapter).ok_or_else(|| {
        CliError::usage(format!(
            "unknown adapter {:?}: use one of {}",
            a.adapter,
            adapters::NAMES.join(", ")
        ))
    })
}

fn project_dir(p: &Option<std::path::PathBuf>) -> Result<std::path::PathBuf, CliError> {
    match p {
        Some(d) => Ok(d.clone()),
        None => Ok(std::env::current_dir()?),
    }
}

fn print_reply(r: &turns::Reply, json: bool) -> CliResult {
    if json {
        super::out_json(r);
    } else {
        super::out_line(&r.render());
    }
    if r.complete {
        Ok(())
    } else {
        Err(CliError::new(format!("the reply of {} is incomplete", r.name)).printed())
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    name: String,
    session_id: String,
    adapter: String,
    project: String,
    permission_mode: String,
    pane_id: String,
    /// The agent CLI's own session id, as `agent start` prints it (`null` when unknown).
    cli_session: Option<String>,
    state: String,
}

fn list(tmux: &Tmux, json: bool) -> CliResult {
    let fmt = crate::tmux::format::record_format(contract::KEYS);
    let out = match tmux.run_bytes(&targs!["list-sessions", "-F", Arg::ours(&fmt)], None) {
        Ok(o) => o,
        Err(e) if e.is_no_server() => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let recs = crate::tmux::format::parse_records(&out, contract::KEYS.len()).unwrap_or_default();
    let mut v = Vec::new();
    for r in recs {
        if r[2] != "1" {
            continue;
        }
        let c = contract::read(tmux, &r[0]).unwrap_or_default();
        let state = match deliver::adapter_of(&c) {
            Ok(a) => match deliver::check_pane(tmux, &c, &a) {
                Err(_) => "broken".to_string(),
                Ok(_) => {
                    let scr = crate::bridge::screen(tmux, &c.pane);
                    if crate::bridge::any(&a.dialogs, &scr).is_some() {
                        "dialog".into()
                    } else if crate::bridge::any(&a.busy, &scr).is_some() {
                        "busy".into()
                    } else {
                        "ready".into()
                    }
                }
            },
            Err(_) => "unknown-adapter".into(),
        };
        v.push(Listed {
            name: c.name,
            session_id: c.session_id,
            adapter: c.adapter,
            project: c.project,
            permission_mode: c.mode,
            pane_id: c.pane,
            cli_session: Some(c.cli_session).filter(|s| !s.is_empty()),
            state,
        });
    }
    if json {
        super::out_json(&v);
    } else if v.is_empty() {
        super::out_line("no managed agent sessions");
    } else {
        let mut s = String::new();
        for l in &v {
            s.push_str(&format!(
                "{} {} {} [{}] {} {}\n",
                l.name, l.adapter, l.pane_id, l.state, l.permission_mode, l.project
            ));
        }
        super::out(&s);
    }
    Ok(())
}

pub fn run(tmux: &Tmux, action: AgentAction) -> CliResult {
    if let AgentAction::Exec { spec } = &action {
        return Err(launch::exec(spec));
    }
    version::check(tmux)?;
    match action {
        AgentAction::Start(a) => {
            let ad = adapter_for(&a)?;
            let caller = policy::caller(tmux);
            let s = launch::start(
                tmux,
                &caller,
                &ad,
                &project_dir(&a.project)?,
                a.permission_mode.as_deref(),
                Duration::from_millis(crate::cli::timeout_or(a.timeout, a.timeout_s, 1000, 60_000)),
            )?;
            if a.json {
                super::out_json(&s);
            } else {
                super::out_line(&format!(
                    "{} {} in {} ({}); attach: {}",
                    if s.reused { "reusing" } else { "started" },
                    s.adapter,
                    s.name,
                    s.pane_id,
                    s.attach
                ));
            }
            Ok(())
        }
        AgentAction::Send {
            name,
            msg,
            permission_mode,
            json,
        } => {
            let text = read_message(&msg)?;
            let sent = deliver::send(
                tmux,
                &name,
                &text,
                &ask::caller_project(None)?,
                permission_mode.as_deref(),
            )?;
            if json {
                super::out_json(&sent);
            } else {
                super::out_line(&format!(
                    "sent to {} ({} bytes), submitted",
                    sent.name, sent.bytes
                ));
            }
            Ok(())
        }
        AgentAction::Wait {
            name,
            timeout,
            timeout_s,
            json,
        } => {
            let wait = crate::cli::timeout_or(timeout, timeout_s, 1000, DEFAULT_WAIT_MS);
            let r = turns::wait(tmux, &name, Duration::from_millis(wait))?;
            print_reply(&r, json)
        }
        AgentAction::Reply { name, json } => print_reply(&turns::reply(tmux, &name)?, json),
        AgentAction::Ask {
            target,
            msg,
            project,
            permission_mode,
            timeout,
            timeout_s,
            json,
        } => {
            let text = read_message(&msg)?;
            let wait = crate::cli::timeout_or(timeout, timeout_s, 1000, DEFAULT_WAIT_MS);
            let r = ask::ask(
                tmux,
                &ask::Request {
                    target: &target,
                    message: &text,
                    project: project.as_deref(),
                    permission_mode: permission_mode.as_deref(),
                    timeout: Duration::from_millis(wait),
                    progress: None,
                },
            )
            .map_err(|f| f.error)?;
            print_reply(&r, json)
        }
        AgentAction::List { json } => list(tmux, json),
        AgentAction::Attach { name } => {
            let (c, _) = deliver::resolve(tmux, &name)?;
            if std::env::var_os("TMUX").is_some() {
                tmux.run(&targs!["switch-client", "-t", Arg::id(&c.session_id)])?;
                Ok(())
            } else {
                Err(CliError::new(format!(
                    "could not attach: {}",
                    tmux.exec_interactive(&targs!["attach-session", "-t", Arg::id(&c.session_id)])
                )))
            }
        }
        AgentAction::Stop {
            name,
            confirm,
            json,
        } => {
            if !confirm {
                return Err(CliError::usage(format!(
                    "refused: stopping {name} kills its tmux session and the agent in it; add --confirm"
                )));
            }
            let (c, a) = deliver::resolve(tmux, &name)?;
            let caller = policy::caller(tmux);
            if let Some(p) = &caller.pane_id
                && crate::tmux::panes::query(
                    tmux,
                    &targs!["list-panes", "-s", "-t", Arg::id(&c.session_id)],
                )?
                .iter()
                .any(|x| &x.pane_id == p)
            {
                return Err(CliError::new(format!(
                    "refused: {name} is the session you are running in"
                )));
            }
            crate::approval::approve(
                tmux,
                "agent-stop",
                Some(&c.session_id),
                &format!("stop agent session {name}"),
            )?;
            // Only a pane that still runs the CLI is the agent's; a pane restarted by hand
            // keeps its processes out of this.
            let pid = deliver::check_pane(tmux, &c, &a).ok();
            let st = crate::bridge::stop::stop(tmux, &name, &c.session_id, pid)?;
            if json {
                super::out_json(&st);
            } else if st.ended_by_pid.is_empty() {
                super::out_line(&format!("stopped {name}"));
            } else {
                super::out_line(&format!(
                    "stopped {name}; ended {} process(es) that outlived the session by pid: {:?}",
                    st.ended_by_pid.len(),
                    st.ended_by_pid
                ));
            }
            Ok(())
        }
        AgentAction::Name { adapter, project } => {
            let ad = adapters::by_name(&adapter).ok_or_else(|| {
                CliError::usage(format!(
                    "unknown adapter {adapter:?}: use one of claude, codex, gemini"
                ))
            })?;
            let d = project_dir(&project)?;
            let p = naming::project(&d)
                .map_err(|e| CliError::new(format!("cannot read {}: {e}", d.display())))?;
            super::out_line(&naming::name(ad.prefix, &p));
            Ok(())
        }
        AgentAction::Exec { .. } => Ok(()),
    }
}
