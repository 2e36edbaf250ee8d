//! A forwarded `agent ask` read back (MCP `agent_ask` with a `host`, and
//! `tmuxmate --host H agent ask`): the host's reply, or how far its message got there.
//!
//! Owns: the outcome of an ask that ran on another host, taken from what the host's
//! tmuxmate printed with `--json` (`crate::bridge::ask::Failed::to_json`: the error and
//! `delivery`), or from why the host did not answer; and the note that says when the host
//! did not report how far the message got.
//!
//! Invariants: an outcome is the host's own word or a fact of ours (nothing ran there:
//! refused here, no tmuxmate, a tmuxmate that refused our flags); anything else (a
//! connection lost while the host worked, a host tmuxmate that predates the report) has
//! no outcome (`None`), never a guessed one, and its text says the host did not report it
//! and what to look at before asking again (the message may have been typed).

use serde_json::Value;

use super::forward::Answer;
use crate::bridge::ask;
use crate::bridge::deliver::Delivery;
use crate::error::{Error, Kind};
use crate::remote::call;
use crate::sys::process::Finished;

/// What a forwarded `agent ask --json` came to.
pub enum Asked {
    /// The host's reply (complete or not): the message was delivered.
    Reply(Value),
    /// It failed: how far the message got (`None`: not reported) and the text for people.
    Failed {
        delivery: Option<Delivery>,
        text: String,
    },
}

/// What a person or model must know when the host did not say how far it got.
fn unreported(host: &str, why: &str) -> String {
    format!(
        "host {host} did not report how far the message got ({why}); it may have been typed: \
         before asking again, look with `tmuxmate --host {host} agent list` and `agent reply NAME`"
    )
}

fn old_host(host: &str) -> String {
    unreported(
        host,
        &format!("its tmuxmate predates that report; `tmuxmate remote install {host}` updates it"),
    )
}

/// A forwarded ask that has no answer of the host's: not delivered when nothing ran
/// there; else no outcome, and the error says so in its hint.
pub fn failed(host: &str, e: Error) -> (Option<Delivery>, Error) {
    let nothing_ran = matches!(e.kind, Kind::Usage | Kind::Refused)
        || e.kind == Kind::Tmux(call::NOT_INSTALLED)
        || e.kind == Kind::Tmux(call::OTHER_VERSION);
    if nothing_ran {
        return (Some(Delivery::NotDelivered), e);
    }
    let note = unreported(host, "the call to it failed before it answered");
    let hint = match e.hint.as_deref() {
        Some(h) if !h.is_empty() => format!("{h}; {note}"),
        _ => note,
    };
    (None, e.with_hint(hint))
}

/// The `--json` failure object `agent ask` prints here for `e` ([`failed`]'s outcome).
pub fn failure_json(delivery: Option<Delivery>, e: &Error) -> Value {
    let mut v = e.to_json();
    v["delivery"] = serde_json::to_value(delivery).unwrap_or_default();
    v
}

/// The people's text of a `--json` error object (as `Error::human`: message; hint).
pub fn human_of(e: &Value) -> String {
    let msg = e["message"].as_str().unwrap_or("").to_string();
    match e["hint"].as_str() {
        Some(h) if !h.is_empty() => format!("{msg}; {h}"),
        _ => msg,
    }
}

/// A failed answer whose `--json` does not say how far the message got: the note for it
/// (`None`: it says, or the ask did not fail).
pub fn unreported_in(host: &str, out: &Finished) -> Option<String> {
    if out.status.success() {
        return None;
    }
    match serde_json::from_slice::<Value>(&out.stdout) {
        // A reply (an incomplete one exits 1): delivered.
        Ok(v) if v.is_object() && v.get("error").is_none() => None,
        Ok(v) if ask::reported(&v).is_some() => None,
        Ok(v) if v.get("error").is_some() => Some(old_host(host)),
        _ => Some(unreported(
            host,
            &format!(
                "its tmuxmate exited {} without a JSON answer",
                out.status
                    .code()
                    .map_or("on a signal".into(), |c| c.to_string())
            ),
        )),
    }
}

