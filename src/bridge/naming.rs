//! Managed session names: `<prefix>-<project>-<branch>`.
//!
//! Owns: finding the project (git top-level, read from `.git` files without running git,
//! else the directory itself) and its branch (`main` when detached), and the reversible
//! percent-encoding of what tmux would rewrite in a session name (`%`, `.`, `:`, `$`,
//! backslash, control characters). Invariant: names are only ever produced here, and tmux
//! stores each exactly as produced (`create::new_session` checks it).

use std::path::{Path, PathBuf};

pub struct Project {
    pub root: PathBuf,
    pub branch: String,
}

fn git_dir(dir: &Path) -> Option<PathBuf> {
    let dotgit = dir.join(".git");
    if dotgit.is_dir() {
        return Some(dotgit);
    }
    // A worktree or submodule: `.git` is a file `gitdir: <path>`.
    let text = std::fs::read_to_string(&dotgit).ok()?;
    let p = text.strip_prefix("gitdir:")?.trim();
    let p = Path::new(p);
    Some(if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    })
}

/// The project containing `dir`: the nearest ancestor with `.git`, else `dir` itself.
pub fn project(dir: &Path) -> std::io::Result<Project> {
    let dir = std::fs::canonicalize(dir)?;
    let mut cur: Option<&Path> = Some(&dir);
    while let Some(d) = cur {
        if let Some(g) = git_dir(d) {
            let head = std::fs::read_to_string(g.join("HEAD")).unwrap_or_default();
            let branch = head
                .trim()
                .strip_prefix("ref: refs/heads/")
                .unwrap_or("main")
                .to_string();
            return Ok(Project {
                root: d.to_path_buf(),
                branch,
            });
        }
        cur = d.parent();
    }
    Ok(Project {
        root: dir,
        branch: "main".into(),
    })
}

/// Percent-encode what tmux would not keep in a session name: `.` and `:` (it turns
/// them into `_`), `$` and backslash (tmux 3.3a stores them escaped with a backslash),
/// control characters; and `%` itself, so the encoding stays reversible.
pub fn encode(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' | '.' | ':' | '$' | '\\' => o.push_str(&format!("%{:02X}", c as u32)),
            c if c.is_control() => {
                let mut b = [0u8; 4];
                for byte in c.encode_utf8(&mut b).bytes() {
                    o.push_str(&format!("%{byte:02X}"));
                }
            }
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
pub fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 3 <= b.len()
            && let Ok(h) = std::str::from_utf8(&b[i + 1..i + 3])
            && let Ok(v) = u8::from_str_radix(h, 16)
        {
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn name(prefix: &str, p: &Project) -> String {
    let base = p
        .root
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into());
    encode(&format!("{prefix}-{base}-{}", p.branch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for s in [
            "a.b:c%d", "%2E", "plain", "x%3Ay", "v1.2:3%", "a$b\\c", "x${IFS}y",
        ] {
            let e = encode(s);
            assert!(!e.contains('.') && !e.contains(':'), "{e}");
            assert_eq!(decode(&e), s);
        }
        assert_eq!(encode("a.b"), "a%2Eb");
        assert_eq!(encode("%."), "%25%2E");
    }
}
