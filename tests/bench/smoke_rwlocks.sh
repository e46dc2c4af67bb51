#!/bin/bash
# Smoke test of `hwsync bench rwlocks`: every peer and hwsync kind, the read
# fractions and critical sections asked for, the summary rows, errors.
set -u
. "$(dirname "$0")/smoke_common.sh"

expect_help rwlocks
expect_error rwlocks --read 101
expect_error rwlocks --read x
expect_error rwlocks --cs y
expect_error rwlocks --oversub 100
expect_error rwlocks --policies no-such-policy

"$HWSYNC" bench rwlocks --reps 2 --warmup 1 --duration 5ms --threads 2 --oversub 0 \
	--read 50,100 --cs 0,10 --policies futex --out "$T/r.json" >"$T/stdout" 2>"$T/stderr" ||
	{ cat "$T/stderr" >&2; fail "rwlocks run"; }
grep -q '^== rwlocks' "$T/stdout" || fail "no table"
"$PY" "$CHECK" "$T/r.json" --exp rwlocks --min-rows 12 --impl pthread-rwlock:throughput \
	--impl hwsync-reader:throughput --impl hwsync-writer:throughput \
	--impl hwsync-bravo:throughput || fail "rwlocks JSON"
"$PY" - "$T/r.json" <<'PY' || fail "rwlocks rows"
import json, sys
e = json.load(open(sys.argv[1]))["experiments"][0]
rows = e["rows"]
impls = {r["impl"] for r in rows}
want = {"pthread-rwlock", "hwsync-reader", "hwsync-writer", "hwsync-bravo"}
skipped = json.dumps(e.get("skipped", []))
if "ck-rwlock" not in skipped:
    want |= {"ck-rwlock", "ck-brlock", "ck-bytelock"}
assert want <= impls, (sorted(impls), skipped)
for r in rows:
    assert r["threads"] == 2, r
    assert r["throughput"]["median"] > 0, (r["impl"], r["throughput"])
    assert r["read_pct"] in (50, 100) and r["cs"] in (0, 10), r
    assert (r["policy"] is None) == (not r["impl"].startswith("hwsync-")), r
summ = e.get("summary", [])
overs = {(s["impl"], s["over"]) for s in summ}
for k in ("reader", "writer", "bravo"):
    assert ("hwsync-" + k, "glibc") in overs, overs
    assert ("hwsync-" + k, "best peer") in overs, overs
PY
echo ok
