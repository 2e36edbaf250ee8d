//! What `run` in a new pane asks of the server before it creates anything, in one round
//! trip: the two global options a session creation needs (`history-limit`,
//! `window-size`), the options of ours the run reads (`@tmuxmate-history-limit`, the
//! capture budget, `@tmuxmate-snapshots`) and the sessions (is there a `tmuxmate` one).
//! Asked one by one they were four round trips, each about 5 ms of a big server's time
//! (its per-connection cost: tmux 3.3a scans its fds and polls every pane per client).
//!
//! Invariants: the answer is exactly what the separate questions would give for the
//! values that matter (a `show-options -gq NAME` line names its option, so an unset one,
//! which prints nothing, is never mistaken for the next; sessions come last, in the
//! length-prefixed record format); any surprise gives `None`, and the caller asks the
//! separate questions as before.

use crate::targs;
use crate::tmux::format::{parse_records, record_format};
use crate::tmux::{Arg, Tmux};

pub struct Facts {
    /// The global `history-limit` (digits) and `window-size`.
    pub history_limit: String,
    pub window_size: String,
    /// `(name, value)` of each asked option that is set (as `show-options -gqv` would
    /// print it, for the values of ours: numbers and words).
    options: Vec<(String, String)>,
    /// `(session id, name)` of every session.
    sessions: Vec<(String, String)>,
}

impl Facts {
    /// One command list; `None` when there is no server or the answer does not read.
    pub fn ask(tmux: &Tmux, options: &[&'static str]) -> Option<Facts> {
        let fmt = record_format(&["session_id", "session_name"]);
        let mut args: Vec<Arg> = targs![
            "show-options",
            "-gv",
            "history-limit",
            Arg::SEP,
            "show-options",
            "-gv",
            "window-size",
            Arg::SEP
        ]
        .into();
        for o in options {
            args.extend(targs!["show-options", "-gq", *o, Arg::SEP]);
        }
        args.extend(targs!["list-sessions", "-F", Arg::ours(&fmt)]);
        let out = tmux.run_bytes(&args, None).ok()?;
        parse(&out, options)
    }

    /// The option's value as `show-options -gqv` prints it (empty when unset).
    pub fn option(&self, name: &str) -> &str {
        self.options
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.as_str())
    }

    /// The id of the session named exactly `name`.
    pub fn session_by_name(&self, name: &str) -> Option<&str> {
        self.sessions
            .iter()
            .find(|(_, n)| n == name)
            .map(|(id, _)| id.as_str())
    }
}

fn parse(out: &[u8], options: &[&str]) -> Option<Facts> {
    fn line<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
        let i = rest.iter().position(|&b| b == b'\n')?;
        let (l, r) = rest.split_at(i);
        *rest = &r[1..];
        Some(l)
    }
    let mut rest = out;
    let text = |b: &[u8]| std::str::from_utf8(b).ok().map(str::to_string);
    let history_limit = text(line(&mut rest)?)?;
    let window_size = text(line(&mut rest)?)?;
    if history_limit.is_empty() || !history_limit.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // The option lines, in the order asked, each at most once; then the sessions.
    let mut found = Vec::new();
    for o in options {
        let prefix = format!("{o} ");
        if rest.starts_with(prefix.as_bytes()) {
            let l = text(line(&mut rest)?)?;
            let v = l[prefix.len()..].to_string();
            // A value tmux had to quote is not one of ours: ask separately.
            if v.starts_with('"') || v.starts_with('\'') || v.contains('\\') {
                return None;
            }
            found.push((o.to_string(), v));
        }
    }
    let sessions = parse_records(rest, 2)
        .ok()?
        .into_iter()
        .map(|mut r| {
            let name = r.pop().unwrap_or_default();
            (r.pop().unwrap_or_default(), name)
        })
        .collect();
    Some(Facts {
        history_limit,
        window_size,
        options: found,
        sessions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_options_are_not_mistaken_for_the_next() {
        let out = b"2000\nlatest\n@b 5\n=$0|4:main\n=$3|8:tmuxmate\n";
        let f = parse(out, &["@a", "@b", "@c"]).unwrap();
        assert_eq!(
            (f.history_limit.as_str(), f.window_size.as_str()),
            ("2000", "latest")
        );
        assert_eq!(
            (f.option("@a"), f.option("@b"), f.option("@c")),
            ("", "5", "")
        );
        assert_eq!(f.session_by_name("tmuxmate"), Some("$3"));
        assert_eq!(f.session_by_name("main"), Some("$0"));
        // A session name cannot pose as an option line: sessions are records, after them.
        let f = parse(b"2000\nlatest\n=$0|9:@a 1\nmain\n", &["@a"]).unwrap();
        assert_eq!(f.option("@a"), "");
        assert_eq!(f.session_by_name("@a 1\nmain"), Some("$0"));
        // Quoted values, and unreadable answers, are refused (the caller asks separately).
        assert!(parse(b"2000\nlatest\n@a \"x y\"\n", &["@a"]).is_none());
        assert!(parse(b"x\nlatest\n", &[]).is_none());
        assert!(parse(b"2000\n", &[]).is_none());
    }
}
