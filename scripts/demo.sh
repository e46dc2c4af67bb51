#!/usr/bin/env bash
# make demo: the main job.  Describe this machine, run the quick bench suite
# (every experiment but `shim`, peers side by side, a few minutes) and write the report.
set -euo pipefail
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
out=${HWS_DEMO_OUT:-$top/results/demo-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
"$build/hwsync" info | tee "$out/info.txt"
echo
echo "== hwsync bench suite --quick (results: $out/results.json) =="
"$build/hwsync" bench suite --quick --out "$out/results.json" | tee "$out/bench.txt"
"$build/hwsync" report "$out/results.json" -o "$out/report"
echo
echo "report: $out/report/report.html (and report.md, PNG plots beside it)"
