#!/usr/bin/env bash
# Remote (--host) benchmarks: a private sshd on 127.0.0.1 (Debian's openssh-server, keys
# generated into a temp dir) in front of a private tmux server; nothing touches your own
# ssh config, known_hosts or tmux server.
#
#   handshake  the first call after no master: how many connections it opened (target 1)
#              and its time against a warm call
#   list       `tmuxmate --host H list --json` against `ssh -S <master> H tmux list-panes -a -F`
#              with the same fields over the same warm master (target: within 1.3x, medians)
#              The three target rows (list, capture and send after the install) time the
#              two commands interleaved (ABBA order, RUNS pairs), so a change of machine
#              load between two separate runs cannot move their ratio; the others use
#              hyperfine.
#   capture    `tmuxmate --host H capture -t %N` against `ssh ... tmux capture-pane -p -t %N`
#              (one tmux command list), before and after `tmuxmate remote install H`
#   send       `tmuxmate --host H send -t %N TEXT` against `ssh ... tmux send-keys -l -t %N TEXT`,
#              first with plain tmux on the host (several calls: a row for the record),
#              then after the install (one call to the host's tmuxmate: the target row)
#   sessions   ssh sessions (remote commands) sshd started for one capture and one send
#              after the install (target 1 each)
#   twenty     20 calls in a row and 20 at once: connections sshd accepted (target 1 + 0)
#
# Usage: scripts/bench-ssh.sh [--strict]
#   Environment (all optional): BIN (default: cargo build --release), HYPERFINE, RUNS
#   (default 30), WARMUP (default 3). Needs /usr/sbin/sshd (apt-get install
#   openssh-server); without it the bench says so and exits 0.
#   --strict   exit 1 when a target is missed (default: report it and exit 0)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

STRICT=0
for a in "$@"; do
    case "$a" in
        --strict) STRICT=1 ;;
        -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "bench-ssh: unknown argument $a (try --help)" >&2; exit 2 ;;
    esac
done
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-3}
say() { printf '%s\n' "$*" >&2; }

command -v tmux >/dev/null 2>&1 || { say "bench-ssh: tmux is not installed"; exit 1; }
if [ ! -x /usr/sbin/sshd ]; then
    say "bench-ssh: skipped: /usr/sbin/sshd is missing (apt-get install openssh-server)"
    exit 0
fi
HYPERFINE=${HYPERFINE:-$(command -v hyperfine || true)}
if [ -z "$HYPERFINE" ]; then
    say "bench-ssh: installing hyperfine"
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

