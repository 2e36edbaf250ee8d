//! `tmuxmate agent ...`: the bridge to other agent CLIs in their own managed sessions,
//! here or (`--host`) on another host: each operation's answer printed as text or JSON.
//! `agent wait --until` waits on the agent's state (`crate::state::wait`), so that
//! operation's answer is composed here.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::at::At;
use crate::bridge::request::{self as req, Wait};
use crate::bridge::{asked, launch, listing, turns};
use crate::cli::AgentAction;
use crate::error::{CliResult, Error};
use crate::op::Operation;
use crate::state::wait::Reached;
use crate::tmux::Tmux;

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

/// What `agent wait` answers: the reply, or with `--until` the state the agent reached.
#[derive(Serialize, Deserialize, Debug)]
#[serde(untagged)]
pub enum Waited {
    Reply(turns::Reply),
    State(Reached),
}

impl Operation for Wait {
    const NAME: &'static str = "agent.wait";
    type Answer = Waited;
    fn waits(&self) -> Duration {
        self.within()
    }
}

/// `agent wait`: for the reply, or (`--until`) for the agent's state.
pub fn wait(tmux: &Tmux, r: &Wait) -> Result<Waited, Error> {
    let Some(until) = &r.until else {
        return Ok(Waited::Reply(turns::wait(tmux, &r.name, r.within())?));
    };
    let states = crate::state::wait::parse_until(until)?;
    let pane = crate::state::wait::pane_of(tmux, &r.name)?;
    let reached = crate::state::wait::wait(tmux, &pane, &states, r.within(), &|_| true)?;
    Ok(Waited::State(reached))
}

/// `agent ask`: the reply, or how far the message got (with `--json`, beside the error:
/// `ask::Failed::to_json` here, `asked::Outcome::to_json` for a host).
fn ask(at: &At, r: req::Ask, json: bool) -> CliResult {
    let failed = match at {
        At::Here(t) => match r.run(t, None) {
            Ok(reply) => return print_reply(&reply, json),
            Err(f) if json => {
                super::out_line(&f.to_json().to_string());
                return Err(f.error.printed());
            }
            Err(f) => return Err(f.error),
        },
        At::Host { host, .. } => match at.call(r) {
            Ok(reply) => return print_reply(&reply, json),
            Err(f) => asked::outcome(host, *f),
        },
    };
    if json {
        super::out_line(&failed.to_json().to_string());
    }
    if let Some(n) = &failed.note {
        eprintln!("tmuxmate: {n}");
    }
    Err(if json {
        failed.error.printed()
    } else {
        failed.error
    })
}

pub fn run(at: &At, action: AgentAction) -> CliResult {
    match action {
        AgentAction::Start(a) => {
            let s = at.run(a.ask, |t, r| r.run(t))?;
            super::out_json_or_line(a.json, &s, launch::Started::line);
        }
        AgentAction::Send(a) => {
            let s = at.run(a.ask, |t, r| r.run(t))?;
            super::out_json_or_line(a.json, &s, |s| {
                format!("sent to {} ({} bytes), submitted", s.name, s.bytes)
            });
        }
        AgentAction::Wait(a) => match at.run(a.ask, wait)? {
            Waited::Reply(r) => return print_reply(&r, a.json),
            Waited::State(r) => super::out_json_or_line(a.json, &r, Reached::text),
        },
        AgentAction::Reply(a) => return print_reply(&at.run(a.ask, |t, r| r.run(t))?, a.json),
        AgentAction::Ask(a) => return ask(at, a.ask, a.json),
        AgentAction::List { json } => {
            let v = at.run(req::List {}, |t, r| r.run(t))?;
            if json {
                super::out_json(&v);
            } else {
                super::out(&listing::render(&v));
            }
        }
        AgentAction::Attach { name } => crate::bridge::attach::attach(at.tmux()?, &name)?,
        AgentAction::Stop(a) => {
            let name = a.ask.name.clone();
            let st = at.run(a.ask, |t, r| r.run(t))?;
            super::out_json_or_line(a.json, &st, |st| st.line(&name));
        }
        AgentAction::Name(r) => super::out_line(&at.run(r, |_, r| r.run())?),
        AgentAction::Exec { spec } => return Err(launch::exec(&spec)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `agent wait`'s two answers read back as what they were (the JSON carries no tag).
    #[test]
    fn a_wait_answer_reads_back_as_the_reply_or_the_state() {
        let reply = Waited::Reply(turns::Reply {
            name: "n".into(),
            complete: false,
            source: "pane".into(),
            text: "so far".into(),
            truncated: false,
            attach: "tmux attach -t n".into(),
        });
        let state = Waited::State(Reached {
            pane_id: "%3".into(),
            state: "needs-you".into(),
            why: "permission".into(),
            since: 5,
            waited_ms: 7,
        });
        for w in [reply, state] {
            let doc = serde_json::to_string(&w).unwrap();
            let back: Waited = serde_json::from_str(&doc).unwrap();
            assert_eq!(serde_json::to_string(&back).unwrap(), doc);
            assert_eq!(
                std::mem::discriminant(&back),
                std::mem::discriminant(&w),
                "{doc}"
            );
        }
    }
}
