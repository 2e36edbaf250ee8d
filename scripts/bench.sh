#!/usr/bin/env bash
# tmuxmate benchmarks, measured with hyperfine INSIDE a real pane of a private tmux server,
# so every per-turn call finds its tty-verified pane exactly as it does in real use.
#
# Usage: scripts/bench.sh [--only SECTION]... [--runs N] [--warmup N] [--json-dir DIR] [--strict]
#   BIN=PATH         measure this binary instead of building target/release/tmuxmate
#   --only SECTION   run only this section (repeatable); default: all sections
#   --runs N         timed runs per command (default 200)
#   --warmup N       warmup runs per command (default 20)
#   --json-dir DIR   keep hyperfine's --export-json files in DIR
#   --strict         exit 1 when a target is missed (default: report it and exit 0)
#
# Sections, run in this order:
#   location   the per-turn call: unchanged, changed, the dsh-tmux-context
#              reference pipeline, one bare `tmux display-message -p`
#   <name>     every scripts/bench-<name>.sh (control, watch, bridge, ...), run as is
#              with BIN, RUNS, WARMUP and HYPERFINE in its environment
#
# To add a section: write a function bench_<name> here (use run_in_pane to measure inside
# the pane, stats_of/print_row/check_ratio to report) and add <name> to SECTIONS, or drop
# a self-contained scripts/bench-<name>.sh next to this file.

# Functions run through traps and "bench_$name" look unreachable to shellcheck.
# shellcheck disable=SC2317
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD

SECTIONS=(location)
for f in scripts/bench-*.sh; do
    [ -f "$f" ] || continue
    n=${f#scripts/bench-}
    SECTIONS+=("${n%.sh}")
done
RUNS=200
WARMUP=20
ONLY=()
JSON_DIR=""
STRICT=0
DEADLINE_S=${BENCH_DEADLINE_S:-900}
MISSES=0

# The header comment, up to the first non-comment line.
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

while [ $# -gt 0 ]; do
    case "$1" in
        --only) ONLY+=("${2:?--only needs a section name}"); shift 2 ;;
        --only=*) ONLY+=("${1#--only=}"); shift ;;
        --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
        --warmup) WARMUP=${2:?--warmup needs a number}; shift 2 ;;
        --json-dir) JSON_DIR=${2:?--json-dir needs a directory}; shift 2 ;;
        --strict) STRICT=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "bench: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
done
for n in "$RUNS" "$WARMUP"; do
    case "$n" in '' | *[!0-9]*) echo "bench: --runs/--warmup take a non-negative integer, got '$n'" >&2; exit 2 ;; esac
done
[ "$RUNS" -ge 2 ] || { echo "bench: --runs must be at least 2" >&2; exit 2; }
for s in "${ONLY[@]+"${ONLY[@]}"}"; do
    case " ${SECTIONS[*]} " in *" $s "*) ;; *) echo "bench: unknown section '$s' (sections: ${SECTIONS[*]})" >&2; exit 2 ;; esac
done

