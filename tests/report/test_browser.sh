#!/usr/bin/env bash
# The report as a reader sees it: headless Chromium renders report.html of a
# bench run, of two runs compared, of hwsync compare's JSON and of a
# contention profile, and check_html.py fails on a console error, a broken
# image, a blank page or a table that does not sort.  The same page with one
# image pointing nowhere must fail.  Screenshots go to OUT (for a person to
# look at).  Skips (77) without chromium or python3-matplotlib.
set -euo pipefail
hws=$1 src=$2 out=$3
py=/usr/bin/python3
"$py" -c 'import matplotlib' 2>/dev/null ||
  { echo "skip: no python3-matplotlib (scripts/deps.sh test)"; exit 77; }
command -v chromium >/dev/null || { echo "skip: no chromium (scripts/deps.sh test)"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
data=$src/tests/report/data
check() { "$py" "$src/tests/report/check_html.py" "$@"; }

"$hws" bench asym --light 0,5,10 --impls pthread-barrier,ck-centralized,hwsync-central \
  --policies futex,pause --reps 2 --warmup 0 --duration 5ms --out "$tmp/r.json" >/dev/null
"$hws" report "$tmp/r.json" -o "$tmp/one" >/dev/null
"$hws" report "$data/a.json" -o "$tmp/locks" >/dev/null
"$hws" report "$data/a.json" "$data/b.json" -o "$tmp/ab" >/dev/null
"$hws" report "$data/compare.json" -o "$tmp/cmp" >/dev/null
"$hws" report "$data/profile.json" -o "$tmp/prof" >/dev/null
for d in one locks ab cmp prof; do
  check "$tmp/$d/report.html" "$out/$d.png" || { echo "FAIL: $d/report.html"; exit 1; }
done
# the check can fail: one image that is not there
f=$(sed -n "s/.*<img src='\([^']*\)'.*/\1/p" "$tmp/one/report.html" | head -1)
[ -n "$f" ] || { echo "FAIL: no image in the report"; exit 1; }
sed "s|<img src='$f'|<img src='missing-$f'|" "$tmp/one/report.html" > "$tmp/one/broken.html"
if res=$(check "$tmp/one/broken.html" "$out/broken.png"); then
  echo "FAIL: a broken image passed: $res"; exit 1; fi
grep -q "^FAIL: broken image: missing-$f$" <<<"$res" || { echo "FAIL: $res"; exit 1; }
# ... and a script error
sed "s|</body>|<script>console.error('planted')</script></body>|" "$tmp/one/report.html" > "$tmp/one/err.html"
if res=$(check "$tmp/one/err.html" "$out/err.png"); then echo "FAIL: a console error passed"; exit 1; fi
grep -q "^FAIL: console error: planted$" <<<"$res" || { echo "FAIL: $res"; exit 1; }
# ... and a blank page
echo "<!DOCTYPE html><html><body></body></html>" > "$tmp/blank.html"
if check "$tmp/blank.html" "$out/blank.png" >/dev/null; then echo "FAIL: a blank page passed"; exit 1; fi
echo "report browser: ok (screenshots in $out)"
