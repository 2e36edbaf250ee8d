//! Recognising tmuxmate's own entries in harness configs, and quoting our command line.
//!
//! Invariant: an entry is ours when its command's program is a file named `tmuxmate`
//! (any directory) and its subcommand is `hook` (or `mcp` for servers), whatever the
//! timeout, flags or quoting around it: Codex copies and rewrites Claude's hooks, and a
//! user may have wired `tmuxmate hook claude` by hand, so exact text is no marker.

use std::path::Path;

/// Split a shell command line into words (quotes and backslashes; no expansion).
pub fn shell_words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') => quote = None,
            (Some('"'), '"') => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
                in_word = true;
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// A command line of ours, taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ours {
    /// The program as written (absolute path when install wrote it).
    pub program: String,
    /// `hook` or `mcp`.
    pub sub: String,
    /// The harness named after `hook` (may be a typo such as `cluade`: still ours).
    pub harness: Option<String>,
}

fn is_tmuxmate_program(p: &str) -> bool {
    Path::new(p).file_name().and_then(|n| n.to_str()) == Some("tmuxmate")
}

/// Parse argv (program first) as a tmuxmate command; global flags may precede the verb.
pub fn parse_argv(argv: &[String]) -> Option<Ours> {
    // `env VAR=x tmuxmate …` and `exec tmuxmate …` are still ours.
    let mut i = 0;
    while i < argv.len()
        && (argv[i] == "env"
            || argv[i] == "exec"
            || argv[i].contains('=') && !argv[i].starts_with('-'))
    {
        i += 1;
    }
    let program = argv.get(i)?;
    if !is_tmuxmate_program(program) {
        return None;
    }
    let mut j = i + 1;
    while j < argv.len() {
        match argv[j].as_str() {
            "-L" | "-S" | "--socket" | "--socket-path" => j += 2,
            a if a.starts_with('-') => j += 1,
            a => {
                return Some(Ours {
                    program: program.clone(),
                    sub: a.to_string(),
                    harness: argv.get(j + 1).cloned(),
                });
            }
        }
    }
    None
}

/// A shell command string of ours, with subcommand `sub`.
pub fn ours_in_command(cmd: &str, sub: &str) -> Option<Ours> {
    parse_argv(&shell_words(cmd)).filter(|o| o.sub == sub)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_our_hook_commands() {
        let o = ours_in_command("/usr/local/bin/tmuxmate hook claude", "hook").unwrap();
        assert_eq!(o.harness.as_deref(), Some("claude"));
        assert!(ours_in_command("'/home/a b/tmuxmate' -L work hook codex", "hook").is_some());
        assert!(ours_in_command("tmuxmate hook cluade", "hook").is_some());
        assert!(ours_in_command("env FOO=1 tmuxmate hook gemini", "hook").is_some());
        assert!(ours_in_command("/bin/mytmuxmate hook claude", "hook").is_none());
        assert!(ours_in_command("python3 hook_logger.py", "hook").is_none());
        assert!(ours_in_command("tmuxmate mcp", "hook").is_none());
    }

    #[test]
    fn reads_back_what_install_writes() {
        for bin in ["/usr/bin/tmuxmate", "/home/a b/it's", "/x/$HOME/t", "=t"] {
            let q = crate::sys::shell::readable(bin);
            assert_eq!(shell_words(&q), vec![bin.to_string()]);
        }
    }
}
