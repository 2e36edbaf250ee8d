#!/usr/bin/env bash
# MCP servers side by side: `tmuxmate mcp` against libtmux-mcp and tmux-mcp-rs,
# and against the raw tmux CLI doing the same work, on a private tmux server.
#
#   startup   spawn, initialize, tools/list answered (fresh process per run)
#   list      200 panes, then 1000: tmux_list | libtmux list_panes(window) | tmux-mcp-rs
#             list-panes, against `tmux list-panes -a -F` with tmuxmate's fields (the
#             layout on the active pane's row only, as tmuxmate asks). The peers list the
#             200-pane window only; at 1000 panes tmuxmate is measured against raw alone.
#   cap-SIZE  the whole scrollback of a pane holding SIZE (default 1K 100K 588K 5.5M 50M,
#             lines of 83 bytes): tmuxmate with maxBytes above the size, the peers with a
#             start before the first line, against `tmux capture-pane -p -S -`
#   capture   the 100k-line pane with tmuxmate's default budget (what a model gets unasked)
#   send      one line + Enter: tmux_send_keys | send_keys | send-keys against
#             `tmux send-keys -t P -l TEXT` + `tmux send-keys -t P Enter` (two spawns:
#             the raw CLI needs both to type literal text and press Enter)
#   run       tmux_run of `true` with its exit status (its floor is in bench-control.sh)
#   soak      SOAK calls (default 10000) on one tmuxmate server process, cycling list,
#             capture of a small pane and send: p50/p99 and VmRSS per thousand
# Calls are timed on one resident server process each, by scripts/mcp-bench.py, from the
# request written to the answer read and decoded (json.loads, as a model's client pays
# it); raw tmux by the same script (spawn to exit, output read). Medians in ms; ratio =
# server / raw. "text B" is what the model reads: the bytes of the answer's text blocks.
#
# Peers are optional and live in the ignored .peers/ folder:
#   pip install --target .peers/py libtmux-mcp==0.1.0a22
#   cargo install --root .peers/rs tmux-mcp-rs --version 0.6.0
# A missing peer is reported and skipped.
#
# Usage: scripts/bench-peers.sh [--runs N] [--strict]
#   BIN    tmuxmate binary (default: cargo build --release)
#   BASE   another tmuxmate binary (say, main's build), timed as the server "base" in the
#          same run as BIN: a before/after under the same load (not a peer in the checks)
#   SIZES  capture sizes; SOAK calls in the soak (0: none)
#   NODE=1 also time the captures with a Node client (scripts/mcp-bench-node.mjs): read
#          the way the MCP TypeScript SDK reads a server (the client Claude Code bundles)
#          and in linear time, each decoded with JSON.parse, against the raw tmux client
#          spawned from Node; tmuxmate and tmux-mcp-rs (a table of its own, after the rest)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
RUNS=${RUNS:-30}
SIZES=${SIZES:-1K 100K 588K 5.5M 50M}
SOAK=${SOAK:-10000}
STRICT=0
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
        --strict) STRICT=1; shift ;;
        -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "bench-peers: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
done
say() { printf '%s\n' "$*" >&2; }
command -v tmux >/dev/null 2>&1 || { say "bench-peers: tmux is not installed"; exit 1; }
if [ -z "${BIN:-}" ]; then
    cargo build --release -q
    BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/tmuxmate
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/tmuxmate-bench-peers.XXXXXX")
export TMUX_TMPDIR=$W/tmp TMUXMATE_STATE_DIR=$W/state HOME=$W SHELL=/bin/sh
mkdir -p "$TMUX_TMPDIR"
unset TMUX TMUX_PANE
SOCK=bp
T() { tmux -L "$SOCK" "$@"; }
# shellcheck disable=SC2317 # cleanup runs from the EXIT trap
cleanup() {
    T kill-server >/dev/null 2>&1 || true
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
SOCKPATH=$TMUX_TMPDIR/tmux-$(id -u)/$SOCK

# --- the server: one window of 200 panes, one pane per capture size, a sink -----------
T -f /dev/null new-session -d -s main -x 400 -y 200 sh
T set -g history-limit 700000
while [ "$(T list-panes -t main:0 | wc -l)" -lt 200 ]; do
    T split-window -d -t main:0 sh \; select-layout -t main:0 tiled >/dev/null
done
WIN=$(T display -p -t main:0 '#{window_id}')
fill() { # LINES: a pane holding that many lines of 83 bytes; prints its id once filled
    printf 'awk "BEGIN { for (i = 1; i <= %d; i++) printf \\"%%06d %%075d\\\\n\\", i, i }"\nexec cat\n' "$1" >"$W/fill-$1.sh"
    local p want
    p=$(T new-window -d -P -F '#{pane_id}' "sh '$W/fill-$1.sh'")
    want=$(( $1 > 60 ? $1 - 60 : 0 ))
    for _ in $(seq 1 1200); do
        [ "$(T display -p -t "$p" '#{history_size}')" -ge "$want" ] && break
        sleep 0.1
    done
    printf '%s\n' "$p"
}
: >"$W/caps"
for size in $SIZES; do
    case "$size" in
        *K) bytes=$(awk -v v="${size%K}" 'BEGIN { printf "%d", v * 1000 }') ;;
        *M) bytes=$(awk -v v="${size%M}" 'BEGIN { printf "%d", v * 1000000 }') ;;
        *) say "bench-peers: a size is a number and K or M, not $size"; exit 2 ;;
    esac
    lines=$(( bytes / 84 ))
    [ "$lines" -ge 1 ] || lines=1
    p=$(fill "$lines")
    got=$(T capture-pane -p -S - -t "$p" | wc -c)
    printf '%s %s %s\n' "$size" "$p" "$got" >>"$W/caps"
