//! What `kill` kills: the scope the CLI's positional argument and MCP's `scope` name.
//!
//! Owns the [`KillScope`] enum (its clap derive gives the CLI its values and help, as the
//! `Harness` enum does). Invariant: `Server` takes no target; the others name the pane,
//! window or session holding the pane a target resolves to.

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum KillScope {
    /// The pane -t names.
    Pane,
    /// The window holding the pane -t names.
    Window,
    /// The session holding the pane -t names.
    Session,
    /// The whole tmux server -L/-S select (takes no -t).
    Server,
}
