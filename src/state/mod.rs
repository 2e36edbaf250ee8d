//! Agent state: every agent pane's state from its CLI's own events, shown in tmux, and
//! the person told once per transition that needs them.
//!
//! Owns: the hook side ([`on_hook`]: an event in, the pane's record moved, the counts
//! pushed, an alert sent), the person looking ([`seen`]), the jump key ([`jump`]) and the
//! listing ([`list`]). The pieces: [`signal`] (event -> state, pure), [`machine`] (record
//! -> record, pure), [`store`] (pane options, locks), [`summary`] (status line, window
//! list), [`alert`] (exactly-once telling). Invariants:
//! - the pane is the tty-verified one (never `$TMUX_PANE` alone): a hook that cannot be
//!   placed changes no state;
//! - read, decide and write happen under the pane's lock, so two events at once (an MCP
//!   call and a hook) move the record one after the other;
//! - every path here is unattended: errors go to the log, the caller prints nothing.

pub mod alert;
pub mod changes;
pub mod claude_file;
pub mod hosts;
pub mod list;
pub mod listen;
pub mod longpoll;
pub mod machine;
pub mod osc;
pub mod request;
pub mod row;
pub mod servers;
pub mod signal;
pub mod sources;
pub mod store;
pub mod summary;
pub mod wait;

use crate::harness::Harness;
use crate::sys::state;
use crate::tmux::{Socket, Tmux};

use machine::Signal;
use machine::{Record, State};

/// The state the hook event on `stdin` proves, applied to the calling agent's pane.
pub fn on_hook(tmux: &Tmux, harness: Harness, stdin: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(stdin);
    if text.trim().is_empty() {
        return Ok(());
    }
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("hook stdin is not valid JSON: {e}"))?;
    let Some(sig) = signal::from_hook(harness, &v) else {
        return Ok(());
    };
    // A side chat is the person's own conversation about an agent, not an agent at work.
    if std::env::var_os(crate::harness::SIDE_MAIN_ENV).is_some() {
        return Ok(());
    }
    let r = crate::location::read(tmux).map_err(|e| format!("agent state: {e}"))?;
    let t = Tmux::new(Socket::Path(r.socket_path.clone().into()));
    let label = format!("{}:{}.{}", r.session, r.window_index, r.pane_index);
    apply(
        &t,
        &r.socket_path,
        &r.pane_id,
        harness_name(harness),
        &sig,
        &label,
    )
}

pub fn harness_name(h: Harness) -> &'static str {
    match h {
        Harness::Claude => "claude",
        Harness::Codex => "codex",
        Harness::Gemini => "gemini",
    }
}

/// What the person is told about `rec` of the agent at `label`.
pub fn message(label: &str, rec: &Record) -> String {
    let who = if rec.harness.is_empty() {
        "agent"
    } else {
        &rec.harness
    };
    let what = match rec.state {
        State::NeedsYou if rec.why.is_empty() => "needs you".to_string(),
        State::NeedsYou => format!("needs you: {}", rec.why),
        other => format!("is {}", other.name()),
    };
    signal::one_line(&format!("tmuxmate: {who} in {label} {what}"))
}

/// Move the record of `pane` (on the server at `socket`) by `sig`; alert when the step
/// says so and the cooldown allows.
pub fn apply(
    tmux: &Tmux,
    socket: &str,
    pane: &str,
    harness: &str,
    sig: &Signal,
    label: &str,
) -> Result<(), String> {
    apply_with(tmux, socket, pane, harness, label, |cur| {
        // With Codex's own stream read, a failed model request is a failed turn only when
        // the stream says so (Codex retries first); the hook's message then gives it why.
        let streamed = cur.source == listen::OSC && cur.piped;
        if streamed && sig.event == "PostModelRequest" {
            let failed = cur
                .record
                .as_ref()
                .is_some_and(|r| r.state == State::NeedsYou && r.why == machine::ERROR);
            if !failed {
                // Kept for the stream's error, should this attempt be the last.
                let noted = format!("{} {}", crate::sys::time::now_ms(), sig.why);
                let _ = tmux.run(&crate::targs![
                    "set-option",
                    "-pq",
                    "-t",
                    crate::tmux::Arg::id(pane),
                    crate::tmux::options::STATE_ERROR.name,
                    crate::tmux::Arg::literal(&noted),
                ]);
            }
            return failed.then(|| sig.clone());
        }
        Some(sig.clone())
    })
}

