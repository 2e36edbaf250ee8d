#!/usr/bin/env bash
# Control-plane benchmarks (issue "Control plane"), on a private tmux server; nothing
# touches your own server or state.
#
#   capture  `tmuxmate capture --all` of the whole scrollback at 1 KB, 100 KB, 588 KB,
#            5.5 MB and 50 MB (SIZES), each against bare `tmux capture-pane -p -S -` on
#            the same pane, with each side's CPU per MB (target: within 1.1x, medians)
#   run      `tmuxmate run -- true` end to end (new window, wrapper, result, snapshot,
#            removal) against tmux's own floor for a fresh pane: `new-window -d` of the
#            command plus the wait for its exit; on a small and a 200-pane server
#            (target: within 1.3x)
#   send     `tmuxmate send --enter` of one line into a pane reading it, against raw
#            `tmux send-keys -l TEXT` + `tmux send-keys Enter` (target: within 1.5x)
#   list     `tmuxmate list --json` on servers of 200 and 1000 panes (LIST_SIZES)
#            against `tmux list-panes -a -F` with the same fields (target: within 1.1x)
#
# Usage: scripts/bench-control.sh [--strict]
#   Environment (set by scripts/bench.sh when it calls this file; all optional):
#   BIN        tmuxmate binary (default: cargo build --release, target/release/tmuxmate)
#   HYPERFINE  hyperfine binary (default: from PATH, installed with apt-get if missing)
#   RUNS       timed runs per command (default 30; at least 2 a round)
#   WARMUP     warmup runs per command (default 3)
#   ROUNDS     rounds each row's runs are split into (default 3): tmux's and tmuxmate's
#              commands take turns round by round, so a VM whose speed drifts over
#              seconds (this one's raw timings move 1.5x between runs) slows both alike
#   BASE       another tmuxmate binary (say, main's build) timed in the same hyperfine
#              call as BIN on every tmuxmate row: a before/after under the same load
#   --strict   exit 1 when a target is missed (default: report it and exit 0)

# shellcheck disable=SC2317 # hf and the row functions run through `rounds`, cleanup from a trap
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

STRICT=0
for a in "$@"; do
    case "$a" in
        --strict) STRICT=1 ;;
        -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "bench-control: unknown argument $a (try --help)" >&2; exit 2 ;;
    esac
done
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-3}
ROUNDS=${ROUNDS:-3}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "bench-control: ROUNDS must be a positive integer, not '$ROUNDS'" >&2; exit 2; }
say() { printf '%s\n' "$*" >&2; }

command -v tmux >/dev/null 2>&1 || { say "bench-control: tmux is not installed"; exit 1; }
HYPERFINE=${HYPERFINE:-$(command -v hyperfine || true)}
if [ -z "$HYPERFINE" ]; then
    say "bench-control: installing hyperfine"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine >/dev/null
    HYPERFINE=$(command -v hyperfine)
