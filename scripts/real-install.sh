#!/usr/bin/env bash
# Proof of `tmuxmate install` / `uninstall` against the REAL Claude Code, Codex and Gemini CLIs of
# the agent rig (../shared/rig), on its mock model APIs: no network, no keys.
#
#   scripts/real-install.sh RIG_COPY [TMUXMATE_BIN]
#
# RIG_COPY is a writable copy of the rig with its CLIs installed (`cp -r rig X && cd X &&
# npm install`). The copy's start scripts get one extra line (RIG_POST_CONFIG, run right
# after the rig writes its configs) and its rigcfg.py stops removing hooks it did not
# write, so that what tmuxmate installs - and what uninstall takes away - is what the CLIs
# see. Then, for each CLI:
#   1. `tmuxmate install all` into that CLI's HOME (and CODEX_HOME); start it;
#      a prompt -> the tmux location reaches the mock's request; `mcp list` shows tmuxmate;
#      Claude's request lists the tmuxmate skill.
#   2. stop; `tmuxmate uninstall`; `mcp list` has no tmuxmate; start again;
#      a prompt -> no location in the request.
# Prints a results table; exit 1 when a check fails. Everything runs in a private tmux
# server (the rig's), in a run dir under $RIG_RUN_ROOT (default: a fresh temp dir under
# /var/tmp), removed at the end.
set -euo pipefail

RIG=$(cd "${1:?usage: scripts/real-install.sh RIG_COPY [TMUXMATE_BIN]}" && pwd)
BIN=$(readlink -f "${2:-$(dirname "$0")/../target/release/tmuxmate}")
[ -x "$BIN" ] || { echo "no tmuxmate binary at $BIN (cargo build --release)" >&2; exit 1; }
[ -x "$RIG/node_modules/.bin/claude" ] || { echo "$RIG has no CLIs: cd $RIG && npm install" >&2; exit 1; }
unset TMUX TMUX_PANE TMUXMATE_STATE_DIR XDG_STATE_HOME CLAUDE_CONFIG_DIR CODEX_HOME

# The copy's small patches (idempotent).
for s in start-claude.sh start-codex.sh start-gemini.sh; do
    # shellcheck disable=SC2016 # the line added to the rig's script expands there, not here
    grep -q RIG_POST_CONFIG "$RIG/$s" ||
        sed -i '/rigcfg.py" "\${cfg_args\[@\]}"/a [ -n "${RIG_POST_CONFIG:-}" ] \&\& eval "$RIG_POST_CONFIG"' "$RIG/$s"
done
python3 - "$RIG/rigcfg.py" <<'EOF'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace('    elif a.no_hooks:\n        st.pop("hooks", None)\n', '    elif a.no_hooks:\n        pass  # real-install.sh: hooks belong to tmuxmate install here\n')
s = s.replace('    elif a.no_hooks and os.path.exists(hooks_path):\n        os.remove(hooks_path)\n', '    elif a.no_hooks:\n        pass  # real-install.sh: hooks belong to tmuxmate install here\n')
open(p, "w").write(s)
EOF

export RIG_RUN_ROOT=${RIG_RUN_ROOT:-$(mktemp -d /var/tmp/tmr-install.XXXXXX)}
SOCK=tmi$$
RUN=$RIG_RUN_ROOT/$SOCK
WORK=$RIG_RUN_ROOT/project
mkdir -p "$WORK"
export RIG_CODEX_DAEMON=0   # locations need codex --no-daemon (README, Codex CLI)
export RIG_CODEX_NATIVE=1
# shellcheck disable=SC2317 # cleanup runs from the EXIT trap
cleanup() { [ -n "${KEEP_RUN:-}" ] && return; "$RIG/stop.sh" "$SOCK" --purge >/dev/null 2>&1 || true; rm -rf "$RIG_RUN_ROOT"; }
trap cleanup EXIT

