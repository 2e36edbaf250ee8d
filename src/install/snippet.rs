//! The tmux snippet (`tmux.conf.d/tmuxmate.conf`) with this binary's absolute path filled
//! in: what `init tmux` prints and `install tmux` writes.
//!
//! Invariant: the path is inserted inside double quotes with tmux-language escaping, so a
//! path with spaces, `$`, `#` or quotes cannot change the meaning of the snippet.

pub const SNIPPET: &str = include_str!("../../tmux.conf.d/tmuxmate.conf");

/// Escape for the inside of a double-quoted tmux string.
pub fn tmux_quote_inner(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        match c {
            '\\' | '"' | '$' | '~' | '#' => {
                o.push('\\');
                o.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                o.push_str(&format!("\\{:03o}", c as u32))
            }
            c => o.push(c),
        }
    }
    o
}

/// The snippet running this binary (`tmuxmate` when its path cannot be found).
pub fn render_snippet() -> String {
    let bin = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "tmuxmate".into());
    render_snippet_for(&bin)
}

/// The snippet running `bin` (install writes it with the canonical path).
pub fn render_snippet_for(bin: &str) -> String {
    SNIPPET.replace("@TMUXMATE_BIN@", &tmux_quote_inner(bin))
}
