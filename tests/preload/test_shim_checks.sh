#!/usr/bin/env bash
# Black-box checks of the LD_PRELOAD shim: each program runs natively and
# under the shim with HWSYNC_LOCK set to every lock kind of this build, and
# the shim must behave as glibc does.  One CHECK per ctest test:
#
#   test_shim_checks.sh churn HWSYNC PRELOAD PEAK_RSS CHURN_PROGRAM
#       per object type (CHURN_PROGRAM list): peak RSS under the shim
#       <= 2 x native + 10 MiB, same output
#   test_shim_checks.sh fork HWSYNC PRELOAD FORK_STORM [FORKS]
#       no forked child lost
#   test_shim_checks.sh sem-eintr|xunlock|cancel-self|cancel-self-xthread|rlimit|heap|alone
#                       HWSYNC PRELOAD CORNERS
#       the same output as natively, no hang, no crash (heap: the program's
#       first block where it is natively, with as many bytes in use)
#   test_shim_checks.sh startup HWSYNC PRELOAD CORNERS
#       as many clone/clone3 calls as natively (strace; exit 77 without it)
#   test_shim_checks.sh nomem HWSYNC PRELOAD NOMEM FAILALLOC
#       allocations fail (the preloaded allocator FAILALLOC refuses all but
#       N, for N = 0, 1, 3; and RLIMIT_AS with the heap filled): no lock call
#       fails or lets two threads in, the output is glibc's, and with
#       HWSYNC_STATS / HWSYNC_TRACE the shim says what it could not record
#   test_shim_checks.sh spin HWSYNC PRELOAD SPIN_CHECK
#       pthread spin locks under several HWSYNC_WAIT policies (not per lock
#       kind: spin locks have their own): 2 threads, 8 threads on 2 CPUs,
#       4 threads on 1 CPU, and a shim process sharing a lock with a native
#       one: the same exact counter as natively, within the timeout, every
#       acquisition taken by the shim
#
# Every failure line names the check and the lock kind.  Exit status 0 when
# all passed, 1 when one failed, 77 when the check cannot run here.
. "$(dirname "$0")/common.sh"
[ $# -ge 4 ] || { echo "usage: $0 CHECK HWSYNC PRELOAD PROGRAM..." >&2; exit 2; }
check=$1 hwsync=$2 lib=$3
shift 3
# every line names the check
fail() { echo "FAIL: $check: $*" >&2; fails=$((fails + 1)); }
pass() { echo "ok: $check: $*"; }

find_lock_kinds "$hwsync"

# How a run ended, for a failure line: "exit 3", "hung (killed after 20 s)", ...
ended() {   # STATUS TIMEOUT
  case $1 in
    124) echo "hung (killed after $2 s)" ;;
    13[0-9]|14[0-9]|15[0-9]) echo "killed by signal $(($1 - 128)) ($(kill -l $(($1 - 128)) 2>/dev/null))" ;;
    *) echo "exit status $1" ;;
  esac
}

# ---- churn: memory stays flat ----
churn() {
  local peak=$1 prog=$2 t k limit
  local types
  check="churn ($(basename "$prog"))"   # C or C++: name it in every line
  types=$("$prog" list) || { fail "'$prog list' failed"; return; }
  for t in $types; do
    if ! timeout 120 "$peak" "$tmp/rss" env "$prog" "$t" > "$tmp/native.out" 2>&1; then
      fail "type $t: native run failed"; cat "$tmp/native.out" >&2; continue
    fi
    local native_kib
    read -r native_kib _ < "$tmp/rss"
    limit=$((2 * native_kib + 10240))
    # rwlocks: every rwlock algorithm instead of every lock kind
    local ks=$kinds var=HWSYNC_LOCK
    [ "$t" = rwlock ] && ks="reader writer bravo" var=HWSYNC_RWLOCK
    for k in $ks; do
      timeout 120 "$peak" "$tmp/rss" env LD_PRELOAD="$lib" "$var=$k" "$prog" "$t" \
        > "$tmp/shim.out" 2>&1
      local rc=$? kib=0
      [ -s "$tmp/rss" ] && read -r kib _ < "$tmp/rss"
      rm -f "$tmp/rss"
      if [ $rc -ne 0 ]; then
        fail "kind $k: type $t: $(ended $rc 120)"; cat "$tmp/shim.out" >&2
      elif ! diff -u "$tmp/native.out" "$tmp/shim.out" > "$tmp/diff"; then
        fail "kind $k: type $t: output differs from glibc:"; cat "$tmp/diff" >&2
      elif [ "$kib" -gt "$limit" ]; then
        fail "kind $k: type $t: peak RSS $kib KiB under the shim, native $native_kib KiB" \
             "(allowed: 2 x native + 10 MiB = $limit KiB)"
      else
        pass "kind $k: type $t: peak RSS $kib KiB (native $native_kib KiB)"
      fi
    done
  done
}

