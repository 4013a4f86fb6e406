#!/usr/bin/env bash
# Two baton binaries side by side on the existing benchmarks' workloads (docs/BENCHMARKS.md,
# "Close to the floor"): is NEW no worse than OLD? Interleaved (OLD NEW, NEW OLD, …), p50 of
# wall time per case, and NEW/OLD.
#
#     bench/ab.sh OLD_BIN NEW_BIN [ROUNDS]      # default 21 rounds; the corpus in BATON_CORPUS
#
# Cases: `baton tokens` on 4 KiB (mostly the tables' load) and on ~11 MiB of the corpus's
# token files (the tables' load included),
# `baton extract --section` on ~1 MiB of its markdown (target at the end), `baton mask --kind
# generic` on a 64 MiB log, and the store's history flatness: `phase begin` / `phase complete`
# on a task with 1,000 completed phases over the same on one with 10 (each binary on its own
# stores). The run engine has its own A/B script: bench/engine-compare.sh OLD NEW.
set -euo pipefail

cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { echo "usage: $0 OLD_BIN NEW_BIN [ROUNDS]" >&2; exit 2; }
OLD=$(realpath "$1")
NEW=$(realpath "$2")
ROUNDS=${3:-21}
CORPUS=${BATON_CORPUS:?set BATON_CORPUS to the shared corpus}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/baton-ab.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

for _ in 1 2 3; do cat "$CORPUS"/tokens/files/*; done >"$TMP/tokens.txt"
head -c 4096 "$TMP/tokens.txt" >"$TMP/small.txt"
while (($(stat -c %s "$TMP/doc.md" 2>/dev/null || echo 0) < 1048576)); do
    cat "$CORPUS"/markdown/*.md >>"$TMP/doc.md"
done
printf '\n# Bench Target\n\nThe section the bench extracts.\n' >>"$TMP/doc.md"
python3 - "$TMP/log.txt" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    i = 0
    while f.tell() < 64 << 20:
        f.write(f"2026-11-23T10:00:{i % 60:02d}Z INFO request {i} served in {i % 97} ms\n")
        if i % 5000 == 0:
            f.write(f"2026-11-23T10:00:00Z ERROR upstream timeout on request {i}\n")
        i += 1
PY
for b in old new; do
    bin=$OLD; [[ $b == new ]] && bin=$NEW
    for n in 10 1000; do
        root=$TMP/store-$b-$n
        "$bin" task init bench --root "$root" >/dev/null
        s=""
        for ((i = 0; i < n; i++)); do s+="START_PHASE phase: p$i"$'\n'"END_PHASE phase: p$i status: success"$'\n'; done
        printf '%s' "$s" | "$bin" exec --root "$root" >/dev/null
    done
done
printf '## Task\nDone.\n' >"$TMP/content.md"

export OLD NEW ROUNDS TMP
python3 - <<'PY'
import os, sys, time, statistics
OLD, NEW, N, TMP = os.environ["OLD"], os.environ["NEW"], int(os.environ["ROUNDS"]), os.environ["TMP"]
null = os.open(os.devnull, os.O_WRONLY)

def run(argv, stdin=None):
    fa = [(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
    fd = None
    if stdin:
        fd = os.open(stdin, os.O_RDONLY)
        fa.append((os.POSIX_SPAWN_DUP2, fd, 0))
    t = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=fa)
    _, st, _ = os.wait4(pid, 0)
    w = time.perf_counter() - t
    if fd is not None:
        os.close(fd)
    if st != 0:
        sys.exit(f"failed: {' '.join(argv)}")
    return w

cases = {
    "tokens, 4 KiB (the table load)": lambda b, i: run([b, "tokens", f"{TMP}/small.txt"]),
    "tokens, 11 MiB": lambda b, i: run([b, "tokens", f"{TMP}/tokens.txt"]),
    "extract --section, 1 MiB": lambda b, i: run([b, "extract", f"{TMP}/doc.md", "--section", "Bench Target"]),
    "mask --kind generic, 64 MiB": lambda b, i: run([b, "mask", "--kind", "generic"], f"{TMP}/log.txt"),
}
def store(n, op):
    def f(b, i):
        root = f"{TMP}/store-{'old' if b == OLD else 'new'}-{n}"
        if op == "begin":
            return run([b, "phase", "begin", "implementation", "--task-id", str(i), "--needs", "memory", "--root", root])
        return run([b, "phase", "complete", "implementation", "--task-id", str(i),
                    "--status", "success", "--file", f"{TMP}/content.md", "--root", root])
    return f
res = {}
print(f"load average {os.getloadavg()[0]:.2f}; {N} rounds")
for name, f in cases.items():
    a, b = [], []
    for i in range(N):
        order = [(OLD, a), (NEW, b)] if i % 2 == 0 else [(NEW, b), (OLD, a)]
        for bin_, acc in order:
            acc.append(f(bin_, i))
    res[name] = (statistics.median(a), statistics.median(b))
# Store: begin then complete on both sizes, per binary, interleaved.
st = {(b, n, op): [] for b in (OLD, NEW) for n in (10, 1000) for op in ("begin", "complete")}
for i in range(N * 5):
    for b in ((OLD, NEW) if i % 2 == 0 else (NEW, OLD)):
        for n in (10, 1000):
            for op in ("begin", "complete"):
                st[(b, n, op)].append(store(n, op)(b, i))
print(f"load average {os.getloadavg()[0]:.2f} at the end\n")
print("| case (p50 wall) | old ms | new ms | new/old |")
print("|---|---:|---:|---:|")
for name, (a, b) in res.items():
    print(f"| {name} | {a * 1e3:.1f} | {b * 1e3:.1f} | **{b / a:.2f}** |")
m = {k: statistics.median(v) for k, v in st.items()}
for op in ("begin", "complete"):
    fo, fn = m[(OLD, 1000, op)] / m[(OLD, 10, op)], m[(NEW, 1000, op)] / m[(NEW, 10, op)]
    print(f"| phase {op}: 1,000 phases / 10 phases (flatness, target ≤ 1.3) | {fo:.2f} | {fn:.2f} | |")
    print(f"| phase {op}, 10 phases | {m[(OLD, 10, op)] * 1e3:.2f} | {m[(NEW, 10, op)] * 1e3:.2f} | "
          f"**{m[(NEW, 10, op)] / m[(OLD, 10, op)]:.2f}** |")
PY
