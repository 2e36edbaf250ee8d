#!/usr/bin/env python3
"""The table and checks of bench-peers.sh (not a general tool).

Usage: bench-peers-report.py RESULT.json RESULT1000.json BIN CAPS PANES PANES1000 STRICT
Prints a Markdown table of medians (ratio to the raw tmux CLI), what the model reads per
tool, the soak, and the targets; exits 1 on a missed target when STRICT is 1.
"""
import json
import math
import os
import statistics
import sys

r = json.load(open(sys.argv[1]))
r1000 = json.load(open(sys.argv[2]))
binsize = os.path.getsize(sys.argv[3])
caps = [line.split() for line in open(sys.argv[4])]
panes, panes1000, strict = int(sys.argv[5]), int(sys.argv[6]), sys.argv[7] == "1"


def med(v):
    return statistics.median(v) if v else math.nan


names = list(r["startup"].keys())
raw = {k: med(v) for k, v in r["raw"].items()}
raw1000 = med(r1000["raw"]["list"])
print(f"tmuxmate bench-peers: binary {binsize} B, medians in ms (ratio to raw tmux CLI)")
print("| row | raw tmux | " + " | ".join(names) + " |")
print("|---|---|" + "---|" * len(names))
print("| startup to tools/list | - | "
      + " | ".join(f"{med(r['startup'][n]):.1f}" for n in names) + " |")
print("| tools/list bytes | - | " + " | ".join(str(r["toolsBytes"].get(n, "?")) for n in names)
      + " |")


# Claude Code closes a server's connection on a message over 10 MiB; tmuxmate cuts a
# capture to stay under MAX_MESSAGE (docs/mcp.md#answer-size).
CLIENT_MAX = 10 << 20
MAX_MESSAGE = 10_000_000


def cut(res, n, op):
    """Whether server n's answer to capture op was cut (it starts with the marker line)."""
    return res.get("textHead", {}).get(n, {}).get(op, "").startswith("[... ")


def row(label, res, op, rawms, who, capture=False):
    cells = []
    for n in who:
        v = res["calls"].get(n, {}).get(op)
        if not v:
            cells.append("-")
            continue
        m = med(v)
        cell = f"{m:.2f} ({m / rawms:.2f}x)" if not math.isnan(rawms) else f"{m:.1f}"
        a = res.get("answerBytes", {}).get(n, {}).get(op)
        if a is not None and a > CLIENT_MAX:
            cell += f" [{a:,} B line: Claude Code closes the connection]"
        elif capture and cut(res, n, op):
            cell += f" [cut to {res['textBytes'][n][op]:,} B: one message]"
        cells.append(cell)
    base = f"{rawms:.2f}" if not math.isnan(rawms) else "-"
    print(f"| {label} | {base} | " + " | ".join(cells) + " |")


row(f"list ({panes} panes)", r, "list", raw["list"], names)
row(f"list ({panes1000} panes)", r1000, "list", raw1000, names)
for size, _pane, got in caps:
    row(f"capture all, {size} ({int(got):,} B)", r, f"cap-{size}", raw[f"cap-{size}"], names,
        True)
row("capture, default budget (100k lines)", r, "capture", math.nan, names)
row("send one line + Enter", r, "send", raw["send"], names)
row("run true (exit status)", r, "run", math.nan, names)
print(f"(raw send is two spawns: -l TEXT, then Enter; one `send-keys -l` alone: "
      f"{raw['send-1']:.2f} ms)")

print("\nwhat the model reads (bytes of the answer's text blocks; answer = whole JSON-RPC line)")
print("| call | " + " | ".join(f"{n} text B | {n} answer B" for n in names) + " |")
print("|---|" + "---|---|" * len(names))
for op in r["answerBytes"].get("tmuxmate", {}):
    cells = []
    for n in names:
        t = r.get("textBytes", {}).get(n, {}).get(op)
        a = r.get("answerBytes", {}).get(n, {}).get(op)
        cells += [str(t) if t is not None else "-", str(a) if a is not None else "-"]
    print(f"| {op} | " + " | ".join(cells) + " |")
t200 = r["textBytes"]["tmuxmate"]["list"]
t1000 = r1000["textBytes"]["tmuxmate"]["list"]
print(f"tmux_list text: {t200 / panes:.1f} B a pane at {panes} panes, "
      f"{t1000 / panes1000:.1f} at {panes1000}")

soak = r.get("soak") or []
if soak:
    print("\nsoak: tmuxmate mcp, one process, calls cycling list / capture / send")
    print("| calls (thousands) | p50 ms | p99 ms | VmRSS KiB |")
    print("|---|---|---|---|")
    for s in soak:
        print(f"| {s['k']} | {s['p50']:.2f} | {s['p99']:.2f} | {s['rssKiB']} |")

for res in (r, r1000):
    if res["errors"]:
        print("errors:", json.dumps(res["errors"])[:800])

t = r["calls"]["tmuxmate"]
checks = [("startup < 10 ms", med(r["startup"]["tmuxmate"]) < 10),
          (f"list {panes} <= 0.8x raw", med(t["list"]) <= 0.8 * raw["list"]),
          (f"list {panes1000} <= 0.8x raw",
           med(r1000["calls"]["tmuxmate"]["list"]) <= 0.8 * raw1000),
          (f"list text <= 60 B a pane ({panes})", t200 / panes <= 60),
          ("send <= 1.0x raw", med(t["send"]) <= raw["send"])]
cut_ops = set()
for size, _pane, _got in caps:
    op = f"cap-{size}"
    if cut(r, "tmuxmate", op):
        # Not the same work as the raw capture: the answer a client can take instead.
        cut_ops.add(op)
        a = r["answerBytes"]["tmuxmate"][op]
        checks.append((f"capture {size}: one message <= {MAX_MESSAGE:,} B", a <= MAX_MESSAGE))
        continue
    checks.append((f"capture {size} <= 1.1x raw", med(t[op]) <= 1.1 * raw[op]))
for n in names[1:]:
    if n == "base":
        continue
    for op in ["list", "send"] + [f"cap-{c[0]}" for c in caps]:
        if op not in cut_ops and r["calls"][n].get(op):
            checks.append((f"{op} ahead of {n}", med(t[op]) < med(r["calls"][n][op])))
if len(soak) >= 2:
    first, last = soak[0], soak[-1]
    checks.append(("soak p50 flat (last <= 1.25x first)", last["p50"] <= 1.25 * first["p50"]))
    checks.append(("soak VmRSS flat (last <= first + 4 MiB)",
                   last["rssKiB"] <= first["rssKiB"] + 4096))
misses = 0
for label, ok in checks:
    print(f"  {label:<40} {'ok' if ok else 'MISSED'}")
    misses += not ok
sys.exit(1 if misses and strict else 0)
