#!/usr/bin/env bash
# `tmuxmate mcp` registered with the REAL Claude Code and Codex CLI of the agent rig
# (../shared/rig: real CLIs in a private tmux server, a mock model API on 127.0.0.1):
# the mock model calls mcp__tmuxmate__tmux_list and mcp__tmuxmate__tmux_capture, and the
# tools' results must come back to the mock in the next model request (its request log)
# as their text blocks: the list's tree, the capture's text, not the JSON document (both
# clients hand the model a result's structured content whenever it has one).
#
#   Claude Code: `claude mcp add --scope user tmuxmate -- BIN mcp` (HOME = the rig's
#                claude-home), tools allowed with permissions.allow ["mcp__tmuxmate"]
#   Codex:       `[mcp_servers.tmuxmate]` appended to the rig's config.toml, as install
#                writes it (env_vars TMUX, TMUX_PANE); model REAL_MCP_CODEX_MODEL (default
#                an unknown slug, whose MCP tools are not deferred behind a tool search)
#
# A third call captures a pane of 50 MB of history whole (maxBytes 100 MB): Claude Code
# closes the connection of a server that writes more than 10 MiB in one message (its
# result is then "Connection closed"), so tmuxmate cuts the capture to fit; the answer must
# reach the model and the server must not have been started twice.
#
# Usage: scripts/real-mcp.sh [claude|codex]...   (default: both)
#   BIN      tmuxmate binary (default: cargo build --release)
#   RIG_DIR  an installed copy of the rig (default: ../shared/rig copied to a temp dir,
#            then `npm install` there, about 800 MB)
# Prints one table row per client; exit 1 when a client's result did not reach the mock.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
CLIENTS=("$@")
[ ${#CLIENTS[@]} -gt 0 ] || CLIENTS=(claude codex)
say() { printf '%s\n' "$*" >&2; }
if [ -z "${BIN:-}" ]; then
    cargo build --release -q
    BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/tmuxmate
fi
if [ -z "${RIG_DIR:-}" ]; then
    RIG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tmuxmate-real-mcp-rig.XXXXXX")
    cp -r "$ROOT/../shared/rig/." "$RIG_DIR/"
fi
if [ ! -d "$RIG_DIR/node_modules/@anthropic-ai" ]; then
    say "real-mcp: npm install in $RIG_DIR"
    (cd "$RIG_DIR" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi
export RIG_RUN_ROOT=${RIG_RUN_ROOT:-/var/tmp/tmuxmate-real-mcp}
W=$(mktemp -d "${TMPDIR:-/tmp}/tmuxmate-real-mcp.XXXXXX")
PROJ=$W/proj
mkdir -p "$PROJ"
# Claude Code names MCP tools mcp__SERVER__TOOL. Codex 0.171 offers them upfront only for
# a model without its tool search (an unknown slug: catalog models such as gpt-5.5 defer
# them, and the mock cannot script a tool search), as one namespace `mcp__tmuxmate` whose
# calls carry the namespace; the copy's mock gets a `namespace` step key for that.
cat >"$W/script-claude.json" <<'EOF'
[{"match": "(?i)tmuxmate mcp check", "steps": [
  {"text": "Listing panes.", "tool": "mcp__tmuxmate__tmux_list", "input": {}},
  {"tool": "mcp__tmuxmate__tmux_capture", "input": {"target": "rig:0.0", "maxBytes": 4000}},
  {"tool": "mcp__tmuxmate__tmux_capture", "input": {"target": "big:0.0", "all": true, "maxBytes": 100000000}},
  "mcp check done"
]}]
EOF
cat >"$W/script-codex.json" <<'EOF'
[{"match": "(?i)tmuxmate mcp check", "steps": [
  {"text": "Listing panes.", "tool": "tmux_list", "namespace": "mcp__tmuxmate", "input": {}},
  {"tool": "tmux_capture", "namespace": "mcp__tmuxmate", "input": {"target": "rig:0.0", "maxBytes": 4000}},
  {"tool": "tmux_capture", "namespace": "mcp__tmuxmate", "input": {"target": "big:0.0", "all": true, "maxBytes": 100000000}},
  "mcp check done"
]}]
EOF
python3 - "$RIG_DIR/mock_openai.py" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = '                "status": "completed",\n            }\n        )\n    if not items:'
new = ('                "status": "completed",\n            }\n        )\n'
       '        if step.get("namespace"):  # real-mcp.sh: a namespaced (MCP) tool call\n'
       '            items[-1]["namespace"] = step["namespace"]\n    if not items:')
if "real-mcp.sh: a namespaced" not in s:
    if old not in s:
        sys.exit("real-mcp: the rig's mock_openai.py changed; cannot add the namespace key")
    s = s.replace(old, new, 1)
    open(p, "w").write(s)
PY
FAILED=0
ROWS=()

# wait_log LOG PATTERN SECONDS: the mock's request log holds PATTERN.
wait_log() {
    for _ in $(seq 1 $(($3 * 10))); do
        grep -q -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

for client in "${CLIENTS[@]}"; do
    SOCK=tmrealmcp-$client
    RUN=$RIG_RUN_ROOT/$SOCK
    "$RIG_DIR/stop.sh" "$SOCK" --purge >/dev/null 2>&1 || true
    case "$client" in
        claude)
            mkdir -p "$RUN/claude-home"
            claude_bin=$RIG_DIR/node_modules/.bin/claude
            HOME=$RUN/claude-home "$claude_bin" mcp add --scope user tmuxmate -- "$BIN" mcp >"$W/mcp-add.log" 2>&1 || {
                say "real-mcp: claude mcp add failed: $(cat "$W/mcp-add.log")"
                FAILED=1
                continue
            }
            echo '{"permissions": {"allow": ["mcp__tmuxmate"]}}' >"$W/claude-settings.json"
            RIG_CLAUDE_SETTINGS=$W/claude-settings.json "$RIG_DIR/start-claude.sh" "$SOCK" "$PROJ" "$W/script-claude.json" >"$W/$client.env"
            LOG=$RUN/mock/anthropic.log
            ;;
        codex)
            # Codex starts MCP servers with a minimal environment: without TMUX the server
            # would talk to the default socket, not the rig's private one.
            printf '[mcp_servers.tmuxmate]\ncommand = "%s"\nargs = ["mcp"]\nenv_vars = ["TMUX", "TMUX_PANE"]\n' "$BIN" >"$W/codex.toml"
            # RIG_CODEX_TRUST=bypass: with a config that has no hooks the rig's trust count
            # (`grep -o | wc -l` under pipefail) fails the start; nothing here needs trust.
            RIG_CODEX_TRUST=bypass RIG_CODEX_DAEMON=0 RIG_CODEX_CONFIG=$W/codex.toml \
                RIG_CODEX_MODEL=${REAL_MCP_CODEX_MODEL:-rig-mock-model} \
                "$RIG_DIR/start-codex.sh" "$SOCK" "$PROJ" "$W/script-codex.json" >"$W/$client.env"
            LOG=$RUN/mock/openai.log
            ;;
        *) say "real-mcp: unknown client $client (claude or codex)"; exit 2 ;;
    esac
    PANE=$(sed -n 's/^RIG_PANE=//p' "$W/$client.env" | tr -d "'")
    # The 50 MB pane, in the rig's own tmux server (its lib.sh: a scrubbed environment).
    T() { env -i PATH="$PATH" LANG=C.UTF-8 TMUX_TMPDIR="$RUN/tmux" tmux -L "$SOCK" -f /dev/null "$@"; }
    T set -g history-limit 700000
    T kill-session -t '=big' 2>/dev/null || true
    T new-session -d -s big -x 200 -y 50 \
        "awk 'BEGIN { for (i = 1; i <= 600000; i++) printf \"%06d %075d\\n\", i, i }'; exec cat"
    for _ in $(seq 1 600); do
        [ "$(T display -p -t big:0.0 '#{history_size}')" -ge 599900 ] && break
        sleep 0.1
    done
    "$RIG_DIR/send-prompt.sh" "$SOCK" "$PANE" "tmuxmate mcp check: list the panes, then capture one"
    # Both results must be in a later model request, i.e. the client ran the tools, as
    # their text blocks: the list's tree (a line for the rig's own pane), the capture's
    # text (the prompt typed above), neither as the JSON document (`json: true` only).
    wait_log "$LOG" 'mcp check done' 120 || true
    read -r listed captured big < <(python3 - "$LOG" "$PANE" <<'PY'
import json, sys
log, pane = sys.argv[1], sys.argv[2]

def texts(v):
    """Every string in a tool result, however the client wrapped it."""
    if isinstance(v, str):
        yield v
    elif isinstance(v, list):
        for x in v:
            yield from texts(x)
    elif isinstance(v, dict):
        for x in v.values():
            yield from texts(x)

# Each request carries the conversation so far: the results of the one that has most.
results = []
for line in open(log):
    body = json.loads(line).get("body") or {}
    if not isinstance(body, dict):
        continue
    these = []
    for m in body.get("messages") or []:  # Anthropic: tool_result blocks
        for c in m.get("content") or [] if isinstance(m.get("content"), list) else []:
            if isinstance(c, dict) and c.get("type") == "tool_result":
                these.append("\n".join(texts(c.get("content"))))
    for it in body.get("input") or []:  # OpenAI Responses: *_call_output items
        if isinstance(it, dict) and str(it.get("type", "")).endswith("_call_output"):
            these.append("\n".join(texts(it.get("output"))))
    if len(these) > len(results):
        results = these
listed = any("session $" in r and pane in r and "paneId" not in r for r in results)
captured = any("tmuxmate mcp check" in r and "lineCount" not in r for r in results)
# The 50 MB capture's result: the third, whatever the client did with its size (Claude
# Code saves a result over its token cap to a file and says so; Codex keeps its head and
# tail), but not a lost connection.
big = len(results) >= 3 and "Connection closed" not in results[2] and (
    "earlier bytes truncated" in results[2] or "saved to" in results[2])
print("yes" if listed else "no", "yes" if captured else "no", "yes" if big else "no")
PY
)
    # Listed upfront: a request's tool definitions name it. Claude Code 2.1.332 defers MCP
    # tools behind a tool search but still runs a direct call; Codex 0.171 defers them for
    # catalog models (answering "unsupported call" until the model has searched) and lists
    # them as the namespace mcp__tmuxmate for the unknown slug used here.
    offered=no
    python3 - "$LOG" <<'PY' && offered=yes
import json, sys
for line in open(sys.argv[1]):
    body = json.loads(line).get("body") or {}
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        if t.get("name") == "mcp__tmuxmate__tmux_capture" or (
            t.get("name") == "mcp__tmuxmate"
            and any(x.get("name") == "tmux_capture" for x in t.get("tools", []))
        ):
            sys.exit(0)
sys.exit(1)
PY
    # Started once: a closed connection makes the client start the server again.
    # (the client's HOME is under the run dir, which stop.sh --purge emptied first)
    starts=$(find "$RUN" -path '*/tmuxmate/log' -type f -exec cat {} + 2>/dev/null |
        grep -c 'mcp: serving on stdio' || true)
    [ "$starts" = 1 ] || big="no ($starts server starts)"
    ROWS+=("| $client | $offered | $listed | $captured | $big |")
    [ "$listed" = yes ] && [ "$captured" = yes ] && [ "$big" = yes ] || FAILED=1
    cp "$LOG" "$W/$client-requests.jsonl" 2>/dev/null || true
    "$RIG_DIR/stop.sh" "$SOCK" >/dev/null 2>&1 || true
done

printf '| client | tmux tools listed upfront (not deferred) | tmux_list tree reached the model (no JSON) | tmux_capture text reached the model (no JSON) | 50 MB capture answered, one server |\n|---|---|---|---|---|\n'
printf '%s\n' "${ROWS[@]}"
printf '(request logs kept in %s)\n' "$W"
exit "$FAILED"
