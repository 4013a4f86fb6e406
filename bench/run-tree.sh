#!/usr/bin/env bash
# What working in a worktree of the run's own costs: the demo epic (4 stories, the simulated
# agent) run side by side with `--in-place` and in its own worktree (the default: the worktree
# made, the user's uncommitted files carried in, the result landed by fast-forward), interleaved,
# a fresh copy of the project each round. A few uncommitted files are carried each time.
#
#   bench/run-tree.sh BATON [ROUNDS]
set -euo pipefail
baton="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
rounds="${2:-10}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$baton" demo --dir "$work/base" --no-run >/dev/null
for i in 1 2 3; do echo "note $i" > "$work/base/notes-$i.txt"; done
now() { date +%s.%N; }
in_place=() tree=()
for r in $(seq 1 "$rounds"); do
  for side in in_place tree; do
    d="$work/$side-$r"
    cp -a "$work/base" "$d"
    flag=""
    [ "$side" = in_place ] && flag="--in-place"
    t0=$(now)
    # The demo's story 1.3 fails on purpose (exit 1): three story commits either way.
    (cd "$d" && "$baton" run epic-execute 1 --agent sim $flag >/dev/null 2>&1) || true
    t1=$(now)
    [ "$(git -C "$d" log --format=%s | grep -c '^feat(story')" = 3 ] || { echo "$side: not 3 story commits" >&2; exit 1; }
    dt=$(python3 -c "print($t1 - $t0)")
    if [ "$side" = tree ]; then tree+=("$dt"); else in_place+=("$dt"); fi
  done
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mi=$(median "${in_place[@]}"); mt=$(median "${tree[@]}")
printf 'rounds %s\n' "$rounds"
printf 'run in place:          median %.3f s\n' "$mi"
printf 'run in its own tree:   median %.3f s\n' "$mt"
printf 'added by the worktree: %.1f ms (ratio %.2f)\n' "$(python3 -c "print(($mt - $mi) * 1000)")" "$(python3 -c "print($mt / $mi)")"
