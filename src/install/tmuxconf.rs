//! The user's tmux.conf: one marked `source-file` line for the snippet, or nothing when
//! TPM loads tmuxmate (`set -g @plugin '…/tmuxmate'`, whose `tmuxmate.tmux` sources it).
//!
//! Invariant: our lines are the marker comment and the line right after it; nothing
//! else in the file is touched.

pub const MARKER: &str = "# tmuxmate: added by `tmuxmate install` (undo: `tmuxmate uninstall`)";

/// True when a TPM plugin line names tmuxmate.
pub fn loaded_by_tpm(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        !l.starts_with('#') && l.contains("@plugin") && l.contains("tmuxmate")
    })
}

pub fn source_line(snippet: &std::path::Path) -> String {
    format!(
        "source-file \"{}\"",
        crate::install::snippet::tmux_quote_inner(&snippet.to_string_lossy())
    )
}

/// The text without our two lines (and whether there were any).
pub fn remove(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split_inclusive('\n');
    let mut found = false;
    while let Some(l) = lines.next() {
        if l.trim_end_matches('\n') == MARKER {
            found = true;
            // The line after the marker is ours only if it sources a snippet.
            if let Some(next) = lines.next()
                && !next.trim_start().starts_with("source-file")
            {
                out.push_str(next);
            }
            continue;
        }
        out.push_str(l);
    }
    (out, found)
}

/// The text with exactly one marked source line for `snippet` (None: already so).
pub fn install(text: Option<&str>, snippet: &std::path::Path) -> Option<String> {
    let cur = text.unwrap_or("");
    let line = source_line(snippet);
    let (without, found) = remove(cur);
    if loaded_by_tpm(&without) {
        return found.then_some(without);
    }
    let wanted_tail = format!("{MARKER}\n{line}\n");
    if found && cur.contains(&wanted_tail) && cur.matches(MARKER).count() == 1 {
        return None;
    }
    let mut out = without;
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&wanted_tail);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn appends_once_and_removes_exactly() {
        let user = "set -g mouse on\n# my comment\n";
        let snip = Path::new("/h/.config/tmux/tmuxmate.conf");
        let a = install(Some(user), snip).unwrap();
        assert!(a.starts_with(user));
        assert!(install(Some(&a), snip).is_none());
        assert_eq!(remove(&a).0, user);
        assert!(install(Some("set -g @plugin 'me/tmuxmate'\n"), snip).is_none());
    }
}
