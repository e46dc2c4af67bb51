#!/usr/bin/env bash
# pthread rwlocks under the shim: test_rwlock.sh HWSYNC CONFORM
#   * CONFORM natively, then under `hwsync run --rwlock K --wait P` for every
#     rwlock kind of `hwsync info --json` and P in adaptive, futex: the same
#     output (its lines are deterministic), exit 0, within the timeout;
#   * HWSYNC_STATS counts read and write locks; HWSYNC_TRACE draws rwlock
#     spans; a process-shared rwlock is passed through;
#   * a bad HWSYNC_RWLOCK prints one line and the program runs natively.
. "$(dirname "$0")/common.sh"
[ $# -eq 2 ] || { echo "usage: $0 HWSYNC CONFORM" >&2; exit 2; }
hwsync=$1 prog=$2

kinds=$("$hwsync" info --json | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["rwlocks"]))')
[ -n "$kinds" ] || { echo "no rwlock kinds in hwsync info --json" >&2; exit 1; }
echo "rwlock kinds: $kinds"

timeout 120 "$prog" 8 >"$tmp/native" 2>&1 || fail "native run: $(tail -3 "$tmp/native")"
grep -q '^all passed$' "$tmp/native" || fail "native run did not pass"

for k in $kinds; do
	for p in adaptive futex; do
		RWLOCK_SHIM=1 timeout 120 "$hwsync" run --rwlock "$k" --wait "$p" --stats -- \
			"$prog" 8 >"$tmp/out" 2>"$tmp/err"
		rc=$?
		[ $rc -eq 0 ] || fail "$k/$p: exit $rc: $(grep FAIL "$tmp/out" | head -3)"
		diff -q "$tmp/native" "$tmp/out" >/dev/null ||
			fail "$k/$p: output differs from the native run: $(diff "$tmp/native" "$tmp/out" | head -5)"
		# every rwlock but the process-shared one reached the shim
		grep -Eq 'pthread_rwlock +[1-9][0-9]* read locks .* [1-9][0-9]* write locks' "$tmp/err" ||
			fail "$k/$p: no rwlock counts in HWSYNC_STATS: $(cat "$tmp/err")"
		grep -q 'passed to the native implementation: process-shared pthread rwlocks' "$tmp/err" ||
			fail "$k/$p: the process-shared rwlock was not passed through"
		want=reader; [ "$k" = bravo ] && want=bravo
		grep -q "default rwlocks $want, writer-preferring writer" "$tmp/err" ||
			fail "$k/$p: default rwlocks should run $want: $(grep pthread_rwlock "$tmp/err")"
		echo "ok: $k/$p"
	done
done

# HWSYNC_TRACE: write-held spans at least (the conformance program holds
# write locks), and waits.
timeout 120 "$hwsync" run --trace "$tmp/trace.json" -- "$prog" 2 >/dev/null 2>&1 ||
	fail "trace run failed"
python3 - "$tmp/trace.json" <<'PY' || fail "trace: no rwlock spans"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["name"] for e in ev}
sys.exit(0 if "rwlock write held" in names and any(n.startswith("rwlock") and n.endswith("wait") for n in names) else 1)
PY

# A bad value: one line, then the native implementation.
timeout 120 env HWSYNC_RWLOCK=nosuch LD_PRELOAD="$(dirname "$hwsync")/libhwsync-preload.so" \
	"$prog" 2 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || fail "HWSYNC_RWLOCK=nosuch: exit $rc"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "HWSYNC_RWLOCK='nosuch' is not an rwlock kind (known: reader, writer, bravo); running on the native implementation" "$tmp/err" ||
	fail "HWSYNC_RWLOCK=nosuch: $(cat "$tmp/err")"
"$hwsync" run --rwlock nosuch -- true 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "unknown rwlock kind" "$tmp/err" || fail "hwsync run --rwlock nosuch"

[ $fails -eq 0 ] && echo "all rwlock checks passed"
[ $fails -eq 0 ]
