#!/usr/bin/env bash
# Latency of the hooks on a command that prints little: `baton hook claude post-tool-use` on a
# small Bash output (no answer: the common case, run after every Bash call), `baton hook codex
# pre-tool-use` on a command it leaves alone (`git status`) and on one it routes through baton
# mask (`cargo test`: the rewrite only, the command is not run), against `baton --version`
# (the process's floor), all started through `sh -c` as agent CLIs start hooks. Interleaved,
# N runs each; p50 and p90 in milliseconds. See docs/BENCHMARKS.md.
# Usage: bench/hook-latency.sh [BATON] [N]     (default: target/dist/baton, 200)
set -euo pipefail
baton="$(realpath "${1:-target/dist/baton}")"
n="${2:-200}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir" && git init -q
"$baton" task init "Bench" >/dev/null
printf '%s' '{"session_id":"s","transcript_path":"t","cwd":".","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"git status"},"tool_response":{"stdout":"On branch main\nnothing to commit, working tree clean\n","stderr":"","interrupted":false,"isImage":false},"tool_use_id":"t1"}' > event.json
printf '%s' '{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","turn_id":"t","cwd":".","tool_input":{"command":"git status"}}' > pre-quiet.json
printf '%s' '{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","turn_id":"t","cwd":".","tool_input":{"command":"cargo test --all"}}' > pre-routed.json
us() { local a b; a=$(date +%s%N); sh -c "$1" >/dev/null 2>&1; b=$(date +%s%N); echo $(( (b - a) / 1000 )); }
: > version.us; : > hook.us; : > pre-quiet.us; : > pre-routed.us; : > plain.us; : > masked.us
for _ in $(seq "$n"); do
  us "exec '$baton' --version < event.json" >> version.us
  us "exec '$baton' hook claude post-tool-use < event.json" >> hook.us
  us "exec '$baton' hook codex pre-tool-use < pre-quiet.json" >> pre-quiet.us
  us "exec '$baton' hook codex pre-tool-use < pre-routed.json" >> pre-routed.us
  # What routing adds to a routed command that prints little: the command through baton mask.
  us "exec bash -c 'echo ok'" >> plain.us
  us "exec '$baton' mask -- bash -c 'echo ok'" >> masked.us
done
pct() { sort -n "$1" | awk -v p="$2" '{a[NR]=$1} END {i=int(NR*p); if (i<1) i=1; printf "%.2f", a[i]/1000}'; }
v50=$(pct version.us 0.5); h50=$(pct hook.us 0.5)
echo "runs: $n each, interleaved"
echo "baton --version                   p50 $v50 ms  p90 $(pct version.us 0.9) ms"
echo "baton hook claude post-tool-use   p50 $h50 ms  p90 $(pct hook.us 0.9) ms"
echo "baton hook codex pre-tool-use     p50 $(pct pre-quiet.us 0.5) ms  p90 $(pct pre-quiet.us 0.9) ms  (git status: left alone)"
echo "baton hook codex pre-tool-use     p50 $(pct pre-routed.us 0.5) ms  p90 $(pct pre-routed.us 0.9) ms  (cargo test: rewritten)"
echo "bash -c 'echo ok'                 p50 $(pct plain.us 0.5) ms  p90 $(pct plain.us 0.9) ms"
echo "baton mask -- bash -c 'echo ok'   p50 $(pct masked.us 0.5) ms  p90 $(pct masked.us 0.9) ms  (the routed form)"
awk -v h="$h50" -v v="$v50" 'BEGIN {printf "ratio p50 hook / --version: %.2f (target <= 2)\n", h / v}'
