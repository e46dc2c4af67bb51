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
# to a file first: grep -q exits at the first match, and with pipefail the
# SIGPIPE of a long help text would fail the test
"$hws" bench "$exp" --help > "$tmp/help.txt"
grep -q "^REPRODUCES" "$tmp/help.txt" || { echo "FAIL: $exp --help"; exit 1; }
echo "bench smoke $exp: ok"