fi
if [ -z "${BIN:-}" ]; then
    cargo build --release -q
    BIN=$PWD/target/release/tmuxmate
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/tmuxmate-bench-control.XXXXXX")
# A sealed environment: private socket directory, state, HOME; a plain shell for panes.
export TMUX_TMPDIR=$W/tmp TMUXMATE_STATE_DIR=$W/state HOME=$W SHELL=/bin/sh
mkdir -p "$TMUX_TMPDIR"
unset TMUX TMUX_PANE
SOCK="bc"
T() { tmux -L "$SOCK" "$@"; }
cleanup() {
    tmux -L bl kill-server >/dev/null 2>&1 || true
    tmux -L bc kill-server >/dev/null 2>&1 || true
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

T -f /dev/null new-session -d -s main -x 120 -y 40 sh

# median_ms FILE: the first result's median, in ms.
median_ms() {
    python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["results"][0]["median"]*1000))' "$1" 2>/dev/null ||
        awk 'match($0, /"median": *[-+0-9.eE]+/) && !d { v = substr($0, RSTART, RLENGTH); sub(/^[^:]*: */, "", v); printf "%.2f\n", v * 1000; d = 1 }' "$1"
}
MISSES=0
# base_row NAME RAW_MS: with BASE set, the base binary's median from NAME's second result
# (same hyperfine call as BIN's), and its ratio to RAW_MS when given.
base_row() {
    [ -n "${BASE:-}" ] || return 0
    local b
    b=$(python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["results"][1]["median"]*1000))' "$W/$1.json")
    if [ -n "$2" ]; then
        printf '  %-46s %s ms (%sx raw)\n' "base binary, same run (median)" "$b" "$(awk -v a="$b" -v r="$2" 'BEGIN { printf "%.2f", a / r }')"
    else
        printf '  %-46s %s ms\n' "base binary, same run (median)" "$b"
    fi
}
verdict() { # LABEL VALUE OP TARGET UNIT
    if awk -v v="$2" -v t="$4" -v op="$3" 'BEGIN { exit !((op == "<=") ? v <= t : v >= t) }'; then
        printf '  %-46s %s%s  target %s %s%s  ok\n' "$1" "$2" "$5" "$3" "$4" "$5"
    else
        printf '  %-46s %s%s  target %s %s%s  MISSED\n' "$1" "$2" "$5" "$3" "$4" "$5"
        MISSES=$((MISSES + 1))
    fi
}
hf() { # NAME COMMAND...: RUNS runs, split into the ROUNDS of `rounds` when inside one
    local name=$1 runs=$RUNS
    shift
    if [ -n "${ROUND:-}" ]; then
        runs=$(( (RUNS + ROUNDS - 1) / ROUNDS ))
        [ "$runs" -ge 2 ] || runs=2
    fi
    "$HYPERFINE" -N --style basic --warmup "$WARMUP" --runs "$runs" \
        --export-json "$W/$name.r${ROUND:-0}.json" "$@" >"$W/$name.log" 2>&1 || {
        say "bench-control: hyperfine failed for $name:"
        tail -n 20 "$W/$name.log" >&2
        exit 1
    }
    [ -n "${ROUND:-}" ] || merge "$name"
}
# merge NAME: NAME.json from its rounds, as one hyperfine result per command (all its
# times, their median; user and system the mean per run).
merge() {
    python3 - "$W" "$1" <<'PY'
import glob, json, statistics, sys
w, name = sys.argv[1], sys.argv[2]
merged = []
for f in sorted(glob.glob(f"{w}/{name}.r*.json")):
    for i, r in enumerate(json.load(open(f))["results"]):
        if i == len(merged):
            merged.append({"times": [], "user": 0.0, "system": 0.0})
        n = len(r["times"])
        merged[i]["times"] += r["times"]
        merged[i]["user"] += r["user"] * n
        merged[i]["system"] += r["system"] * n
for m in merged:
    n = len(m["times"])
    m["median"] = statistics.median(m["times"])
    m["user"] /= n
    m["system"] /= n
json.dump({"results": merged}, open(f"{w}/{name}.json", "w"))
PY
}
# rounds NAME... -- FUNCTION: a fresh start for those rows, then FUNCTION ROUNDS times
# (its hf calls take turns round by round).
rounds() {
    local names=() name
    while [ "$1" != "--" ]; do names+=("$1"); shift; done
    shift
    for name in "${names[@]}"; do rm -f "$W/$name".r*.json "$W/$name.json"; done
    for ROUND in $(seq 1 "$ROUNDS"); do "$@"; done
    ROUND=""
    for name in "${names[@]}"; do merge "$name"; done
}

printf 'tmuxmate bench-control: %s, %s, %s, %s runs\n' "$("$BIN" --version)" "$(tmux -V)" \
    "$("$HYPERFINE" --version)" "$RUNS"