RESULTS=()
FAILED=0
check() { # name, condition result (0 = pass), detail
    if [ "$2" = 0 ]; then RESULTS+=("| $1 | PASS | $3 |"); else RESULTS+=("| $1 | **FAIL** | $3 |"); FAILED=1; fi
}
# wait_request KIND TEXT: the mock request (JSONL line) whose prompt contains TEXT.
wait_request() {
    local log=$RUN/mock/$1.log
    for _ in $(seq 1 600); do
        if [ -f "$log" ] && grep -F -- "$2" "$log" >/dev/null 2>&1; then
            grep -F -- "$2" "$log" | head -1
            return 0
        fi
        sleep 0.1
    done
    return 1
}
mcp_list() { # claude|codex
    case $1 in
        claude) env -i PATH="$PATH" HOME="$RUN/claude-home" "$RIG/node_modules/.bin/claude" mcp list 2>&1 || true ;;
        codex) env -i PATH="$PATH" HOME="$RUN/codex-user-home" CODEX_HOME="$RUN/codex-home" "$RIG/node_modules/.bin/codex" mcp list 2>&1 || true ;;
        gemini) (cd "$WORK" && env -i PATH="$PATH" HOME="$RUN/gemini-home" GEMINI_CLI_NO_RELAUNCH=true timeout 60 "$RIG/node_modules/.bin/gemini" mcp list 2>&1) || true ;;
    esac
}
in_claude_home() { env HOME="$RUN/claude-home" "$BIN" "$@"; }
in_gemini_home() { env HOME="$RUN/gemini-home" "$BIN" "$@"; }
in_codex_home() { env HOME="$RUN/codex-user-home" CODEX_HOME="$RUN/codex-home" "$BIN" "$@"; }

start_both() { # post-config command for each (or empty)
    RIG_POST_CONFIG=$1 "$RIG/start-claude.sh" "$SOCK" "$WORK" "$RIG/scripts/echo.json" >/dev/null
    RIG_POST_CONFIG=$2 "$RIG/start-codex.sh" "$SOCK" "$WORK" "$RIG/scripts/echo.json" >/dev/null
    RIG_POST_CONFIG=$3 "$RIG/start-gemini.sh" "$SOCK" "$WORK" "$RIG/scripts/echo.json" >/dev/null
}
kind_of() { case $1 in claude) echo anthropic ;; codex) echo openai ;; gemini) echo gemini ;; esac; }
AGENTS="claude codex gemini"

echo "== 1. install all into the rig's HOMEs, then start the real CLIs"
t0=$(date +%s.%N)
start_both "env HOME=\"\$HOME_DIR\" '$BIN' install all >\"\$RUN/install-claude.out\"" \
    "env HOME=\"\$USER_HOME\" CODEX_HOME=\"\$CODEX_HOME_DIR\" '$BIN' install all >\"\$RUN/install-codex.out\"" \
    "env HOME=\"\$HOME_DIR\" '$BIN' install all >\"\$RUN/install-gemini.out\""
cat "$RUN/install-claude.out" "$RUN/install-codex.out" "$RUN/install-gemini.out"
for agent in $AGENTS; do
    kind=$(kind_of "$agent")
    RIG_ENTER_DELAY=1 "$RIG/send-prompt.sh" "$SOCK" "rig:$agent" "install proof one ($agent)"
    req=$(wait_request "$kind" "install proof one ($agent)") || req=""
    loc=$(grep -o 'tmux location (turn [0-9]*):.\{0,60\}' <<<"$req" | head -1 | tr '|' '/' || true)
    check "$agent: hook ran, location reached the mock" "$([ -n "$loc" ] && echo 0 || echo 1)" "${loc:-no location in the request}"
    reg=$(mcp_list "$agent" | grep -i tmuxmate | head -1 | tr '|' '/' || true)
    check "$agent: mcp list shows tmuxmate" "$([ -n "$reg" ] && echo 0 || echo 1)" "${reg:-not listed}"
done
for agent in $AGENTS; do
    kind=$(kind_of "$agent")
    req=$(wait_request "$kind" "install proof one ($agent)") || req=""
    check "$agent: the request lists the tmuxmate skill" "$(grep -q 'Use when you run inside tmux' <<<"$req" && echo 0 || echo 1)" "skill description in the first request: $(grep -c 'Use when you run inside tmux' <<<"$req" || true)x"
done

