//! What the keys do to the world: go to an agent's pane, ask it one line, open its side
//! chat, stop a managed agent. Each runs off the drawing thread and ends in an
//! [`Outcome`] the view shows.
//!
//! Invariants: only rows of the server the dashboard talks to are acted on (the app
//! refuses the others); a jump switches one named client (the popup's, else the one
//! showing the dashboard's own pane), never "the current client"; an ask goes through the
//! bridge's delivery rules (a managed agent: `deliver::send_staged`; another:
//! `pane_send::send`), so it is never typed into a dialog and never sent twice.

use crate::bridge::deliver::Delivery;
use crate::dashboard::row::Row;
use crate::error::Error;
use crate::targs;
use crate::tmux::{Arg, Tmux};

use super::app::label;

/// How an action ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub text: String,
    pub good: bool,
    /// The dashboard closes (a popup after a jump or before a side chat).
    pub quit: bool,
}

impl Outcome {
    fn ok(text: String) -> Outcome {
        Outcome {
            text,
            good: true,
            quit: false,
        }
    }
    fn bad(e: &Error) -> Outcome {
        Outcome {
            text: e.msg.lines().next().unwrap_or("").to_string(),
            good: false,
            quit: false,
        }
    }
}

/// Where the person is: the client to switch, and whether the view is its popup.
#[derive(Debug, Clone)]
pub struct Seat {
    /// The popup's client (`--client`).
    pub client: Option<String>,
    /// The dashboard's own pane, when it runs in one.
    pub pane: Option<String>,
}

impl Seat {
    /// The client to switch: the popup's, else one showing the dashboard's pane.
    fn client(&self, tmux: &Tmux) -> Result<String, Error> {
        if let Some(c) = &self.client {
            return Ok(c.clone());
        }
        let Some(own) = &self.pane else {
            return Err(Error::refused(
                "this dashboard runs outside tmux: no client to switch; attach to the server and press Enter there",
            ));
        };
        let out = tmux.run(&["list-clients", "-F", "#{pane_id}\t#{client_name}"])?;
        out.lines()
            .filter_map(|l| l.split_once('\t'))
            .find(|(p, _)| p == own)
            .map(|(_, c)| c.to_string())
            .ok_or_else(|| {
                Error::refused("no client shows the dashboard's pane; nothing to switch")
            })
    }

    pub fn popup(&self) -> bool {
        self.client.is_some()
    }
}

/// Enter: the client goes to the agent's pane (its session, window and pane).
pub fn jump(tmux: &Tmux, seat: &Seat, r: &Row) -> Outcome {
    let r2 = seat.client(tmux).and_then(|c| {
        tmux.run(&targs![
            "switch-client",
            "-c",
            Arg::literal(&c),
            "-t",
            Arg::id(&r.pane_id),
        ])
        .map_err(Error::from)
    });
    match r2 {
        Ok(_) => {
            if let Err(e) = crate::state::seen(tmux, &r.pane_id) {
                crate::sys::state::log(&format!("dashboard: seen {}: {e}", r.pane_id));
            }
            Outcome {
                text: format!("went to {} in {}", label(r), r.target),
                good: true,
                quit: seat.popup(),
            }
        }
        Err(e) => Outcome::bad(&e),
    }
}

/// `a`: one line to the agent, by the bridge's rules; the outcome as the bridge names it.
pub fn ask(tmux: &Tmux, r: &Row, line: &str) -> Outcome {
    let who = label(r);
    let sent = if r.managed {
        let project = r.project.clone().unwrap_or_default();
        crate::bridge::deliver::send_staged(tmux, &r.name, line, &project, None).map(|_| ())
    } else {
        crate::bridge::pane_send::send(tmux, &r.pane_id, &r.harness, r.state, line).map(|_| ())
    };
    match sent {
        Ok(()) => Outcome::ok(format!("delivered to {who}")),
        Err(f) => {
            let how = match f.delivery {
                Delivery::Delivered => "delivered",
                Delivery::Unconfirmed => "unconfirmed",
                Delivery::NotDelivered => "not delivered",
            };
            Outcome {
                text: format!("{how}: {}", f.error.msg.lines().next().unwrap_or("")),
                good: false,
                quit: false,
            }
        }
    }
}

/// `s`: the agent's side chat. In a popup, the popup closes first (a client shows one
/// popup at a time) and tmux opens the side chat's once this process is gone.
pub fn side(tmux: &Tmux, seat: &Seat, r: &Row) -> Outcome {
    let Some(client) = &seat.client else {
        return match crate::side::open::open(tmux, Some(&r.pane_id), None) {
            Ok(_) => Outcome::ok(format!("side chat about {} opened", label(r))),
            Err(e) => Outcome::bad(&e),
        };
    };
    let bin = match std::env::current_exe() {
        Ok(b) => b.to_string_lossy().into_owned(),
        Err(e) => return Outcome::bad(&Error::from(e)),
    };
    let q = crate::sys::shell::readable;
    // run-shell expands formats, then runs a shell: our path, a pid and a pane id, and
    // the client name, shell-quoted, then encoded for the expansion.
    let cmd = format!(
        "while kill -0 {} 2>/dev/null; do sleep 0.05; done; exec {} side open -t {} --client {} >/dev/null 2>&1",
        std::process::id(),
        q(&bin),
        q(&r.pane_id),
        q(client)
    );
    match tmux.run(&targs!["run-shell", "-b", Arg::expanded(&cmd)]) {
        Ok(_) => Outcome {
            text: String::new(),
            good: true,
            quit: true,
        },
        Err(e) => Outcome::bad(&e.into()),
    }
}

/// `x` then `y`: stop a managed agent (its session and every process of it).
pub fn stop(tmux: &Tmux, r: &Row) -> Outcome {
    match crate::bridge::stop::stop_agent(tmux, &r.name, true) {
        Ok(s) => Outcome::ok(s.line(&r.name)),
        Err(e) => Outcome::bad(&e),
    }
}
