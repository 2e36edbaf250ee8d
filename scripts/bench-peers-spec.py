#!/usr/bin/env python3
"""The mcp-bench.py spec of one bench-peers.sh phase (not a general tool).

Usage: bench-peers-spec.py PHASE   (main | list1000), the rest from the environment that
bench-peers.sh sets (BIN, BASE_BIN, SOCK, SOCKPATH, WIN, BIG, SINK, TEXT, F, TMUXP, PY,
RS, RUNS, SOAK, CAPS). Prints the spec as JSON.
"""
import json
import os
import sys

e = os.environ
phase = sys.argv[1]
runs = int(e["RUNS"])
caps = []  # (size, pane, bytes)
for line in open(e["CAPS"]):
    size, pane, got = line.split()
    caps.append((size, pane, int(got)))


def op_runs(got):
    return 5 if got > 20_000_000 else 10 if got > 4_000_000 else runs


ours = {"list": ["tmux_list", {}]}
lib = {"list": ["list_panes", {"window_id": e["WIN"]}]}
rs = {"list": ["list-panes", {"windowId": e["WIN"]}]}
raw = {"list": [e["TMUXP"], "-L", e["SOCK"], "list-panes", "-a", "-F", e["F"]]}
op_n = {}
if phase == "main":
    ours.update({
        "send": ["tmux_send_keys", {"target": e["SINK"], "text": e["TEXT"], "enter": True}],
        "run": ["tmux_run", {"cmd": ["true"]}],
        "capture": ["tmux_capture", {"target": e["BIG"], "all": True}],
    })
    lib["send"] = ["send_keys", {"pane_id": e["SINK"], "keys": e["TEXT"], "enter": True,
                                 "literal": True}]
    rs["send"] = ["send-keys", {"paneId": e["SINK"], "keys": e["TEXT"], "literal": True,
                                "enter": True}]
    raw["send"] = ["sh", "-c",
                   '"$0" -L "$1" send-keys -t "$2" -l "$3" && "$0" -L "$1" send-keys -t "$2" Enter',
                   e["TMUXP"], e["SOCK"], e["SINK"], e["TEXT"]]
    raw["send-1"] = [e["TMUXP"], "-L", e["SOCK"], "send-keys", "-t", e["SINK"], "-l", e["TEXT"]]
    for size, pane, got in caps:
        op = f"cap-{size}"
        ours[op] = ["tmux_capture", {"target": pane, "all": True, "maxBytes": got * 2 + 100_000}]
        lib[op] = ["capture_pane", {"pane_id": pane, "start": -700_000, "max_lines": None}]
        rs[op] = ["capture-pane", {"paneId": pane, "start": -700_000}]
        raw[op] = [e["TMUXP"], "-L", e["SOCK"], "capture-pane", "-p", "-S", "-", "-t", pane]
        op_n[op] = op_runs(got)

servers = [{"name": "tmuxmate", "argv": [e["BIN"], "-L", e["SOCK"], "mcp"], "env": {},
            "calls": ours}]
if e.get("BASE_BIN"):
    servers.append(dict(servers[0], name="base", argv=[e["BASE_BIN"], "-L", e["SOCK"], "mcp"]))
if phase == "main" and os.path.exists(os.path.join(e["PY"], "libtmux_mcp")):
    servers.append({"name": "libtmux-mcp", "argv": ["python3", "-m", "libtmux_mcp"],
                    "env": {"PYTHONPATH": e["PY"], "LIBTMUX_SOCKET": e["SOCK"]}, "calls": lib})
if phase == "main" and os.access(e["RS"], os.X_OK):
    servers.append({"name": "tmux-mcp-rs", "argv": [e["RS"], "--socket", e["SOCKPATH"]],
                    "env": {}, "calls": rs})

spec = {"runs": runs, "servers": servers, "raw": raw, "opRuns": op_n}
if phase == "main" and int(e["SOAK"]) > 0:
    small = caps[0][1] if caps else e["SINK"]
    spec["soak"] = {"server": "tmuxmate", "n": int(e["SOAK"]), "calls": [
        ["tmux_list", {}],
        ["tmux_capture", {"target": small}],
        ["tmux_send_keys", {"target": e["SINK"], "text": e["TEXT"], "enter": True}],
    ]}
json.dump(spec, sys.stdout)
