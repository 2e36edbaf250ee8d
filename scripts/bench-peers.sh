#!/usr/bin/env bash
# MCP servers side by side: `tmuxmate mcp` against libtmux-mcp and tmux-mcp-rs,
# and against the raw tmux CLI doing the same work, on a private tmux server.
#
#   startup   spawn, initialize, tools/list answered (fresh process per run)
#   list      200 panes: tmux_list | libtmux list_panes(window) | tmux-mcp-rs list-panes
#             against `tmux list-panes -a -F` with tmuxmate's fields (the layout on the
#             active pane's row only, as tmuxmate asks: `#{window_layout}` on every row
#             of a 200-pane window made the raw call ~10x slower than the work compared)
#   capture   a pane of 100 000 history lines (~8.3 MB): tmuxmate with its default budget
#             and with maxBytes 16 MB (the whole text) against `tmux capture-pane -p -S -`
#   send      one line + Enter: tmux_send_keys | send_keys | send-keys against
#             `tmux send-keys -t P -l TEXT` + `tmux send-keys -t P Enter` (two spawns:
#             the raw CLI needs both to type literal text and press Enter)
#   run       tmux_run of `true` with its exit status (target < 25 ms)
# Calls are timed on one resident server process each, by scripts/mcp-bench.py (pipe I/O
# only); raw tmux by the same script (spawn to exit). Medians in ms; ratio = server / raw.
#
# Peers are optional and live in the ignored .peers/ folder:
#   pip install --target .peers/py libtmux-mcp==0.1.0a22
#   cargo install --root .peers/rs tmux-mcp-rs --version 0.6.0
# A missing peer is reported and skipped.
#
# Usage: scripts/bench-peers.sh [--runs N] [--strict]
#   BIN   tmuxmate binary (default: cargo build --release)
#   BASE  another tmuxmate binary (say, main's build), timed as the server "base" in the
#         same run as BIN: a before/after under the same load (not a peer in the checks)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
RUNS=${RUNS:-30}
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
cleanup() {
    T kill-server >/dev/null 2>&1 || true
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
SOCKPATH=$TMUX_TMPDIR/tmux-$(id -u)/$SOCK

# --- the server: one window of 200 panes, one pane of 100k lines, one shell -------------
T -f /dev/null new-session -d -s main -x 400 -y 200 sh
T set -g history-limit 100000
while [ "$(T list-panes -t main:0 | wc -l)" -lt 200 ]; do
    T split-window -d -t main:0 sh \; select-layout -t main:0 tiled >/dev/null
done
WIN=$(T display -p -t main:0 '#{window_id}')
cat >"$W/fill.sh" <<'EOF'
awk 'BEGIN { for (i = 1; i <= 100000; i++) printf "%06d %075d\n", i, i }'
exec cat
EOF
BIG=$(T new-window -d -P -F '#{pane_id}' "sh '$W/fill.sh'")
for _ in $(seq 1 600); do
    [ "$(T display -p -t "$BIG" '#{history_size}')" -ge 99900 ] && break
    sleep 0.1
done
SINK=$(T new-window -d -P -F '#{pane_id}' "cat >/dev/null")
F='#{session_id}#{session_name}#{session_attached}#{window_id}#{window_index}#{window_name}#{window_active}#{?pane_active,#{window_layout},}#{pane_id}#{pane_index}#{pane_active}#{pane_tty}#{pane_pid}#{pane_width}#{pane_height}#{pane_dead}#{pane_in_mode}#{pane_mode}#{@tmuxmate-created}#{@tmuxmate-job}'
TMUXP=$(command -v tmux)
TEXT="echo hello from the bench"

BASE_BIN=${BASE:-}
PY=$ROOT/.peers/py
RS=$ROOT/.peers/rs/bin/tmux-mcp-rs
python3 - "$W/spec.json" <<EOF
import json, os, sys
runs = int("$RUNS")
servers = [{"name": "tmuxmate", "argv": ["$BIN", "-L", "$SOCK", "mcp"], "env": {},
    "calls": {
        "list": ["tmux_list", {}],
        "capture": ["tmux_capture", {"target": "$BIG", "all": True}],
        "capture-full": ["tmux_capture", {"target": "$BIG", "all": True, "maxBytes": 16000000}],
        "send": ["tmux_send_keys", {"target": "$SINK", "text": "$TEXT", "enter": True}],
        "run": ["tmux_run", {"cmd": ["true"]}],
    }}]
if "$BASE_BIN":
    servers.append(dict(servers[0], name="base", argv=["$BASE_BIN", "-L", "$SOCK", "mcp"]))
if os.path.exists("$PY/libtmux_mcp"):
    servers.append({"name": "libtmux-mcp", "argv": ["python3", "-m", "libtmux_mcp"],
        "env": {"PYTHONPATH": "$PY", "LIBTMUX_SOCKET": "$SOCK"},
        "calls": {
            "list": ["list_panes", {"window_id": "$WIN"}],
            "capture": ["capture_pane", {"pane_id": "$BIG", "start": -100000, "max_lines": 200000}],
            "send": ["send_keys", {"pane_id": "$SINK", "keys": "$TEXT", "enter": True, "literal": True}],
        }})
if os.path.exists("$RS"):
    servers.append({"name": "tmux-mcp-rs", "argv": ["$RS", "--socket", "$SOCKPATH"], "env": {},
        "calls": {
            "list": ["list-panes", {"windowId": "$WIN"}],
            "capture": ["capture-pane", {"paneId": "$BIG", "start": -100000}],
            "send": ["send-keys", {"paneId": "$SINK", "keys": "$TEXT", "literal": True, "enter": True}],
        }})
raw = {
    "list": ["$TMUXP", "-L", "$SOCK", "list-panes", "-a", "-F", "$F"],
    "capture": ["$TMUXP", "-L", "$SOCK", "capture-pane", "-p", "-S", "-", "-t", "$BIG"],
    "send": ["sh", "-c", '"\$0" -L "\$1" send-keys -t "\$2" -l "\$3" && "\$0" -L "\$1" send-keys -t "\$2" Enter',
             "$TMUXP", "$SOCK", "$SINK", "$TEXT"],
    "send-1": ["$TMUXP", "-L", "$SOCK", "send-keys", "-t", "$SINK", "-l", "$TEXT"],
}
json.dump({"runs": runs, "servers": servers, "raw": raw}, open(sys.argv[1], "w"))
EOF
[ -d "$PY/libtmux_mcp" ] || say "bench-peers: libtmux-mcp not in .peers/py: skipped (see --help)"
[ -x "$RS" ] || say "bench-peers: tmux-mcp-rs not in .peers/rs: skipped (see --help)"

python3 "$ROOT/scripts/mcp-bench.py" "$W/spec.json" >"$W/result.json"

python3 - "$W/result.json" "$BIN" "$STRICT" <<'EOF'
import json, os, statistics, sys
r = json.load(open(sys.argv[1]))
binsize = os.path.getsize(sys.argv[2])
med = lambda v: statistics.median(v) if v else float("nan")
names = list(r["startup"].keys())
raw = {k: med(v) for k, v in r["raw"].items()}
misses = 0
print(f"tmuxmate bench-peers: binary {binsize} B, medians in ms (ratio to raw tmux CLI)")
print("| row | raw tmux | " + " | ".join(names) + " |")
print("|---|---|" + "---|" * len(names))
print("| startup to tools/list | - | " + " | ".join(f"{med(r['startup'][n]):.1f}" for n in names) + " |")
print("| tools/list bytes | - | " + " | ".join(str(r["toolsBytes"].get(n, "?")) for n in names) + " |")
for op, rawop in [("list", "list"), ("capture", "capture"), ("capture-full", "capture"), ("send", "send"), ("run", None)]:
    cells = []
    for n in names:
        v = r["calls"][n].get(op)
        if not v:
            cells.append("-")
            continue
        m = med(v)
        cells.append(f"{m:.2f} ({m / raw[rawop]:.2f}x)" if rawop else f"{m:.1f}")
    base = f"{raw[rawop]:.2f}" if rawop else "-"
    print(f"| {op} | {base} | " + " | ".join(cells) + " |")
print(f"(raw send is two spawns: -l TEXT, then Enter; one `send-keys -l` alone: {raw['send-1']:.2f} ms)")
if r["errors"]:
    print("errors:", json.dumps(r["errors"])[:800])
t = r["calls"]["tmuxmate"]
checks = [("startup < 10 ms", med(r["startup"]["tmuxmate"]) < 10),
          ("list <= 1.0x raw", med(t["list"]) <= raw["list"]),
          ("capture <= 1.0x raw", med(t["capture"]) <= raw["capture"]),
          ("send <= 1.0x raw", med(t["send"]) <= raw["send"]),
          ("run true < 25 ms", med(t["run"]) < 25)]
for n in names[1:]:
    if n == "base":
        continue
    for op in ("list", "capture", "send"):
        if r["calls"][n].get(op):
            checks.append((f"{op} ahead of {n}", med(t[op]) < med(r["calls"][n][op])))
for label, ok in checks:
    print(f"  {label:<34} {'ok' if ok else 'MISSED'}")
    misses += not ok
sys.exit(1 if misses and sys.argv[3] == "1" else 0)
EOF
