#!/usr/bin/env bash
# Watch-job benchmarks (issue: watch jobs that outlive everyone).
#  1. detection latency from a command's exit to its recorded completion
#     (launched by tmuxmate, and typed into an existing shell), median of N runs;
#     the reference design polls every 2000 ms.
#  2. 50 concurrent idle watches: the poller's CPU over a window, and tmux invocations
#     per second with 5 vs 50 watches (must not grow with the number of watches).
# Everything runs on a private tmux server; nothing touches your own.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-20}
cargo build --release -q
BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/tmuxmate
W=$(mktemp -d /tmp/tmuxmate-bench-watch.XXXXXX)
export TMUX_TMPDIR=$W/tmp TMUXMATE_STATE_DIR=$W/state HOME=$W
mkdir -p "$TMUX_TMPDIR"
unset TMUX TMUX_PANE
SOCK=bw
T() { tmux -L "$SOCK" "$@"; }
cleanup() {
  for s in bw bw5 bw50; do tmux -L "$s" kill-server 2>/dev/null || true; done
  sleep 0.2
  rm -rf "$W" 2>/dev/null || true
}
trap cleanup EXIT
T -f /dev/null new-session -d -s main -x 120 -y 40 sh
# --notify takes only an address that made a per-turn call.
"$BIN" -L "$SOCK" turn --agent bench >/dev/null
# A counting shim for tmux, used by the poller (it inherits the server environment).
cat > "$W/tmux-shim" <<SHIM
#!/bin/sh
echo "\$*" >> "$W/tmux-calls"
exec tmux "\$@"
SHIM
chmod +x "$W/tmux-shim"

median() { sort -n | awk '{a[NR]=$1} END {if (NR==0) {print "nan"} else if (NR%2) {print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2}}'; }

job_end() { # job id -> recorded end (ms), waiting for it
  local id=$1 i
  for i in $(seq 1 500); do
    e=$("$BIN" -L "$SOCK" watch show "$id" --json | sed -n 's/.*"end": \([0-9]*\).*/\1/p')
    [ -n "$e" ] && { echo "$e"; return; }
    sleep 0.02
  done
  echo "timeout"
}

echo "== watch: detection latency (exit -> recorded completion), $N runs each"
lat_launched=()
for i in $(seq 1 "$N"); do
  f=$W/exit.$i
  id=$("$BIN" -L "$SOCK" watch start --notify bench -- "sleep 0.2; date +%s%3N > $f" | cut -d' ' -f1)
  end=$(job_end "$id")
  lat_launched+=($(( end - $(cat "$f") )))
done
P=$(T new-window -d -P -F '#{pane_id}' sh)
sleep 0.3
lat_typed=()
for i in $(seq 1 "$N"); do
  f=$W/texit.$i
  id=$("$BIN" -L "$SOCK" watch start -t "$P" --notify bench -- "sleep 0.2; date +%s%3N > $f" | cut -d' ' -f1)
  end=$(job_end "$id")
  lat_typed+=($(( end - $(cat "$f") )))
done
ml=$(printf '%s\n' "${lat_launched[@]}" | median)
mt=$(printf '%s\n' "${lat_typed[@]}" | median)
echo "launched by tmuxmate: median ${ml} ms  (all: ${lat_launched[*]})"
echo "typed into a shell:   median ${mt} ms  (all: ${lat_typed[*]})"
echo "reference design polls every 2000 ms: ratio $(awk -v m="$ml" 'BEGIN{printf "%.0fx", 2000/(m>0?m:1)}') (launched), $(awk -v m="$mt" 'BEGIN{printf "%.0fx", 2000/(m>0?m:1)}') (typed)"

idle_window() { # count -> prints "cpu% calls/s"
  local n=$1 pid t0 t1 c1 hz
  hz=$(getconf CLK_TCK)
  SOCK=bw$n
  export TMUXMATE_STATE_DIR=$W/state$n
  T -f /dev/null new-session -d -s main -x 120 -y 40 sh
  T set-environment -g TMUXMATE_TMUX "$W/tmux-shim"
  "$BIN" -L "$SOCK" turn --agent bench >/dev/null
  for i in $(seq 1 "$n"); do
    "$BIN" -L "$SOCK" watch start --notify bench -- "sleep 600" >/dev/null
  done
  for i in $(seq 1 200); do
    pid=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' "$TMUXMATE_STATE_DIR"/pollers/*.json 2>/dev/null || true)
    [ -n "$pid" ] && break; sleep 0.05
  done
  sleep 5
  : > "$W/tmux-calls"
  t0=$(awk '{print $14+$15}' /proc/"$pid"/stat)
  sleep 10
  t1=$(awk '{print $14+$15}' /proc/"$pid"/stat)
  c1=$(wc -l < "$W/tmux-calls")
  T kill-server 2>/dev/null || true
  awk -v a="$t0" -v b="$t1" -v hz="$hz" -v c="$c1" 'BEGIN{printf "%.2f %.1f\n", (b-a)/hz/10*100, c/10}'
}
echo "== watch: idle cost of the poller (10 s window)"
read -r cpu5 calls5 < <(idle_window 5)
read -r cpu50 calls50 < <(idle_window 50)
echo " 5 watches: poller CPU ${cpu5}% of one core, ${calls5} tmux invocations/s"
echo "50 watches: poller CPU ${cpu50}% of one core, ${calls50} tmux invocations/s (target: CPU < 2%, invocations/s independent of the count)"
