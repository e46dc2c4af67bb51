#!/bin/bash
# Smoke test of `hwsync bench wake`: the long/short waits and the ping-pong,
# schema, metrics per wait, errors.
set -u
. "$(dirname "$0")/smoke_common.sh"

expect_help wake
expect_error wake --waits long,sideways
expect_error wake --long-n 0

"$HWSYNC" bench wake --reps 2 --warmup 1 --duration 5ms --waits short,pingpong --short-n 8 \
	--cpus 0,1 --policies pause,futex --out "$T/r.json" >"$T/stdout" 2>"$T/stderr" \
	|| { cat "$T/stderr" >&2; fail "wake run"; }
grep -q '^== wake' "$T/stdout" || fail "no table"
"$PY" "$CHECK" "$T/r.json" --exp wake --min-rows 14 || fail "wake JSON"
"$PY" - "$T/r.json" <<'PY' || fail "wake rows"
import json, sys
rows = json.load(open(sys.argv[1]))["experiments"][0]["rows"]
pp = [r for r in rows if r["wait"] == "pingpong"]
short = [r for r in rows if r["wait"] == "short"]
want = {"pthread-cond", "sem", "cxx-atomic-wait", "hwsync-wait", "hwsync-event"}
assert {r["impl"] for r in pp} == want, sorted({r["impl"] for r in pp})
assert {(r["impl"], r["policy"]) for r in pp if r["impl"].startswith("hwsync")} == \
    {(i, p) for i in ("hwsync-wait", "hwsync-event") for p in ("pause", "futex")}, pp
for r in pp:   # one hand-off: a positive time, two threads, no job size
    assert r["threads"] == 2 and "n" not in r, r
    assert r["oneway"]["n"] >= 2 and r["oneway"]["min"] > 0, (r["impl"], r["oneway"])
    assert not {"twork", "tcall", "twakeup"} & set(r), r["impl"]
for r in short:
    assert "oneway" not in r and r["n"] == 8, r["impl"]
    assert "twork" in r and (r["impl"] == "alone" or "twakeup" in r), r["impl"]
assert any(r["impl"] == "alone" for r in short), "no alone row"
PY
exit 0
