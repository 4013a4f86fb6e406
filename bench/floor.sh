#!/usr/bin/env bash
# How close baton is to the floor of what it does (docs/BENCHMARKS.md, "Close to the floor"):
# whole processes, measured side by side in one run, as ratios of medians.
#
#     bench/floor.sh [BATON_BIN] [ROUNDS]      # default target/dist/baton, 200 rounds
#
# Rows (each round runs every command once, in this order, so the load of a shared machine
# hits all of them alike; p50 of wall time per command):
#   durable ops  `baton phase begin`, `baton phase complete` (STORE + END), `baton exec
#                START_PHASE` / `END_PHASE` on a task with 10 completed phases, vs one process
#                appending 200 B with fsync (`dd … oflag=append conv=notrunc,fsync`)
#   start-up     `baton --version`, a pass-through hook (`baton hook claude post-tool-use` on
#                a 2-line Bash output) and an exact count (`baton tokens` of one line: the
#                first count reads the o200k tables) vs `/bin/true`
#   outline      `baton outline DIR` vs `ctags -R --output-format=json DIR` on a real tree
#                (this project's src/ and tests/ + ripgrep's crates: ripgrep, globset, grep-*,
#                ignore, from the cargo registry; then tokio's source, ~5 MB), wall, CPU (user +
#                system) and peak RSS
#                (GNU time); then single files: a 1.1 MB file of globset's glob.rs repeated,
#                and the tree's largest real files, vs `ctags --output-format=json FILE`
#   memory       peak RSS of `baton run verify` (10 items, sim agent; VmHWM polled) when no
#                count is exact; the binary's size
#
# Needs: python3 (timing via posix_spawn + wait4), dd, Universal Ctags, GNU time, git, cargo
# (to fetch ripgrep's source when the registry does not have it yet).
set -euo pipefail

