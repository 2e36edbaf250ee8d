//! `tmuxmate agent ...`: the bridge to other agent CLIs in their own managed sessions.

use crate::targs;
use crate::tmux::Arg;
use std::time::Duration;

use crate::bridge::{adapters, ask, deliver, launch, listing, message, naming, session, turns};
use crate::cli::{AgentAction, AgentStartArgs, MessageArgs};
use crate::control::policy;
use crate::error::{CliError, CliResult};
use crate::tmux::{Tmux, version};

/// `agent wait`'s and `agent ask`'s default `--timeout`: ten minutes.
const DEFAULT_WAIT_MS: u64 = 600_000;

fn read_message(m: &MessageArgs) -> Result<String, CliError> {
    message::read(
        m.message.as_deref(),
        m.message_file.as_deref(),
        m.stdin.is_some(),
    )
}

fn adapter_for(a: &AgentStartArgs) -> Result<adapters::Adapter, CliError> {
    adapters::choose(&a.adapter, a.cli.as_deref(), a.ready_regex.as_deref())
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

fn list(tmux: &Tmux, json: bool) -> CliResult {
    let v = listing::list(tmux)?;
    if json {
        super::out_json(&v);
    } else {
        super::out(&listing::render(&v));
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
            let (c, _) = session::resolve(tmux, &name)?;
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
            let st = crate::bridge::stop::stop_agent(tmux, &name, confirm)?;
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
