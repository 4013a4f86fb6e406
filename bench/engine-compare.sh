#!/usr/bin/env bash
# Run-engine overhead of two baton binaries, side by side: per agent call of an epic run with
# the simulated agent at latency 0 (see benches/engine.rs, case "sequential, dev+review").
#
#     bench/engine-compare.sh OLD_BIN NEW_BIN [ROUNDS]    # default 20 rounds (min 5; even: balanced)
#     EXTRA_STORIES=8 bench/engine-compare.sh OLD_BIN NEW_BIN   # a 12-story epic (25 calls)
#
# Every run is `baton run epic-execute 1 --agent sim` in a fresh copy of one prepared demo
# project (the 4 stories of `baton demo`, branch epic-1, the scenario `latency_ms = 0`: every
# phase passes, 9 agent calls). The sim agent is the binary under test itself
# (BATON_AGENT_SIM=1; both versions read the scenario from .baton/sim.toml). Rounds alternate
# OLD NEW, NEW OLD, OLD NEW … (one warm-up pair first, not counted), so the load of a shared
# machine, and the cost of running second in a pair, hit both sides alike.
#
# Per run: wall time (bash's EPOCHREALTIME around the process), agent calls (phase_finished
# lines of .baton/runs/*/events.jsonl, journal v1 and v2 alike), the time spent inside agent
# processes (sum of the journal's outcome.duration_ms), and CPU time (user + system of baton
# and all it started: sim agents, git; from `times`). Prints, per binary, the medians of
# wall/call, (wall - agent time)/call and CPU/call, then the ratios NEW/OLD: of the medians,
# and the median of the per-round ratios (each round's NEW over its OLD, run back to back).
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: $0 OLD_BIN NEW_BIN [ROUNDS]" >&2
    exit 2
fi
abs() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$PWD" "$(basename "$1")"); }
OLD=$(abs "$1")
NEW=$(abs "$2")
ROUNDS=${3:-20}
[[ -x $OLD && -x $NEW ]] || { echo "not executable: $OLD or $NEW" >&2; exit 2; }
((ROUNDS >= 5)) || { echo "ROUNDS must be >= 5" >&2; exit 2; }
unset BATON_AGENT_SIM BATON_SIM_SCENARIO

TMP=$(mktemp -d "${TMPDIR:-/tmp}/baton-engine-compare.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# The demo project, as `baton demo` / baton::cli::demo_project write it (same in both
# commits), with the bench's scenario instead of the demo's failing/blocking one.
TEMPLATE=$TMP/template
mkdir -p "$TEMPLATE/docs/epics" "$TEMPLATE/docs/stories" "$TEMPLATE/.baton"
printf '# Epic 1: Notes service\n\nA small service to keep notes.\n\n## Stories\n\n- 1.1 Project skeleton\n- 1.2 Create notes\n- 1.3 Search notes\n- 1.4 Export notes\n' \
    >"$TEMPLATE/docs/epics/epic-1.md"
for s in "1.1|project-skeleton|Project skeleton" "1.2|create-notes|Create notes" \
    "1.3|search-notes|Search notes" "1.4|export-notes|Export notes"; do
    IFS='|' read -r id slug title <<<"$s"
    printf '# Story %s: %s\n\nStatus: ready-for-dev\n\n## Story\n\nAs a user, I want %s, so that my notes are useful.\n\n## Acceptance Criteria\n\n1. It works.\n2. It is tested.\n' \
        "$id" "$title" "${title,,}" >"$TEMPLATE/docs/stories/$id.$slug.md"
done
# EXTRA_STORIES=8: stories 1.5, 1.6, … as well (benches/engine.rs's 12-story epic: 25 calls).
for ((k = 0; k < ${EXTRA_STORIES:-0}; k++)); do
    printf '# Story 1.%d: Extra %d\n\nStatus: ready-for-dev\n\n## Acceptance Criteria\n\n1. It works.\n' \
        $((5 + k)) "$k" >"$TEMPLATE/docs/stories/1.$((5 + k)).extra-$k.md"
done
printf 'latency_ms = 0\n' >"$TEMPLATE/.baton/sim.toml"
printf '.baton/\n' >"$TEMPLATE/.gitignore"
printf '# notes\n\nA demo project for baton.\n' >"$TEMPLATE/README.md"
(
    cd "$TEMPLATE"
    git init -q -b main
    git config user.name bench
    git config user.email bench@baton.invalid
    git add -A
    git commit -q -m init
    git switch -q -c epic-1
)

# CPU seconds (user + system) of the waited-for children, from the output of `times`
# (called directly, not in $(…): a subshell would have no children yet).
child_cpu() { awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } print s }' "$1"; }

