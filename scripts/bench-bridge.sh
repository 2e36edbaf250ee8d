#!/usr/bin/env bash
# scripts/bench-bridge.sh: bridge benchmarks on a private tmux server with the stand-in
# Claude, Codex and Gemini CLIs (examples/agent_standin.rs, which imitate the real ones'
# screens and records; see its header). Prints one table:
#  1. `agent ask` overhead beyond the stand-in's own reply time, for a 1-line, a 50-line
#     and a 100 KB message (target: median under 150 ms at every size). The stand-ins are
#     told to take 100 ms per reply (`delay-ms`) and to record a prompt at once
#     (`record-ms` 0); the Gemini stand-in also goes idle 30 ms after its last record
#     (`idle-ms`, as Gemini CLI 0.61 does after its AfterAgent hooks). Overhead = median
#     wall time of the whole `tmuxmate agent ask` process - that reply time. It includes
#     each adapter's wait before Enter (Claude 30 ms, Codex 60 ms; Gemini: 45 ms after the
#     paste is drawn, then Left and Right each until drawn, since Gemini CLI 0.61 takes an
#     Enter read before its paste guard's end took effect as a newline; bridge/enter_probe.rs).
#  2. side open to first digest: from starting `side open -t MAIN` (MAIN: the Claude
#     stand-in's pane, its transcript attached) to the side agent's first per-turn hook
#     answering with the main's live digest (`tmuxmate hook <cli>` with the side agent's
#     TMUXMATE_SIDE_MAIN, run as soon as `side open` returned; the stand-ins run no hooks
#     themselves), for each CLI as the side agent. `side open` waits until its agent has
#     stayed up for START_GRACE (3 s, side/supervise.rs), which dominates.
# Knobs: RUNS (asks per size, default 15; 100 KB uses a third), TMUXMATE_BIN (default: a
# release build of this checkout).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
TARGET=${CARGO_TARGET_DIR:-$REPO/target}
if [ -z "${TMUXMATE_BIN:-}" ]; then
  cargo build --release -q
  TMUXMATE_BIN=$TARGET/release/tmuxmate
