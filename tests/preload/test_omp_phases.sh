#!/usr/bin/env bash
# OpenMP phases that read, after a barrier, what other threads wrote before it
# (omp_phases.c): under every barrier kind at 2 threads and at 5 (more threads
# than CPUs here), the answer must be the native one; the stats must show the
# shim served the loop and sections barriers, and left to libgomp those of a
# region whose first runs met none; and a shim whose team barrier lets
# threads through early must give wrong answers.
# Usage: test_omp_phases.sh HWSYNC PRELOAD BROKEN_PRELOAD PROG
. "$(dirname "$0")/common.sh"
hwsync=$1 lib=$2 broken=$3 prog=$4
bkinds=$("$hwsync" info --json | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["barriers"]))')
[ -n "$bkinds" ] || { echo "skip: no barrier kinds in this build (barriers pass through)"; exit 77; }
echo "barrier kinds: $bkinds"

# 0. by default the loop and sections ends stay libgomp's: the native answer,
#    and no barrier episode on the shim for a phase of dynamic loops
OMP_NUM_THREADS=2 timeout 120 "$prog" > "$tmp/native.def" 2>&1
OMP_NUM_THREADS=2 timeout 120 "$hwsync" run --stats -- "$prog" > "$tmp/shim.def" 2> "$tmp/def.err"
if ! diff -u "$tmp/native.def" "$tmp/shim.def" > "$tmp/diff"; then
  fail "default configuration: not the native answer"; cat "$tmp/diff" >&2
else
  pass "default configuration (loop ends to libgomp): native answer"
fi
OMP_NUM_THREADS=2 timeout 60 "$hwsync" run --stats -- "$prog" dynamic > /dev/null 2> "$tmp/def.err"
if grep -Eq 'omp barrier +[1-9]' "$tmp/def.err"; then
  fail "dynamic: loop ends reached the shim without HWSYNC_OMP_ENDS"; cat "$tmp/def.err" >&2
else
  pass "dynamic: loop ends stay libgomp's by default"
fi
# the rest routes them through the shim
export HWSYNC_OMP_ENDS=1

# 1. the native answer, then every barrier kind (and auto: dissemination at 2,
#    central at 5), at 2 and 5 threads
for n in 2 5; do
  if ! OMP_NUM_THREADS=$n timeout 120 "$prog" > "$tmp/native.$n" 2>&1; then
    fail "natively at $n threads"; cat "$tmp/native.$n" >&2; continue
  fi
  for bk in auto $bkinds; do
    OMP_NUM_THREADS=$n timeout 120 "$hwsync" run --barrier "$bk" --stats -- "$prog" \
      > "$tmp/shim.out" 2> "$tmp/shim.err"; rc=$?
    # "pair" serves teams of exactly two; at 5 its teams pass to libgomp
    want='omp barrier +[1-9]'
    [ "$bk" = pair ] && [ $n -ne 2 ] && want='barriers the HWSYNC_BARRIER kind cannot serve'
    if [ $rc -ne 0 ] || ! diff -u "$tmp/native.$n" "$tmp/shim.out" > "$tmp/diff"; then
      fail "--barrier $bk at $n threads: rc $rc"; cat "$tmp/diff" "$tmp/shim.err" >&2
    elif ! grep -Eq "$want" "$tmp/shim.err"; then
      fail "--barrier $bk at $n threads: stats lack '$want'"; cat "$tmp/shim.err" >&2
    else
      pass "--barrier $bk at $n threads: native answer"
    fi
  done
done

# 2. the loop and sections barriers reach the shim: one episode a round at least
for ph in dynamic guided sections ordered; do
  OMP_NUM_THREADS=2 timeout 60 "$hwsync" run --stats -- "$prog" "$ph" > /dev/null 2> "$tmp/st.err"
  eps=$(sed -n 's/.*omp barrier *\([0-9]*\) episodes.*/\1/p' "$tmp/st.err")
  if [ -n "$eps" ] && [ "$eps" -ge 24 ]; then
    pass "$ph: $eps barrier episodes on the shim (24 rounds)"
  else
    fail "$ph: ${eps:-no} barrier episodes on the shim"; cat "$tmp/st.err" >&2
  fi
done

# 2b. a region function whose first runs met no barrier is started unwrapped:
#     its later barriers are libgomp's (the answer checked in 1)
OMP_NUM_THREADS=2 timeout 60 "$hwsync" run --stats -- "$prog" late-barrier > /dev/null 2> "$tmp/st.err"
if grep -Eq 'omp barrier +[1-9]' "$tmp/st.err" ||
   ! grep -q 'a region whose first 16 runs met no barrier' "$tmp/st.err"; then
  fail "late-barrier: barriers of a region after 24 quiet runs reached the shim"; cat "$tmp/st.err" >&2
else
  pass "late-barrier: barriers of a region after 24 quiet runs are libgomp's"
fi

# 3. a barrier that lets threads through early gives wrong answers
for ph in dynamic guided sections ordered nested deep teams; do
  OMP_NUM_THREADS=2 HWSYNC_VERBOSE=0 LD_PRELOAD=$broken timeout 60 "$prog" "$ph" > "$tmp/br.out" 2>&1
  rc=$?
  if [ $rc -eq 1 ] && grep -Eq "^$ph: .*wrong reads [1-9]" "$tmp/br.out"; then
    pass "broken barrier caught in $ph: $(cat "$tmp/br.out")"
  else
    fail "broken barrier not caught in $ph (rc $rc): $(cat "$tmp/br.out")"
  fi
done
[ $fails -eq 0 ] && echo "all OpenMP phase checks passed"
[ $fails -eq 0 ]
