//! `tmuxmate agent ...`: the bridge to other agent CLIs in their own managed sessions.

use std::time::Duration;

use crate::bridge::{adapters, ask, deliver, launch, listing, message, turns};
use crate::cli::{AgentAction, AgentStartArgs, MessageArgs};
use crate::error::{CliResult, Error};
use crate::tmux::Tmux;

fn read_message(m: &MessageArgs) -> Result<String, Error> {
    message::read(
        m.message.as_deref(),
        m.message_file.as_deref(),
        m.stdin.is_some(),
    )
}

fn adapter_for(a: &AgentStartArgs) -> Result<adapters::Adapter, Error> {
    adapters::choose(&a.adapter, a.cli.as_deref(), a.ready_regex.as_deref())
}

fn project_dir(p: &Option<std::path::PathBuf>) -> Result<std::path::PathBuf, Error> {
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
        Err(Error::new(format!("the reply of {} is incomplete", r.name)).printed())
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

fn start(tmux: &Tmux, a: &AgentStartArgs) -> CliResult {
    let ad = adapter_for(a)?;
    let caller = crate::location::address::caller(tmux);
    let s = launch::start(
        tmux,
        &caller,
        &ad,
        &project_dir(&a.project)?,
        a.permission_mode.as_deref(),
        Duration::from_millis(crate::cli::timeout_or(a.timeout, a.timeout_s, 1000, 60_000)),
    )?;
    super::out_json_or_line(a.json, &s, launch::Started::line);
    Ok(())
}

fn send(
    tmux: &Tmux,
    name: &str,
    msg: &MessageArgs,
    project: Option<&std::path::Path>,
    permission_mode: Option<&str>,
    json: bool,
) -> CliResult {
    let text = read_message(msg)?;
    let sent = deliver::send(
        tmux,
        name,
        &text,
        &ask::caller_project(project)?,
        permission_mode,
    )?;
    super::out_json_or_line(json, &sent, |s| {
        format!("sent to {} ({} bytes), submitted", s.name, s.bytes)
    });
    Ok(())
}

fn ask(tmux: &Tmux, req: &ask::Request, json: bool) -> CliResult {
    match ask::ask(tmux, req) {
        Ok(r) => print_reply(&r, json),
        // `--json`: how far the message got beside the error (`ask::Failed::to_json`;
        // a forwarding caller reads it back). The line for people stays the error's.
        Err(f) if json => {
            super::out_line(&f.to_json().to_string());
            Err(f.error.printed())
        }
        Err(f) => Err(f.error),
    }
}

fn stop(tmux: &Tmux, name: &str, confirm: bool, json: bool) -> CliResult {
    let st = crate::bridge::stop::stop_agent(tmux, name, confirm)?;
    super::out_json_or_line(json, &st, |st| st.line(name));
    Ok(())
}

pub fn run(tmux: &Tmux, action: AgentAction) -> CliResult {
    if let AgentAction::Exec { spec } = &action {
        return Err(launch::exec(spec));
    }
    match action {
        AgentAction::Start(a) => start(tmux, &a),
        AgentAction::Send {
            name,
            msg,
            project,
            permission_mode,
            json,
        } => send(
            tmux,
            &name,
            &msg,
            project.as_deref(),
            permission_mode.as_deref(),
            json,
        ),
        AgentAction::Wait {
            name,
            until: Some(until),
            timeout,
            timeout_s,
            json,
        } => {
            let states = crate::state::wait::parse_until(&until)?;
            let wait = crate::cli::timeout_or(timeout, timeout_s, 1000, turns::DEFAULT_WAIT_MS);
            let pane = crate::state::wait::pane_of(tmux, &name)?;
            let r = crate::state::wait::wait(
                tmux,
                &pane,
                &states,
                Duration::from_millis(wait),
                &|_| true,
            )?;
            if json {
                super::out_json(&r);
            } else {
                super::out_line(&r.text());
            }
            Ok(())
        }
        AgentAction::Wait {
            name,
            until: None,
            timeout,
            timeout_s,
            json,
        } => {
            let wait = crate::cli::timeout_or(timeout, timeout_s, 1000, turns::DEFAULT_WAIT_MS);
            print_reply(
                &turns::wait(tmux, &name, Duration::from_millis(wait))?,
                json,
            )
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
            let wait = crate::cli::timeout_or(timeout, timeout_s, 1000, turns::DEFAULT_WAIT_MS);
            let req = ask::Request {
                target: &target,
                message: &text,
                project: project.as_deref(),
                permission_mode: permission_mode.as_deref(),
                timeout: Duration::from_millis(wait),
                progress: None,
            };
            ask(tmux, &req, json)
        }
        AgentAction::List { json } => list(tmux, json),
        AgentAction::Attach { name } => crate::bridge::attach::attach(tmux, &name),
        AgentAction::Stop {
            name,
            confirm,
            json,
        } => stop(tmux, &name, confirm, json),
        AgentAction::Name { adapter, project } => {
            let name = crate::bridge::attach::name_for(&adapter, &project_dir(&project)?)?;
            super::out_line(&name);
            Ok(())
        }
        AgentAction::Exec { .. } => Ok(()),
    }
}
