//! `tmuxmate agents` (the listing) as an operation that also runs on another host: its
//! request, its answer (the `agents --json` document, docs/json.md#agent-state) and the
//! text a person reads of it, so the listing of a host prints here as it does there.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::list;
use super::row::Row;
use crate::error::Error;
use crate::op::Operation;
use crate::tmux::Tmux;

// `tmuxmate agents` (the listing).
#[derive(Serialize, Deserialize, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Agents {}

impl Agents {
    /// `chosen`: `-L`/`-S` named the server (else every server agents were seen on).
    pub fn run(&self, tmux: &Tmux, chosen: bool) -> Result<Value, Error> {
        Ok(list::listing(tmux, chosen).map_err(Error::from)?.document())
    }
}

impl Operation for Agents {
    const NAME: &'static str = "agents";
    type Answer = Value;
}

/// The text of a listing document: one line an agent, and a line for each host that was
/// not reached (for stderr).
pub fn text(doc: &Value, now_ms: u64) -> (String, Vec<String>) {
    let rows: Vec<Row> = doc["agents"]
        .as_array()
        .map(|a| a.iter().filter_map(Row::from_json).collect())
        .unwrap_or_default();
    let unreached = doc["unreachedHosts"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|u| {
                    let s = |k: &str| crate::sys::printable::visible(u[k].as_str().unwrap_or("")).0;
                    format!("host {} not reached: {}", s("host"), s("why"))
                })
                .collect()
        })
        .unwrap_or_default();
    (list::text(&rows, now_ms), unreached)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_document_reads_back_as_its_rows() {
        let rows = vec![Row {
            pane_id: "%3".into(),
            target: "w:1.0".into(),
            harness: "claude".into(),
            state: "needs-you",
            since_ms: 1_000,
            why: "permission: Bash: make".into(),
            socket: "/tmp/s".into(),
            host: "box".into(),
        }];
        let doc = list::Listing {
            rows: rows.clone(),
            unreached: vec![super::super::hosts::Unreached {
                host: "gone".into(),
                why: "ssh: timeout".into(),
            }],
        }
        .document();
        let (text, unreached) = text(&doc, 61_000);
        assert_eq!(text, list::text(&rows, 61_000));
        assert_eq!(unreached, ["host gone not reached: ssh: timeout"]);
    }
}