done
BIG=$(fill 100000)
SINK=$(T new-window -d -P -F '#{pane_id}' "cat >/dev/null")
F='#{session_id}#{session_name}#{session_attached}#{window_id}#{window_index}#{window_name}#{window_active}#{?pane_active,#{window_layout},}#{pane_id}#{pane_index}#{pane_active}#{pane_tty}#{pane_pid}#{pane_width}#{pane_height}#{pane_dead}#{pane_in_mode}#{pane_mode}#{@tmuxmate-created}#{@tmuxmate-job}'
TMUXP=$(command -v tmux)
TEXT="echo hello from the bench"

PY=$ROOT/.peers/py
RS=$ROOT/.peers/rs/bin/tmux-mcp-rs
[ -d "$PY/libtmux_mcp" ] || say "bench-peers: libtmux-mcp not in .peers/py: skipped (see --help)"
[ -x "$RS" ] || say "bench-peers: tmux-mcp-rs not in .peers/rs: skipped (see --help)"

# spec PHASE OUT: the mcp-bench.py spec of one phase ("main": every row; "list1000": the
# listing only, after the server grew)
spec() {
    BIN="$BIN" BASE_BIN="${BASE:-}" SOCK="$SOCK" SOCKPATH="$SOCKPATH" WIN="$WIN" BIG="$BIG" \
        SINK="$SINK" TEXT="$TEXT" F="$F" TMUXP="$TMUXP" PY="$PY" RS="$RS" RUNS="$RUNS" \
        SOAK="$SOAK" CAPS="$W/caps" python3 "$ROOT/scripts/bench-peers-spec.py" "$1" >"$2"
}
PANES_MAIN=$(T list-panes -a | wc -l)
spec main "$W/spec.json"
python3 "$ROOT/scripts/mcp-bench.py" "$W/spec.json" >"$W/result.json"
if [ "${NODE:-0}" = 1 ]; then
    command -v node >/dev/null 2>&1 || { say "bench-peers: NODE=1 needs node"; exit 1; }
    python3 - "$W/spec.json" >"$W/spec-node.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
caps = lambda d: {k: v for k, v in d.items() if k.startswith("cap-")}
s["servers"] = [dict(x, calls=caps(x["calls"])) for x in s["servers"]
                if x["name"] in ("tmuxmate", "tmux-mcp-rs")]
s["raw"] = caps(s["raw"])
# The SDK's way costs seconds at 50 MB (it copies all it has at every 64 KiB read).
s["opRuns"] = {k: min(v, 3) if k == "cap-50M" else v for k, v in s.get("opRuns", {}).items()}
s.pop("soak", None)
json.dump(s, sys.stdout)
PY
    # A failure here must not cost the rest of the run (the 1000-pane phase, the report).
    node "$ROOT/scripts/mcp-bench-node.mjs" "$W/spec-node.json" >"$W/result-node.json" ||
        say "bench-peers: the Node client failed; its table is left out"
fi

# --- 1000 panes: more windows of 200 -----------------------------------------------------
n=$(T list-panes -a | wc -l)
while [ "$n" -lt 1000 ]; do
    w=$(T new-window -d -P -F '#{window_id}' sh)
    n=$((n + 1))
    while [ "$(T list-panes -t "$w" | wc -l)" -lt 200 ] && [ "$n" -lt 1000 ]; do
        T split-window -d -t "$w" sh \; select-layout -t "$w" tiled >/dev/null
        n=$((n + 1))
    done
done
spec list1000 "$W/spec1000.json"
python3 "$ROOT/scripts/mcp-bench.py" "$W/spec1000.json" >"$W/result1000.json"

rc=0
python3 "$ROOT/scripts/bench-peers-report.py" "$W/result.json" "$W/result1000.json" "$BIN" "$W/caps" \
    "$PANES_MAIN" "$n" "$STRICT" || rc=$?
if [ -s "$W/result-node.json" ]; then python3 - "$W/result-node.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
med = lambda xs: statistics.median(xs) if xs else float("nan")
print("\ncapture with a Node client (JSON.parse; sdk = read as the MCP TypeScript SDK reads,"
      " linear = read in linear time); medians in ms, ratio to raw tmux spawned from Node")
for name, e in r.get("errors", {}).items():
    print(f"  error {name}: {e}")
for op in sorted(r["raw"], key=lambda o: float(o[4:-1]) * (1e6 if o.endswith("M") else 1e3)):
    raw = med(r["raw"][op])
    row = [f"{op:<9} raw {raw:8.1f}"]
    for name, ops in r["calls"].items():
        for mode in ("sdk", "linear"):
            m = med(ops.get(op, {}).get(mode, []))
            row.append(f"{name} {mode} {m:8.1f} ({m / raw:5.2f}x)")
    print("  " + " | ".join(row))
PY
fi
exit "$rc"
