#!/usr/bin/env bash
# Developer checks, the same as CI (.ci/run) without installing anything:
# cargo fmt --check, cargo clippy -D warnings, cargo test, and shellcheck on the
# scripts when shellcheck is installed.
#
#   scripts/check.sh          run everything
#   scripts/check.sh --fix    run `cargo fmt --all` first instead of only checking
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

fix=0
for arg in "$@"; do
    case "$arg" in
        --fix) fix=1 ;;
        -h | --help)
            sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "check: unknown argument $arg (try --help)" >&2
            exit 2
            ;;
    esac
done

step() { printf '\n== %s\n' "$*"; }

if [ "$fix" -eq 1 ]; then
    step "cargo fmt --all"
    cargo fmt --all
fi

step "cargo fmt --all -- --check"
cargo fmt --all -- --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets -- -D warnings

if ! command -v tmux >/dev/null 2>&1; then
    echo "check: tmux is not installed: the real-tmux tests will be SKIPPED (CI fails instead)" >&2
fi
step "cargo test"
cargo test

if command -v shellcheck >/dev/null 2>&1; then
    step "shellcheck scripts/*.sh .ci/run"
    shellcheck scripts/*.sh .ci/run
else
    echo "check: shellcheck is not installed; skipped (apt-get install shellcheck)" >&2
fi

printf '\nall checks passed\n'
