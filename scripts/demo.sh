#!/usr/bin/env bash
# The tmuxmate demo on a private tmux server (never touches yours).
#   scripts/demo.sh          run it and clean up
#   scripts/demo.sh --keep   leave the demo server running and print how to attach
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec cargo run --release -- demo "$@"
