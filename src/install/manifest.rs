//! What install wrote, so uninstall can put a file back byte for byte.
//!
//! Owns `<state dir>/install/`: `manifest.json` (per file: whether it existed, where its
//! pre-install copy is, where a copy of what we last wrote is, and the directories our
//! first write created) plus those copies. Invariants: the backup is taken once, before the
//! first change; a file changed by someone else since our last write is no longer
//! "restorable" (uninstall then removes our entries instead of restoring the backup).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::fsio;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub existed: bool,
    #[serde(default)]
    pub backup: Option<PathBuf>,
    pub written: PathBuf,
    pub restorable: bool,
    #[serde(default)]
    pub created_dirs: Vec<PathBuf>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Manifest {
    #[serde(default)]
    pub files: BTreeMap<PathBuf, Entry>,
    #[serde(skip)]
    dir: PathBuf,
}

pub fn dir() -> PathBuf {
    crate::sys::state::state_dir().join("install")
}

impl Manifest {
    /// The manifest, empty when there is none. A manifest that cannot be read is an
    /// error, never an empty one: taking it as empty would forget what the originals were.
    pub fn load() -> Result<Manifest, String> {
        let dir = dir();
        let path = dir.join("manifest.json");
        let mut m: Manifest = match super::fsio::read_text(&path)? {
            None => Manifest::default(),
            Some(t) => serde_json::from_str(&t).map_err(|e| {
                format!(
                    "the install manifest {} is damaged ({e}): it records what install \
                     changed; restore it from a copy, or move it away to start afresh \
                     (uninstall then removes only tmuxmate's own entries)",
                    path.display()
                )
            })?,
        };
        m.dir = dir;
        Ok(m)
    }

    /// Hold the install lock (`<state dir>/install.lock`, beside the directory that
    /// uninstall removes) while a plan is applied: two installs at once each load, change
    /// and save the manifest.
    pub fn lock() -> Result<nix::fcntl::Flock<std::fs::File>, String> {
        let p = crate::sys::state::state_dir().join("install.lock");
        let f = crate::sys::state::open_private(
            &p,
            std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true),
        )
        .map_err(|e| format!("cannot open the install lock {}: {e}", p.display()))?;
        nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| format!("cannot take the install lock {}: {e}", p.display()))
    }

    fn save(&self) -> Result<(), String> {
        if self.files.is_empty() {
            let _ = std::fs::remove_file(self.dir.join("manifest.json"));
            let _ = std::fs::remove_dir(self.dir.join("backup"));
            let _ = std::fs::remove_dir(self.dir.join("written"));
            let _ = std::fs::remove_dir(&self.dir);
            return Ok(());
        }
        let text = serde_json::to_string_pretty(self).expect("manifest serializes");
        fsio::write_atomic(&self.dir.join("manifest.json"), text.as_bytes(), 0o600)
    }

    fn slot(&self, sub: &str, path: &Path) -> PathBuf {
        // One flat directory; the name keeps the path readable, and a digest of the whole
        // path keeps it unique (`/p/x_y` and `/p/x/y` read the same once flattened).
        let digest = crate::sys::hash::sha256_hex(path.as_os_str().as_encoded_bytes());
        let mut name: String = path
            .to_string_lossy()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        name.push('-');
        name.push_str(&digest[..16]);
        self.dir.join(sub).join(name)
    }

    /// Before our write of `path` (whose current text is `before`).
    pub fn before_write(&mut self, path: &Path, before: Option<&str>) -> Result<(), String> {
        if let Some(e) = self.files.get_mut(path) {
            let last = fsio::read_text(&e.written).ok().flatten();
            if last.as_deref() != before {
                e.restorable = false;
            }
            return Ok(());
        }
        let backup = match before {
            Some(text) => {
                let b = self.slot("backup", path);
                fsio::write_atomic(&b, text.as_bytes(), 0o600)?;
                Some(b)
            }
            None => None,
        };
        let created_dirs = path.parent().map(fsio::missing_dirs).unwrap_or_default();
        self.files.insert(
            path.to_path_buf(),
            Entry {
                existed: before.is_some(),
                backup,
                written: self.slot("written", path),
                restorable: true,
                created_dirs,
            },
        );
        Ok(())
    }

    /// After our write of `path` with `text`.
    pub fn after_write(&mut self, path: &Path, text: &str) -> Result<(), String> {
        if let Some(e) = self.files.get(path) {
            fsio::write_atomic(&e.written, text.as_bytes(), 0o600)?;
        }
        self.save()
    }

    /// What uninstall should leave at `path` when nothing else changed it: `Some(Some(t))`
    /// = restore `t`, `Some(None)` = delete, `None` = not known (remove our entries).
    pub fn restore_for(&self, path: &Path, current: &str) -> Option<Option<String>> {
        let e = self.files.get(path)?;
        if !e.restorable || fsio::read_text(&e.written).ok().flatten().as_deref() != Some(current) {
            return None;
        }
        if !e.existed {
            return Some(None);
        }
        let b = fsio::read_text(e.backup.as_ref()?).ok().flatten()?;
        Some(Some(b))
    }

    pub fn existed(&self, path: &Path) -> Option<bool> {
        self.files.get(path).map(|e| e.existed)
    }

    /// Forget `path` (uninstall done with it); returns the directories our write created.
    pub fn forget(&mut self, path: &Path) -> Result<Vec<PathBuf>, String> {
        let Some(e) = self.files.remove(path) else {
            return Ok(Vec::new());
        };
        let _ = std::fs::remove_file(&e.written);
        if let Some(b) = &e.backup {
            let _ = std::fs::remove_file(b);
        }
        self.save()?;
        Ok(e.created_dirs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_flatten_alike_get_their_own_copies() {
        let m = Manifest {
            dir: PathBuf::from("/s/install"),
            ..Manifest::default()
        };
        let a = m.slot("backup", Path::new("/p/x_y"));
        let b = m.slot("backup", Path::new("/p/x/y"));
        assert_ne!(a, b);
        assert!(a.starts_with("/s/install/backup"), "{}", a.display());
        assert!(
            a.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("_p_x_y-"),
            "{}",
            a.display()
        );
        assert_eq!(a, m.slot("backup", Path::new("/p/x_y")), "stable");
    }
}
