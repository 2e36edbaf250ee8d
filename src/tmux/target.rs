//! Target validation and exact resolution.
//!
//! Owns: the accepted target grammar (`%N`, `@N`, `$N`, `=name`, `session:window.pane` of
//! safe characters) and resolving it to one pane id against a snapshot. Invariant: a
//! target string from a user or model is never handed to tmux's own `-t` matching (which
//! prefix-matches and treats empty as "current"); it is resolved here, exactly, and only the
//! resulting `%N` id reaches tmux. Ambiguity and absence are errors.

use super::panes::PaneInfo;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Pane(u32),
    Window(u32),
    Session(u32),
    /// `=name`: a session by exact name.
    ExactSession(String),
    /// `session[:window[.pane]]` with safe characters only.
    Path {
        session: String,
        window: Option<String>,
        pane: Option<u32>,
    },
}

fn safe(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
}

fn id(s: &str, sigil: char) -> Option<u32> {
    let rest = s.strip_prefix(sigil)?;
    if rest.is_empty() || !rest.bytes().all(|c| c.is_ascii_digit()) || rest.len() > 9 {
        return None;
    }
    rest.parse().ok()
}

const GRAMMAR: &str = "use a pane id like %3, a window id @2, a session id $1, an exact session name =work, or session:window.pane made of letters, digits, '_' and '-' (run `tmuxmate list`)";

impl Target {
    pub fn parse(s: &str) -> Result<Target, String> {
        if s.is_empty() {
            return Err(format!("empty target: {GRAMMAR}"));
        }
        if let Some(n) = id(s, '%') {
            return Ok(Target::Pane(n));
        }
        if let Some(n) = id(s, '@') {
            return Ok(Target::Window(n));
        }
        if let Some(n) = id(s, '$') {
            return Ok(Target::Session(n));
        }
        if let Some(name) = s.strip_prefix('=') {
            if name.is_empty() || name.chars().any(|c| c.is_control()) {
                return Err(format!("invalid target {s:?}: {GRAMMAR}"));
            }
            return Ok(Target::ExactSession(name.to_string()));
        }
        let (session, rest) = match s.split_once(':') {
            Some((a, b)) => (a, Some(b)),
            None => (s, None),
        };
        let (window, pane) = match rest {
            None => (None, None),
            Some(r) => match r.split_once('.') {
                Some((w, p)) => (Some(w), Some(p)),
                None => (Some(r), None),
            },
        };
        let ok = safe(session)
            && window.is_none_or(safe)
            && pane.is_none_or(|p| {
                !p.is_empty() && p.len() < 10 && p.bytes().all(|c| c.is_ascii_digit())
            });
        if !ok {
            return Err(format!("invalid target {s:?}: {GRAMMAR}"));
        }
        Ok(Target::Path {
            session: session.to_string(),
            window: window.map(str::to_string),
            pane: pane.map(|p| p.parse().unwrap_or(u32::MAX)),
        })
    }

    /// Resolve to exactly one pane of the snapshot.
    pub fn resolve<'a>(&self, panes: &'a [PaneInfo], shown: &str) -> Result<&'a PaneInfo, String> {
        let missing = || {
            format!(
                "target {shown} does not exist on this tmux server (run `tmuxmate list` for the panes)"
            )
        };
        match self {
            Target::Pane(n) => {
                let want = format!("%{n}");
                panes.iter().find(|p| p.pane_id == want).ok_or_else(missing)
            }
            Target::Window(n) => {
                let want = format!("@{n}");
                active_in(panes.iter().filter(|p| p.window_id == want)).ok_or_else(missing)
            }
            Target::Session(n) => {
                let want = format!("${n}");
                let sess: Vec<_> = panes.iter().filter(|p| p.session_id == want).collect();
                active_window(&sess).ok_or_else(missing)
            }
            Target::ExactSession(name) => {
                let sess: Vec<_> = panes.iter().filter(|p| &p.session_name == name).collect();
                active_window(&sess).ok_or_else(missing)
            }
            Target::Path {
                session,
                window,
                pane,
            } => {
                let sess: Vec<_> = panes
                    .iter()
                    .filter(|p| &p.session_name == session)
                    .collect();
                if sess.is_empty() {
                    return Err(missing());
                }
                let Some(w) = window else {
                    return active_window(&sess).ok_or_else(missing);
                };
                let by_index: Vec<_> = sess
                    .iter()
                    .filter(|p| &p.window_index == w)
                    .copied()
                    .collect();
                let wins: Vec<&PaneInfo> = if !by_index.is_empty() {
                    by_index
                } else {
                    let named: Vec<_> = sess
                        .iter()
                        .filter(|p| &p.window_name == w)
                        .copied()
                        .collect();
                    let mut ids: Vec<_> = named.iter().map(|p| p.window_id.as_str()).collect();
                    ids.sort();
                    ids.dedup();
                    if ids.len() > 1 {
                        return Err(format!(
                            "target {shown} is ambiguous: {} windows in session {session} are named {w:?} ({}); use a window id",
                            ids.len(),
                            ids.join(", ")
                        ));
                    }
                    named
                };
                if wins.is_empty() {
                    return Err(missing());
                }
                match pane {
                    None => active_in(wins.into_iter()).ok_or_else(missing),
                    Some(n) => {
                        let n = n.to_string();
                        wins.into_iter()
                            .find(|p| p.pane_index == n)
                            .ok_or_else(missing)
                    }
                }
            }
        }
    }
}

fn active_in<'a>(mut it: impl Iterator<Item = &'a PaneInfo>) -> Option<&'a PaneInfo> {
    let all: Vec<_> = it.by_ref().collect();
    all.iter().find(|p| p.pane_active).or(all.first()).copied()
}

fn active_window<'a>(sess: &[&'a PaneInfo]) -> Option<&'a PaneInfo> {
    let win: Vec<_> = sess.iter().filter(|p| p.window_active).copied().collect();
    let pool = if win.is_empty() { sess.to_vec() } else { win };
    active_in(pool.into_iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar() {
        assert_eq!(Target::parse("%12"), Ok(Target::Pane(12)));
        assert_eq!(Target::parse("@3"), Ok(Target::Window(3)));
        assert_eq!(Target::parse("$0"), Ok(Target::Session(0)));
        assert!(Target::parse("=my proj").is_ok());
        assert!(Target::parse("work:1.2").is_ok());
        assert!(Target::parse("work:api").is_ok());
        for bad in [
            "",
            "codex;echo x",
            "../x",
            "%",
            "%1a",
            "a:b.c",
            "a b",
            "-t",
            ":1",
            "a:",
            "a:1.",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad} accepted");
        }
    }
}
