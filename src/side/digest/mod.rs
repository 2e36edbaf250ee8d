//! Live digest of an agent session: harness transcript wire formats, the bounded fold,
//! its rendering, and the per-pane follower that keeps `@tmuxmate-status` current.
//!
//! Layout, one job per file:
//! - `model`: the digest's fields, bounds, and the only operations that change it;
//! - `claude`, `codex`, `dsh`, `events`: one wire format each, line → operations
//!   (`events` documents the generic format other harnesses can write);
//! - `json`: lenient field types shared by the parsers (a wrong type is "absent");
//! - `tools`: one-line summaries of tool calls;
//! - `time`: transcript timestamps in, local wall-clock times out;
//! - `fold`: reading only appended complete lines, format detection, the zstd container,
//!   fresh starts on a replaced or truncated file;
//! - `render`: the single text rendering and the status line;
//! - `follower`: `ensure_follower`, the follower loop, its lock, cache and pushes;
//! - `glance`: the status, checklist progress and usage of a pane, a file its follower
//!   keeps for views of many agents.
//!
//! Invariants (the module's contract): the digest is bounded whatever the transcript
//! holds; nothing in it changes merely because time passed; a transcript's bad or unknown
//! lines are skipped, never fatal; one render function serves people, side agents and the
//! status line.

pub mod claude;
pub mod codex;
pub mod dsh;
pub mod events;
pub mod fold;
pub mod follower;
pub mod glance;
pub mod json;
pub mod model;
pub mod pane;
pub mod render;
pub mod show;
pub mod tools;

pub use fold::{Fold, Format};
pub use follower::ensure_follower;
pub use model::{DEFAULT_TURNS, MAX_TURNS, MIN_TURNS};

/// The digest directory: each pane's follower lock, cache and request, and its glance
/// (here, not in `follower`, so that `glance`, which the follower writes, need not
/// import the follower back).
pub fn dir() -> std::path::PathBuf {
    crate::sys::state::state_dir().join("digest")
}

/// `@tmuxmate-digest-turns` (or `--turns`): finished turns to show, 4-60, default 12.
pub fn turns_limit(v: Option<&str>) -> Result<usize, String> {
    let Some(s) = v.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(DEFAULT_TURNS);
    };
    match s.parse::<usize>() {
        Ok(n) if (MIN_TURNS..=MAX_TURNS).contains(&n) => Ok(n),
        _ => Err(format!(
            "{s:?} is not a number of turns from {MIN_TURNS} to {MAX_TURNS}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_limit_bounds() {
        assert_eq!(turns_limit(None), Ok(12));
        assert_eq!(turns_limit(Some("")), Ok(12));
        assert_eq!(turns_limit(Some("4")), Ok(4));
        assert_eq!(turns_limit(Some("60")), Ok(60));
        assert!(turns_limit(Some("3")).is_err());
        assert!(turns_limit(Some("61")).is_err());
        assert!(turns_limit(Some("x")).is_err());
    }
}
