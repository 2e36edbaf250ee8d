#!/usr/bin/env bash
# Agent-state benchmarks: event to pane option per source (Claude's hook and session
# file, Codex's OSC 7501, Gemini's title), and the cost of 50 idle agents beside the
# peers' way (a capture-pane of every agent pane every 0.5 s). See bench-agents.py.
# Knobs: N (runs per source, default 30), IDLE_S (the idle window, default 30).
# Everything runs on a private tmux server; nothing touches your own.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/tmuxmate
W=$(mktemp -d /tmp/tmuxmate-bench-agents.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/tmp"
unset TMUX TMUX_PANE CLAUDE_CONFIG_DIR
export BIN W HOME=$W TMUX_TMPDIR=$W/tmp TMUXMATE_STATE_DIR=$W/state
python3 scripts/bench-agents.py