selected() {
    [ ${#ONLY[@]} -eq 0 ] && return 0
    local s
    for s in "${ONLY[@]}"; do [ "$s" = "$1" ] && return 0; done
    return 1
}

say() { printf '%s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        say "bench: need root (or sudo) to run: $*"
        return 1
    fi
}

# ---------------------------------------------------------------------------------------
# Tools and build
# ---------------------------------------------------------------------------------------
command -v tmux >/dev/null 2>&1 || { say "bench: tmux is not installed"; exit 1; }
if ! command -v hyperfine >/dev/null 2>&1; then
    say "bench: installing hyperfine"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine >/dev/null
fi
HYPERFINE=$(command -v hyperfine)
if ! "$HYPERFINE" --help 2>/dev/null | grep -q -- '--shell'; then
    say "bench: $("$HYPERFINE" --version) is too old (need 1.13+ for -N)"
    exit 1
fi

# BIN=... measures a given binary (e.g. an older build, for before/after numbers).
if [ -z "${BIN:-}" ]; then
    say "bench: cargo build --release"
    cargo build --release
    BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/tmuxmate
fi
[ -x "$BIN" ] || { say "bench: $BIN was not built"; exit 1; }

# ---------------------------------------------------------------------------------------
# The private tmux server (killed on exit)
# ---------------------------------------------------------------------------------------
unset TMUX TMUX_PANE
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tmuxmate-bench.XXXXXX")
SOCK=$WORK/sock
T() { tmux -S "$SOCK" "$@"; }
cleanup() {
    tmux -S "$SOCK" kill-server >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

T -f /dev/null new-session -d -s bench -n idle -x 200 -y 50 'sleep 86400'

# run_in_pane NAME BODY: run the bash script BODY in a new window of the private server and
# wait (with a deadline) until it finished. The body sees TMUX/TMUX_PANE set by tmux, and
# BIN, WORK, RUNS, WARMUP, HYPERFINE exported. Its output goes to $WORK/NAME.log.
# Sets PANE to the id of the pane it ran in.
run_in_pane() {
    local name=$1 body=$2
    local wrap=$WORK/$name.wrap.sh log=$WORK/$name.log done=$WORK/$name.done
    {
        printf '#!/usr/bin/env bash\n'
        printf 'export BIN=%q WORK=%q RUNS=%q WARMUP=%q HYPERFINE=%q\n' \
            "$BIN" "$WORK" "$RUNS" "$WARMUP" "$HYPERFINE"
        printf 'bash %q >%q 2>&1\n' "$body" "$log"
        printf 'echo $? >%q.tmp && mv %q.tmp %q\n' "$done" "$done" "$done"
    } >"$wrap"
    PANE=$(T new-window -d -t bench: -n "$name" -P -F '#{pane_id}' "exec bash $(printf %q "$wrap")")
    local start=$SECONDS
    while [ ! -e "$done" ]; do
        if [ $((SECONDS - start)) -ge "$DEADLINE_S" ]; then
            say "bench: section $name did not finish within ${DEADLINE_S}s; its log:"
            tail -n 40 "$log" >&2 || true
            return 1
        fi
        sleep 0.2
    done
    local rc
    rc=$(cat "$done")
    if [ "$rc" != 0 ]; then
        say "bench: section $name failed in pane $PANE (exit $rc); its log:"
        tail -n 40 "$log" >&2 || true
        return 1
    fi
    if [ -n "$JSON_DIR" ]; then
        mkdir -p "$JSON_DIR"
        cp "$WORK"/"$name"-*.json "$JSON_DIR"/ 2>/dev/null || true
    fi
}

# ---------------------------------------------------------------------------------------
# Reading hyperfine's JSON and reporting
# ---------------------------------------------------------------------------------------
# stats_of FILE: prints "median mean stddev min max" in seconds for the first result.
stats_of() {
    if command -v python3 >/dev/null 2>&1 && python3 -c 'import json' >/dev/null 2>&1; then
        python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(*[r.get(k) or 0 for k in ("median", "mean", "stddev", "min", "max")])
PY
    else
        # hyperfine pretty-prints one key per line; take the first occurrence of each.
        awk '
            function grab(k,   v) {
                if (!(k in seen) && match($0, "\"" k "\": *[-+0-9.eE]+")) {
                    v = substr($0, RSTART, RLENGTH); sub(/^[^:]*: */, "", v); seen[k] = v
                }
            }
            { grab("median"); grab("mean"); grab("stddev"); grab("min"); grab("max") }
            END { printf "%s %s %s %s %s\n", seen["median"]+0, seen["mean"]+0, seen["stddev"]+0, seen["min"]+0, seen["max"]+0 }
        ' "$1"
    fi
}

print_header() {
    printf '\n%s\n' "$1"
    printf '  %-52s %10s %10s %9s %10s\n' "command" "median" "mean" "stddev" "min"
}

# print_row LABEL FILE: one table row in milliseconds.
print_row() {
    local m
    m=$(stats_of "$2")
    # shellcheck disable=SC2086
    set -- "$1" $m
    awk -v l="$1" -v med="$2" -v mean="$3" -v sd="$4" -v mn="$5" 'BEGIN {
        printf "  %-52s %7.2f ms %7.2f ms %6.2f ms %7.2f ms\n", l, med*1000, mean*1000, sd*1000, mn*1000
    }'
}

# check_ratio LABEL NUM_FILE DEN_FILE [OP TARGET]: ratio of medians (and of means), checked
# against TARGET with OP (">=" or "<="); without OP it is only reported.
check_ratio() {
    local label=$1 num den op=${4:-} target=${5:-} verdict
    num=$(stats_of "$2")
    den=$(stats_of "$3")
    verdict=$(awk -v n="$num" -v d="$den" -v op="$op" -v t="$target" 'BEGIN {
        split(n, a, " "); split(d, b, " ")
        r = (b[1] > 0) ? a[1] / b[1] : 0; rm = (b[2] > 0) ? a[2] / b[2] : 0
        printf "%.2fx (means %.2fx)", r, rm
        if (op == "") { printf "\n"; exit }
        ok = (op == ">=") ? (r >= t) : (r <= t)
        printf "  target %s %sx  %s\n", op, t, ok ? "ok" : "MISSED"
    }')
    printf '  %-40s %s\n' "$label" "$verdict"
    case "$verdict" in *MISSED*) MISSES=$((MISSES + 1)) ;; esac
}

# ---------------------------------------------------------------------------------------
# Section: location - the per-turn call
# ---------------------------------------------------------------------------------------
bench_location() {
    local body=$WORK/location.sh
    cat >"$body" <<'BODY'
set -euo pipefail
cd "$WORK"
export TMUXMATE_STATE_DIR=$WORK/state
fail() { echo "location bench: $*" >&2; exit 1; }

# (c) The reading of @deepseek-ai/dsh-tmux-context 0.1.1-rc.2 (deepseek-ai/deepseek-harness,
# packages/context/tmux-context/src/index.ts) as one sh script:
# $TMUX_PANE guard, `ps -o tty=` of the harness process ($1), the pane's #{pane_tty},
# the comparison, then its 8 fields in one display-message joined by a literal `\t`.
cat >ref.sh <<'EOF'
[ -n "$TMUX_PANE" ] || exit 1
t=$(ps -o tty= -p "$1") || exit 1
t=${t#"${t%%[! ]*}"}; t=${t%"${t##*[! ]}"}
[ -n "$t" ] && [ "$t" != "?" ] || exit 1
p=$(tmux display-message -p -t "$TMUX_PANE" '#{pane_tty}') || exit 1
[ "$p" = "/dev/$t" ] || exit 1
tmux display-message -p -t "$TMUX_PANE" '#{session_name}\t#{window_index}\t#{window_name}\t#{pane_index}\t#{pane_id}\t#{window_active}\t#{pane_active}\t#{window_layout}'
EOF

# (b)'s --prepare: rename this pane's window to a fresh name (counter file, no fork).
cat >rename.sh <<'EOF'
n=0; [ -e "$1" ] && read -r n <"$1"; n=$((n + 1)); echo "$n" >"$1"
exec tmux rename-window -t "$TMUX_PANE" "bench-$n"
EOF

# Sanity: the calls below must behave here as in real use, or the numbers mean nothing.
"$BIN" where >/dev/null || fail "tmuxmate where does not find this pane"
first=$("$BIN" turn --agent bench)
case "$first" in "tmux location (turn 1):"*) ;; *) fail "first turn injected: '$first'" ;; esac
[ -z "$("$BIN" turn --agent bench)" ] || fail "an unchanged turn injected something"
ref=$(sh ref.sh $$) || fail "the reference pipeline found no location"
case "$ref" in *'\t'*'\t'*'\t'*'\t'*'\t'*'\t'*'\t'*) ;; *) fail "reference output: $ref" ;; esac
"$BIN" turn --agent bench-changed >/dev/null
sh rename.sh counter
[ -n "$("$BIN" turn --agent bench-changed)" ] || fail "a renamed window was not injected"

