#!/bin/bash
# Smoke test of `hwsync bench locks`: tiny run, schema, metrics, trace, errors.
set -u
. "$(dirname "$0")/smoke_common.sh"

expect_help locks
expect_error locks --cs 10,x
expect_error locks --outside x
expect_error locks --outside 0,,cs
expect_error locks --outside 200000000
expect_error locks --oversub 1000
expect_error locks --stages sometimes
expect_error locks --trace-events 0
expect_error locks --trace /nonexistent-dir/trace.json
expect_error locks --impls pthread-mutex,no-such-lock
expect_error locks --policies no-such-policy
expect_error locks --threads 0

"$HWSYNC" bench locks --reps 2 --warmup 1 --duration 5ms --cs 10 --threads 1,2 --cpus 0 \
	--oversub 0 --impls pthread-mutex,pthread-spin,omp-lock,omp-critical,ck-ticket,ck-clh,hwsync-mcs,hwsync-auto \
	--policies pause,futex --trace "$T/trace.json" --trace-events 40 --out "$T/r.json" \
	>"$T/stdout" 2>"$T/stderr" || { cat "$T/stderr" >&2; fail "locks run"; }
grep -q '^== locks' "$T/stdout" || fail "no table"
# hwsync rows carry the stage breakdown (counted in the warmup round)
"$PY" "$CHECK" "$T/r.json" --exp locks --min-rows 8 \
	--impl pthread-mutex:acquire,throughput,acqs,jain,min_max,drain,worst_wait,cpu_per_acq \
	--impl hwsync-mcs:acquire,throughput,first_try,after_spin,after_sleep,syscalls,max_spins \
	--impl hwsync-auto:throughput,first_try \
	--trace "$T/trace.json" --trace-max 40 || fail "locks JSON/trace"
grep -q '^-- locks: hwsync-auto vs peers' "$T/stdout" || fail "no auto-vs-peers table"
"$PY" - "$T/r.json" <<'PY' || fail "auto-vs-peers summary"
import json, sys
e = json.load(open(sys.argv[1]))["experiments"][0]
peers = {"pthread-mutex", "pthread-spin", "omp-lock", "omp-critical", "ck-ticket", "ck-clh"}
ran = {r["impl"] for r in e["rows"]} & peers
vs = {}
for s in e["summary"]:
    assert s["impl"] == "hwsync-auto" and s["outside"] == 0 and s["cs"] == 10, s
    vs.setdefault(s["threads"], set()).add(s["vs"])
    for m in ("throughput_ratio", "worst_wait_ratio", "cpu_per_acq_ratio"):
        assert s[m]["n"] == 2 and s[m]["unit"] == "auto/peer", (m, s[m])
# one line per peer that ran, and one against the best, for 1 and 2 threads
assert vs == {1: ran | {"best"}, 2: ran | {"best"}}, (vs, ran)
PY

# --outside: numbers and "cs" (0,cs with cs 0 is one row); with one repetition
# each summary ratio is exactly auto's value over the peer's
"$HWSYNC" bench locks --reps 1 --warmup 0 --duration 5ms --cs 0,10 --outside 0,cs,7 \
	--threads 2 --cpus 0 --oversub 0 --stages off --impls pthread-mutex,ck-ticket,hwsync-auto \
	--out "$T/x.json" >"$T/stdout" 2>"$T/stderr" || { cat "$T/stderr" >&2; fail "--outside run"; }
"$PY" "$CHECK" "$T/x.json" --exp locks --impl ck-ticket:worst_wait,cpu_per_acq || fail "--outside JSON"
"$PY" - "$T/x.json" <<'PY' || fail "--outside rows or ratios"
import json, sys
e = json.load(open(sys.argv[1]))["experiments"][0]
keys = sorted({(r["cs"], r["outside"]) for r in e["rows"]})
assert keys == [(0, 0), (0, 7), (10, 0), (10, 7), (10, 10)], keys
assert e["params"]["outside"] == "0,cs,7"
rows = {(r["impl"], r["cs"], r["outside"]): r for r in e["rows"]}
metric = {"throughput_ratio": "throughput", "worst_wait_ratio": "worst_wait",
          "cpu_per_acq_ratio": "cpu_per_acq"}
higher = {"throughput": True, "worst_wait": False, "cpu_per_acq": False}
lines = 0
for s in e["summary"]:
    k = (s["cs"], s["outside"])
    auto = rows[("hwsync-auto",) + k]
    if s["vs"] == "best":
        names = s["best"].split("/")
        names = names * 3 if len(names) == 1 else names
        for name, (rm, m) in zip(names, metric.items()):
            cand = [rows[(p,) + k][m]["median"] for p in ("pthread-mutex", "ck-ticket")]
            want = max(cand) if higher[m] else min(cand)
            assert rows[(name,) + k][m]["median"] == want, (s, m)
    else:
        names = [s["vs"]] * 3
    for name, (rm, m) in zip(names, metric.items()):
        want = auto[m]["median"] / rows[(name,) + k][m]["median"]
        got = s[rm]["median"]
        assert abs(got - want) <= 1e-6 * abs(want), (s["vs"], k, rm, got, want)
    lines += 1
assert lines == 5 * 3, lines
PY

# oversubscribed: 4 threads on one CPU, spin locks included, bounded in time
start=$(date +%s)
"$HWSYNC" bench locks --reps 1 --warmup 0 --duration 20ms --cs 100 --threads 4 --cpus 0 \
	--oversub 0 --stages off --impls ck-ticket,pthread-mutex,hwsync-ticket --policies spin \
	--out "$T/o.json" >"$T/stdout" 2>"$T/stderr" || { cat "$T/stderr" >&2; fail "oversubscribed run"; }
[ $(( $(date +%s) - start )) -lt 60 ] || fail "oversubscribed run took too long"
"$PY" "$CHECK" "$T/o.json" --exp locks --impl ck-ticket:acqs,drain --impl hwsync-ticket:acqs \
	|| fail "oversubscribed JSON"
"$PY" - "$T/o.json" <<'PY' || fail "oversubscribed rows"
import json, sys
rows = json.load(open(sys.argv[1]))["experiments"][0]["rows"]
assert all(r["threads"] == 4 and r["ncpu"] == 1 for r in rows), rows
assert all("first_try" not in r for r in rows), "--stages off still counted"
PY
exit 0