W=$(mktemp -d /tmp/tmuxmate-bench-ssh.XXXXXX)
export TMUX_TMPDIR=$W/tmp TMUXMATE_STATE_DIR=$W/state HOME=$W SHELL=/bin/sh
mkdir -p "$TMUX_TMPDIR" /run/sshd
unset TMUX TMUX_PANE XDG_RUNTIME_DIR TMUXMATE_HOST
SOCK=$W/tsock
T() { tmux -S "$SOCK" "$@"; }
SSHD_PID=""
# shellcheck disable=SC2317 # cleanup runs from the EXIT trap
cleanup() {
    for s in "$W"/state/ssh/????????????????; do
        if [ -S "$s" ]; then ssh -o ControlPath="$s" -O exit x >/dev/null 2>&1 || true; fi
    done
    if [ -n "$SSHD_PID" ]; then kill "$SSHD_PID" 2>/dev/null || true; fi
    T kill-server >/dev/null 2>&1 || true
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- sshd on a free port ------------------------------------------------------------------
for k in host user; do ssh-keygen -q -t ed25519 -N '' -f "$W/${k}_key"; done
cp "$W/user_key.pub" "$W/authorized_keys"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$W/sshd_config" <<EOF
Port $PORT
ListenAddress 127.0.0.1
HostKey $W/host_key
AuthorizedKeysFile $W/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PidFile none
LogLevel VERBOSE
SetEnv HOME=$W/remote-home
EOF
mkdir -p "$W/remote-home"
/usr/sbin/sshd -D -e -f "$W/sshd_config" 2>"$W/sshd.log" &
SSHD_PID=$!
for _ in $(seq 1 200); do grep -q "Server listening" "$W/sshd.log" && break; sleep 0.05; done
grep -q "Server listening" "$W/sshd.log" || { say "bench-ssh: sshd did not start"; cat "$W/sshd.log" >&2; exit 1; }
echo "[127.0.0.1]:$PORT $(cut -d' ' -f1,2 "$W/host_key.pub")" >"$W/known_hosts"
cat >"$W/ssh_config" <<EOF
Host *
  IdentityFile $W/user_key
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile $W/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
EOF
export TMUXMATE_SSH_CONFIG=$W/ssh_config
H=127.0.0.1:$PORT
conns() { grep -c "Connection from 127.0.0.1" "$W/sshd.log" || true; }

T -f /dev/null new-session -d -s main -x 120 -y 40 sh
P=$(T new-window -d -P -F '#{pane_id}' "seq 1 2000; exec cat >/dev/null")
TM="$BIN --host $H -S $SOCK"

printf 'tmuxmate bench-ssh: %s, %s, %s, %s runs\n' "$("$BIN" --version)" "$(tmux -V)" "$(ssh -V 2>&1)" "$RUNS"
MISSES=0
verdict() { # LABEL VALUE OP TARGET UNIT
    if awk -v v="$2" -v t="$4" -v op="$3" 'BEGIN { exit !((op == "<=") ? v <= t : v >= t) }'; then
        printf '  %-52s %s%s  target %s %s%s  ok\n' "$1" "$2" "$5" "$3" "$4" "$5"
    else
        printf '  %-52s %s%s  target %s %s%s  MISSED\n' "$1" "$2" "$5" "$3" "$4" "$5"
        MISSES=$((MISSES + 1))
    fi
}
median_ms() {
    python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["results"][0]["median"]*1000))' "$1"
}
hf() { # NAME COMMAND
    "$HYPERFINE" -N --style basic --warmup "$WARMUP" --runs "$RUNS" \
        --export-json "$W/$1.json" "$2" >"$W/$1.log" 2>&1 || {
        say "bench-ssh: hyperfine failed for $1:"
        tail -n 20 "$W/$1.log" >&2
        exit 1
    }
}
ms() { python3 -c 'import time; print(int(time.time()*1000))'; }

# --- handshake: the first call ---------------------------------------------------------------
c0=$(conns)
t0=$(ms)
$TM list >/dev/null
t1=$(ms)
first=$((t1 - t0))
c1=$(conns)
t0=$(ms)
$TM list >/dev/null
warm=$(($(ms) - t0))
printf '\nhandshake: first call %s ms, second call %s ms\n' "$first" "$warm"
verdict "connections opened by the first call" "$((c1 - c0))" "<=" 1 ""

masters=("$W"/state/ssh/????????????????)
MASTER=${masters[0]}
RAW="ssh -F $W/ssh_config -o BatchMode=yes -o ControlPath=$MASTER -p $PORT 127.0.0.1 --"

# --- list ---------------------------------------------------------------------------------
F="'#{session_id}#{session_name}#{session_attached}#{window_id}#{window_index}#{window_name}#{window_active}#{window_layout}#{pane_id}#{pane_index}#{pane_active}#{pane_tty}#{pane_pid}#{pane_width}#{pane_height}#{pane_dead}#{pane_in_mode}#{pane_mode}#{@tmuxmate-created}#{@tmuxmate-job}#{pane_current_command}'"
# pair NAME RAW-COMMAND OUR-COMMAND: both timed interleaved (ABBA), medians into
# $W/NAME-ssh.json and $W/NAME-tmuxmate.json in hyperfine's shape.
pair() {
    python3 - "$W" "$1" "$2" "$3" "$RUNS" "$WARMUP" <<'PY'
import json, os, shlex, shutil, statistics, sys, time
w, name, raw, ours, runs, warm = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
cmds = [shlex.split(c) for c in (raw, ours)]
cmds = [[shutil.which(c[0]) or c[0]] + c[1:] for c in cmds]
dn = os.open(os.devnull, os.O_RDWR)
fa = [(os.POSIX_SPAWN_DUP2, dn, 0), (os.POSIX_SPAWN_DUP2, dn, 1), (os.POSIX_SPAWN_DUP2, dn, 2)]
def once(c):
    s = time.perf_counter()
    pid = os.posix_spawn(c[0], c, os.environ, file_actions=fa)
    _, st = os.waitpid(pid, 0)
    if st != 0:
        sys.exit("bench-ssh: %s failed (status %d): %s" % (name, st, " ".join(c)))
    return time.perf_counter() - s
for c in cmds:
    for _ in range(warm):
        once(c)
t = [[], []]
for i in range(runs):
    for j in ((0, 1) if i % 2 == 0 else (1, 0)):
        t[j].append(once(cmds[j]))
for j, tag in ((0, "ssh"), (1, "tmuxmate")):
    json.dump({"results": [{"median": statistics.median(t[j]), "times": t[j]}]},
              open(os.path.join(w, "%s-%s.json" % (name, tag)), "w"))
PY
}
pair list "$RAW tmux -S $SOCK list-panes -a -F \"$F\"" "$TM list --json"
ratio() { awk -v a="$(median_ms "$W/$1-tmuxmate.json")" -v b="$(median_ms "$W/$1-ssh.json")" 'BEGIN { printf "%.2f", a / b }'; }
printf '\nlist: ssh -S master tmux list-panes %s ms, tmuxmate --host list --json %s ms\n' \
    "$(median_ms "$W/list-ssh.json")" "$(median_ms "$W/list-tmuxmate.json")"