hf() {
    local name=$1; shift
    echo "== $name"
    "$HYPERFINE" -N --style basic --warmup "$WARMUP" --runs "$RUNS" \
        --export-json "$WORK/location-$name.json" "$@"
}
# (a) nothing changed since the last injection (the ledger holds the state).
hf unchanged -n unchanged "'$BIN' turn --agent bench"
[ -z "$("$BIN" turn --agent bench)" ] || fail "an unchanged turn injected something after the runs"
# (b) the window renamed before every run: every run reads, compares and injects.
hf changed -n changed --prepare "sh '$WORK/rename.sh' '$WORK/counter'" "'$BIN' turn --agent bench-changed"
# (c) the reference pipeline.
hf reference -n reference "sh '$WORK/ref.sh' $$"
# (d) one bare display-message.
hf bare -n bare "tmux display-message -p '#{pane_id}'"
# For reading the figures: a turn inside the refresh interval (no tmux call at all), and
# the start of the binary alone.
"$BIN" turn --agent bench-interval --refresh-interval-ms 999999999 >/dev/null
hf interval -n interval "'$BIN' turn --agent bench-interval --refresh-interval-ms 999999999"
hf start -n start "'$BIN' --version"

BODY
    say "bench: location: measuring in a pane of the private server (${RUNS} runs each)"
    run_in_pane location "$body"
    local w=$WORK
    print_header "location: per-turn call, inside pane $PANE of a private tmux server ($RUNS runs, $WARMUP warmup)"
    print_row "(a) tmuxmate turn, nothing changed" "$w/location-unchanged.json"
    print_row "(b) tmuxmate turn, window renamed every run" "$w/location-changed.json"
    print_row "(c) reference: dsh-tmux-context sh pipeline" "$w/location-reference.json"
    print_row "(d) bare tmux display-message -p" "$w/location-bare.json"
    print_row "    tmuxmate turn inside the refresh interval" "$w/location-interval.json"
    print_row "    tmuxmate --version (process start, cached tmux -V)" "$w/location-start.json"
    printf '  ratios of medians:\n'
    check_ratio "reference / unchanged" "$w/location-reference.json" "$w/location-unchanged.json" ">=" 3
    check_ratio "unchanged / bare display-message" "$w/location-unchanged.json" "$w/location-bare.json" "<=" 1.5
    check_ratio "changed / unchanged (for information)" "$w/location-changed.json" "$w/location-unchanged.json"
}