# --- capture: the whole scrollback at several sizes ------------------------------------
# One pane per size, lines of 83 bytes; `--max-bytes` above the size, so tmuxmate prints
# the whole text as the raw client does. CPU per MB is hyperfine's user+system of each
# process (tmuxmate speaks to the server itself: no tmux client runs under it).
T set -g history-limit 700000
cpu_ms() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.2f" % ((r["user"]+r["system"])*1000))' "$1"; }
printf '\ncapture of the whole scrollback (tmuxmate capture --all --max-bytes above the size, vs tmux capture-pane -p -S -)\n'
printf '  %-8s %10s %12s %12s %7s %14s %14s\n' size bytes "tmux ms" "tmuxmate ms" ratio "tmux CPU/MB" "ours CPU/MB"
for size in ${SIZES:-1K 100K 588K 5.5M 50M}; do
    case "$size" in
        *K) bytes=$(awk -v v="${size%K}" 'BEGIN { printf "%d", v * 1000 }') ;;
        *M) bytes=$(awk -v v="${size%M}" 'BEGIN { printf "%d", v * 1000000 }') ;;
    esac
    lines=$(( bytes / 84 ))
    [ "$lines" -ge 1 ] || lines=1
    printf 'awk "BEGIN { for (i = 1; i <= %d; i++) printf \\"%%06d %%075d\\\\n\\", i, i }"\nexec cat\n' "$lines" >"$W/fill-$size.sh"
    P=$(T new-window -d -P -F '#{pane_id}' "sh '$W/fill-$size.sh'")
    # The screen's own rows hold the last lines; the history the rest.
    want=$(( lines > 40 ? lines - 40 : 0 ))
    for _ in $(seq 1 1200); do
        [ "$(T display -p -t "$P" '#{history_size}')" -ge "$want" ] && break
        sleep 0.1
    done
    got=$(T capture-pane -p -S - -t "$P" | wc -c)
    runs=$RUNS
    [ "$got" -gt 4000000 ] && runs=10
    [ "$got" -gt 20000000 ] && runs=5
    max=$(( got * 2 + 100000 ))
    cap_pair() {
        RUNS=$runs hf "cap-tmux-$size" -n "tmux capture-pane -p -S - ($size)" "tmux -L $SOCK capture-pane -p -S - -t $P"
        RUNS=$runs hf "cap-ours-$size" -n "tmuxmate capture --all ($size)" "$BIN -L $SOCK capture -t $P --all --max-bytes $max" \
            ${BASE:+-n "base capture --all ($size)" "$BASE -L $SOCK capture -t $P --all --max-bytes $max"}
    }
    rounds "cap-tmux-$size" "cap-ours-$size" -- cap_pair
    ct=$(median_ms "$W/cap-tmux-$size.json")
    cm=$(median_ms "$W/cap-ours-$size.json")
    mb=$(awk -v b="$got" 'BEGIN { printf "%.4f", b / 1000000 }')
    tc=$(awk -v c="$(cpu_ms "$W/cap-tmux-$size.json")" -v m="$mb" 'BEGIN { printf "%.2f", c / m }')
    oc=$(awk -v c="$(cpu_ms "$W/cap-ours-$size.json")" -v m="$mb" 'BEGIN { printf "%.2f", c / m }')
    ratio=$(awk -v a="$cm" -v b="$ct" 'BEGIN { printf "%.2f", a / b }')
    printf '  %-8s %10s %12s %12s %6sx %11s ms %11s ms\n' "$size" "$got" "$ct" "$cm" "$ratio" "$tc" "$oc"
    base_row "cap-ours-$size" "$ct"
    verdict "capture $size: tmuxmate / tmux" "$ratio" "<=" 1.1 "x"
    T kill-pane -t "$P"
done

# --- run: a fresh pane, against tmux's own floor ----------------------------------------
# The floor is what tmux itself costs for the same work: `new-window -d` of the command
# and a wait for its exit (a wait-for channel the command signals), one client each.
"$BIN" -L "$SOCK" run -- true | grep -qx '\[exit 0\]' || { say "bench-control: run -- true does not work"; exit 1; }
TMUXP=$(command -v tmux)
run_rows() { # LABEL
    local floor="sh -c '\"\$0\" -L $SOCK new-window -d -t main: \"true; \\\"\$0\\\" -L $SOCK wait-for -S f\$\$\" && \"\$0\" -L $SOCK wait-for f\$\$' $TMUXP"
    run_pair() {
        hf run-floor -n "tmux new-window -d + wait for its exit" "$floor"
        hf run-true -n "tmuxmate run -- true" "$BIN -L $SOCK run -- true" \
            ${BASE:+-n "base run -- true" "$BASE -L $SOCK run -- true"}
    }
    rounds run-floor run-true -- run_pair
    local rf rt
    rf=$(median_ms "$W/run-floor.json")
    rt=$(median_ms "$W/run-true.json")
    printf '\nrun -- true in a fresh pane, %s (%s panes)\n' "$1" "$(T list-panes -a | wc -l)"
    printf '  %-46s %s ms\n' "tmux's floor: new-window -d + wait (median)" "$rf" "tmuxmate run -- true (median)" "$rt"
    base_row run-true "$rf"
    verdict "run: tmuxmate / floor, $1" "$(awk -v a="$rt" -v b="$rf" 'BEGIN { printf "%.2f", a / b }')" "<=" 1.3 "x"
}
run_rows "small server"

