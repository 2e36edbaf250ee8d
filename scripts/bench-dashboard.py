#!/usr/bin/env python3
"""Dashboard benchmarks (run by scripts/bench-dashboard.sh; prints a table).

N fake agents: panes whose program is named claude, codex or node (Gemini), each running
a FIFO loop in which their hook events run as the CLIs run them. Claude's and Codex's
hooks name a copy of the recorded transcript, so their digest followers run and write
the glances the dashboard reads. Their directories are git repositories (a branch each).
The live dashboard runs in a 200x50 pane of the same private server with
TMUXMATE_DASHBOARD_STATS: one line per redraw (rows, microseconds, wall-clock ms). What
woke it is printed (its wake socket; for older binaries inotify or polling).
"""
import json
import os
import shutil
import statistics
import subprocess
import time

BIN = os.environ["BIN"]
W = os.environ["W"]
N = int(os.environ.get("N", "200"))
IDLE_S = float(os.environ.get("IDLE_S", "30"))
SOCK = "bd%d" % os.getpid()
HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "tests", "fixtures")
STATS = os.path.join(W, "draws")
STATE = os.environ["TMUXMATE_STATE_DIR"]
# The harnesses whose transcript is followed (one digest follower, so one inotify
# instance, each: the kernel's default is 128 instances per user).
DIGESTS = os.environ.get("DIGESTS", "claude,codex").split(",")


