//! Quoting words for a POSIX shell: the one quoter of the binary.
//!
//! Owns: turning one argv word into text that a POSIX shell (sh, dash, bash, zsh, ksh)
//! reads back as exactly that word, and joining words into one line. Used for the remote
//! shell `ssh` hands its command line to (ssh joins its arguments with spaces and the
//! remote login shell parses them), the scripts tmux runs for us, the hook commands we
//! write into harness configs, and the commands we print as hints.
//! Invariants: [`quote`] quotes every word, always (no "safe characters" shortcut where a
//! program reads the line); [`readable`] leaves a word bare only when it is made of
//! characters no POSIX shell treats specially and does not start with `=` (zsh expands an
//! unquoted `=word` to a path) or `~`; inside single quotes nothing is special except `'`
//! itself, written `'\''`. Newlines, `;`, `#`, `$`, backquotes, `!` (bash's history
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

/// A word for a line a person reads (hints, config entries): bare when that is safe.
pub fn readable(word: &str) -> String {
    let bare = !word.is_empty()
        && !word.starts_with('=')
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if bare { word.to_string() } else { quote(word) }
}

/// Words as one line, each [`readable`].
pub fn join_readable<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| readable(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Words as one shell line, each quoted.
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
        through_sh_line(&join(words))
    }

    fn through_sh_line(line: &str) -> Vec<String> {
        let mut cmd = crate::sys::process::command("/bin/sh");
        cmd.arg("-c").arg(format!("printf '%s\\0' {line}"));
        let out =
            crate::sys::process::run(cmd, None, std::time::Duration::from_secs(10)).expect("sh");
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
        let line = join_readable(&words);
        let back = through_sh_line(&line);
        assert_eq!(back, words);
        assert_eq!(quote("=x"), "'=x'");
        assert_eq!(quote("a'b"), "'a'\\''b'");
        assert_eq!(readable("/usr/bin/tmuxmate"), "/usr/bin/tmuxmate");
        assert_eq!(readable("a=b"), "a=b");
        assert_eq!(readable("=x"), "'=x'");
        assert_eq!(readable("~"), "'~'");
        assert_eq!(readable(""), "''");
    }
}
