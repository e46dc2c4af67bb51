#!/usr/bin/env bash
# The auto lock's yields before a park, as HWSYNC_STATS reports them
# (docs/locks.md, "A few yields before the park").  busy_yields keeps more
# threads running than there are CPUs while three threads take turns on one
# mutex for 1 ms each: the waiters of the default (auto) lock yield, at most
# four times a wait, then park.  When the burning threads call sched_yield,
# which the shim notes, the waiters park without yielding.  Each run must
# print what the program prints natively.
# Usage: test_busy_yields.sh PRELOAD BUSY_YIELDS
. "$(dirname "$0")/common.sh"
lib=$1 prog=$2
holds=30

# The busy verdict comes from /proc/loadavg; without it the rule never fires.
grep -q '/' /proc/loadavg 2>/dev/null || { echo "skip: /proc/loadavg cannot be read"; exit 77; }

# stats FILE: "contended yields" from the mutex line of the summary
stats() {
  sed -n 's/.* pthread_mutex  *[0-9]* acquisitions, \([0-9]*\) contended .* futex calls, \([0-9]*\) yields before a park,.*/\1 \2/p' "$1"
}

timeout 60 "$prog" $holds > "$tmp/native.out" || { fail "native run failed"; exit 1; }
for mode in plain yielding; do
  arg=""; [ $mode = yielding ] && arg=yielding
  timeout 60 env -u HWSYNC_LOCK LD_PRELOAD="$lib" HWSYNC_STATS=1 "$prog" $holds $arg \
    > "$tmp/shim.out" 2> "$tmp/shim.err"
  rc=$?
  read -r contended yields <<< "$(stats "$tmp/shim.err")"
  if [ $rc -ne 0 ] || ! diff -u "$tmp/native.out" "$tmp/shim.out" > "$tmp/diff"; then
    fail "$mode: rc $rc or not the native output"; cat "$tmp/diff" "$tmp/shim.err" >&2
  elif [ -z "${yields:-}" ]; then
    fail "$mode: no mutex line with yields in the summary"; cat "$tmp/shim.err" >&2
  elif [ $mode = plain ] && { [ "$contended" -eq 0 ] || [ "$yields" -eq 0 ] ||
                              [ "$yields" -gt $((4 * contended)) ]; }; then
    fail "$mode: $yields yields for $contended contended acquisitions (want some, at most 4 each)"
    cat "$tmp/shim.err" >&2
  elif [ $mode = yielding ] && [ "$yields" -ne 0 ]; then
    fail "$mode: $yields yields beside threads that call sched_yield (want 0)"
    cat "$tmp/shim.err" >&2
  else
    pass "$mode: $yields yields for $contended contended acquisitions"
  fi
done
[ $fails -eq 0 ]
