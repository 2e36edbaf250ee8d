//! Capturing a pane's screen or scrollback within a byte budget, as the typed result of
//! `tmuxmate capture --json` and the MCP `tmux_capture` tool.
//!
//! Invariants: the target is resolved by `policy` and only its `%N` id reaches tmux; the
//! text is cut to the budget keeping the newest lines (see `crate::control::budget`), a cut is
//! marked (`truncated: true`; the rendered text starts with `[... N earlier bytes
//! truncated ...]`); every capture is stored as a snapshot before it is returned.
//!
//! Shape: `{target, paneId, text, lineCount, truncated}` where `target` is the pane's
//! `session:window.pane` (for reading only) and `text` has no trailing newline.

use serde::{Deserialize, Serialize};

use crate::control::budget::{self, Bounded, Range};
use crate::control::policy;
use crate::control::snapshot;
use crate::error::Error;
use crate::tmux::Tmux;

/// A capture's answer: the document `capture --json` prints, and, with `snapshot`, the
/// MCP tool's structured content.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct CaptureJson {
    pub target: String,
    pub pane_id: String,
    pub text: String,
    pub line_count: usize,
    pub truncated: bool,
    /// The MCP tool's alone (`None`: no such key, as `capture --json` prints it): the
    /// stored snapshot as a resource URI, `null` when none was stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Option<String>>,
}

impl CaptureJson {
    /// The document as compact JSON, and where in it its `text` stands as a JSON string
    /// (for a reader that shows the text apart, as the MCP tool's text block does): a
    /// whole-history capture is megabytes, escaped once, straight into the document, and
    /// never searched. The fields around it are serialized with an empty text, whose
    /// `,"text":""` is found exactly: in compact JSON a quote inside a string is escaped.
    pub fn to_json_with_text(&self) -> (String, Option<std::ops::Range<usize>>) {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Around<'a> {
            target: &'a str,
            pane_id: &'a str,
            text: &'a str,
            line_count: usize,
            truncated: bool,
            #[serde(skip_serializing_if = "Option::is_none")]
            snapshot: &'a Option<Option<String>>,
        }
        let around = serde_json::to_string(&Around {
            target: &self.target,
            pane_id: &self.pane_id,
            text: "",
            line_count: self.line_count,
            truncated: self.truncated,
            snapshot: &self.snapshot,
        })
        .unwrap_or_default();
        let key = r#","text":"#;
        let Some(k) = around.find(r#","text":"""#) else {
            return (around, None);
        };
        let (head, tail) = (&around[..k + key.len()], &around[k + key.len() + 2..]);
        let mut doc = String::with_capacity(around.len() + self.text.len() * 33 / 32 + 4);
        doc.push_str(head);
        let start = doc.len();
        crate::sys::jsonstr::push(&mut doc, &self.text);
        let at = start..doc.len();
        doc.push_str(tail);
        (doc, Some(at))
    }
}

// What a capture asks for, one type for the CLI's `capture` flags (`--json` aside) and
// the MCP tool's arguments: the flags' help is the doc of each field. (A plain comment:
// clap would make a doc comment here the `capture --help` text.)
#[derive(clap::Args, Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Ask {
    /// The pane: `%N`, `session:window.pane`, or another tmux target (see `tmuxmate list`).
    #[arg(short = 't', long = "target")]
    pub target: Option<String>,
    /// The last N lines of scrollback plus the screen.
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub lines: Option<u64>,
    /// All of the scrollback.
    #[arg(long)]
    #[serde(default)]
    pub all: bool,
    /// Byte budget (default: @tmuxmate-capture-max-bytes, else 100000); keeps the newest text.
    #[arg(long, value_name = "B")]
    pub max_bytes: Option<usize>,
    /// Keep colours and attributes as escape sequences.
    #[arg(long)]
    #[serde(default)]
    pub ansi: bool,
    /// Join wrapped lines.
    #[arg(long)]
    #[serde(default)]
    pub join: bool,
}

impl Ask {
    /// Both `lines` and `all`: the CLI's parser refuses them together, and so must a
    /// caller that reads `Ask` another way.
    pub fn conflicts(&self) -> bool {
        self.all && self.lines.is_some()
    }

    pub fn request(&self) -> Request<'_> {
        let range = match (self.all, self.lines) {
            (true, _) => Range::All,
            (false, Some(n)) => Range::Lines(n),
            (false, None) => Range::Screen,
        };
        Request {
            target: self.target.as_deref(),
            range: Some(range),
            max_bytes: self.max_bytes,
            ansi: self.ansi,
            join: self.join,
        }
    }
}

