#!/usr/bin/env bash
# What the project's checks cost a run beyond the commands' own time: the demo epic with the
# simulated agent, run side by side without checks and with `[checks] commands = ["sleep S"]`,
# interleaved, a fresh copy of the project each round. The overhead per check is
# (with - without - checks run × S) / checks run; the checks run are counted from the journal.
#
#   bench/checks-overhead.sh BATON [ROUNDS] [SLEEP_SECS]
set -euo pipefail
baton="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
rounds="${2:-10}"
sleep_s="${3:-0.2}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$baton" demo --dir "$work/base" --no-run >/dev/null
now() { date +%s.%N; }
without=() with=() checks=()
for r in $(seq 1 "$rounds"); do
  for side in without with; do
    d="$work/$side-$r"
    cp -a "$work/base" "$d"
    if [ "$side" = with ]; then
      printf '[checks]\ncommands = ["sleep %s"]\n' "$sleep_s" > "$d/baton.toml"
      git -C "$d" add baton.toml && git -C "$d" commit -qm checks
    fi
    t0=$(now)
    (cd "$d" && "$baton" run epic-execute 1 --agent sim >/dev/null 2>&1) || true
    t1=$(now)
    dt=$(python3 -c "print($t1 - $t0)")
    if [ "$side" = with ]; then
      with+=("$dt")
      n=$(python3 - "$d"/.baton/runs/*/events.jsonl <<'PY'
import json, sys
print(sum(len(e["results"]) for f in sys.argv[1:] for e in map(json.loads, open(f))
          if e.get("event") == "checks_run"))
PY
)
      checks+=("$n")
    else
      without+=("$dt")
    fi
  done
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mw=$(median "${without[@]}"); mc=$(median "${with[@]}"); n=$(median "${checks[@]}")
over=$(python3 -c "print(($mc - $mw - $n * $sleep_s) / $n * 1000)")
printf 'rounds %s, check command sleep %s s\n' "$rounds" "$sleep_s"
printf 'run without checks: median %.3f s\n' "$mw"
printf 'run with checks:    median %.3f s (%s checks run, %.3f s of them the commands own)\n' "$mc" "$n" "$(python3 -c "print($n * $sleep_s)")"
printf 'overhead per check beyond the command: %.1f ms\n' "$over"
