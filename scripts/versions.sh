#!/usr/bin/env bash
# scripts/versions.sh [VERSION ...]: run the integration suite against each tmux release.
#
# Each VERSION (default: every tested release but the machine's own tmux, which the plain
# `cargo test` covers) is built from the release sources beside this checkout
# (../shared/tmux-src/build.sh, or $TMUX_SRC/build.sh; builds are cached under
# ~/.cache/tmux-builds) and put first on PATH for one `cargo test --test integration`, so
# every test's server, every tmux client the tests start and every tmuxmate call use that
# release. Prints one line per release and a table at the end; exits 1 when any failed.
#
#   TMUXMATE_VERSION_FILTER="control:: watch::"  run only those tests (libtest filters)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
here=$(pwd)

src=${TMUX_SRC:-}
if [ -z "$src" ]; then
    for d in "$here/../shared/tmux-src" "$here/../../shared/tmux-src"; do
        [ -x "$d/build.sh" ] || [ -f "$d/build.sh" ] && { src=$d; break; }
    done
fi
if [ -z "$src" ] || [ ! -f "$src/build.sh" ]; then
    echo "versions: no tmux release sources (set TMUX_SRC to a folder with build.sh)" >&2
    exit 2
fi

system=$(tmux -V 2>/dev/null | awk '{print $2}' || true)
if [ "$#" -gt 0 ]; then
    versions=("$@")
else
    versions=()
    for v in 3.2a 3.3a 3.4 3.5a 3.6b 3.7c; do
        [ "$v" = "$system" ] || versions+=("$v")
    done
fi

# Build the test binary once, with the machine's tmux (the build does not use tmux).
cargo test --test integration --no-run >/dev/null 2>&1 || cargo test --test integration --no-run

read -r -a filter <<<"${TMUXMATE_VERSION_FILTER:-}"
declare -a rows=()
failed=0
for v in "${versions[@]}"; do
    t0=$(date +%s)
    if ! bin=$(bash "$src/build.sh" "$v"); then
        rows+=("$v|build failed|-|-")
        failed=1
        continue
    fi
    dir=$(dirname "$bin")
    got=$(PATH="$dir:$PATH" tmux -V)
    if [ "$got" != "tmux $v" ]; then
        rows+=("$v|PATH gave $got|-|-")
        failed=1
        continue
    fi
    log=$(mktemp)
    printf '\n== tmux %s (%s)\n' "$v" "$dir"
    if PATH="$dir:$PATH" cargo test --test integration -- "${filter[@]}" >"$log" 2>&1; then
        status=passed
    else
        status=FAILED
        failed=1
        grep -E '^(test .* \.\.\. FAILED|    [a-z_:]+$)' "$log" | sort -u | head -40 || true
        # Each failure's whole message (a test may print a long output before the error
        # it failed on), up to its backtrace.
        awk '/panicked at/ {on = 1; n = 0} on && /^stack backtrace:/ {on = 0} on && n++ < 120' "$log" | head -400 || true
    fi
    result=$(grep -E '^test result:' "$log" | tail -1)
    echo "$result"
    n_pass=$(sed -n 's/.* \([0-9]*\) passed.*/\1/p' <<<"$result")
    n_fail=$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$result")
    rows+=("$v|$status|${n_pass:-?} passed, ${n_fail:-?} failed|$(($(date +%s) - t0)) s")
    rm -f "$log"
done

printf '\n| tmux | result | tests | time |\n|---|---|---|---|\n'
for r in "${rows[@]}"; do
    IFS='|' read -r a b c d <<<"$r"
    printf '| %s | %s | %s | %s |\n' "$a" "$b" "$c" "$d"
done
exit "$failed"
