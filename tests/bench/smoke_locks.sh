#!/bin/bash
# Smoke test of `hwsync bench locks`: tiny run, schema, metrics, trace, errors.
set -u
. "$(dirname "$0")/smoke_common.sh"

expect_help locks
expect_error locks --cs 10,x
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
	--impl pthread-mutex:acquire,throughput,acqs,jain,min_max,drain \
	--impl hwsync-mcs:acquire,throughput,first_try,after_spin,after_sleep,syscalls,max_spins \
	--impl hwsync-auto:throughput,first_try \
	--trace "$T/trace.json" --trace-max 40 || fail "locks JSON/trace"

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
