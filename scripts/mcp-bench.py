#!/usr/bin/env python3
"""MCP stdio timing client for scripts/bench-peers.sh (not a general client).

Usage: mcp-bench.py SPEC.json

SPEC: {"runs": N, "servers": [{"name", "argv", "env", "calls": {op: [tool, args]}}],
       "raw": {op: argv}, "opRuns": {op: N}, "soak": {"server", "n", "calls": [[tool, args]]}}
For each server: startup to the tools/list answer (a fresh process per run: spawn,
initialize, notifications/initialized, tools/list), then, on one resident process, each
call op timed from writing the request to reading its answer. Servers, and the raw op
of the same name, are interleaved run by run (run i of each, then run i+1), so a load
change hits them all alike. For each raw op: the argv
run to completion. Prints one JSON object: {"startup": {name: [ms...]}, "calls":
{name: {op: [ms...]}}, "raw": {op: [ms...]}, "toolsBytes": {name: n}}.
Timing is perf_counter around the pipe I/O and the decoding of the answer (json.loads, as
a model's client pays it); answers are matched by id before they are decoded. opRuns
lowers the runs of an op (a 50 MB capture). soak: n calls on one resident process of that
server, cycling through its calls, then per thousand the p50 and p99 in ms and the
server's VmRSS in KiB at its end: {"soak": [{"k", "p50", "p99", "rssKiB"}]}.
"""
import json
import os
import re
import select
import subprocess
import sys
import time

ID_RE = re.compile(rb'"id"\s*:\s*(\d+)')


def spawn(s):
    env = dict(os.environ)
    env.update(s.get("env", {}))
    return subprocess.Popen(
        s["argv"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, env=env, bufsize=0)


class Conn:
    def __init__(self, s):
        self.p = spawn(s)
        self.next = 1
        # A bytearray scanned only where it is new: appending 64 KiB pipe reads to bytes
        # and searching all of it each time was quadratic (about 0.7 s of client time for
        # one 17 MB answer, charged to the server being timed).
        self.buf = bytearray()
        self.scan = 0

    def send(self, obj):
        self.p.stdin.write(json.dumps(obj).encode() + b"\n")

    def line(self):
        while True:
            i = self.buf.find(b"\n", self.scan)
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[:i + 1]
                self.scan = 0
                return line
            self.scan = len(self.buf)
            # A server that stops answering must not hang the whole bench.
            if not select.select([self.p.stdout], [], [], 60)[0]:
                raise TimeoutError("no answer within 60 s")
            chunk = os.read(self.p.stdout.fileno(), 1 << 20)
            if not chunk:
                raise EOFError("server closed stdout")
            self.buf += chunk

    def request(self, method, params):
        rid = self.next
        self.next += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = self.line()
            head, tail = line[:300], line[-300:]
            m = ID_RE.search(head) or ID_RE.search(tail)
            if m and int(m.group(1)) == rid and b'"method"' not in head[:40]:
                return line

    def handshake(self):
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=10)
        except Exception:
            self.p.kill()
            self.p.wait()


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def run_soak(conn, soak):
    out, times = [], []
    calls = soak["calls"]
    for i in range(soak["n"]):
        tool, args = calls[i % len(calls)]
        t0 = time.perf_counter()
        json.loads(conn.request("tools/call", {"name": tool, "arguments": args}))
        times.append((time.perf_counter() - t0) * 1000)
        if (i + 1) % 1000 == 0:
            t = sorted(times)
            out.append({"k": (i + 1) // 1000, "p50": t[len(t) // 2],
                        "p99": t[min(len(t) - 1, int(len(t) * 0.99))],
                        "rssKiB": rss_kib(conn.p.pid)})
            times = []
    return out


def main():
    spec = json.load(open(sys.argv[1]))
    runs = spec["runs"]
    res = {"startup": {}, "calls": {}, "raw": {}, "toolsBytes": {}, "errors": {}}
    # Interleaved: run i of every server, then run i+1, so that a load change on the
    # machine (it is shared) falls on all of them alike, and a before/after pair (BASE)
    # is compared under the same load.
    servers = spec["servers"]
    for s in servers:
        res["startup"][s["name"]] = []
    for _ in range(max(3, runs // 3)):
        for s in servers:
            name = s["name"]
            t0 = time.perf_counter()
            c = Conn(s)
            try:
                c.handshake()
                tl = c.request("tools/list", {})
            except TimeoutError as e:  # counted, not timed; the next run starts afresh
                res["errors"][f"{name}.startup"] = str(e)
                c.p.kill()
                c.close()
                continue
            res["startup"][name].append((time.perf_counter() - t0) * 1000)
            res["toolsBytes"][name] = len(
                json.dumps(json.loads(tl)["result"], separators=(",", ":")))
            c.close()
    conns = {}
    for s in servers:
        c = Conn(s)
        c.handshake()
        conns[s["name"]] = c
        res["calls"][s["name"]] = {}
    ops = []
    for s in servers:
        ops += [op for op in s["calls"] if op not in ops]
    raw = spec.get("raw", {})

    def run_raw(op, i):
        t0 = time.perf_counter()
        subprocess.run(raw[op], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, check=False)
        if i >= 2:
            res["raw"].setdefault(op, []).append((time.perf_counter() - t0) * 1000)

    for op in ops:
        having = [s for s in servers if op in s["calls"]]
        for s in having:
            res["calls"][s["name"]][op] = []
        for i in range(spec.get("opRuns", {}).get(op, runs) + 2):
            # The raw CLI doing the same work, in the same rotation.
            if op in raw:
                run_raw(op, i)
            for s in having:
                name = s["name"]
                tool, args = s["calls"][op]
                t0 = time.perf_counter()
                ans = conns[name].request("tools/call", {"name": tool, "arguments": args})
                a = json.loads(ans)
                dt = (time.perf_counter() - t0) * 1000
                if i == 0:
                    if "error" in a or a.get("result", {}).get("isError"):
                        res["errors"][f"{name}.{op}"] = ans[:300].decode(errors="replace")
                    res.setdefault("answerBytes", {}).setdefault(name, {})[op] = len(ans)
                    text = "".join(c.get("text", "") for c in a.get("result", {}).get("content", []))
                    res.setdefault("textBytes", {}).setdefault(name, {})[op] = len(text.encode())
                    # A capture cut to fit one message starts with tmuxmate's marker line.
                    res.setdefault("textHead", {}).setdefault(name, {})[op] = text[:60]
                if i >= 2:  # warmup
                    res["calls"][name][op].append(dt)
    soak = spec.get("soak")
    if soak:
        res["soak"] = run_soak(conns[soak["server"]], soak)
    for c in conns.values():
        c.close()
    for op in raw:
        if op not in res["raw"]:
            for i in range(runs + 2):
                run_raw(op, i)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
