//! Managed session names: `<prefix>-<project>-<branch>`.
//!
//! Owns: finding the project (git top-level, read from `.git` files without running git,
//! else the directory itself) and its branch (`main` when detached), and the reversible
//! encoding of `%`, `.` and `:` (`%25`, `%2E`, `%3A`, in that order: `%` first so the
//! others' escapes are not re-escaped). Invariant: names are only ever produced here.

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

pub fn encode(s: &str) -> String {
    s.replace('%', "%25")
        .replace('.', "%2E")
        .replace(':', "%3A")
}

#[cfg(test)]
pub fn decode(s: &str) -> String {
    s.replace("%3A", ":")
        .replace("%2E", ".")
        .replace("%25", "%")
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
        for s in ["a.b:c%d", "%2E", "plain", "x%3Ay", "v1.2:3%"] {
            let e = encode(s);
            assert!(!e.contains('.') && !e.contains(':'), "{e}");
            assert_eq!(decode(&e), s);
        }
        assert_eq!(encode("a.b"), "a%2Eb");
        assert_eq!(encode("%."), "%25%2E");
    }
}
