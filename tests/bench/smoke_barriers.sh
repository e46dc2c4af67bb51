#!/bin/bash
# Smoke test of `hwsync bench barriers`: tiny run, schema, metrics, errors.
set -u
. "$(dirname "$0")/smoke_common.sh"

expect_help barriers
expect_error barriers --work 1,abc
expect_error barriers --episodes 0
expect_error barriers --impls no-such-barrier

"$HWSYNC" bench barriers --reps 2 --warmup 1 --duration 20ms --episodes 300 --work 1,20 \
	--threads 2 --cpus 0,1 --policies futex \
	--impls pthread-barrier,omp-barrier,ck-centralized,ck-combining,ck-tournament,cxx-barrier,hwsync-central,hwsync-pair \
	--out "$T/r.json" >"$T/stdout" 2>"$T/stderr" || { cat "$T/stderr" >&2; fail "barriers run"; }
"$PY" "$CHECK" "$T/r.json" --exp barriers --min-rows 12 \
	--impl pthread-barrier:overhead,mean_overhead,episode,episodes \
	--impl omp-barrier:overhead --impl ck-centralized:overhead \
	--impl ck-combining:overhead,episodes --impl ck-tournament:overhead,episodes || fail "barriers JSON"
# ck's tree barriers with an odd number of threads (a group of one, a bye)
"$HWSYNC" bench barriers --reps 1 --warmup 0 --duration 20ms --episodes 20 --work 1 \
	--threads 3 --cpus 0 --impls ck-combining,ck-tournament --out "$T/odd.json" \
	>"$T/stdout" 2>"$T/stderr" || { cat "$T/stderr" >&2; fail "barriers, 3 threads"; }
"$PY" "$CHECK" "$T/odd.json" --exp barriers --min-rows 2 --impl ck-combining:episodes \
	--impl ck-tournament:episodes || fail "barriers, 3 threads JSON"
"$PY" - "$T/r.json" <<'PY' || fail "barrier rows"
import json, sys
e = json.load(open(sys.argv[1]))["experiments"][0]
for r in e["rows"]:
    assert 0 < r["episodes"]["median"] <= 300, r["episodes"]
    # an episode lasts at least the work
    assert r["episode"]["median"] >= r["work_us"] * 1000 * 0.9, (r["impl"], r["episode"])
hws = [r for r in e["rows"] if r["impl"].startswith("hwsync-")]
hws_skipped = [s for s in e["skipped"] if s["what"].startswith("hwsync-")]
assert hws or hws_skipped, "hwsync barriers neither run nor skipped"
PY
exit 0
