//! What of our environment a tmux server we start may keep: one list, for the tmux
//! client that starts a server and for a new session made over the socket (`direct`),
//! which both hand the server an environment. Invariant: never tokens or keys.

/// What a client that may start a server keeps of our environment: what a terminal
/// session needs (locale, terminal, paths, the display and agent sockets tmux itself
/// refreshes through `update-environment`) and our own settings; never tokens or keys.
pub fn server_env_allowed(name: &str) -> bool {
    const KEEP: &[&str] = &[
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "TERM",
        "COLORTERM",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "TMUX",
        "TMUX_PANE",
        "TMUX_TMPDIR",
        "XDG_RUNTIME_DIR",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "XAUTHORITY",
        "SSH_AUTH_SOCK",
        "SSH_AGENT_PID",
        "SSH_CONNECTION",
        "SSH_ASKPASS",
        "KRB5CCNAME",
        "WINDOWID",
    ];
    KEEP.contains(&name) || name.starts_with("LC_") || name.starts_with("TMUXMATE_")
}
