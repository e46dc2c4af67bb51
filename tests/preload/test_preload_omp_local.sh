#!/usr/bin/env bash
# An OpenMP module loaded with dlopen(RTLD_LOCAL) by a program without OpenMP
# (as numpy loads OpenBLAS built for OpenMP): under the shim its GOMP calls
# reach the shim, which must find libgomp outside the global scope (it used
# to call a NULL GOMP_parallel and crash), and its critical sections and
# barriers must go through hwsync.
set -uo pipefail
hwsync=$1 prog=$2 mod=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(timeout 60 "$prog" "$mod") || fail "natively: rc $?"
[ "$out" = 100 ] || fail "natively printed '$out', not 100"
for lock in auto mcs; do
  timeout 60 "$hwsync" run --lock "$lock" --stats -- "$prog" "$mod" > "$tmp/out" 2> "$tmp/err"
  rc=$?
  [ $rc = 0 ] || fail "under --lock $lock: rc $rc: $(cat "$tmp/err")"
  [ "$(cat "$tmp/out")" = 100 ] || fail "under --lock $lock printed '$(cat "$tmp/out")'"
  grep -Eq 'omp critical +[1-9]' "$tmp/err" || fail "under --lock $lock: no critical section in the stats: $(cat "$tmp/err")"
  grep -Eq 'omp barrier +[1-9]' "$tmp/err" || fail "under --lock $lock: no barrier in the stats: $(cat "$tmp/err")"
done
echo "omp_local: ok"