/// The outcome of `agent ask --json` run on `host` through `crate::cli::forward`.
pub fn read(host: &str, r: Result<Answer, Error>) -> Asked {
    let out = match r {
        Ok(Answer::Passed(out)) => out,
        Ok(Answer::Started { .. }) => {
            return Asked::Failed {
                delivery: None,
                text: unreported(host, "it answered as a watch start"),
            };
        }
        Err(e) => {
            let (delivery, e) = failed(host, e);
            return Asked::Failed {
                delivery,
                text: e.human(),
            };
        }
    };
    match serde_json::from_slice::<Value>(&out.stdout) {
        Ok(v) if v.is_object() && v.get("error").is_none() => Asked::Reply(v),
        Ok(v) if v["error"].is_object() => {
            let text = human_of(&v["error"]);
            match ask::reported(&v) {
                Some(d) => Asked::Failed {
                    delivery: Some(d),
                    text,
                },
                None => Asked::Failed {
                    delivery: None,
                    text: format!("{text}; {}", old_host(host)),
                },
            }
        }
        _ => {
            let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
            let note = unreported_in(host, &out).unwrap_or_else(|| {
                unreported(host, "its answer was not the JSON of a reply or an error")
            });
            Asked::Failed {
                delivery: None,
                text: if said.is_empty() {
                    note
                } else {
                    format!("{said}; {note}")
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn passed(code: i32, stdout: &str, stderr: &str) -> Result<Answer, Error> {
        Ok(Answer::Passed(Finished {
            status: std::process::ExitStatus::from_raw(code << 8),
            stdout: stdout.into(),
            stderr: stderr.into(),
        }))
    }

    fn outcome(a: Asked) -> (Option<Delivery>, String) {
        match a {
            Asked::Failed { delivery, text } => (delivery, text),
            Asked::Reply(v) => panic!("a reply: {v}"),
        }
    }

    #[test]
    fn the_hosts_word_is_taken_and_nothing_else_is_guessed() {
        let said = r#"{"error":{"kind":"error","message":"pasted","hint":"look"},"delivery":"unconfirmed"}"#;
        assert_eq!(
            outcome(read("h", passed(1, said, ""))),
            (Some(Delivery::Unconfirmed), "pasted; look".into())
        );
        // A reply, an incomplete one too (exit 1): delivered.
        let reply = r#"{"name":"n","complete":false}"#;
        assert!(matches!(read("h", passed(1, reply, "")), Asked::Reply(_)));
        // No delivery, an unknown one, or no JSON: none, and the text says so.
        for out in [
            passed(
                1,
                r#"{"error":{"kind":"refused","message":"old","hint":null}}"#,
                "",
            ),
            passed(
                1,
                r#"{"error":{"kind":"refused","message":"old","hint":null},"delivery":"maybe"}"#,
                "",
            ),
            passed(139, "", "segfault"),
        ] {
            let (d, text) = outcome(read("h", out));
            assert_eq!(d, None);
            assert!(text.contains("host h did not report how far"), "{text}");
        }
        // Nothing ran there: not delivered. A failed call: not known.
        for e in [
            Error::usage("refused: needs --project"),
            call::not_installed("h", "agent ask"),
            Error::of(Kind::Tmux(call::OTHER_VERSION), "another version"),
        ] {
            let (d, text) = outcome(read("h", Err(e)));
            assert_eq!(d, Some(Delivery::NotDelivered), "{text}");
            assert!(!text.contains("did not report"), "{text}");
        }
        let lost = Error::of(Kind::Tmux("ssh"), "ssh to h failed").with_hint("check it");
        let (d, text) = outcome(read("h", Err(lost)));
        assert_eq!(d, None);
        assert!(
            text.starts_with("ssh to h failed; check it; host h did not report"),
            "{text}"
        );
        assert!(
            unreported_in(
                "h",
                &Finished {
                    status: std::process::ExitStatus::from_raw(0),
                    stdout: vec![],
                    stderr: vec![],
                }
            )
            .is_none()
        );
    }
}
