//! An `agent ask` that ran on another host (`tmuxmate --host H agent ask`, MCP
//! `agent_ask` with a `host`) and failed: how far its message got.
//!
//! Owns: the outcome of such a failure, from how far the call got (`crate::op::Reached`):
//! nothing ran there (refused here, no tmuxmate there, one that does not know the
//! operation: not delivered); the host's own error document (`super::ask::Failed::to_json`:
//! its `delivery`); or not known (the call ended before an answer).
//!
//! Invariants: an outcome is the host's own word or a fact of ours, never a guess; when
//! there is none its text says the host did not report it and what to look at before
//! asking again (the message may have been typed).

use super::ask;
use super::deliver::Delivery;
use crate::error::Error;
use crate::op::{Failure, Reached};

/// A failed ask on a host.
#[derive(Debug)]
pub struct Outcome {
    /// How far the message got; `None`: not reported.
    pub delivery: Option<Delivery>,
    pub error: Error,
    /// The host's error document said nothing of the delivery (a tmuxmate that predates
    /// it): the document is passed on as it came, and this note says so.
    pub note: Option<String>,
}

/// What a person or model must know when the host did not say how far it got.
fn unreported(host: &str, why: &str) -> String {
    format!(
        "host {host} did not report how far the message got ({why}); it may have been typed: \
         before asking again, look with `tmuxmate --host {host} agent list` and `agent reply NAME`"
    )
}

/// The outcome of failure `f` of an ask on `host`.
pub fn outcome(host: &str, f: Failure) -> Outcome {
    match f.reached {
        Reached::Nothing => Outcome {
            delivery: Some(Delivery::NotDelivered),
            error: f.error,
            note: None,
        },
        Reached::Host(doc) => match ask::reported(&doc) {
            Some(d) => Outcome {
                delivery: Some(d),
                error: f.error,
                note: None,
            },
            None => Outcome {
                delivery: None,
                error: f.error,
                note: Some(unreported(
                    host,
                    &format!(
                        "its tmuxmate predates that report; `tmuxmate remote install {host}` updates it"
                    ),
                )),
            },
        },
        Reached::Unknown => {
            let note = unreported(host, "the call to it failed before it answered");
            let hint = match f.error.hint.as_deref() {
                Some(h) if !h.is_empty() => format!("{h}; {note}"),
                _ => note,
            };
            Outcome {
                delivery: None,
                error: f.error.with_hint(hint),
                note: None,
            }
        }
    }
}

impl Outcome {
    /// The text for people and models: the error, and the note when there is one.
    pub fn text(&self) -> String {
        match &self.note {
            Some(n) => format!("{}; {n}", self.error.human()),
            None => self.error.human(),
        }
    }

    /// What `agent ask --json` prints for it: the error and `delivery` beside it, as the
    /// ask prints here (`ask::Failed::to_json`); the host's document as it came when it
    /// did not report one.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = self.error.to_json();
        if self.note.is_none() {
            v["delivery"] = serde_json::to_value(self.delivery).unwrap_or_default();
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Kind;

    fn failure(error: Error, reached: Reached) -> Failure {
        Failure {
            error,
            reached,
            said: String::new(),
        }
    }

    #[test]
    fn the_hosts_word_is_taken_and_nothing_else_is_guessed() {
        // The host's own document: its delivery.
        let said = ask::Failed {
            delivery: Delivery::Unconfirmed,
            error: Error::new("pasted").with_hint("look"),
        }
        .to_json();
        let o = outcome(
            "h",
            failure(
                Error::from_json(&said).unwrap(),
                Reached::Host(said.clone()),
            ),
        );
        assert_eq!(
            (o.delivery, o.text().as_str()),
            (Some(Delivery::Unconfirmed), "pasted; look")
        );
        assert_eq!(o.to_json(), said);
        // A document without one (or with an unknown one): none, said so, passed on.
        for doc in [
            serde_json::json!({"error": {"kind": "refused", "message": "old", "hint": null}}),
            serde_json::json!({"error": {"kind": "refused", "message": "old", "hint": null},
                "delivery": "maybe"}),
        ] {
            let o = outcome(
                "h",
                failure(Error::from_json(&doc).unwrap(), Reached::Host(doc.clone())),
            );
            assert_eq!(o.delivery, None);
            assert!(o.text().starts_with("old; host h did not report how far"));
            assert!(o.text().contains("tmuxmate remote install h"));
            assert!(o.to_json().get("delivery").is_none());
        }
        // Nothing ran there: not delivered.
        for e in [
            Error::usage("refused: needs --project"),
            Error::of(Kind::Tmux("remote-no-tmuxmate"), "none there"),
        ] {
            let o = outcome("h", failure(e, Reached::Nothing));
            assert_eq!(o.delivery, Some(Delivery::NotDelivered));
            assert!(!o.text().contains("did not report"));
            assert_eq!(o.to_json()["delivery"], "not-delivered");
        }
        // A call that ended before an answer: not known, and the text says so.
        let lost = Error::of(Kind::Tmux("ssh"), "ssh to h failed").with_hint("check it");
        let o = outcome("h", failure(lost, Reached::Unknown));
        assert_eq!(o.delivery, None);
        assert!(
            o.text()
                .starts_with("ssh to h failed; check it; host h did not report"),
            "{}",
            o.text()
        );
        assert!(o.to_json()["delivery"].is_null());
    }
}
