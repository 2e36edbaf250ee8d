//! The tmux servers agents have been seen on, so `tmuxmate agents` lists every one.
//!
//! Owns: `<state>/agents/servers/<socket hash>`, one file per server socket, holding its
//! path. Invariants: a file is created exclusively (two hooks at once make one) and
//! written once; reads are bounded and only of regular files; a server whose socket is
//! gone is forgotten by the next listing.

use std::io::Write as _;
use std::path::PathBuf;

use crate::sys::state;

/// A socket path is far shorter (sun_path holds 108 bytes).
const MAX: u64 = 4096;
/// More servers than anyone runs; the rest are not listed.
const MOST: usize = 256;

fn dir() -> PathBuf {
    state::state_dir().join("agents").join("servers")
}

/// Remember `socket` (cheap when it is known: one `stat`).
pub fn remember(socket: &str) {
    let key = &crate::sys::hash::sha256_hex(socket.as_bytes())[..16];
    let path = dir().join(key);
    if path.exists() {
        return;
    }
    let made = state::open_private(
        &path,
        std::fs::OpenOptions::new().write(true).create_new(true),
    )
    .and_then(|mut f| f.write_all(socket.as_bytes()));
    match made {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            state::log(&format!("agents: cannot remember server {socket}: {e}"));
        }
        _ => {}
    }
}

/// Every remembered server whose socket is still there, sorted.
pub fn known() -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten().take(MOST) {
        let p = e.path();
        let Ok((bytes, false)) = crate::sys::files::read_tail(&p, MAX) else {
            continue;
        };
        let socket = String::from_utf8_lossy(&bytes).into_owned();
        use std::os::unix::fs::FileTypeExt;
        match std::fs::metadata(&socket) {
            Ok(m) if m.file_type().is_socket() => out.push(socket),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let _ = std::fs::remove_file(&p);
            }
            _ => {}
        }
    }
    out.sort();
    out
}