def T(*args, check=True):
    r = subprocess.run(["tmux", "-L", SOCK, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SystemExit("tmux %s: %s" % (args, r.stderr))
    return r.stdout


LOOP = """exec 3<>"$1"
while read -r line <&3; do eval "$line"; done
"""


def write_json(path, v):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(v, f)
    os.rename(tmp, path)


def hook_line(harness, path):
    return "setsid sh -c '\"$0\" hook %s < \"$1\"; true' '%s' '%s'" % (harness, BIN, path)


def agent(i):
    harness = ["claude", "codex", "gemini"][i % 3]
    program = {"claude": "claude", "codex": "codex", "gemini": "node"}[harness]
    d = os.path.join(W, "a%03d" % i)
    os.makedirs(os.path.join(d, ".git"))
    with open(os.path.join(d, ".git", "HEAD"), "w") as f:
        f.write("ref: refs/heads/task-%d\n" % i)
    prog = os.path.join(d, program)
    os.symlink("/bin/sh", prog)
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    with open(os.path.join(d, "loop.sh"), "w") as f:
        f.write(LOOP)
    pane = T("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "agents:", "-n",
             "%s-%d" % (harness, i), "-c", d,
             "exec '%s' '%s/loop.sh' '%s'" % (prog, d, fifo)).strip()
    sid = "5eed0000-0000-4000-8000-%012d" % i
    ev = {"session_id": sid, "cwd": d, "hook_event_name": "UserPromptSubmit", "prompt": "go"}
    if harness not in DIGESTS:
        pass
    elif harness == "claude":
        tr = os.path.join(d, "t.jsonl")
        shutil.copy(os.path.join(FIX, "claude-transcript.jsonl"), tr)
        ev["transcript_path"] = tr
    elif harness == "codex":
        tr = os.path.join(d, "rollout.jsonl")
        shutil.copy(os.path.join(FIX, "codex-rollout.jsonl"), tr)
        ev["transcript_path"] = tr
    else:
        ev = {"session_id": sid, "cwd": d, "hook_event_name": "BeforeAgent", "prompt": "go"}
    path = os.path.join(d, "ev.json")
    write_json(path, ev)
    return pane, fifo, d, harness, path


def say(fifo, line):
    with open(fifo, "w") as f:
        f.write(line + "\n")


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def draws():
    try:
        with open(STATS) as f:
            return [tuple(float(x) for x in l.split()) for l in f if l.strip() and not l.startswith("#")]
    except FileNotFoundError:
        return []


def proc_stat(pid):
    with open("/proc/%d/stat" % pid) as f:
        s = f.read()
    fields = s[s.rfind(")") + 2:].split()
    return int(fields[11]) + int(fields[12])  # utime + stime, in ticks


def status_kb(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            if l.startswith(key + ":"):
                return int(l.split()[1])
    return 0


def dashboard_pid(pane):
    shell = int(T("display-message", "-p", "-t", pane, "#{pane_pid}").strip())
    return shell  # the pane runs the dashboard with exec


def wake_source(pid):
    """What wakes the dashboard on a file change: its wake socket (this version), else
    inotify or, without an instance left, polling (before it)."""
    inotify = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == "anon_inode:inotify":
                inotify += 1
        except OSError:
            pass
    try:
        socks = [n for n in os.listdir(os.path.join(STATE, "wake")) if n.endswith(".sock")]
    except OSError:
        socks = []
    try:
        with open(os.path.join(STATE, "log")) as f:
            polled = any("dashboard: no inotify" in l for l in f)
    except OSError:
        polled = False
    if socks:
        return "wake socket <state>/wake/%s (inotify instances held: %d)" % (socks[0], inotify)
    if polled:
        return "polled (no inotify instance left)"
    return "inotify (%d instances held)" % inotify


def main():
    T("-f", "/dev/null", "new-session", "-d", "-s", "agents", "-x", "200", "-y", "50")
    t0 = time.time()
    agents = [agent(i) for i in range(N)]
    for pane, fifo, d, harness, path in agents:
        say(fifo, hook_line(harness, path))
    # Some wait for the person, some are done.
    for k, (pane, fifo, d, harness, path) in enumerate(agents):
        if k % 7 == 0:
            perm = os.path.join(d, "perm.json")
            ev = {"session_id": "x", "cwd": d, "tool_name": "Bash",
                  "tool_input": {"command": "make deploy-%d" % k}}
            ev["hook_event_name"] = "Notification" if harness == "gemini" else "PermissionRequest"
            if harness == "gemini":
                ev["notification_type"] = "ToolPermission"
                ev["message"] = "Action required"
            write_json(perm, ev)
            say(fifo, hook_line(harness, perm))
        elif k % 5 == 0:
            stop = os.path.join(d, "stop.json")
            write_json(stop, {"session_id": "x", "cwd": d,
                              "hook_event_name": "AfterAgent" if harness == "gemini" else "Stop"})
            say(fifo, hook_line(harness, stop))
    # Wait until every agent has a state.
    end = time.time() + 120
    while time.time() < end:
        states = T("list-panes", "-a", "-F", "#{@tmuxmate-state}").split()
        if len([s for s in states if s]) >= N:
            break
        time.sleep(0.2)
    setup_s = time.time() - t0
    time.sleep(2)  # the followers' first glances
    # The board once (what --once and the MCP tool do), 5 runs.
    once = []
    for _ in range(5):
        a = time.time()
        r = subprocess.run([BIN, "-L", SOCK, "dashboard", "--once", "--json"],
                           capture_output=True, text=True)
        once.append((time.time() - a) * 1000)
        if r.returncode != 0:
            raise SystemExit(r.stderr)
    doc = json.loads(r.stdout)
    rows = len(doc["agents"])
    with_line = len([a for a in doc["agents"] if a["doing"]])
    # The live view in a 200x50 pane.
    dash = T("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "agents:", "-n", "dash",
             "exec env TMUXMATE_DASHBOARD_STATS='%s' '%s' dashboard" % (STATS, BIN)).strip()
    T("resize-window", "-t", dash, "-x", "200", "-y", "50")
    end = time.time() + 20
    while time.time() < end and "tmuxmate" not in T("capture-pane", "-p", "-t", dash):
        time.sleep(0.05)
    pid = dashboard_pid(dash)
    time.sleep(1)
    # Scroll through every row and back (each key: one redraw).
    for key in ["PageDown"] * (N // 40 + 2) + ["PageUp"] * (N // 40 + 2) + ["Down"] * 60:
        T("send-keys", "-t", dash, key)
        time.sleep(0.02)
    time.sleep(1)
    ds = [d for d in draws() if d[0] >= N]
    times = [d[1] / 1000 for d in ds]
    rss = status_kb(pid, "VmRSS")
    hwm = status_kb(pid, "VmHWM")
    # An event to its redraw: a needs-you, from the marker's mtime to the first redraw
    # after it whose screen shows the pane's new state.
    lat = []
    marker = os.path.join(STATE, "agents", "changed")
    for k in range(10):
        pane, fifo, d, harness, path = agents[(1 + 7 * k) % N]
        perm = os.path.join(d, "perm2.json")
        ev = {"session_id": "x", "cwd": d, "hook_event_name": "PermissionRequest",
              "tool_name": "Bash", "tool_input": {"command": "rm -rf build-%d" % k}}
        if harness == "gemini":
            ev = {"session_id": "x", "cwd": d, "hook_event_name": "Notification",
                  "notification_type": "ToolPermission", "message": "Action required"}
        write_json(perm, ev)
        before = len(draws())
        say(fifo, hook_line(harness, perm))
        end = time.time() + 10
        got = None
        while time.time() < end and got is None:
            if T("display-message", "-p", "-t", pane, "#{@tmuxmate-state}").strip() == "needs-you":
                m = os.stat(marker).st_mtime_ns / 1e6
                later = [x for x in draws()[before:] if x[2] >= m]
                if later:
                    got = later[0][2] - m
            time.sleep(0.005)
        if got is not None:
            lat.append(got)
        time.sleep(0.3)
    # Idle: nothing happens for IDLE_S seconds.
    time.sleep(1)
    a = proc_stat(pid)
    n0 = len(draws())
    time.sleep(IDLE_S)
    idle_ticks = proc_stat(pid) - a
    idle_draws = len(draws()) - n0
    hz = os.sysconf("SC_CLK_TCK")
    source = wake_source(pid)
    screen = T("capture-pane", "-p", "-t", dash)
    if os.environ.get("KEEP") != "1":
        T("kill-server", check=False)
    else:
        print("kept: tmux -L %s attach" % SOCK)
    with open("/proc/sys/fs/inotify/max_user_instances") as f:
        limit = f.read().strip()
    print("dashboard benchmark, %d agents (setup %.0f s; %d rows, %d with a digest line; digests of %s;"
          " fs.inotify.max_user_instances %s)" % (N, setup_s, rows, with_line, ",".join(DIGESTS), limit))
    print("the dashboard's file events: %s" % source)
    print("| what | value |")
    print("|---|---|")
    print("| board read once (`dashboard --once --json`, process included), median of 5 | %.0f ms |"
          % statistics.median(once))
    print("| redraw while scrolling, %d redraws at 200x50: median / p99 / max | %.2f / %.2f / %.2f ms |"
          % (len(times), statistics.median(times), percentile(times, 0.99), max(times)))
    print("| memory of the live dashboard: RSS now / peak | %.1f / %.1f MB |" % (rss / 1024, hwm / 1024))
    if lat:
        print("| event (change marker written) to the redraw, %d events: median / max | %.0f / %.0f ms |"
              % (len(lat), statistics.median(lat), max(lat)))
    print("| idle %.0f s: CPU time / redraws | %.0f ms / %d |" % (IDLE_S, idle_ticks * 1000 / hz, idle_draws))
    print()
    print("\n".join(screen.splitlines()[:12]))


if __name__ == "__main__":
    try:
        main()
    finally:
        if os.environ.get("KEEP") != "1":
            T("kill-server", check=False)
