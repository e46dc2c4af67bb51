#!/usr/bin/env bash
# Smoke test of one bench experiment with tiny parameters: it runs, prints a
# table, and its JSON (with --raw) follows docs/bench-schema.md.
#   test_bench_smoke.sh HWSYNC EXPERIMENT [extra options...]
set -euo pipefail
hws=$1 exp=$2; shift 2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$hws" bench "$exp" --reps 2 --warmup 0 --duration 5ms --raw --out "$tmp/r.json" "$@" \
  > "$tmp/out.txt"
grep -q "^== $exp:" "$tmp/out.txt" || { echo "FAIL: no table for $exp"; cat "$tmp/out.txt"; exit 1; }
python3 "$(dirname "$0")/check_schema.py" "$tmp/r.json" "$exp" 1
"$hws" bench "$exp" --help | grep -q "^REPRODUCES" || { echo "FAIL: $exp --help"; exit 1; }
echo "bench smoke $exp: ok"
