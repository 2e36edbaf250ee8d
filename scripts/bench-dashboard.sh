#!/usr/bin/env bash
# Dashboard benchmarks: N fake agent panes (default 200; a third each Claude, Codex,
# Gemini, states from their own hook events, Claude's and Codex's digests followed from
# the recorded transcripts) on a private tmux server, the live dashboard in a 200x50
# pane: the board read once, each redraw while it scrolls, its memory, an event to the
# redraw that shows it, and its CPU over IDLE_S seconds of nothing happening. See
# bench-dashboard.py. Knobs: N, IDLE_S (default 30), KEEP=1 (leave the server running),
# DIGESTS=claude,codex (the harnesses whose transcripts are followed: one inotify instance
# each, so past fs.inotify.max_user_instances none is left; the dashboard needs none: the
# writers poke its socket in <state>/wake/).
# Everything runs on a private tmux server; nothing touches your own.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/tmuxmate
W=$(mktemp -d /tmp/tmuxmate-bench-dashboard.XXXXXX)
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$W"' EXIT
mkdir -p "$W/tmp"
unset TMUX TMUX_PANE CLAUDE_CONFIG_DIR NO_COLOR
export BIN W HOME=$W TMUX_TMPDIR=$W/tmp TMUXMATE_STATE_DIR=$W/state
python3 scripts/bench-dashboard.py
