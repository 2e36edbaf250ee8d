//! Finding a program the way a shell would: the one `PATH` lookup of the binary.
//!
//! Invariants: a name with a `/` is taken as a path (relative to the working directory,
//! as execve takes it, and returned absolute), never searched; a candidate counts only if it is a regular file
//! (after symlinks) with an execute bit, so a directory or a data file of that name on an
//! earlier `PATH` entry is skipped as the shell skips it.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The file `program` names: itself when it holds a `/`, else the first runnable entry
/// of `$PATH`.
pub fn which(program: &str) -> Option<PathBuf> {
    which_in(program, std::env::var_os("PATH").as_deref())
}

/// [`which`] against a given `PATH` value (the side agent runs with ours in front).
pub fn which_in(program: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        // Absolute, so a caller that starts it from another directory starts the same file.
        let p = std::path::absolute(program).ok()?;
        return runnable(&p).then_some(p);
    }
    std::env::split_paths(path?)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(program))
        .find(|p| runnable(p))
}

/// A regular file (after symlinks) that someone may execute.
pub fn runnable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_directories_and_data_files_of_that_name() {
        let d = std::env::temp_dir().join(format!("tmuxmate-which-{}", std::process::id()));
        let (a, b, c) = (d.join("a"), d.join("b"), d.join("c"));
        for x in [&a, &b, &c] {
            std::fs::create_dir_all(x).unwrap();
        }
        std::fs::create_dir_all(a.join("prog")).unwrap();
        std::fs::write(b.join("prog"), "data").unwrap();
        std::fs::write(c.join("prog"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(c.join("prog"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([&a, &b, &c]).unwrap();
        assert_eq!(which_in("prog", Some(&path)), Some(c.join("prog")));
        assert_eq!(which_in("nothing", Some(&path)), None);
        assert_eq!(which_in("", Some(&path)), None);
        let direct = c.join("prog");
        assert_eq!(
            which_in(direct.to_str().unwrap(), None),
            Some(direct.clone())
        );
        assert_eq!(which_in(b.join("prog").to_str().unwrap(), None), None);
        let _ = std::fs::remove_dir_all(&d);
    }
}
