// MCP capture timing with a Node client, for `NODE=1 scripts/bench-peers.sh` (not a general client).
//
// Usage: node mcp-bench-node.mjs SPEC.json
// SPEC: {"runs": N, "servers": [{"name", "argv", "env", "calls": {op: [tool, args]}}],
//        "raw": {op: argv}}
// Claude Code is a Node program whose MCP client reads a server's stdout with the MCP
// TypeScript SDK's ReadBuffer (its Buffer.concat of every chunk to all the earlier ones,
// and an indexOf of the whole buffer per chunk, is in the 2.1.332 binary). Each call is
// timed twice on the same resident server: read the SDK's way ("sdk"), and read in linear
// time ("linear": chunks kept, the newline searched in the new chunk only, joined once),
// both decoding with JSON.parse. Raw ops: the argv spawned, its stdout gathered and joined
// once, decoded as UTF-8, to its exit. Runs of every server and the raw op are
// interleaved. Prints {"calls": {name: {op: {sdk: [ms], linear: [ms]}}}, "raw": {op: [ms]}}.
import { spawn } from 'node:child_process';
import fs from 'node:fs';

const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));

class Conn {
  constructor(s) {
    this.p = spawn(s.argv[0], s.argv.slice(1), {
      env: { ...process.env, ...(s.env || {}) },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    this.next = 1;
    this.want = null;
    this.p.stdout.on('data', (c) => this.want && this.want(c));
  }

  // One request; resolves with the answer's decoded object once read in `mode`.
  request(method, params, mode) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      let buf; // sdk
      const chunks = []; // linear
      let have = 0;
      const done = (line) => {
        this.want = null;
        const msg = JSON.parse(line);
        if (msg.id === id) resolve(msg);
        else reject(new Error(`answer ${msg.id} for request ${id}`));
      };
      this.want = (c) => {
        if (mode === 'sdk') {
          buf = buf ? Buffer.concat([buf, c]) : c;
          const i = buf.indexOf('\n');
          if (i >= 0) done(buf.toString('utf8', 0, i));
        } else {
          const i = c.indexOf('\n');
          if (i < 0) {
            chunks.push(c);
            have += c.length;
            return;
          }
          chunks.push(c.subarray(0, i));
          done(Buffer.concat(chunks, have + i).toString('utf8'));
        }
      };
      this.p.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  }

  async handshake() {
    await this.request('initialize', {
      protocolVersion: '2025-06-18', capabilities: {},
      clientInfo: { name: 'bench-node', version: '0' },
    }, 'linear');
    this.p.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  }

  close() { this.p.stdin.end(); }
}

function runRaw(argv) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const p = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] });
    const chunks = [];
    p.stdout.on('data', (c) => chunks.push(c));
    p.on('close', () => {
      Buffer.concat(chunks).toString('utf8');
      resolve(performance.now() - t0);
    });
  });
}

const res = { calls: {}, raw: {}, errors: {} };
const conns = {};
for (const s of spec.servers) {
  conns[s.name] = new Conn(s);
  await conns[s.name].handshake();
  res.calls[s.name] = {};
}
const ops = [...new Set(spec.servers.flatMap((s) => Object.keys(s.calls)))];
for (const op of ops) {
  const runs = (spec.opRuns || {})[op] || spec.runs;
  for (let i = 0; i < runs + 2; i++) {
    if (spec.raw[op]) {
      const dt = await runRaw(spec.raw[op]);
      if (i >= 2) (res.raw[op] ||= []).push(dt);
    }
    for (const s of spec.servers) {
      if (!s.calls[op]) continue;
      const [tool, args] = s.calls[op];
      for (const mode of ['sdk', 'linear']) {
        const t0 = performance.now();
        const a = await conns[s.name].request('tools/call', { name: tool, arguments: args }, mode);
        const dt = performance.now() - t0;
        if (a.error || (a.result && a.result.isError)) {
          res.errors[`${s.name}.${op}`] = JSON.stringify(a).slice(0, 300);
        }
        const row = ((res.calls[s.name][op] ||= {})[mode] ||= []);
        if (i >= 2) row.push(dt);
      }
    }
  }
}
for (const c of Object.values(conns)) c.close();
console.log(JSON.stringify(res));
