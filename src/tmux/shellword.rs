//! Quoting words for the remote shell that `ssh` hands its command line to.
//!
//! Owns: turning one argv word into text that a POSIX shell (sh, dash, bash, zsh, ksh)
//! reads back as exactly that word, and joining words into the one line `ssh` sends.
//! Why a module of its own: ssh does not pass argv - it joins its arguments with spaces
//! and the remote login shell parses the result (`$SHELL -c LINE`), so every word of a
//! remote tmux call passes through a shell. Invariants: every word is quoted, always,
//! even when it looks harmless (no "safe characters" shortcut: zsh expands an unquoted
//! `=word` to a path, `~` and `{a,b}` expand in some shells, and a shortcut is one more
//! table to get wrong); inside single quotes nothing is special in a POSIX shell except
//! `'` itself, written `'\''`. Newlines, `;`, `#`, `$`, backquotes, `!` (bash's history
//! expansion is off for `-c`) and invalid UTF-8 survive. Not for fish or csh login
//! shells (their single quotes treat `\` or `!` specially): README says the remote
//! account needs a POSIX login shell.

/// One word, single-quoted.
pub fn quote(word: &str) -> String {
    let mut s = String::with_capacity(word.len() + 2);
    s.push('\'');
    for c in word.chars() {
        if c == '\'' {
            s.push_str("'\\''");
        } else {
            s.push(c);
        }
    }
    s.push('\'');
    s
}

/// Words as one remote shell line, each quoted.
pub fn join<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `sh -c 'printf "%s\0" LINE'` gives back for the quoted words.
    fn through_sh(words: &[&str]) -> Vec<String> {
        #[allow(clippy::disallowed_methods)] // a test checks the quoting with a real shell
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("printf '%s\\0' {}", join(words)))
            .output()
            .expect("sh");
        assert!(out.status.success());
        let mut v: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .split('\0')
            .map(String::from)
            .collect();
        v.pop();
        v
    }

    #[test]
    fn every_word_comes_back_exactly() {
        let words = [
            "",
            "plain",
            "=word",
            "~",
            "{a,b}",
            "it's",
            "''",
            "'",
            "a\nb",
            "x;",
            "$(touch NEVER)",
            "`touch NEVER`",
            "#{pane_id}",
            "!!",
            "\\",
            "\\'",
            " spaced  out ",
            "日本語 🚀",
            "-leading",
            "*",
        ];
        assert_eq!(through_sh(&words), words);
        assert_eq!(quote("=x"), "'=x'");
        assert_eq!(quote("a'b"), "'a'\\''b'");
    }
}
