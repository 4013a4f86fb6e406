#!/usr/bin/env bash
# Build times of two revisions side by side, in one run (the machine is shared and noisy):
# a clean `cargo build` of the binary (dev profile, every dependency included), then the
# rebuild after one line added to the CLI (src/cli/mod.rs).
#
#   bench/build-times.sh BEFORE_REV AFTER_REV
set -euo pipefail
before=${1:?usage: bench/build-times.sh BEFORE_REV AFTER_REV}
after=${2:?usage: bench/build-times.sh BEFORE_REV AFTER_REV}
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'git -C "$repo" worktree remove --force "$work/before" >/dev/null 2>&1 || true;
      git -C "$repo" worktree remove --force "$work/after" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc; }
for name in before after; do
    rev=${!name}
    git -C "$repo" worktree add --detach "$work/$name" "$rev" >/dev/null 2>&1
done
printf '%-8s %-10s %12s %14s\n' side rev clean_s cli_line_s
for name in before after; do
    dir=$work/$name
    cd "$dir"
    export CARGO_TARGET_DIR=$work/target-$name
    clean=$(secs cargo build --locked --bin baton)
    echo 'pub fn build_times_touch() -> u32 { 1 }' >> src/cli/mod.rs
    line=$(secs cargo build --locked --bin baton)
    printf '%-8s %-10s %12.1f %14.1f\n' "$name" "$(git rev-parse --short HEAD)" "$clean" "$line"
done
