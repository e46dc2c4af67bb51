#!/bin/bash
# Smoke test of `hwsync bench uncontended`: peers, generic and typed hwsync
# rows, schema, errors.
set -u
. "$(dirname "$0")/smoke_common.sh"

expect_help uncontended
expect_error uncontended --threads 2
expect_error uncontended --batch 0
expect_error uncontended --impls hwsync-typed-nosuch
expect_error uncontended --policies no-such-policy

"$HWSYNC" bench uncontended --reps 2 --warmup 1 --duration 5ms --cpus 0 --policies spin,futex \
	--impls pthread-mutex,omp-lock,ck-mcs,hwsync-mutex,hwsync-auto,hwsync-typed-mutex,hwsync-typed-clh,hwsync-typed-1spinner \
	--out "$T/r.json" >"$T/stdout" 2>"$T/stderr" || { cat "$T/stderr" >&2; fail "uncontended run"; }
grep -q '^== uncontended' "$T/stdout" || fail "no table"
"$PY" "$CHECK" "$T/r.json" --exp uncontended --min-rows 12 --impl pthread-mutex:pair \
	--impl omp-lock:pair --impl ck-mcs:pair --impl hwsync-mutex:pair --impl hwsync-auto:pair \
	--impl hwsync-typed-mutex:pair --impl hwsync-typed-clh:pair --impl hwsync-typed-1spinner:pair \
	|| fail "uncontended JSON"
"$PY" - "$T/r.json" <<'PY' || fail "uncontended rows"
import json, sys
rows = json.load(open(sys.argv[1]))["experiments"][0]["rows"]
for r in rows:
    assert r["threads"] == 1 and r["cpus"] == [0], r
    assert r["pair"]["min"] > 0 and r["pair"]["n"] >= 2, (r["impl"], r["pair"])
typed = {(r["impl"], r["policy"]) for r in rows if r["impl"].startswith("hwsync-typed-")}
assert typed == {(f"hwsync-typed-{k}", p) for k in ("mutex", "clh", "1spinner")
                 for p in ("spin", "futex")}, sorted(typed)
assert [r["policy"] for r in rows if r["impl"] == "hwsync-auto"] == [None]
PY
exit 0
