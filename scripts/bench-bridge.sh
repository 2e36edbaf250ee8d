#!/usr/bin/env bash
# Bridge benchmarks (issue: agent bridge), on a private tmux server with the stand-in
# Claude/Codex CLIs (examples/agent_standin.rs):
#  1. `tmuxmate agent ask` overhead beyond the stand-in's own reply time (target: median
#     under 150 ms), for Claude and Codex;
#  2. a 1 MiB message delivered intact, timed.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; }
cargo build --release -q
cargo build --release -q --example agent_standin
BIN=$PWD/target/release/tmuxmate
W=$(mktemp -d /tmp/tmuxmate-bench-bridge.XXXXXX)
export TMUX_TMPDIR=$W/tmp TMUXMATE_STATE_DIR=$W/state HOME=$W/home STANDIN_DIR=$W/sd
mkdir -p "$TMUX_TMPDIR" "$HOME" "$STANDIN_DIR" "$W/bin" "$W/proj/.git"
echo 'ref: refs/heads/main' > "$W/proj/.git/HEAD"
for n in claude codex; do cp target/release/examples/agent_standin "$W/bin/$n"; done
export PATH=$W/bin:$PATH
unset TMUX TMUX_PANE
SOCK=bb
cleanup() { tmux -L "$SOCK" kill-server 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
tmux -L "$SOCK" -f /dev/null new-session -d -s main -x 160 -y 50
cd "$W/proj"
DELAY=100
echo "$DELAY" > "$STANDIN_DIR/delay-ms"
for a in claude codex; do
  "$BIN" -L "$SOCK" agent start "$a" >/dev/null
  name=$("$BIN" -L "$SOCK" agent name "$a")
  hyperfine -N --warmup 2 --runs 30 --export-json "$W/ask-$a.json" \
    "$BIN -L $SOCK agent ask $name --message hello" >/dev/null
  med=$(python3 -c "import json;print(json.load(open('$W/ask-$a.json'))['results'][0]['median']*1000)")
  awk -v m="$med" -v d="$DELAY" -v a="$a" 'BEGIN{printf "agent ask %-6s: median %.1f ms, stand-in reply time %d ms -> overhead %.1f ms (target < 150 ms)\n", a, m, d, m-d}'
done
echo 0 > "$STANDIN_DIR/delay-ms"
python3 -c "
import sys
s=''.join('line %d 日本 \$(x) \`y\` ;\n' % i for i in range(40000))
while len(s.encode()) < 1<<20: s += 'pad line\n'
open('$W/big.txt','w').write(s)"
: > "$STANDIN_DIR/received.bin"
name=$("$BIN" -L "$SOCK" agent name claude)
t0=$(date +%s%N)
"$BIN" -L "$SOCK" agent send "$name" --file "$W/big.txt" >/dev/null
t1=$(date +%s%N)
python3 - "$W/big.txt" "$STANDIN_DIR/received.bin" <<'PY'
import sys
want = b"\x1b[200~" + open(sys.argv[1], 'rb').read() + b"\x1b[201~\r"
got = open(sys.argv[2], 'rb').read()
print("1 MiB message: %s (%d bytes received)" % ("intact" if got == want else "DIFFERS", len(got)))
PY
echo "1 MiB message: agent send took $(( (t1 - t0) / 1000000 )) ms (paste, settle, Enter, verified in the transcript)"
