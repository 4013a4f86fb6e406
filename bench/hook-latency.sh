#!/usr/bin/env bash
# Latency of a pass-through hook: `baton hook claude post-tool-use` on a small Bash output (no
# answer, the common case: it runs after every Bash call) against `baton --version` (the
# process's floor). Alternating order, N runs each, p50 and p90 in milliseconds.
# Usage: bench/hook-latency.sh [BATON] [N]     (default: target/release/baton, 200)
set -euo pipefail
baton="${1:-target/release/baton}"
n="${2:-200}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir" && git init -q
"$baton" task init "Bench" >/dev/null
event='{"session_id":"s","transcript_path":"t","cwd":".","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"git status"},"tool_response":{"stdout":"On branch main\nnothing to commit, working tree clean\n","stderr":"","interrupted":false,"isImage":false},"tool_use_id":"t1"}'
printf '%s' "$event" > event.json
ms() { local a b; a=$(date +%s%N); "$@" >/dev/null 2>&1; b=$(date +%s%N); echo $(( (b - a) / 1000 )); }
: > version.us; : > hook.us
for _ in $(seq "$n"); do
  ms "$baton" --version >> version.us
  ms sh -c "exec \"$baton\" hook claude post-tool-use < event.json" >> hook.us
  ms sh -c "exec \"$baton\" --version < event.json" >> version_sh.us
done
pct() { sort -n "$1" | awk -v p="$2" '{a[NR]=$1} END {i=int(NR*p); if (i<1) i=1; printf "%.2f", a[i]/1000}'; }
echo "runs: $n each"
echo "baton --version            p50 $(pct version.us 0.5) ms  p90 $(pct version.us 0.9) ms"
echo "sh -c baton --version      p50 $(pct version_sh.us 0.5) ms  p90 $(pct version_sh.us 0.9) ms"
echo "sh -c baton hook (pass)    p50 $(pct hook.us 0.5) ms  p90 $(pct hook.us 0.9) ms"
awk -v h="$(pct hook.us 0.5)" -v v="$(pct version_sh.us 0.5)" 'BEGIN {printf "ratio hook/version (both via sh): %.2f (limit 2.00)\n", h / v}'
