#!/usr/bin/env bash
# hwsync report renders a small results file into PNGs, report.md and
# report.html that carry the machine, the skipped list and an experiment's
# summary table; it rejects files that are not bench results with one line.
# Skips (77) without matplotlib.
set -euo pipefail
hws=$1 src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
py=${HWS_PYTHON:-$src/.venv/bin/python3}
[ -x "$py" ] || py=python3
"$py" -c 'import matplotlib' 2>/dev/null || { echo "skip: no matplotlib (scripts/venv.sh)"; exit 77; }
export HWS_PYTHON=$py
"$hws" bench asym --light 0,10 --impls pthread-barrier,ck-centralized,hwsync-central \
  --policies futex --reps 2 --warmup 0 --duration 5ms --out "$tmp/r.json" >/dev/null
"$hws" report "$tmp/r.json" -o "$tmp/rep" >/dev/null
for f in report.md report.html asym-fig4.png asym-throughput.png; do
  [ -s "$tmp/rep/$f" ] || { echo "FAIL: $f missing"; ls "$tmp/rep"; exit 1; }
done
grep -q "## Machine" "$tmp/rep/report.md" || { echo "FAIL: no machine section"; exit 1; }
grep -q "skipped: " "$tmp/rep/report.md" || { echo "FAIL: no skipped list"; exit 1; }
grep -q "best peer" "$tmp/rep/report.md" || { echo "FAIL: no ratio column"; exit 1; }
# locks: the summary table (hwsync-auto / peer) after the rows
"$hws" bench locks --cs 10 --threads 2 --cpus 0 --oversub 0 --stages off \
  --impls pthread-mutex,hwsync-auto --reps 2 --warmup 0 --duration 5ms --out "$tmp/l.json" >/dev/null
"$hws" report "$tmp/l.json" -o "$tmp/lrep" >/dev/null
grep -q "^Summary: hwsync-auto vs peers" "$tmp/lrep/report.md" &&
  grep -q "^| hwsync-auto | - | 2 | 10 | 0 | .* | best | pthread-mutex | .* auto/peer" "$tmp/lrep/report.md" ||
  { echo "FAIL: no locks summary table"; exit 1; }
# shim: the paired ratios per pattern, as a plot and a table (when the shim is built)
"$hws" bench shim --patterns mutex,startup --starts 3 --reps 2 --warmup 0 --duration 5ms \
  --out "$tmp/s.json" >/dev/null
if "$py" -c 'import json,sys; sys.exit(not json.load(open(sys.argv[1]))["experiments"][0]["rows"])' \
     "$tmp/s.json"; then
  "$hws" report "$tmp/s.json" -o "$tmp/srep" >/dev/null
  [ -s "$tmp/srep/shim-ratios.png" ] || { echo "FAIL: shim-ratios.png missing"; exit 1; }
  grep -q "^| startup .*hwsync-shim-auto adaptive | .* us |$" "$tmp/srep/report.md" ||
    { echo "FAIL: no shim ratio table"; exit 1; }
fi
echo '{"schema": "other"}' > "$tmp/bad.json"
if err=$("$hws" report "$tmp/bad.json" -o "$tmp/x" 2>&1); then echo "FAIL: bad file accepted"; exit 1; fi
[ "$(wc -l <<<"$err")" = 1 ] || { echo "FAIL: more than one line: $err"; exit 1; }
echo "report: ok"