d=$(in_codex_home -S "$RUN/tmux/tmux-$(id -u)/$SOCK" doctor --json 2>/dev/null || true)
trust=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(next((c["detail"] for c in d["checks"] if c["area"]=="codex" and "trust" in c["detail"]), "no trust check"))' <<<"$d" 2>/dev/null || echo "doctor printed no JSON")
check "doctor sees the trust the real Codex recorded" "$(grep -q 'is trusted' <<<"$trust" && echo 0 || echo 1)" "$trust"

echo "== 2. stop, uninstall, start again"
"$RIG/stop.sh" "$SOCK" >/dev/null
in_claude_home uninstall
in_codex_home uninstall
in_gemini_home uninstall
for agent in $AGENTS; do
    reg=$(mcp_list "$agent" | grep -i tmuxmate | head -1 || true)
    check "$agent: after uninstall, mcp list has no tmuxmate" "$([ -z "$reg" ] && echo 0 || echo 1)" "${reg:-not listed}"
done
left=$(grep -l -e "$BIN" -e 'mcp_servers.tmuxmate' -e '"tmuxmate"' "$RUN/claude-home/.claude/settings.json" "$RUN/claude-home/.claude.json" "$RUN/codex-home/config.toml" "$RUN/codex-home/hooks.json" "$RUN/gemini-home/.gemini/settings.json" 2>/dev/null | tr '\n' ' ' || true)
check "no tmuxmate entry left in the CLIs' configs" "$([ -z "$left" ] && echo 0 || echo 1)" "${left:-none}"
start_both "" "" ""
for agent in $AGENTS; do
    kind=$(kind_of "$agent")
    # Gemini just started can swallow an Enter sent 0.3 s after the paste (seen once).
    RIG_ENTER_DELAY=1 "$RIG/send-prompt.sh" "$SOCK" "rig:$agent" "install proof two ($agent)"
    req=$(wait_request "$kind" "install proof two ($agent)") || req=""
    check "$agent: after uninstall, the request has no location" "$([ -n "$req" ] && ! grep -q 'tmux location' <<<"$req" && echo 0 || echo 1)" "$([ -n "$req" ] && echo "request seen, no location" || echo "no request")"
done

echo "== 3. the Claude Code plugin from this checkout"
"$RIG/stop.sh" "$SOCK" >/dev/null
CHECKOUT=$(cd "$(dirname "$0")/.." && pwd)
claude_cli() { env -i PATH="$(dirname "$BIN"):$PATH" HOME="$RUN/claude-home" CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1 "$RIG/node_modules/.bin/claude" "$@" 2>&1; }
out=$(claude_cli plugin marketplace add "$CHECKOUT" || true)
check "claude plugin marketplace add (local checkout)" "$(grep -qi 'success\|added' <<<"$out" && echo 0 || echo 1)" "$(tr '\n' ' ' <<<"$out" | cut -c1-120)"
out=$(claude_cli plugin install tmuxmate@tmuxmate || true)
check "claude plugin install tmuxmate@tmuxmate" "$(grep -qi 'success\|installed' <<<"$out" && echo 0 || echo 1)" "$(tr '\n' ' ' <<<"$out" | cut -c1-120)"
reg=$(claude_cli mcp list | grep -i tmuxmate | head -1 | tr '|' '/' || true)
check "claude: the plugin's MCP server is listed" "$([ -n "$reg" ] && echo 0 || echo 1)" "${reg:-not listed}"
t1=$(date +%s.%N)

echo
echo "tmuxmate $("$BIN" --version | head -1 | cut -d' ' -f2), Claude Code $("$RIG/node_modules/.bin/claude" --version 2>/dev/null | head -1), Codex $("$RIG/node_modules/.bin/codex" --version 2>/dev/null | head -1), Gemini CLI $(cd "$WORK" && HOME="$RUN/gemini-home" "$RIG/node_modules/.bin/gemini" --version 2>/dev/null | head -1); $(printf '%.0f' "$(echo "$t1 - $t0" | bc)") s"
echo "| check | result | detail |"
echo "| --- | --- | --- |"
printf '%s\n' "${RESULTS[@]}"
exit $FAILED