# One run: prints "wall_ms calls agent_ms cpu_ms" (cpu: user + system of baton and everything
# it started, the sim agents and git included).
run_one() {
    local bin=$1 dir=$2 t0 t1 ev c0 c1
    cp -a "$TEMPLATE" "$dir"
    times >"$dir.t0"
    t0=$EPOCHREALTIME
    if ! (cd "$dir" && "$bin" run epic-execute 1 --agent sim >"$dir.out" 2>&1); then
        echo "FAILED: $bin in $dir" >&2
        cat "$dir.out" >&2
        exit 1
    fi
    t1=$EPOCHREALTIME
    times >"$dir.t1"
    c0=$(child_cpu "$dir.t0")
    c1=$(child_cpu "$dir.t1")
    ev=$(cat "$dir"/.baton/runs/*/events.jsonl | grep '"event":"phase_finished"' || true)
    awk -v t0="$t0" -v t1="$t1" -v c0="$c0" -v c1="$c1" -v ev="$ev" 'BEGIN {
        n = split(ev, lines, "\n"); calls = 0; agent = 0
        for (i = 1; i <= n; i++) {
            if (lines[i] == "") continue
            calls++
            if (match(lines[i], /"duration_ms":[0-9]+/))
                agent += substr(lines[i], RSTART + 14, RLENGTH - 14)
        }
        if (calls == 0) { print "no phase_finished event in the journal" > "/dev/stderr"; exit 1 }
        printf "%.3f %d %d %.0f\n", (t1 - t0) * 1000, calls, agent, (c1 - c0) * 1000
    }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "old: $OLD ($("$OLD" --version 2>/dev/null | head -1))"
echo "new: $NEW ($("$NEW" --version 2>/dev/null | head -1))"
echo "stories: $((4 + ${EXTRA_STORIES:-0})); rounds: $ROUNDS (+1 warm-up), order OLD NEW, then NEW OLD, alternating; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

run_one "$OLD" "$TMP/warm-old" >/dev/null
run_one "$NEW" "$TMP/warm-new" >/dev/null

: >"$TMP/old.txt"
: >"$TMP/new.txt"
for ((i = 1; i <= ROUNDS; i++)); do
    # The order flips every round (OLD NEW, NEW OLD, …): the second run of a pair is slower
    # (an OLD-vs-OLD check measured ~5 % with a fixed order), so neither side always pays it.
    if ((i % 2)); then
        o=$(run_one "$OLD" "$TMP/old-$i")
        n=$(run_one "$NEW" "$TMP/new-$i")
    else
        n=$(run_one "$NEW" "$TMP/new-$i")
        o=$(run_one "$OLD" "$TMP/old-$i")
    fi
    echo "$o" >>"$TMP/old.txt"
    echo "$n" >>"$TMP/new.txt"
    printf 'round %2d  old %s  new %s\n' "$i" "$o" "$n" |
        awk '{ printf "%s %2d  old %6.1f ms %2d calls %4d ms in agents %4d ms cpu   new %6.1f ms %2d calls %4d ms in agents %4d ms cpu\n", $1, $2, $4, $5, $6, $7, $9, $10, $11, $12 }'
    rm -rf "$TMP/old-$i" "$TMP/new-$i"
done

for side in old new; do
    f=$TMP/$side.txt
    awk '{ print $1 }' "$f" | median >"$TMP/$side.wall"
    awk '{ print $1 / $2 }' "$f" | median >"$TMP/$side.call"
    awk '{ print ($1 - $3) / $2 }' "$f" | median >"$TMP/$side.own"
    awk '{ print $4 / $2 }' "$f" | median >"$TMP/$side.cpu"
    cut -d' ' -f2 "$f" | sort -u | paste -sd, >"$TMP/$side.calls"
done
paste -d' ' "$TMP/old.txt" "$TMP/new.txt" | awk '{ print ($5 / $6) / ($1 / $2) }' | median >"$TMP/paired"
v() { cat "$TMP/$1"; }

echo
printf '%-4s %11s %6s %14s %21s %14s\n' "" "p50 run ms" calls "p50 ms/call" "p50 outside agents" "p50 CPU ms"
printf '%-4s %11s %6s %14s %21s %14s\n' "" "" "" "" "ms/call" "/call"
for side in old new; do
    printf '%-4s %11.1f %6s %14.2f %21.2f %14.2f\n' "$side" "$(v $side.wall)" "$(v $side.calls)" \
        "$(v $side.call)" "$(v $side.own)" "$(v $side.cpu)"
done
awk -v oc="$(v old.call)" -v nc="$(v new.call)" -v oo="$(v old.own)" -v no="$(v new.own)" \
    -v ou="$(v old.cpu)" -v nu="$(v new.cpu)" -v p="$(v paired)" 'BEGIN {
    printf "\nratio new/old, ms per agent call (medians):            %.3f\n", nc / oc
    printf "ratio new/old, median of the per-round ratios:         %.3f\n", p
    printf "ratio new/old, ms outside agents per call (medians):   %.3f\n", no / oo
    printf "ratio new/old, CPU ms per call (medians):              %.3f\n", nu / ou
}'
