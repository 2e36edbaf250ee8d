#!/usr/bin/env bash
# What a model reads from each listing, in bytes a row, on a private tmux server of N
# panes (default 200): `list` / MCP `tmux_list` (a pane a row), `watch list` (N jobs),
# `snapshots` (N stored captures), `agent list` (N/10 managed sessions of a custom CLI,
# `sh`). Target: at most 60 bytes a row on average. The JSON (`--json`, `structuredContent`) is printed beside it for
# scale; it is what code reads, not the model.
#
# Usage: scripts/bench-text.sh          Environment: BIN (default: cargo build --release),
#                                       N (default 200)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
N=${N:-200}
if [ -z "${BIN:-}" ]; then
    cargo build --release -q
    BIN=$PWD/target/release/tmuxmate
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/tmuxmate-bench-text.XXXXXX")
export TMUX_TMPDIR=$W/tmp TMUXMATE_STATE_DIR=$W/state HOME=$W SHELL=/bin/sh
mkdir -p "$TMUX_TMPDIR"
unset TMUX TMUX_PANE
SOCK=bt
T() { tmux -L "$SOCK" "$@"; }
# shellcheck disable=SC2317 # cleanup runs from the EXIT trap
cleanup() {
    tmux -L "$SOCK" kill-server >/dev/null 2>&1 || true
    rm -rf "$W" 2>/dev/null || true # a poller may still be writing its last state
}
trap cleanup EXIT
trap 'exit 130' INT TERM
M() { "$BIN" -L "$SOCK" "$@"; }

# Panes as a person has them: sessions named after projects, a few windows each, shells
# that ran something.
T -f /dev/null new-session -d -s web-frontend -x 160 -y 40 sh
n=1
s=0
while [ "$n" -lt "$N" ]; do
    s=$((s + 1))
    name=$(printf 'proj-%02d' "$s")
    T new-session -d -s "$name" -x 160 -y 40 sh
    n=$((n + 1))
    for _ in 1 2 3 4 5 6 7; do
        [ "$n" -lt "$N" ] || break
        if [ $((n % 3)) -eq 0 ]; then T split-window -d -t "$name:" sh; else T new-window -d -t "$name:" sh; fi
        n=$((n + 1))
    done
done
panes=$(T list-panes -a -F '#{pane_id}')
for p in $panes; do T send-keys -t "$p" "echo build step $p finished ok" Enter; done

row() { # LABEL ROWS TEXT_BYTES JSON_BYTES
    printf '  %-34s %5s rows  %7s B text (%5.1f B a row)  %8s B JSON\n' "$1" "$2" "$3" \
        "$(awk -v b="$3" -v r="$2" 'BEGIN { print (r ? b / r : 0) }')" "$4"
}
printf 'tmuxmate bench-text: %s, %s, %s panes\n' "$("$BIN" --version | head -n 1)" "$(tmux -V)" "$(T list-panes -a | wc -l)"

# list and tmux_list
np=$(T list-panes -a | wc -l)
row "list (text)" "$np" "$(M list | wc -c)" "$(M list --json | wc -c)"

# MCP tmux_list: its default answer (the text block) against the JSON of json: true
python3 - "$BIN" "$SOCK" <<'PY'
import json, subprocess, sys
binary, sock = sys.argv[1], sys.argv[2]
p = subprocess.Popen([binary, "-L", sock, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def call(i, method, params):
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
    p.stdin.flush()
    return json.loads(p.stdout.readline())
call(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench-text", "version": "1"}})
p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
for i, tool in enumerate(["tmux_list"], start=2):
    # The default answer is what the model reads (the text block alone); json: true
    # adds the structured content, for code.
    r = call(i, "tools/call", {"name": tool, "arguments": {}})["result"]
    text = "".join(c.get("text", "") for c in r["content"]).encode()
    assert "structuredContent" not in r, "a default answer with structured content"
    full = call(100 + i, "tools/call", {"name": tool, "arguments": {"json": True}})["result"]
    sc = json.dumps(full["structuredContent"], separators=(",", ":")).encode()
    rows = max(1, len(full["structuredContent"]["panes"]))
    print("  %-34s %5d rows  %7d B text (%5.1f B a row)  %8d B JSON" % ("MCP " + tool, rows, len(text), len(text) / rows, len(sc)))
p.stdin.close()
p.wait()
PY

# snapshots: one capture a pane
for p in $panes; do M capture -t "$p" --lines 5 >/dev/null; done
row "snapshots (--limit $np)" "$np" "$(M snapshots --limit "$np" | wc -c)" "$(M snapshots --limit "$np" --json | wc -c)"

# watch list: a job a pane, commands as people write them
i=0
for p in $panes; do
    i=$((i + 1))
    case $((i % 4)) in
        0) c="sleep 0.$((i % 9 + 1))" ;;
        1) c="make test" ;;
        2) c="cargo build --release 2>&1 | tail -n 20" ;;
        *) c="npm run lint -- --fix src/components" ;;
    esac
    M watch start -t "$p" -- "$c" >/dev/null 2>>"$W/watch.err" || true
done
sort "$W/watch.err" | uniq -c | sort -rn | head -5 >&2
nj=$(M watch list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
row "watch list (running, 20 ended)" "$nj" "$(M watch list | wc -c)" "$(M watch list --json | wc -c)"

# agent list: managed sessions of a custom CLI (sh), projects named as people name them
na=$((N / 10))
for i in $(seq 1 "$na"); do
    d=$W/code/$(printf 'service-%02d' "$i")
    mkdir -p "$d"
    M agent start custom --cli /bin/sh --ready-regex '[$#] ?$' --timeout-s 20 --project "$d" >/dev/null 2>&1 || true
done
nl=$(M agent list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
row "agent list" "$nl" "$(M agent list | wc -c)" "$(M agent list --json | wc -c)"

