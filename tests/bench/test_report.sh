#!/usr/bin/env bash
# hwsync report renders a small results file into PNGs, report.md and
# report.html that carry the machine, the skipped list and an experiment's
# summary table; it rejects files that are not bench results with one line.
# hwsync finds Debian's /usr/bin/python3 with matplotlib although the first
# python3 on PATH lacks it, and from a build directory outside the tree.
# Skips (77) without python3-matplotlib.
set -euo pipefail
hws=$1 src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
unset HWS_PYTHON
py=/usr/bin/python3
"$py" -c 'import matplotlib' 2>/dev/null ||
  { echo "skip: no python3-matplotlib (scripts/deps.sh test)"; exit 77; }
# a python3 first on PATH that has no matplotlib (as pyenv's or a conda's may)
mkdir "$tmp/bin"
printf '#!/bin/sh\nexit 1\n' > "$tmp/bin/python3"
chmod +x "$tmp/bin/python3"
export PATH="$tmp/bin:$PATH"
# $HWS_PYTHON without matplotlib: one line naming it
if err=$(HWS_PYTHON=/bin/false "$hws" report x.json -o "$tmp/x" 2>&1); then
  echo "FAIL: \$HWS_PYTHON without matplotlib accepted"; exit 1; fi
[ "$err" = "hwsync report: no matplotlib for \$HWS_PYTHON=/bin/false" ] || { echo "FAIL: $err"; exit 1; }
"$hws" bench asym --light 0,10 --impls pthread-barrier,ck-centralized,hwsync-central \
  --policies futex --reps 2 --warmup 0 --duration 5ms --out "$tmp/r.json" >/dev/null
"$hws" report "$tmp/r.json" -o "$tmp/rep" >/dev/null
for f in report.md report.html figures.json; do
  [ -s "$tmp/rep/$f" ] || { echo "FAIL: $f missing"; ls "$tmp/rep"; exit 1; }
done
# the figures, read back from what the plotting code recorded
"$py" "$src/tests/bench/check_report_figures.py" "$tmp/r.json" "$tmp/rep" >/dev/null ||
  { "$py" "$src/tests/bench/check_report_figures.py" "$tmp/r.json" "$tmp/rep"; exit 1; }
# the summary comes first: machine, key numbers, skipped, then the experiments
order=$(grep -n "^### Machine\|^### Key numbers\|^### Skipped\|^## asym" "$tmp/rep/report.md" | cut -d: -f2 | tr '\n' ,)
case "$order" in "### Machine,### Key numbers,### Skipped, and why,## asym"*) ;;
  *) echo "FAIL: report.md in the order $order"; exit 1 ;; esac
grep -q "^| asym | throughput (light=0, placement=.*) | hwsync-.* vs .*x (" "$tmp/rep/report.md" ||
  { echo "FAIL: no asym key number"; exit 1; }
grep -q "skipped: " "$tmp/rep/report.md" || { echo "FAIL: no skipped list"; exit 1; }
grep -q "throughput / best peer" "$tmp/rep/report.md" || { echo "FAIL: no ratio column"; exit 1; }
grep -q "<table class='sortable" "$tmp/rep/report.html" || { echo "FAIL: no sortable table"; exit 1; }
# locks: the summary table (hwsync-auto / peer) after the rows
"$hws" bench locks --cs 10 --threads 2 --cpus 0 --oversub 0 --stages off \
  --impls pthread-mutex,hwsync-auto --reps 2 --warmup 0 --duration 5ms --out "$tmp/l.json" >/dev/null
"$hws" report "$tmp/l.json" -o "$tmp/lrep" >/dev/null
grep -q "^Summary: hwsync-auto vs peers" "$tmp/lrep/report.md" &&
  grep -q "^| hwsync-auto | - | 2 | 10 | 0 | .* | best | pthread-mutex | [0-9.]* \[" "$tmp/lrep/report.md" &&
  grep -q "^| impl | policy | .* | throughput_ratio (auto/peer) |" "$tmp/lrep/report.md" ||
  { echo "FAIL: no locks summary table"; exit 1; }
# shim: the paired ratios per pattern, as a plot and a table (when the shim is built)
"$hws" bench shim --patterns mutex,startup --starts 3 --reps 2 --warmup 0 --duration 5ms \
  --out "$tmp/s.json" >/dev/null
if "$py" -c 'import json,sys; sys.exit(not json.load(open(sys.argv[1]))["experiments"][0]["rows"])' \
     "$tmp/s.json"; then
  "$hws" report "$tmp/s.json" -o "$tmp/srep" >/dev/null
  [ -s "$tmp/srep/shim-ratios-1.png" ] || { echo "FAIL: shim-ratios-1.png missing"; exit 1; }
  "$py" "$src/tests/bench/check_report_figures.py" "$tmp/s.json" "$tmp/srep" >/dev/null ||
    { echo "FAIL: shim figures"; exit 1; }
  grep -q "^| startup .*hwsync-shim-auto adaptive | .* us |$" "$tmp/srep/report.md" ||
    { echo "FAIL: no shim ratio table"; exit 1; }
fi
echo '{"schema": "other"}' > "$tmp/bad.json"
if err=$("$hws" report "$tmp/bad.json" -o "$tmp/x" 2>&1); then echo "FAIL: bad file accepted"; exit 1; fi
[ "$(wc -l <<<"$err")" = 1 ] || { echo "FAIL: more than one line: $err"; exit 1; }
# a build directory anywhere: hwsync finds the tree that its file source-dir
# names; a copy with no such file and no data directory says where it looked
mkdir "$tmp/elsewhere" "$tmp/lost"
cp "$hws" "$tmp/elsewhere/hwsync"
cp "$hws" "$tmp/lost/hwsync"
echo "$src" > "$tmp/elsewhere/source-dir"
"$tmp/elsewhere/hwsync" report "$tmp/r.json" -o "$tmp/rep2" >/dev/null
[ -s "$tmp/rep2/report.md" ] || { echo "FAIL: no report from a build directory outside the tree"; exit 1; }
if err=$("$tmp/lost/hwsync" report "$tmp/r.json" -o "$tmp/x" 2>&1); then
  echo "FAIL: a report without report.py"; exit 1; fi
[ "$err" = "hwsync report: report.py not found (neither a build directory with a source tree nor $tmp/lost/../share/hwsync)" ] ||
  { echo "FAIL: $err"; exit 1; }
echo "report: ok"
