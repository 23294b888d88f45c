#!/bin/sh
# The plugin's Stop hook: runs `pair-loop stop-hook` (the hook's JSON on stdin, its answer on stdout), from this
# plugin's own build when it has one, else the pair-loop on PATH. Without either it lets the agent stop.
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
if [ -f "$root/dist/pair-loop.cjs" ] && command -v node >/dev/null 2>&1; then
  exec node "$root/dist/pair-loop.cjs" stop-hook
fi
if command -v pair-loop >/dev/null 2>&1; then
  exec pair-loop stop-hook
fi
cat >/dev/null
echo '{}'