# ---- fork: no child lost ----
forks() {
  local prog=$1 n=${2:-300} k rc rw=reader
  for k in native $kinds; do
    if [ "$k" = native ]; then
      timeout 180 "$prog" "$n" > "$tmp/fork.out" 2>&1; rc=$?
    else
      # the rwlocks alternate between the reader core and BRAVO's slot table
      timeout 180 env LD_PRELOAD="$lib" HWSYNC_LOCK="$k" HWSYNC_RWLOCK="$rw" "$prog" "$n" \
        > "$tmp/fork.out" 2>&1; rc=$?
      [ "$rw" = reader ] && rw=bravo || rw=reader
    fi
    if [ $rc -eq 0 ]; then
      pass "kind $k: $(tail -n 1 "$tmp/fork.out")"
    else
      fail "kind $k: $(ended $rc 180): $(tr '\n' ';' < "$tmp/fork.out")"
    fi
  done
}

# ---- corners: the same output as glibc ----
corners() {
  local prog=$1 k rc limit=20
  if ! timeout $limit "$prog" "$check" > "$tmp/native.out" 2>&1; then
    fail "native run failed"; cat "$tmp/native.out" >&2; return
  fi
  sed 's/^/  native: /' "$tmp/native.out"
  for k in $kinds; do
    timeout $limit env LD_PRELOAD="$lib" HWSYNC_LOCK="$k" "$prog" "$check" > "$tmp/shim.out" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
      fail "kind $k: $(ended $rc $limit); output so far:"; sed 's/^/  /' "$tmp/shim.out" >&2
    elif ! diff -u "$tmp/native.out" "$tmp/shim.out" > "$tmp/diff"; then
      fail "kind $k: differs from glibc:"; sed 1,2d "$tmp/diff" >&2
    else
      pass "kind $k: same as glibc"
    fi
  done
}

# ---- startup: no extra threads ----
clones() {   # STRACE-ARGS... : the number of clone and clone3 calls
  strace -f -c -e trace=clone,clone3 -o "$tmp/strace" "$@" > /dev/null 2>&1 || return 1
  # columns: % time, seconds, usecs/call, calls, [errors,] syscall
  awk '$NF == "clone" || $NF == "clone3" { n += $4 } END { print n + 0 }' "$tmp/strace"
}
startup() {
  local prog=$1 k native shim
  command -v strace > /dev/null || { echo "skip: strace is not installed (scripts/deps.sh test)"; exit 77; }
  strace -f -o /dev/null true > /dev/null 2>&1 ||
    { echo "skip: ptrace is not permitted here"; exit 77; }
  native=$(clones "$prog" startup) || { fail "strace of the native run failed"; return; }
  for k in $kinds; do
    if ! shim=$(clones -E LD_PRELOAD="$lib" -E HWSYNC_LOCK="$k" "$prog" startup); then
      fail "kind $k: strace of the run under the shim failed"
    elif [ "$shim" != "$native" ]; then
      fail "kind $k: $shim clone/clone3 calls under the shim, $native natively:"
      grep clone "$tmp/strace" | sed "s/^/  /" >&2
    else
      pass "kind $k: $shim clone/clone3 calls, as natively"
    fi
  done
}

# ---- spin: exact and finishing, with CPUs to spare and without ----
spins() {
  local prog=$1 limit=60 cpus one two run args set want pol rc got line
  command -v taskset > /dev/null || { echo "skip: taskset is not installed"; exit 77; }
  cpus=$(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)))') ||
    { fail "cannot read the CPU affinity"; return; }
  one=${cpus%% *}
  two=$(awk '{ if (NF >= 2) print $1 "," $2 }' <<< "$cpus")
  # THREADS ITERS CPUS CONTENDED: CPUS "-" = unrestricted; CONTENDED 1 = some
  # acquisitions must have waited (spin_check holds the lock while its
  # threads start, so the shim's waiting path must have run)
  for run in "2 5000000 - 1" "8 1000000 ${two:-none} 1" "4 1000000 $one 1" "pshared 2000000 - 0"; do
    read -r -a args <<< "$run"
    set=${args[2]}
    if [ "$set" = none ]; then
      echo "skip: spin ${args[0]} threads on 2 CPUs: only one CPU here"; continue
    fi
    local pin=()
    [ "$set" != - ] && pin=(taskset -c "$set")
    if ! timeout $limit "${pin[@]}" "$prog" "${args[0]}" "${args[1]}" > "$tmp/native.out" 2>&1; then
      fail "$run: native run failed"; cat "$tmp/native.out" >&2; continue
    fi
    # acquisitions the shim must count: every thread's and the main thread's
    # first; the parent's alone for pshared
    want=${args[1]}
    [ "${args[0]}" != pshared ] && want=$(( args[0] * args[1] + 1 ))
    for pol in adaptive delay-div yield; do
      timeout $limit env LD_PRELOAD="$lib" HWSYNC_WAIT="$pol" HWSYNC_STATS=1 "${pin[@]}" \
        "$prog" "${args[0]}" "${args[1]}" > "$tmp/shim.out" 2> "$tmp/shim.err"
      rc=$?
      line=$(grep -o 'pthread_spin *[0-9]* acquisitions, [0-9]* contended' "$tmp/shim.err")
      got=$(awk '{ print $2 }' <<< "$line")
      if [ $rc -ne 0 ]; then
        fail "$run: policy $pol: $(ended $rc $limit); output:"; cat "$tmp/shim.out" "$tmp/shim.err" >&2
      elif ! diff -u "$tmp/native.out" "$tmp/shim.out" > "$tmp/diff"; then
        fail "$run: policy $pol: differs from glibc:"; sed 1,2d "$tmp/diff" >&2
      elif [ "$got" != "$want" ]; then
        fail "$run: policy $pol: the shim counted '${line:-nothing}', not $want acquisitions"
      elif [ "${args[3]}" = 1 ] && [ "$(awk '{ print $4 }' <<< "$line")" = 0 ]; then
        fail "$run: policy $pol: no acquisition waited ($line)"
      else
        pass "$run: policy $pol: $(cat "$tmp/shim.out"); $(awk '{ print $4 }' <<< "$line") contended"
      fi
    done
  done
}

