#!/bin/bash
# Smoke test of `hwsync bench spr`: tiny kernels, schema, results checked
# against the serial computation (an error would fail the schema check).
set -u
. "$(dirname "$0")/smoke_common.sh"

expect_help spr
expect_error spr --kernels lu,qr
expect_error spr --threads 3
expect_error spr --lu 1
expect_error spr --chunk 0

"$HWSYNC" bench spr --reps 1 --warmup 0 --lu 96 --closure 128 --spmv 4096 --chunk 16 \
	--cpus 0,1 --policies pause --impls pthread-barrier,ck-centralized,hwsync-pair \
	--out "$T/r.json" >"$T/stdout" 2>"$T/stderr" || { cat "$T/stderr" >&2; fail "spr run"; }
"$PY" "$CHECK" "$T/r.json" --exp spr --min-rows 9 --impl serial:time \
	--impl pthread-barrier:time,speedup --impl ck-centralized:time,speedup || fail "spr JSON"
"$PY" - "$T/r.json" <<'PY' || fail "spr rows"
import json, sys
rows = json.load(open(sys.argv[1]))["experiments"][0]["rows"]
assert sorted({r["kernel"] for r in rows}) == ["closure", "lu", "spmv"], rows
assert all(r["phases"] > 1 for r in rows)
PY
exit 0