fi
cargo build --release -q --example agent_standin
STANDIN=$TARGET/release/examples/agent_standin
W=$(mktemp -d /tmp/tmuxmate-bench-bridge.XXXXXX)
export TMUX_TMPDIR=$W/tmp TMUXMATE_STATE_DIR=$W/state HOME=$W/home
mkdir -p "$TMUX_TMPDIR" "$HOME" "$W/bin" "$W/proj/.git"
echo 'ref: refs/heads/main' > "$W/proj/.git/HEAD"
for n in claude codex gemini; do cp "$STANDIN" "$W/bin/$n"; done
export PATH=$W/bin:$PATH
unset TMUX TMUX_PANE
SOCK=bb$$
cleanup() { tmux -L "$SOCK" kill-server 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
tmux -L "$SOCK" -f /dev/null new-session -d -s main -x 160 -y 50
export W SOCK TMUXMATE_BIN REPO
cd "$W/proj"
python3 - <<'PY'
import json, os, statistics, subprocess, time

W, SOCK, TM, REPO = os.environ["W"], os.environ["SOCK"], os.environ["TMUXMATE_BIN"], os.environ["REPO"]
RUNS = int(os.environ.get("RUNS", "15"))
DELAY_MS, IDLE_MS = 100, 30

def tm(*args, env=None, stdin=None):
    e = dict(os.environ, **(env or {}))
    return subprocess.run([TM, "-L", SOCK, *args], capture_output=True, text=True, env=e, stdin=stdin)

def ok(r):
    if r.returncode != 0:
        raise SystemExit(f"bench-bridge: {r.args[3:6]} failed: {r.stdout[-300:]} {r.stderr[-300:]}")
    return r.stdout

messages = {
    "1 line": "hello",
    "50 lines": "\n".join(f"line {i:02d}: the quick brown fox" for i in range(1, 51)),
    "100 KB": "".join(f"row {i:06d} lorem ipsum dolor sit amet, consectetur\n" for i in range(2000))[:100_000],
}
rows = []
names = {}
for cli in ("claude", "codex", "gemini"):
    sd = f"{W}/sd-{cli}"
    os.makedirs(sd, exist_ok=True)
    for f, v in (("delay-ms", DELAY_MS), ("record-ms", 0), ("idle-ms", IDLE_MS), ("banner-ms", 300)):
        open(f"{sd}/{f}", "w").write(str(v))
    st = json.loads(ok(tm("agent", "start", cli, "--json", env={"STANDIN_DIR": sd})))
    names[cli] = st
    own = DELAY_MS + (IDLE_MS if cli == "gemini" else 0)
    for size, msg in messages.items():
        f = f"{W}/msg.txt"
        open(f, "w").write(msg)
        runs = RUNS if size != "100 KB" else max(3, RUNS // 3)
        times = []
        for i in range(runs + 1):
            t = time.perf_counter()
            r = tm("agent", "ask", st["name"], "--file", f, "--json")
            dt = (time.perf_counter() - t) * 1000
            j = json.loads(ok(r))
            if not j.get("complete"):
                raise SystemExit(f"bench-bridge: {cli} {size}: incomplete reply {j}")
            if i:  # the first is a warm-up
                times.append(dt)
        med = statistics.median(times)
        rows.append((f"ask {size}", cli, f"{med:.0f} ms", f"{own} ms", f"{med - own:.0f} ms",
                     "yes" if med - own < 150 else "NO"))
        print(f"{cli:6} ask {size:8}: median {med:.0f} ms over {runs} runs (min {min(times):.0f}, max {max(times):.0f})", flush=True)

# Side open to first digest: the Claude stand-in is the main agent, its transcript attached.
main = names["claude"]
lst = json.loads(ok(tm("agent", "list", "--json")))
pane = next(x["paneId"] for x in lst if x["name"] == main["name"])
proj = next(iter(os.listdir(f"{W}/home/.claude/projects")))
tr = f"{W}/home/.claude/projects/{proj}/{main['cliSession']}.jsonl"
ok(tm("digest", "attach", "-t", pane, "--transcript", tr, "--format", "claude"))
hooks = {"claude": "hook-claude-UserPromptSubmit.json", "codex": "hook-codex-UserPromptSubmit-no-daemon.json",
         "gemini": "hook-gemini-BeforeAgent.json"}
for cli in ("claude", "codex", "gemini"):
    subprocess.run(["tmux", "-L", SOCK, "set", "-g", "@tmuxmate-side-agent", cli], check=True)
    sd = f"{W}/sd-side-{cli}"
    os.makedirs(sd, exist_ok=True)
    open(f"{sd}/banner-ms", "w").write("300")
    subprocess.run(["tmux", "-L", SOCK, "set-environment", "-g", "STANDIN_DIR", sd], check=True)
    t = time.perf_counter()
    ok(tm("side", "open", "-t", pane))
    opened = (time.perf_counter() - t) * 1000
    deadline = time.time() + 20
    while True:
        with open(f"{REPO}/tests/fixtures/{hooks[cli]}") as fh:
            h = tm("hook", cli, env={"TMUXMATE_SIDE_MAIN": pane}, stdin=fh)
        if "Live digest" in h.stdout or time.time() > deadline:
            break
        time.sleep(0.01)
    total = (time.perf_counter() - t) * 1000
    got = "Live digest" in h.stdout
    rows.append(("side open to first digest", cli, f"{total:.0f} ms", "-", f"open {opened:.0f} ms", "digest" if got else "NO DIGEST"))
    print(f"{cli:6} side open {opened:.0f} ms, first digest at {total:.0f} ms ({'ok' if got else 'no digest'})", flush=True)
    ok(tm("side", "close", "-t", pane))
for cli in names:
    tm("agent", "stop", names[cli]["name"], "--confirm")

head = ("case", "CLI", "median", "stand-in's own", "overhead", "< 150 ms")
w = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
print()
print("| " + " | ".join(h.ljust(w[i]) for i, h in enumerate(head)) + " |")
print("|" + "|".join("-" * (x + 2) for x in w) + "|")
for r in rows:
    print("| " + " | ".join(str(r[i]).ljust(w[i]) for i in range(len(head))) + " |")
PY