/// [`apply`] with the signal decided from the record as it is under the lock (a
/// source whose words mean different things after different states).
pub fn apply_with(
    tmux: &Tmux,
    socket: &str,
    pane: &str,
    harness: &str,
    label: &str,
    decide: impl FnOnce(&store::Read) -> Option<Signal>,
) -> Result<(), String> {
    let io = |e: std::io::Error| format!("agent state of {pane}: {e}");
    let tm = |e: crate::tmux::TmuxError| format!("agent state of {pane}: {e}");
    let server;
    {
        let _lock = store::lock(socket, pane, true).map_err(io)?;
        let cur = store::read(tmux, pane).map_err(tm)?;
        server = cur.server.clone();
        listen::ensure(tmux, pane, harness, &cur);
        let Some(sig) = decide(&cur) else {
            return Ok(());
        };
        let now = crate::sys::time::now_ms();
        let st = machine::step(cur.record.as_ref(), harness, &sig, cur.looking(pane), now);
        let Some(rec) = st.record else {
            return Ok(());
        };
        let how = alert::How::read(tmux);
        let cooled = now.saturating_sub(cur.alerted_ms) >= how.cooldown_ms;
        // With nobody attached, the person's command is the one way to reach them.
        let alert = st.alert && cooled && (!cur.clients.is_empty() || !how.command.is_empty());
        let text = message(label, &rec);
        if alert {
            alert::claim(&server, pane, rec.seq, &text).map_err(io)?;
        }
        store::write(tmux, pane, &rec, if alert { now } else { cur.alerted_ms }).map_err(tm)?;
        servers::remember(socket);
        if rec.state == State::Exited {
            listen::remove(tmux, pane, &cur);
        }
        if let Err(e) = summary::refresh(tmux) {
            state::log(&format!("agent state: status line: {e}"));
        }
        if alert && let Some(file) = alert::path(&server, pane, rec.seq) {
            alert::deliver(tmux, &how, &cur.clients, cur.clients.len(), &text, &file);
            alert::mark_sent(&server, pane, rec.seq).map_err(io)?;
        }
    }
    alert::redeliver(tmux, socket, &server);
    Ok(())
}

/// The person looks at `pane`: a done turn becomes idle (the snippet's hooks call this
/// when a client shows a pane whose state is done).
pub fn seen(tmux: &Tmux, pane: &str) -> Result<(), String> {
    let socket = socket_of(tmux)?;
    let io = |e: std::io::Error| format!("agent state of {pane}: {e}");
    let tm = |e: crate::tmux::TmuxError| format!("agent state of {pane}: {e}");
    let _lock = store::lock(&socket, pane, true).map_err(io)?;
    let cur = store::read(tmux, pane).map_err(tm)?;
    let Some(rec) = cur
        .record
        .as_ref()
        .and_then(|r| machine::seen(r, crate::sys::time::now_ms()))
    else {
        return Ok(());
    };
    store::write(tmux, pane, &rec, cur.alerted_ms).map_err(tm)?;
    summary::refresh(tmux).map_err(tm)?;
    Ok(())
}

/// Where `pane` is, as the person reads it: `session:window.pane`.
pub fn place_of(tmux: &Tmux, pane: &str) -> Result<String, String> {
    use crate::targs;
    use crate::tmux::Arg;
    tmux.run(&targs![
        "display-message",
        "-p",
        "-t",
        Arg::id(pane),
        "#{session_name}:#{window_index}.#{pane_index}",
    ])
    .map(|s| s.trim_end_matches('\n').to_string())
    .map_err(|e| e.to_string())
}

/// The server's socket path, as tmux reports it.
pub fn socket_of(tmux: &Tmux) -> Result<String, String> {
    tmux.run(&["display-message", "-p", "#{socket_path}"])
        .map(|s| s.trim_end_matches('\n').to_string())
        .map_err(|e| e.to_string())
}

/// The jump key: switch `client` to the agent that has needed the person longest; pressed
/// again, to the next one (then the done ones). Tells the client when there is none.
pub fn jump(tmux: &Tmux, client: &str) -> Result<(), String> {
    let agents = summary::refresh(tmux).map_err(|e| e.to_string())?;
    let last = crate::tmux::options::JUMP_LAST.global(tmux);
    let order = list::jump_order(&agents);
    let Some(next) = list::next_after(&order, last.trim()) else {
        let e = crate::error::Error::new("no agent needs you and none is done");
        crate::tmux::popup::tell(tmux, client, "jump", &e.msg);
        return Ok(());
    };
    use crate::targs;
    use crate::tmux::Arg;
    tmux.run(&targs![
        "switch-client",
        "-c",
        Arg::literal(client),
        "-t",
        Arg::id(&next),
        Arg::SEP,
        "set-option",
        "-g",
        crate::tmux::options::JUMP_LAST.name,
        Arg::literal(&next),
    ])
    .map_err(|e| e.to_string())?;
    seen(tmux, &next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_who_where_and_why() {
        let r = Record {
            state: State::NeedsYou,
            since_ms: 0,
            why: "permission: Bash: ls".into(),
            seq: 1,
            harness: "claude".into(),
            event: "PermissionRequest".into(),
        };
        assert_eq!(
            message("dev:2.1", &r),
            "tmuxmate: claude in dev:2.1 needs you: permission: Bash: ls"
        );
        let d = Record {
            state: State::Done,
            why: String::new(),
            ..r
        };
        assert_eq!(
            message("dev:2.1", &d),
            "tmuxmate: claude in dev:2.1 is done"
        );
    }
}