#[derive(Debug, Default)]
pub struct Request<'a> {
    pub target: Option<&'a str>,
    pub range: Option<Range>,
    pub max_bytes: Option<usize>,
    pub ansi: bool,
    pub join: bool,
}

/// The capture, bounded, plus the pane it came from; stored as a snapshot.
pub struct Captured {
    pub pane_id: String,
    pub target: String,
    pub text: Bounded,
    /// The stored snapshot's id (None when snapshots are off, or storing failed: the
    /// warning was printed).
    pub snapshot: Option<String>,
}

impl Captured {
    pub fn json(self) -> CaptureJson {
        CaptureJson {
            target: self.target,
            pane_id: self.pane_id,
            line_count: self.text.line_count(),
            truncated: self.text.truncated,
            text: self.text.text,
            snapshot: None,
        }
    }
}

pub fn capture(tmux: &Tmux, r: &Request) -> Result<Captured, Error> {
    // A `%N` pane's capture is one command list: each call is a round trip (over ssh,
    // a whole one), and the fixed cost of three was most of a small capture's time.
    // Any surprise falls back to the calls below, which say what went wrong.
    if let Some(target) = r.target
        && let Some(c) = in_one_call(tmux, r, target)
    {
        return Ok(c);
    }
    // The agent address only matters when no target is given (the "newest pane we
    // created" fallback); finding it costs a tty lookup, so skip it when one is named.
    let agent = match r.target {
        Some(_) => String::new(),
        None => crate::location::address::caller(tmux).agent,
    };
    let pane = policy::resolve(tmux, r.target, &agent)?;
    // A name resolved to its pane takes the one command list too.
    if r.target != Some(pane.pane_id.as_str())
        && let Some(c) = in_one_call(tmux, r, &pane.pane_id)
    {
        return Ok(c);
    }
    let budget = budget::budget(tmux, r.max_bytes)?;
    let range = r.range.unwrap_or(Range::Screen);
    // A long history is read from its end: the budget keeps only the newest text.
    let b = super::capture_tail::capture(tmux, &pane.pane_id, range, r.ansi, r.join, budget)?;
    let target = pane.target();
    let snapshot = match snapshot::record(tmux, &pane.pane_id, &target, &b.text, b.truncated) {
        Ok(id) => id,
        Err(e) => {
            // The capture itself succeeded; losing its stored copy must not hide it.
            eprintln!("tmuxmate: warning: {e}");
            None
        }
    };
    Ok(Captured {
        pane_id: pane.pane_id,
        target,
        text: b,
        snapshot,
    })
}

/// The capture of `%N` pane `target` as one command list (`capture_list`), or None.
fn in_one_call(tmux: &Tmux, r: &Request, target: &str) -> Option<Captured> {
    let g = super::capture_list::one_call(
        tmux,
        &super::capture_list::Ask {
            target,
            range: r.range.unwrap_or(Range::Screen),
            max_bytes: r.max_bytes,
            ansi: r.ansi,
            join: r.join,
        },
    )?;
    Some(Captured {
        pane_id: g.pane_id,
        target: g.target,
        text: g.text,
        snapshot: g.snapshot,
    })
}

#[cfg(test)]
mod tests {
    use super::CaptureJson;

    /// The text block is the document's own `text`, byte for byte, whatever the text,
    /// target or snapshot hold; without `snapshot` the key is absent (the CLI's shape).
    #[test]
    fn the_text_is_cut_from_the_one_document() {
        for (target, text, snapshot) in [
            ("main:0.0", "plain", Some(None)),
            (
                r#"a,"text":b"#,
                "x\",\"lineCount\":1 \u{7}\n\"é\"",
                Some(Some("tmuxmate://snapshot/s1".to_string())),
            ),
            ("t", "", None),
        ] {
            let j = CaptureJson {
                target: target.into(),
                pane_id: "%1".into(),
                text: text.into(),
                line_count: 1,
                truncated: false,
                snapshot: snapshot.clone(),
            };
            let (doc, at) = j.to_json_with_text();
            let cut = &doc[at.clone().expect("the text is found")];
            assert_eq!(cut, serde_json::to_string(text).unwrap(), "{doc}");
            let v: serde_json::Value = serde_json::from_str(&doc).unwrap();
            assert_eq!(v["text"], text);
            assert_eq!(v["target"], target);
            assert_eq!(v.get("snapshot").is_some(), snapshot.is_some(), "{doc}");
        }
    }
}
