#!/usr/bin/env bash
# An exact count, baton against bpe-openai's own (`examples/count_tokens`: read_to_string +
# `bpe_openai::o200k_base().count`), whole processes alternated, p50 of wall and CPU time
# (docs/BENCHMARKS.md, "Token counts read in place"): one line, then 11 MiB of the corpus's
# token files (code, JSON, logs, CJK, emoji) concatenated.
#
#     cargo build --profile dist --bin baton --examples
#     BATON_CORPUS=../shared/corpus bench/tokens.sh [BATON_BIN] [FLOOR_BIN]
#
# Needs python3. Peak RSS: `/usr/bin/time -f %M BIN …` (wait4's maxrss of a spawned child
# counts the spawner's pages).
set -euo pipefail
cd "$(dirname "$0")/.."
BATON=$(realpath "${1:-target/dist/baton}")
FLOOR=$(realpath "${2:-target/dist/examples/count_tokens}")
: "${BATON_CORPUS:?set BATON_CORPUS to the shared corpus (its tokens/files are the input)}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/baton-tokens.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
printf 'hello world\n' >"$TMP/line.txt"
while (($(stat -c %s "$TMP/big.txt" 2>/dev/null || echo 0) < 11 * 1024 * 1024)); do
    cat "$BATON_CORPUS"/tokens/files/* >>"$TMP/big.txt"
done
export BATON FLOOR TMP
python3 - <<'PY'
import os, statistics, subprocess, time
B, F, TMP = os.environ["BATON"], os.environ["FLOOR"], os.environ["TMP"]
null = os.open(os.devnull, os.O_WRONLY)
def run(argv):
    t = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1)])
    _, st, ru = os.wait4(pid, 0)
    assert st == 0, argv
    return time.perf_counter() - t, ru.ru_utime + ru.ru_stime
print(f"load average {os.getloadavg()[0]:.2f}")
for name, f, n in [("one line", f"{TMP}/line.txt", 41), ("11 MiB of the corpus's token files", f"{TMP}/big.txt", 9)]:
    ours = subprocess.run([B, "tokens", f], capture_output=True, text=True, check=True).stdout.split()[0]
    theirs = subprocess.run([F, f], capture_output=True, text=True, check=True).stdout.strip()
    assert ours == theirs, f"baton counts {ours}, bpe-openai {theirs}"
    a, b = [], []
    for i in range(n):
        if i % 2:
            b.append(run([F, f])); a.append(run([B, "tokens", f]))
        else:
            a.append(run([B, "tokens", f])); b.append(run([F, f]))
    med = lambda xs, k: statistics.median(x[k] for x in xs)
    print(f"| {name} ({ours} tokens) | {med(a, 0) * 1e3:.1f} ms, {med(a, 1) * 1e3:.1f} ms CPU | "
          f"{med(b, 0) * 1e3:.1f} ms, {med(b, 1) * 1e3:.1f} ms CPU | **{med(a, 0) / med(b, 0):.2f}×** |")
PY