# --- send: one line + Enter into a pane that reads it ----------------------------------
SINK=$(T new-window -d -P -F '#{pane_id}' "cat >/dev/null")
TMUXP=$(command -v tmux)
send_pair() {
    hf send-tmux -n "tmux send-keys -l TEXT; send-keys Enter" \
        "sh -c '\"\$0\" -L $SOCK send-keys -t $SINK -l \"echo hello\" && \"\$0\" -L $SOCK send-keys -t $SINK Enter' $TMUXP"
    hf send-tmuxmate -n "tmuxmate send --enter" "$BIN -L $SOCK send -t $SINK --enter 'echo hello'" \
        ${BASE:+-n "base send --enter" "$BASE -L $SOCK send -t $SINK --enter 'echo hello'"}
}
rounds send-tmux send-tmuxmate -- send_pair
st=$(median_ms "$W/send-tmux.json")
sm=$(median_ms "$W/send-tmuxmate.json")
printf '\nsend: one line + Enter\n'
printf '  %-46s %s ms\n' "tmux send-keys -l + send-keys Enter (median)" "$st" "tmuxmate send --enter (median)" "$sm"
verdict "ratio tmuxmate / tmux" "$(awk -v a="$sm" -v b="$st" 'BEGIN { printf "%.2f", a / b }')" "<=" 1.5 "x"
base_row send-tmuxmate "$st"

# --- list: 200 and 1000 panes, and run on the 200-pane server -------------------------
# Quoted inside the hyperfine command: unquoted, its word splitting reads '#' as a comment.
# The fields tmuxmate asks for (the layout on the active pane's row only, as it does).
F='#{session_id}#{session_name}#{session_attached}#{window_id}#{window_index}#{window_name}#{window_active}#{?pane_active,#{window_layout},}#{pane_id}#{pane_index}#{pane_active}#{pane_tty}#{pane_pid}#{pane_width}#{pane_height}#{pane_current_command}#{pane_current_path}#{pane_dead}#{pane_in_mode}#{pane_mode}#{@tmuxmate-created}#{@tmuxmate-job}'
SOCK="bl"
T -f /dev/null new-session -d -s main -x 200 -y 60 sh
for want in ${LIST_SIZES:-200 1000}; do
    n=$(T list-panes -a | wc -l)
    while [ "$n" -lt "$want" ]; do
        T new-window -d -t main: sh
        for _ in 1 2 3 4; do [ "$n" -lt $((want - 1)) ] && T split-window -d -t main: sh 2>/dev/null && n=$((n + 1)); done
        n=$(T list-panes -a | wc -l)
    done
    list_pair() {
        hf list-tmux -n "tmux list-panes -a -F (same fields)" "tmux -L $SOCK list-panes -a -F '$F'"
        hf list-tmuxmate -n "tmuxmate list --json" "$BIN -L $SOCK list --json" \
            ${BASE:+-n "base list --json" "$BASE -L $SOCK list --json"}
    }
    rounds list-tmux list-tmuxmate -- list_pair
    lt=$(median_ms "$W/list-tmux.json")
    lm=$(median_ms "$W/list-tmuxmate.json")
    printf '\nlist: %s panes\n' "$n"
    printf '  %-46s %s ms\n' "tmux list-panes -a -F (median)" "$lt" "tmuxmate list --json (median)" "$lm"
    verdict "list $n: tmuxmate / tmux" "$(awk -v a="$lm" -v b="$lt" 'BEGIN { printf "%.2f", a / b }')" "<=" 1.1 "x"
    base_row list-tmuxmate "$lt"
    [ "$n" -ge 200 ] && [ "$n" -lt 400 ] && run_rows "200-pane server"
done
T kill-server >/dev/null 2>&1 || true
SOCK="bc"

if [ "$MISSES" -gt 0 ]; then
    printf '\n%s control target(s) missed\n' "$MISSES"
    [ "$STRICT" -eq 1 ] && exit 1
fi
exit 0
