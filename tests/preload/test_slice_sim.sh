#!/usr/bin/env bash
# The shim's lock paths and the kernel's time-slice extension, on any kernel:
# a test build of the shim simulates the extension (every thread asks on a
# control word of its own, every 7th hold is granted) and reports its counts
# at exit.  Under every lock kind, the conformance program, the OpenMP check
# and two threads on one pthread spin lock, and under every rwlock algorithm
# the rwlock conformance program, must print what they print natively, end
# every hold they began and yield once for every grant; with HWSYNC_SLICE=0
# no hold asks.  With stats, the profile or the trace on (the locks' counted
# paths) the conformance program asks for as many holds as without, and the
# OpenMP check's locks and critical sections ask too.
# Usage: test_slice_sim.sh HWSYNC SLICE_SIM_PRELOAD CONFORM SPIN_CHECK RWLOCK_CONFORM [OMP_CHECK]
. "$(dirname "$0")/common.sh"
hwsync=$1 sim=$2 conform=$3 spin=$4 rwconform=$5 omp=${6:-}

kinds=$("$hwsync" info --json | python3 -c 'import json,sys; print(" ".join(k if isinstance(k, str) else k.get("kind", "") for k in json.load(sys.stdin)["locks"]))')
[ -n "$kinds" ] || { echo "skip: no lock kinds in this build"; exit 77; }

# counts LINE: "holds ended granted yielded" from the simulation's report
counts() { sed -n 's/^slice simulation: \([0-9]*\) holds, \([0-9]*\) ended, \([0-9]*\) granted, \([0-9]*\) yielded$/\1 \2 \3 \4/p' "$1"; }

run() {   # NAME PROGRAM ARGS...: under each of $var's values in $kinds
  local name=$1; shift
  if ! timeout 120 "$@" > "$tmp/native.out" 2>&1; then
    fail "$name: native run failed"; cat "$tmp/native.out" >&2; return
  fi
  for k in $kinds; do
    timeout 120 env "$var=$k" LD_PRELOAD="$sim" "$@" > "$tmp/sim.out" 2> "$tmp/sim.err"
    local rc=$? h e g y
    read -r h e g y <<< "$(counts "$tmp/sim.err")"
    if [ $rc -ne 0 ] || ! diff -u "$tmp/native.out" "$tmp/sim.out" > "$tmp/diff"; then
      fail "$name, $var=$k: rc $rc or not the native output"; cat "$tmp/diff" "$tmp/sim.err" >&2
    elif [ -z "$h" ] || [ "$h" -eq 0 ] || [ "$h" != "$e" ] || [ "$g" != "$y" ]; then
      fail "$name, $var=$k: holds ${h:-?}, ended ${e:-?}, granted ${g:-?}, yielded ${y:-?}"
    else
      pass "$name, $var=$k: $h holds all ended, $g grants all yielded"
    fi
  done
  HWSYNC_SLICE=0 timeout 120 env LD_PRELOAD="$sim" "$@" > /dev/null 2> "$tmp/off.err"
  read -r h e g y <<< "$(counts "$tmp/off.err")"
  if [ "${h:-x}" = 0 ]; then
    pass "$name, HWSYNC_SLICE=0: no hold asked"
  else
    fail "$name, HWSYNC_SLICE=0: ${h:-no report} holds"; cat "$tmp/off.err" >&2
  fi
}

var=HWSYNC_LOCK
run conform "$conform"
run spin "$spin" 2 200000
[ -n "$omp" ] && OMP_NUM_THREADS=2 run omp "$omp"
lock_kinds=$kinds
var=HWSYNC_RWLOCK kinds="reader writer bravo"
run rwlock "$rwconform"
kinds=$lock_kinds

# instrumented PROGRAM EXPECTED ARGS...: under stats, profile and trace, the
# native output, every hold ended and every grant yielded, and EXPECTED
# holds (any number above 0 when EXPECTED is "some")
instrumented() {
  local name=$1 want=$2; shift 2
  timeout 120 "$@" > "$tmp/native.out" 2>&1 || { fail "$name: native run failed"; return; }
  for set in HWSYNC_STATS=1 "HWSYNC_PROFILE=$tmp/profile.txt" "HWSYNC_TRACE=$tmp/trace.json"; do
    timeout 120 env "$set" LD_PRELOAD="$sim" "$@" > "$tmp/sim.out" 2> "$tmp/sim.err"
    local rc=$? h e g y
    read -r h e g y <<< "$(counts "$tmp/sim.err")"
    if [ $rc -ne 0 ] || ! diff -u "$tmp/native.out" "$tmp/sim.out" > "$tmp/diff"; then
      fail "$name, ${set%%=*}: rc $rc or not the native output"; cat "$tmp/diff" "$tmp/sim.err" >&2
    elif [ -z "$h" ] || [ "$h" -eq 0 ] || [ "$h" != "$e" ] || [ "$g" != "$y" ] ||
         { [ "$want" != some ] && [ "$h" != "$want" ]; }; then
      fail "$name, ${set%%=*}: holds ${h:-?} (want $want), ended ${e:-?}, granted ${g:-?}, yielded ${y:-?}"
    else
      pass "$name, ${set%%=*}: $h holds all ended, $g grants all yielded"
    fi
  done
}
timeout 120 env LD_PRELOAD="$sim" "$conform" > /dev/null 2> "$tmp/plain.err"
read -r plain_holds _ <<< "$(counts "$tmp/plain.err")"
instrumented conform "${plain_holds:-?}" "$conform"
[ -n "$omp" ] && OMP_NUM_THREADS=2 instrumented omp some "$omp"

[ $fails -eq 0 ] && echo "all time-slice simulation checks passed"
[ $fails -eq 0 ]
