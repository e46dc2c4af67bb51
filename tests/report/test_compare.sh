#!/usr/bin/env bash
# hwsync report A.json B.json: rows matched by their identifying fields, the
# rows of one run only listed, B/A per metric with its interval (approximate,
# and marked so, for a hwsync-bench/1 file without repetitions), runs from
# different machines labelled by machine, and one line refusing a schema it
# cannot read.  Skips (77) without python3-matplotlib.
set -euo pipefail
hws=$1 data=$2
py=/usr/bin/python3
"$py" -c 'import matplotlib' 2>/dev/null ||
  { echo "skip: no python3-matplotlib (scripts/deps.sh test)"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$hws" report "$data/a.json" "$data/b.json" -o "$tmp/ab" >/dev/null
md=$tmp/ab/report.md
[ -s "$tmp/ab/report.html" ] || fail "no report.html"
grep -q "^| A: machine-a (AMD EPYC, 2 CPUs) | a.json |" "$md" || fail "runs not labelled by machine"
grep -q "^- hwsync-auto (cs=10, ncpu=1, outside=0, placement=core, threads=1): only in A: machine-a" "$md" ||
  fail "a row of A only not listed"
grep -q "^- ck-ticket (cs=10, ncpu=2, outside=0, placement=core, threads=2): only in B: machine-b" "$md" ||
  fail "a row of B only not listed"
# the ratio is B's median over A's; a bootstrap interval (no ~) around it
"$py" - "$data/a.json" "$data/b.json" "$md" <<'PY' || fail "ratios"
import json, re, sys
a, b = (json.load(open(p))["experiments"][0]["rows"] for p in sys.argv[1:3])
md = open(sys.argv[3]).read()
def key(r): return (r["impl"], r["threads"])
ra = {key(r): r for r in a}
n = 0
for r in b:
    if key(r) not in ra:
        continue
    want = r["throughput"]["median"] / ra[key(r)]["throughput"]["median"]
    pol = f" {r['policy']}" if r["policy"] else ""
    m = re.search(rf"^\| {re.escape(r['impl'] + pol)} \(cs=10, ncpu=\d, outside=0, placement=core, "
                  rf"threads={r['threads']}\) \| throughput \(Macq/s\) \| [^|]* \| [^|]* \| "
                  rf"([0-9.e+-]+) \[([0-9.e+-]+) - ([0-9.e+-]+)\] \|", md, re.M)
    assert m, f"no throughput line for {key(r)}"
    got, lo, hi = map(float, m.groups())
    assert abs(got / want - 1) < 0.01, (key(r), got, want)
    assert lo <= hi, (lo, hi)
    n += 1
assert n == 6, n
PY
"$py" -c 'import json,sys; f=json.load(open(sys.argv[1]))["figures"]; assert any(x["file"]=="compare-locks-throughput-1.png" and x["kind"]=="ratios" and "ratio" in x["axes"][0]["xlabel"] for x in f), f' \
  "$tmp/ab/figures.json" || fail "no ratio chart"
[ -s "$tmp/ab/compare-locks-throughput-1.png" ] || fail "ratio chart file"

# a hwsync-bench/1 file (no repetitions): loads, intervals marked approximate
"$py" - "$data/a.json" "$tmp/old.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["schema"] = "hwsync-bench/1"
for e in d["experiments"]:
    for r in e["rows"]:
        for v in r.values():
            if isinstance(v, dict):
                v.pop("reps", None)
json.dump(d, open(sys.argv[2], "w"))
PY
"$hws" report "$tmp/old.json" "$data/b.json" -o "$tmp/old" >/dev/null
grep -q "intervals are approximate" "$tmp/old/report.md" || fail "no approximate note"
grep -q "^| pthread-mutex (cs=10, ncpu=1, .* | throughput (Macq/s) | .* \[~[0-9]" "$tmp/old/report.md" ||
  fail "approximate interval not marked"
# the same machine twice: runs labelled by file
cp "$data/a.json" "$tmp/a2.json"
"$hws" report "$data/a.json" "$tmp/a2.json" -o "$tmp/aa" >/dev/null
grep -q "^| A: a.json | a.json |" "$tmp/aa/report.md" || fail "runs of one machine not labelled by file"
grep -q "only in" "$tmp/aa/report.md" && fail "identical runs have rows of one run only"

# refusals: one line each, exit 1
sed 's|"hwsync-bench/2"|"hwsync-bench/9"|' "$data/b.json" > "$tmp/future.json"
echo '{"schema": "hwsync-bench/2", "experiments": [' > "$tmp/broken.json"
for bad in future broken; do
  if err=$("$hws" report "$data/a.json" "$tmp/$bad.json" -o "$tmp/x" 2>&1); then fail "$bad accepted"; fi
  [ "$(wc -l <<<"$err")" = 1 ] || fail "$bad: more than one line: $err"
done
err=$("$hws" report "$data/a.json" "$tmp/future.json" -o "$tmp/x" 2>&1) || true
[ "$err" = "hwsync report: '$tmp/future.json': cannot read schema 'hwsync-bench/9' (this report reads hwsync-bench/1, hwsync-bench/2, hwsync-compare/1, hwsync-profile/1)" ] ||
  fail "refusal: $err"

# hwsync compare's JSON: a ratio chart per configuration, the table, the verdict
"$hws" report "$data/compare.json" -o "$tmp/cmp" >/dev/null
[ -s "$tmp/cmp/compare-ratios-1.png" ] || fail "no compare ratio chart"
grep -q "^\*\*verdict: " "$tmp/cmp/report.md" || fail "no verdict"
grep -q "^| mcs:futex | hwsync run --lock mcs --wait futex .* | [0-9.e-]* \[[0-9.e-]*, [0-9.e-]*\] |" \
  "$tmp/cmp/report.md" || fail "no configuration row with its interval"
"$py" -c 'import json,sys; f=json.load(open(sys.argv[1]))["figures"]; assert [a["series"] for a in f[0]["axes"]] == [["wall time", "CPU time", "peak RSS"]], f' \
  "$tmp/cmp/figures.json" || fail "compare chart series"
# the contention profile: wait by call site, and the objects' table
"$hws" report "$data/profile.json" -o "$tmp/prof" >/dev/null
[ -s "$tmp/prof/profile-wait-by-site.png" ] || fail "no wait-by-site chart"
grep -q "^| pthread_mutex | 0x7ffd1000 | 1 | 120000 | 5400 | 4.5 | 81.000 | 2.100 | 0 | 350 | 9000 | queue_push+0x34 (server) |" \
  "$tmp/prof/report.md" || fail "profile table"
"$py" -c 'import json,sys; f=json.load(open(sys.argv[1]))["figures"][0]; assert f["x"] == "call site" and "wait" in f["axes"][0]["xlabel"], f' \
  "$tmp/prof/figures.json" || fail "profile chart axes"
# the test file follows the profile's schema (tests/preload/check_profile.py)
"$py" "$data/../../preload/check_profile.py" "$data/profile.json" --schema-only || fail "profile.json schema"
# and a real profile of a contended program under the shim
pat=$(dirname "$hws")/hwsync-shim-patterns
if [ -x "$pat" ] && [ -e "$(dirname "$hws")/libhwsync-preload.so" ]; then
  "$hws" run --profile="$tmp/p.json" -- "$pat" mutex-contended 20000000 0 >/dev/null 2>&1 ||
    fail "hwsync run --profile"
  "$hws" report "$tmp/p.json" -o "$tmp/rprof" >/dev/null || fail "report of a real profile"
  grep -q "^| pthread_mutex | 0x[0-9a-f]* | " "$tmp/rprof/report.md" || fail "real profile: no mutex row"
fi
# those are drawn alone
if err=$("$hws" report "$data/a.json" "$data/compare.json" -o "$tmp/x" 2>&1); then fail "compare JSON compared"; fi
[ "$err" = "hwsync report: '$data/compare.json': a hwsync-compare/1 file is drawn alone, not compared with other files" ] ||
  fail "refusal: $err"
echo "report compare: ok"