cd "$(dirname "$0")/.."
BATON=$(realpath "${1:-target/dist/baton}")
ROUNDS=${2:-200}
[[ -x $BATON ]] || { echo "not executable: $BATON (build with cargo build --profile dist)" >&2; exit 2; }
command -v ctags >/dev/null || { echo "Universal Ctags is needed (apt-get install universal-ctags)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "GNU time is needed (apt-get install time)" >&2; exit 2; }
unset BATON_AGENT_SIM BATON_SIM_SCENARIO

TMP=$(mktemp -d "${TMPDIR:-/tmp}/baton-floor.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# The binary is measured as installed: copied, as `cargo install` and the archives' tar put it.
# A file the linker has just written sits in the page cache in small pieces, and each page
# fault of a process started from it maps less: 0.15–0.3 ms more a start, measured side by side
# (docs/BENCHMARKS.md, "Masking without the vocabulary").
cp "$BATON" "$TMP/baton" && BATON=$TMP/baton

# --- ripgrep's source, from the cargo registry --------------------------------------------
REG="${CARGO_HOME:-$HOME/.cargo}/registry/src"
find_crate() { ls -d "$REG"/*/"$1"-[0-9]* 2>/dev/null | sort -V | tail -1; }
if [[ -z $(find_crate ripgrep) ]]; then
    mkdir -p "$TMP/fetch/src"
    printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nripgrep = "14"\n' \
        >"$TMP/fetch/Cargo.toml"
    echo 'fn main() {}' >"$TMP/fetch/src/main.rs"
    (cd "$TMP/fetch" && cargo fetch -q)
fi
TREE=$TMP/tree
mkdir -p "$TREE"
cp -r src tests "$TREE/"
for c in ripgrep globset grep grep-cli grep-matcher grep-printer grep-regex grep-searcher ignore; do
    d=$(find_crate "$c")
    [[ -n $d ]] && cp -r "$d" "$TREE/"
done
git -C "$TREE" init -q && git -C "$TREE" add -A
GLOB=$TMP/glob.rs
while (($(stat -c %s "$GLOB" 2>/dev/null || echo 0) < 1100000)); do
    cat "$(find_crate globset)/src/glob.rs" >>"$GLOB"
done
# The tree's largest real source files (Rust; not the tests' fixtures).
mapfile -t BIG < <(find "$TREE" -name '*.rs' -not -path '*/.git/*' -printf '%s %p\n' | sort -rn | head -4 | cut -d' ' -f2)

# --- the store: a task with 10 completed phases ------------------------------------------
ROOT=$TMP/store
"$BATON" task init bench --root "$ROOT" >/dev/null
script=""
for i in $(seq 1 10); do script+="START_PHASE phase: p$i"$'\n'"END_PHASE phase: p$i status: success"$'\n'; done
printf '%s' "$script" | "$BATON" exec --root "$ROOT" >/dev/null
printf '## Task\nImplemented the thing; tests pass.\n%.0s' 1 2 3 4 >"$TMP/content.md"

# --- verify: a queue of 10 items ---------------------------------------------------------
VQ=$TMP/verify
mkdir -p "$VQ" && git -C "$VQ" init -q
(cd "$VQ" && "$BATON" queue add bench $(printf 'ITEM%04d ' $(seq 1 10)) >/dev/null)

# A second, larger tree: tokio's source as published (when the registry holds it).
TOKIO=$(find_crate tokio)
if [[ -n $TOKIO ]]; then
    cp -r "$TOKIO" "$TMP/tokio" && TOKIO=$TMP/tokio
    git -C "$TOKIO" init -q && git -C "$TOKIO" add -A
fi
export BATON ROUNDS TMP ROOT TREE GLOB VQ TOKIO
python3 - "${BIG[@]}" <<'PY'
import json, os, subprocess, sys, time, statistics

B, N, TMP, ROOT, TREE, GLOB, VQ, TOKIO = (os.environ[k] for k in "BATON ROUNDS TMP ROOT TREE GLOB VQ TOKIO".split())
N = int(N)
BIG = sys.argv[1:]
null = os.open(os.devnull, os.O_WRONLY)

def spawn(argv, cwd=None, stdin=None):
    """Wall seconds and CPU seconds (user + system) of one whole process. Always posix_spawn
    (a fork of this Python costs more than the processes measured); `cwd` is entered around
    the timing."""
    fd = os.open(stdin or os.devnull, os.O_RDONLY)
    here = os.getcwd()
    if cwd:
        os.chdir(cwd)
    t = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ,
                          file_actions=[(os.POSIX_SPAWN_DUP2, fd, 0), (os.POSIX_SPAWN_DUP2, null, 1),
                                        (os.POSIX_SPAWN_DUP2, null, 2)])
    _, st, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t
    os.chdir(here)
    os.close(fd)
    if st != 0:
        sys.exit(f"failed ({st}): {' '.join(argv)}")
    return wall, ru.ru_utime + ru.ru_stime

def rss_kb(argv, cwd=None):
    out = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, check=True).stderr
    return int(out.strip().splitlines()[-1])

med = statistics.median
load = lambda: os.getloadavg()[0]
print(f"machine: {os.cpu_count()} cores, load average {load():.2f} at the start; {N} rounds")

# 1. durable operations and start-up
dd = ["dd", "if=/dev/zero", f"of={TMP}/dd.bin", "bs=200", "count=1", "oflag=append", "conv=notrunc,fsync", "status=none"]
# `--root` belongs to each command (after its words).
r = lambda *a: [B, *a, "--root", ROOT]
cases = {k: [] for k in ["dd", "begin", "complete", "exec_start", "exec_end", "true", "version", "hook", "tokens"]}
ONE_LINE = f"{TMP}/one-line.txt"
with open(ONE_LINE, "w") as f:
    f.write("hello world, counted exactly\n")
# A Bash call's small output, as Claude Code hands it to its PostToolUse hook (a git repository
# without baton.toml: the common case of a hook wired for the user).
HOOK_EVENT = f"{TMP}/hook-event.json"
with open(HOOK_EVENT, "w") as f:
    json.dump({"session_id": "s", "transcript_path": "t", "cwd": VQ, "permission_mode": "default",
               "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "git status"},
               "tool_response": {"stdout": "On branch main\nnothing to commit, working tree clean\n",
                                 "stderr": "", "interrupted": False, "isImage": False},
               "tool_use_id": "t1"}, f)
def store_pair(i):
    cases["begin"].append(spawn(r("phase", "begin", "implementation", "--task-id", str(i), "--needs", "memory"))[0])
    cases["complete"].append(spawn(r("phase", "complete", "implementation", "--task-id", str(i), "--status",
                                     "success", "--file", f"{TMP}/content.md"))[0])
def exec_pair(i):
    cases["exec_start"].append(spawn(r("exec", f"START_PHASE phase: review task_id: {i}"))[0])
    cases["exec_end"].append(spawn(r("exec", f"END_PHASE phase: review task_id: {i} status: success"))[0])
groups = [lambda i: cases["dd"].append(spawn(dd)[0]), store_pair, exec_pair,
          lambda i: cases["true"].append(spawn(["/bin/true"])[0]),
          lambda i: cases["version"].append(spawn([B, "--version"])[0]),
          lambda i: cases["tokens"].append(spawn([B, "tokens", ONE_LINE], VQ)[0]),
          lambda i: cases["hook"].append(spawn([B, "hook", "claude", "post-tool-use"], VQ, HOOK_EVENT)[0])]
for i in range(N):
    # The order turns every round: no command always follows the same one.
    for k in range(len(groups)):
        groups[(i + k) % len(groups)](i)
m = {k: med(v) * 1e3 for k, v in cases.items()}
print(f"load average {load():.2f} after the store rounds\n")
print("| measure (p50 wall) | ms | floor | ms | ratio | target |")
print("|---|---:|---|---:|---:|---|")
for k, what in [("complete", "`baton phase complete` (STORE + END)"), ("begin", "`baton phase begin`"),
                ("exec_start", "`baton exec START_PHASE`"), ("exec_end", "`baton exec END_PHASE`")]:
    print(f"| {what} | {m[k]:.2f} | dd 200 B + fsync | {m['dd']:.2f} | **{m[k] / m['dd']:.2f}×** | ≤ 1.1× |")
print(f"| `baton --version` | {m['version']:.2f} | `/bin/true` | {m['true']:.2f} | **{m['version'] / m['true']:.2f}×** | |")
print(f"| `baton tokens`, one line (exact, o200k_base) | {m['tokens']:.2f} | `/bin/true` | {m['true']:.2f} | **{m['tokens'] / m['true']:.2f}×** | a few ms |")
print(f"| `baton hook claude post-tool-use`, pass-through (2 lines) | {m['hook']:.2f} | `/bin/true` | {m['true']:.2f} | **{m['hook'] / m['true']:.2f}×** | ≤ 1.05× |")

# 2. outlines vs ctags
R = max(5, N // 20)
def compare(name, baton_argv, ctags_argv, cwd=None):
    a, b = [], []
    for i in range(R):
        # Alternate who runs first: the second of a pair is slower on a loaded machine.
        if i % 2:
            b.append(spawn(ctags_argv, cwd)); a.append(spawn(baton_argv, cwd))
        else:
            a.append(spawn(baton_argv, cwd)); b.append(spawn(ctags_argv, cwd))
    wa, wb = med(x[0] for x in a), med(x[0] for x in b)
    ca, cb = med(x[1] for x in a), med(x[1] for x in b)
    ra, rb = rss_kb(baton_argv, cwd), rss_kb(ctags_argv, cwd)
    print(f"| {name} | {wa * 1e3:.1f} | {wb * 1e3:.1f} | **{wa / wb:.2f}×** | {ca / cb:.2f}× | "
          f"{ra / 1024:.1f} MB | {rb / 1024:.1f} MB |")

size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(TREE) if "/.git" not in d for f in fs)
files = sum(len(fs) for d, _, fs in os.walk(TREE) if "/.git" not in d)
print(f"\nload average {load():.2f}; tree: {files} files, {size / 1e6:.2f} MB; {R} rounds each\n")
print("Targets: a tree ≤ 1.3× wall, one file ≤ 1.2× wall (the repeated glob.rs is the worst case, not a real file).\n")
print("| outline | baton wall ms | ctags wall ms | wall ratio | CPU ratio | baton RSS | ctags RSS |")
print("|---|---:|---:|---:|---:|---:|---:|")
compare("the tree (`baton outline .` / `ctags -R`)", [B, "outline", "."],
        ["ctags", "-R", "--output-format=json", "-f", "-", "."], cwd=TREE)
if TOKIO:
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(TOKIO) if "/.git" not in d for f in fs)
    compare(f"tokio's source ({size / 1e6:.2f} MB, a real tree of one project)", [B, "outline", "."],
            ["ctags", "-R", "--output-format=json", "-f", "-", "."], cwd=TOKIO)
for f in [GLOB, *BIG]:
    label = "globset glob.rs ×N" if f == GLOB else os.path.relpath(f, TREE)
    compare(f"{label} ({os.path.getsize(f) / 1e6:.2f} MB)", [B, "outline", f],
            ["ctags", "--output-format=json", "-f", "-", f])

# 3. memory and size
def verify_hwm():
    p = subprocess.Popen([B, "run", "verify", "--queue", "bench", "--agent", "sim"],
                         cwd=VQ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as s:
                for line in s:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.001)
    if p.returncode != 0:
        sys.exit("baton run verify failed")
    return peak
hwm = verify_hwm()
print(f"\n| memory and size | value | target |\n|---|---:|---|")
print(f"| `baton run verify` orchestrator peak RSS (10 items, sim agent) | {hwm / 1024:.1f} MB | ≤ 25 MB |")
print(f"| binary size | {os.path.getsize(B) / 1e6:.1f} MB | ≤ 35 MB |")
print(f"\nload average {load():.2f} at the end")
PY
