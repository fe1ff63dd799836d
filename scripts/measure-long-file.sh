#!/usr/bin/env bash
# Peak memory of `hydra check` (its checker process) against `clang-19 -fsyntax-only` on a long
# generated file under a long path (issue 33's limits): LINES lines of `int vN;`, in a directory
# whose path is about PATHLEN characters. Prints both peaks and their ratio. Needs bin/hydra and
# bin/hydra-clang-shim (make build).
#   scripts/measure-long-file.sh [LINES (1000000)] [PATHLEN (1000)]
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-1000000}
pathlen=${2:-1000}
tmp=$(mktemp -d /tmp/hydra-long-XXXX)
trap 'rm -rf "$tmp"' EXIT
dir=$tmp
while [ ${#dir} -lt "$pathlen" ]; do dir="$dir/$(printf 'd%.0s' $(seq 99))"; done
mkdir -p "$dir"
file="$dir/big.c"
awk -v n="$lines" 'BEGIN { for (i = 0; i < n; i++) printf "int v%d;\n", i }' >"$file"
echo "file: $lines lines, path of ${#file} characters"
clang_kb=$( { /usr/bin/time -f '%M' clang-19 -fsyntax-only "$file" >/dev/null; } 2>&1 | tail -1)
# The checker is a child of hydra: its peak (VmHWM) is read from /proc while it runs.
bin/hydra check "$file" >"$tmp/out" 2>&1 &
pid=$!
peak=0
while kill -0 "$pid" 2>/dev/null; do
  for s in $(pgrep -P "$pid" 2>/dev/null); do
    h=$(awk '/VmHWM/ { print $2 }' "/proc/$s/status" 2>/dev/null || true)
    [ -n "$h" ] && [ "$h" -gt "$peak" ] && peak=$h
  done
  sleep 0.2
done
wait "$pid" || { cat "$tmp/out"; exit 1; }
grep -q "; accepted$" "$tmp/out" || { echo "hydra check did not accept the file:"; tail -3 "$tmp/out"; exit 1; }
echo "clang-19 -fsyntax-only: $((clang_kb / 1024)) MB peak"
echo "hydra check (checker):  $((peak / 1024)) MB peak ($(awk -v a="$peak" -v b="$clang_kb" 'BEGIN { printf "%.2f", a / b }')x)"
