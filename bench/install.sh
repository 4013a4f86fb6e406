#!/usr/bin/env bash
# A clean `cargo install --locked --path .` as a user at a terminal sees it: run under a
# pseudo-terminal, every change of what cargo shows (a `Compiling` line, the progress bar's
# count and the crates it names) timestamped. Prints the wall time, the installed binary's
# size and the longest time the screen did not change (docs/BENCHMARKS.md, "Build times").
#
#     bench/install.sh [EXTRA CARGO ARGS…]     # e.g. --offline
#
# Needs python3. Builds in a fresh target directory (minutes: every dependency compiles).
set -euo pipefail
cd "$(dirname "$0")/.."
TMP=$(mktemp -d "${TMPDIR:-/tmp}/baton-install.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export CARGO_TARGET_DIR=$TMP/target
python3 - "$TMP" "$@" <<'PY'
import fcntl, os, pty, re, struct, sys, termios, time

tmp, extra = sys.argv[1], sys.argv[2:]
argv = ["cargo", "install", "--locked", "--path", ".", "--root", f"{tmp}/root", *extra]
ansi = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
start = time.monotonic()
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
# A terminal of 120 columns: cargo draws its progress bar only on a terminal of known width.
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
screen, last, changes, buf = b"", start, [], b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    buf += chunk
    # What is on screen: the last line written, whether ended by a newline or redrawn after \r.
    parts = re.split(rb"[\r\n]", ansi.sub(b"", buf))
    shown = next((p.strip() for p in reversed(parts) if p.strip()), b"")
    buf = parts[-1]
    if shown and shown != screen:
        now = time.monotonic()
        changes.append((now - last, now - start, screen.decode(errors="replace")))
        screen, last = shown, now
_, status = os.waitpid(pid, 0)
end = time.monotonic()
changes.append((end - last, end - start, screen.decode(errors="replace")))
if status != 0:
    sys.exit(f"cargo install failed ({status})")
binary = f"{tmp}/root/bin/baton"
print(f"wall {end - start:.1f} s; binary {os.path.getsize(binary) / 1e6:.1f} MB; {os.cpu_count()} cores; "
      f"load average {os.getloadavg()[0]:.2f} at the end")
print("longest times the screen did not change (seconds, ending at, what it showed):")
for gap, at, what in sorted(changes, reverse=True)[:5]:
    print(f"  {gap:6.1f} s  until {at:6.1f} s  {what[:100]}")
PY