# ---- nomem: lock calls never fail for memory ----
nomem() {
  local prog=$1 fail_so=$2 k n rc limit=60 runs
  for n in 0 1 3; do
    if ! timeout $limit env LD_PRELOAD="$fail_so" "$prog" interpose $n > "$tmp/native.out" \
        2> "$tmp/native.err"; then
      fail "N=$n: native run failed"; cat "$tmp/native.out" "$tmp/native.err" >&2; return
    fi
    for k in $kinds; do
      runs=("plain" "stats" "trace")
      for how in "${runs[@]}"; do
        local env=(LD_PRELOAD="$lib $fail_so" HWSYNC_LOCK="$k")
        [ $how = stats ] && env+=(HWSYNC_STATS=1)
        [ $how = trace ] && env+=(HWSYNC_TRACE="$tmp/trace.json")
        rm -f "$tmp/trace.json"
        timeout $limit env "${env[@]}" "$prog" interpose $n > "$tmp/shim.out" 2> "$tmp/shim.err"
        rc=$?
        if [ $rc -ne 0 ]; then
          fail "kind $k: N=$n ($how): $(ended $rc $limit):"; cat "$tmp/shim.out" "$tmp/shim.err" >&2
        elif ! diff -u "$tmp/native.out" "$tmp/shim.out" > "$tmp/diff"; then
          fail "kind $k: N=$n ($how): differs from glibc:"; sed 1,2d "$tmp/diff" >&2
        elif [ $how = stats ] && [ $n = 0 ] &&
             ! grep -q 'operations not counted (no memory' "$tmp/shim.err"; then
          fail "kind $k: N=0 (stats): the summary does not say what it missed:"; cat "$tmp/shim.err" >&2
        elif [ $how = trace ] && [ $n = 0 ] &&
             ! grep -q 'events dropped (no memory' "$tmp/shim.err"; then
          fail "kind $k: N=0 (trace): no line about the dropped events:"; cat "$tmp/shim.err" >&2
        elif [ $how = trace ] && ! python3 -m json.tool "$tmp/trace.json" > /dev/null 2>&1; then
          fail "kind $k: N=$n (trace): the trace is not valid JSON"
        else
          pass "kind $k: N=$n ($how): $(grep -o '[0-9]* allocations refused' "$tmp/shim.err")"
        fi
      done
    done
  done
  if ! timeout $limit env MALLOC_ARENA_MAX=1 "$prog" rlimit 0 > "$tmp/native.out" 2> "$tmp/native.err"; then
    fail "rlimit: native run failed"; cat "$tmp/native.out" "$tmp/native.err" >&2; return
  fi
  for k in $kinds; do
    timeout $limit env MALLOC_ARENA_MAX=1 LD_PRELOAD="$lib" HWSYNC_LOCK="$k" HWSYNC_STATS=1 \
      "$prog" rlimit 0 > "$tmp/shim.out" 2> "$tmp/shim.err"
    rc=$?
    if [ $rc -ne 0 ]; then
      fail "kind $k: rlimit: $(ended $rc $limit):"; cat "$tmp/shim.out" "$tmp/shim.err" >&2
    elif ! diff -u "$tmp/native.out" "$tmp/shim.out" > "$tmp/diff"; then
      fail "kind $k: rlimit: differs from glibc:"; sed 1,2d "$tmp/diff" >&2
    else
      pass "kind $k: rlimit: $(grep -o '[0-9]* blocks filled the heap' "$tmp/shim.err")"
    fi
  done
}

case $check in
  churn) churn "$@" ;;
  nomem) nomem "$@" ;;
  fork) forks "$@" ;;
  sem-eintr|xunlock|cancel-self|cancel-self-xthread|rlimit|heap|alone) corners "$@" ;;
  startup) startup "$@" ;;
  spin) spins "$@" ;;
  *) echo "$0: unknown check '$check'" >&2; exit 2 ;;
esac
[ $fails -eq 0 ] && echo "$check: all passed" || echo "$check: $fails failed"
[ $fails -eq 0 ]