verdict "list ratio tmuxmate / ssh+tmux" "$(ratio list)" "<=" 1.3 "x"

# --- capture and send: plain tmux on the host, then tmuxmate installed there ------------
sessions() { grep -c "Starting session" "$W/sshd.log" || true; }
hf capture-ssh "$RAW tmux -S $SOCK capture-pane -p -t $P"
hf send-ssh "$RAW tmux -S $SOCK send-keys -l -t $P -- hello"
hf capture-plain "$TM capture -t $P"
hf send-plain "$TM send -t $P hello"
plain_ratio() { awk -v a="$(median_ms "$W/$1-plain.json")" -v b="$(median_ms "$W/$1-ssh.json")" 'BEGIN { printf "%.2f", a / b }'; }
printf '\nbefore remote install: capture %s ms (%sx ssh+tmux %s ms), send %s ms (%sx ssh+tmux %s ms)\n' \
    "$(median_ms "$W/capture-plain.json")" "$(plain_ratio capture)" "$(median_ms "$W/capture-ssh.json")" \
    "$(median_ms "$W/send-plain.json")" "$(plain_ratio send)" "$(median_ms "$W/send-ssh.json")"

"$BIN" remote install "$H" >/dev/null
s0=$(sessions)
$TM capture -t "$P" >/dev/null
s1=$(sessions)
$TM send -t "$P" hello >/dev/null
s2=$(sessions)
printf '\nsessions: one capture %s, one send %s\n' "$((s1 - s0))" "$((s2 - s1))"
verdict "ssh sessions for one capture (tmuxmate on the host)" "$((s1 - s0))" "<=" 1 ""
verdict "ssh sessions for one send (tmuxmate on the host)" "$((s2 - s1))" "<=" 1 ""

pair capture "$RAW tmux -S $SOCK capture-pane -p -t $P" "$TM capture -t $P"
printf '\ncapture: ssh -S master tmux capture-pane %s ms, tmuxmate --host capture %s ms\n' \
    "$(median_ms "$W/capture-ssh.json")" "$(median_ms "$W/capture-tmuxmate.json")"
verdict "capture ratio tmuxmate / ssh+tmux" "$(ratio capture)" "<=" 1.3 "x"

pair send "$RAW tmux -S $SOCK send-keys -l -t $P -- hello" "$TM send -t $P hello"
printf '\nsend: ssh -S master tmux send-keys -l %s ms, tmuxmate --host send %s ms\n' \
    "$(median_ms "$W/send-ssh.json")" "$(median_ms "$W/send-tmuxmate.json")"
verdict "send ratio tmuxmate / ssh+tmux" "$(ratio send)" "<=" 1.3 "x"

# --- twenty: in a row and at once ----------------------------------------------------------
c0=$(conns)
for _ in $(seq 1 20); do $TM list >/dev/null; done
c1=$(conns)
PIDS=()
for _ in $(seq 1 20); do
    $TM list >/dev/null &
    PIDS+=($!)
done
# Not a bare `wait`: that would also wait for sshd.
for p in "${PIDS[@]}"; do wait "$p"; done
c2=$(conns)
printf '\ntwenty: connections opened by 20 calls in a row %s, by 20 at once %s\n' "$((c1 - c0))" "$((c2 - c1))"
verdict "connections for 40 calls over the warm master" "$((c2 - c0))" "<=" 0 ""

if [ "$MISSES" -gt 0 ]; then
    printf '\n%s ssh target(s) missed\n' "$MISSES"
    [ "$STRICT" -eq 1 ] && exit 1
fi
exit 0