# ---------------------------------------------------------------------------------------
# Sections kept in their own scripts (scripts/bench-<name>.sh)
# ---------------------------------------------------------------------------------------
# delegate NAME [ARGS...]: run scripts/bench-NAME.sh with BIN, RUNS, WARMUP and HYPERFINE in
# its environment; a failure counts as a missed target.
delegate() {
    local name=$1 file=scripts/bench-$1.sh
    shift
    if [ ! -f "$file" ]; then
        say "bench: $name: $file does not exist; skipped"
        return 0
    fi
    printf '\n%s: %s\n' "$name" "$file"
    local rc=0
    BIN="$BIN" RUNS="$RUNS" WARMUP="$WARMUP" HYPERFINE="$HYPERFINE" bash "$file" "$@" || rc=$?
    if [ "$rc" -ne 0 ]; then
        say "bench: $name: $file exited with status $rc"
        MISSES=$((MISSES + 1))
    fi
}

# control: capture --all vs capture-pane, run -- true end to end. It knows --strict.
bench_control() {
    if [ "$STRICT" -eq 1 ]; then
        delegate control --strict
    else
        delegate control
    fi
}

# ---------------------------------------------------------------------------------------
printf 'tmuxmate bench: %s, %s, %s\n' "$("$BIN" --version | head -1)" "$(tmux -V)" "$("$HYPERFINE" --version)"
# Other work on the machine skews every figure: say how busy the CPUs were just before.
if [ -r /proc/stat ]; then
    read -r _ a1 b1 c1 d1 e1 f1 g1 _ </proc/stat
    sleep 1
    read -r _ a2 b2 c2 d2 e2 f2 g2 _ </proc/stat
    busy=$(((a2 + b2 + c2 + f2 + g2) - (a1 + b1 + c1 + f1 + g1)))
    idle=$(((d2 + e2) - (d1 + e1)))
    pct=$((100 * busy / (busy + idle > 0 ? busy + idle : 1)))
    printf 'CPU busy before measuring: %s%% of %s CPUs%s\n' "$pct" "$(nproc 2>/dev/null || echo '?')" \
        "$([ "$pct" -ge 10 ] && echo ' (other work is running: figures will be noisy)')"
fi
# `ps` (in the reference pipeline) reads every process in /proc: its cost grows with this.
if [ -d /proc/self ]; then
    set -- /proc/[0-9]*
    printf 'processes on this machine: %s\n' "$#"
    set --
fi
for s in "${SECTIONS[@]}"; do
    selected "$s" || continue
    if declare -F "bench_$s" >/dev/null; then
        "bench_$s"
    else
        delegate "$s"
    fi
done

if [ "$MISSES" -gt 0 ]; then
    printf '\n%s target(s) missed\n' "$MISSES"
    [ "$STRICT" -eq 1 ] && exit 1
fi
exit 0
