#!/usr/bin/env bash
# TPM entry point: `set -g @plugin '<owner>/tmuxmate'` in tmux.conf, then prefix + I.
#
# Finds the tmuxmate binary (PATH, then ~/.cargo/bin, then this checkout's release build:
# the order the README gives, so the keys run the same binary as the agents' hooks), builds
# it with cargo when none exists, writes the snippet with the binary's absolute path next
# to this file and sources it. Prints nothing on success (a run-shell that prints opens
# view mode); a failure is shown with display-message and says what to do.
set -u
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

find_bin() {
    for c in "$(command -v tmuxmate 2>/dev/null)" "$HOME/.cargo/bin/tmuxmate" "$DIR/target/release/tmuxmate"; do
        if [ -n "$c" ] && [ -x "$c" ]; then
            printf '%s\n' "$c"
            return 0
        fi
    done
    return 1
}

BIN="$(find_bin)"
if [ -z "$BIN" ]; then
    if command -v cargo >/dev/null 2>&1; then
        tmux display-message "tmuxmate: building the binary (cargo build --release, a few minutes)…"
        (cd "$DIR" && cargo build --release --quiet >"$DIR/.build.log" 2>&1) || {
            tmux display-message "tmuxmate: cargo build failed; see $DIR/.build.log"
            exit 0
        }
        BIN="$DIR/target/release/tmuxmate"
    else
        tmux display-message "tmuxmate: no tmuxmate binary and no cargo; install Rust (https://rustup.rs) or put tmuxmate on PATH, then prefix + I"
        exit 0
    fi
fi

SNIPPET="$DIR/tmuxmate.generated.conf"
if ! "$BIN" init tmux >"$SNIPPET.tmp" 2>/dev/null; then
    rm -f "$SNIPPET.tmp"
    tmux display-message "tmuxmate: $BIN init tmux failed; run tmuxmate doctor"
    exit 0
fi
mv "$SNIPPET.tmp" "$SNIPPET"
tmux source-file "$SNIPPET"
