//! What a tool handler works with and hands back: the call's context ([`Ctx`]) and its
//! answer ([`Answer`]). Apart from the tool table (`super::tools`) and the handlers, so
//! neither imports the other's file back.

use std::time::Duration;

use serde_json::Value;

use super::Session;
use crate::tmux::Tmux;

/// The progress tick of a call: asked with the time waited so far; false: the call was
/// cancelled.
pub type Tick<'a> = dyn Fn(Duration) -> bool + Sync + 'a;

/// What a handler works with: the session (resources, the client's stream), the server
/// the call talks to, and the progress tick.
pub struct Ctx<'a> {
    pub session: &'a Session,
    pub tmux: &'a Tmux,
    pub tick: &'a Tick<'a>,
    /// The call asked for the structured content beside the text (`json: true`).
    pub json: bool,
}

/// A tool's answer: a result value, or a successful result whose text block is made for
/// the model and whose structured content is already JSON text (`Out::reply_call` writes
/// both without a value tree).
pub enum Answer {
    Value(Value),
    /// A successful result whose text block is made for the model (`text`) and whose
    /// structured content is the JSON text `sc`.
    Texted {
        text: String,
        sc: String,
    },
    /// As `Texted`, with the structured content's JSON text `sc` holding the text
    /// block as a JSON string (quoted and escaped) at `at`, or `text_json` holding it
    /// when it is not that string (a megabyte text is then escaped and held once).
    Escaped {
        sc: String,
        at: std::ops::Range<usize>,
        text_json: Option<String>,
    },
    /// A successful result of a text block alone, no structured content: the text as a
    /// JSON string (quoted and escaped) at `json[at]`.
    Plain {
        json: String,
        at: std::ops::Range<usize>,
    },
}
