#!/usr/bin/env bash
# The LD_PRELOAD shim end to end.  Usage: test_preload.sh HWSYNC PRELOAD CONFORM CANCEL_EXIT [OMP]
. "$(dirname "$0")/common.sh"
hwsync=$1 lib=$2 conform=$3 cancel_exit=$4 omp=${5:-}

find_lock_kinds "$hwsync"
bkinds=$("$hwsync" info --json | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["barriers"]))')
echo "barrier kinds: ${bkinds:-none in this build (barriers pass through)}"
bstat='pthread_barrier +[1-9]'; ostat='omp barrier +[1-9]'
[ -n "$bkinds" ] || bstat='passed to the native implementation: barriers' ostat=$bstat

# 1. conformance: glibc is the reference
timeout 60 "$conform" > "$tmp/native.out" 2>&1 || fail "conform natively"
for k in $kinds; do
  timeout 60 "$hwsync" run --lock "$k" --stats -- "$conform" > "$tmp/shim.out" 2> "$tmp/shim.err"
  if ! diff -u "$tmp/native.out" "$tmp/shim.out" > "$tmp/diff"; then
    fail "conform under --lock $k differs from glibc:"; cat "$tmp/diff" >&2
  elif ! grep -Eq 'pthread_mutex +[1-9][0-9]* acquisitions' "$tmp/shim.err" ||
       ! grep -Eq "$bstat" "$tmp/shim.err" ||
       ! grep -Eq 'sem +[1-9]' "$tmp/shim.err"; then
    fail "conform under --lock $k: the shim's stats show no mutex/barrier/sem use"; cat "$tmp/shim.err" >&2
  else
    pass "conform under --lock $k matches glibc"
  fi
done
timeout 60 "$hwsync" run --wait futex -- "$conform" > "$tmp/shim.out" 2>&1
diff -q "$tmp/native.out" "$tmp/shim.out" >/dev/null && pass "conform under --wait futex" ||
  fail "conform under --wait futex differs"

# 2. asynchronous cancellation of lock loopers: the program still exits
if timeout 30 env LD_PRELOAD="$lib" HWSYNC_STATS=1 "$cancel_exit" > "$tmp/ce.out" 2>&1; then
  pass "async-cancelled lock loopers: program exits"
else
  fail "async-cancelled lock loopers: exit status $? (124 = hung)"; cat "$tmp/ce.out" >&2
fi

# 3. bad environment values: one line naming it, glibc result
bad() {   # VAR VALUE PATTERN
  timeout 60 env "$1=$2" LD_PRELOAD="$lib" "$conform" > "$tmp/bad.out" 2> "$tmp/bad.err"
  if ! diff -q "$tmp/native.out" "$tmp/bad.out" >/dev/null; then
    fail "$1='$2': program output changed"
  elif [ "$(grep -c . "$tmp/bad.err")" -ne 1 ] || ! grep -q "$3" "$tmp/bad.err"; then
    fail "$1='$2': expected one line naming it, got:"; cat "$tmp/bad.err" >&2
  else
    pass "$1='$2': $(cat "$tmp/bad.err")"
  fi
}
bad HWSYNC_LOCK no-such-kind "HWSYNC_LOCK='no-such-kind'"
bad HWSYNC_WAIT 'futex:bogus=1' "HWSYNC_WAIT='futex:bogus=1'"
bad HWSYNC_BARRIER no-such-barrier "HWSYNC_BARRIER='no-such-barrier'"
bad HWSYNC_TRACE /nonexistent-dir/trace.json "HWSYNC_TRACE='/nonexistent-dir/trace.json'"
bad HWSYNC_STATS yes "HWSYNC_STATS='yes'"

# 4. trace: valid Chrome trace-event JSON with lock and barrier spans
"$hwsync" run --trace "$tmp/trace.json" -- "$conform" > /dev/null 2>&1
if python3 - "$tmp/trace.json" "$bkinds" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
names = {e["name"] for e in t["traceEvents"]}
assert "mutex wait" in names and "mutex held" in names, names
assert "pthread_barrier wait" in names or not sys.argv[2], names
assert all(e["ph"] in "XM" for e in t["traceEvents"])
PY
then pass "trace JSON"; else fail "trace JSON"; fi

# 5. hwsync run: errors and exit status
"$hwsync" run -- sh -c 'exit 7'; [ $? -eq 7 ] && pass "run: exit status is the program's" ||
  fail "run: exit status"
out=$("$hwsync" run --wait 'nope' -- true 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$(echo "$out" | grep -c .)" -eq 1 ] && pass "run --wait nope: $out" ||
  fail "run --wait nope: rc $rc: $out"
out=$("$hwsync" run --bogus -- true 2>&1); [ $? -eq 2 ] && pass "run --bogus: $out" ||
  fail "run --bogus"
"$hwsync" run -- /nonexistent/prog 2>/dev/null; [ $? -eq 127 ] && pass "run: missing program 127" ||
  fail "run: missing program"
# The tool's own libgomp binds its first thread when OMP_PROC_BIND is set; the
# program must still get the CPU mask we were started with.
mask() { grep Cpus_allowed_list /proc/self/status; }
want=$(mask); got=$(OMP_PROC_BIND=true "$hwsync" run -- grep Cpus_allowed_list /proc/self/status)
[ "$got" = "$want" ] && pass "run: OMP_PROC_BIND keeps the program's CPU mask ($got)" ||
  fail "run: OMP_PROC_BIND narrowed the CPU mask: '$got' instead of '$want'"

# 6. OpenMP: locks, critical, barriers, tasks under every kind, adaptive and futex
if [ -n "$omp" ]; then
  OMP_NUM_THREADS=4 timeout 60 "$omp" > "$tmp/omp.native" 2>&1 || fail "omp natively"
  for k in $kinds; do
    for w in adaptive futex; do
      OMP_NUM_THREADS=4 timeout 60 "$hwsync" run --lock "$k" --wait "$w" --stats -- "$omp" \
        > "$tmp/omp.out" 2> "$tmp/omp.err"; rc=$?
      if [ $rc -ne 0 ] || ! diff -q "$tmp/omp.native" "$tmp/omp.out" >/dev/null; then
        fail "omp under $k/$w: rc $rc"; cat "$tmp/omp.out" "$tmp/omp.err" >&2
      elif ! grep -Eq 'omp_lock +[1-9]' "$tmp/omp.err" || ! grep -Eq 'omp critical +[1-9]' "$tmp/omp.err" ||
           ! grep -Eq "$ostat" "$tmp/omp.err"; then
        fail "omp under $k/$w: stats show no shim use"; cat "$tmp/omp.err" >&2
      else
        pass "omp under $k/$w"
      fi
    done
  done
  for bk in $bkinds; do
    # the program's team has 4 threads: "pair" (exactly two) must pass to libgomp
    want='omp barrier +[1-9]'; [ "$bk" = pair ] && want='barriers the HWSYNC_BARRIER kind cannot serve'
    timeout 60 "$hwsync" run --barrier "$bk" --stats -- "$omp" > "$tmp/omp.out" 2> "$tmp/omp.err"
    if [ $? -ne 0 ] || ! grep -Eq "$want" "$tmp/omp.err"; then
      fail "omp under --barrier $bk"; cat "$tmp/omp.out" "$tmp/omp.err" >&2
    else
      pass "omp under --barrier $bk"
    fi
  done
else
  echo "skip: OpenMP test (no OpenMP compiler support)"
fi

# 7. real programs from Debian: xz -T2 and zstd -T2 (deps.sh test installs them)
python3 -c '
import random, sys
r = random.Random(6)
words = [("".join(r.choice("abcdefghij") for _ in range(r.randint(2, 9)))) for _ in range(2000)]
with open(sys.argv[1], "w") as f:
    for i in range(200000):
        f.write(" ".join(r.choice(words) for _ in range(6)) + "\n")' "$tmp/in.txt"
real() {   # NAME COMPRESS... (reads stdin, writes stdout)
  "${@:2}" < "$tmp/in.txt" > "$tmp/$1.native" || { fail "$1 natively"; return; }
  "$hwsync" run --stats -- "${@:2}" < "$tmp/in.txt" > "$tmp/$1.shim" 2> "$tmp/$1.err" ||
    { fail "$1 under the shim"; cat "$tmp/$1.err" >&2; return; }
  if ! cmp -s "$tmp/$1.native" "$tmp/$1.shim"; then
    fail "$1: output differs under the shim"
  elif ! grep -Eq 'pthread_mutex +[1-9][0-9]* acquisitions' "$tmp/$1.err"; then
    fail "$1: the shim took no mutex"; cat "$tmp/$1.err" >&2
  else
    pass "$1: same output, $(grep -Eo 'pthread_mutex +[0-9]+ acquisitions' "$tmp/$1.err" | tr -s ' ')"
  fi
}
if command -v xz >/dev/null; then real xz xz -T2 -1 -c; else fail "xz missing (scripts/deps.sh test)"; fi
if command -v zstd >/dev/null; then real zstd zstd -T2 -q -1 -c; else fail "zstd missing"; fi

# 8. stats of forked children: a child that locks after the fork reports its
# own counts under its own pid, also when it ends with _exit (os._exit), and
# only once (Debian's python3: a python3 first on PATH may be a wrapper script).
cat > "$tmp/forker.py" <<'PY'
import os, threading
lock = threading.Lock()
for end in ("exit", "_exit"):
    pid = os.fork()
    if pid == 0:
        for _ in range(1000):
            lock.acquire(); lock.release()
        print(os.getpid(), end, flush=True)
        os._exit(0) if end == "_exit" else exit(0)
    os.waitpid(pid, 0)
PY
if timeout 60 "$hwsync" run --stats -- /usr/bin/python3 "$tmp/forker.py" > "$tmp/fork.out" 2> "$tmp/fork.err"; then
  for end in exit _exit; do
    cpid=$(awk -v e=$end '$2 == e { print $1 }' "$tmp/fork.out")
    n=$(grep -c "^hwsync\[$cpid\]: stats:" "$tmp/fork.err")
    waits=$(sed -n "s/^hwsync\[$cpid\]:   sem *\([0-9]*\) waits.*/\1/p" "$tmp/fork.err")
    if [ -n "$cpid" ] && [ "$n" = 1 ] && [ "${waits:-0}" -ge 1000 ]; then
      pass "a forked child ending with $end reports its own stats once ($waits sem waits)"
    else
      fail "forked child ending with $end (pid '$cpid'): $n summaries, ${waits:-no} sem waits"
      cat "$tmp/fork.out" "$tmp/fork.err" >&2
    fi
  done
  [ "$(grep -c '^hwsync\[[0-9]*\]: stats:' "$tmp/fork.err")" = 3 ] &&
    pass "stats with fork: three summaries (parent, two children)" ||
    { fail "stats with fork: not three summaries"; cat "$tmp/fork.err" >&2; }
else
  fail "stats with fork: the program failed"; cat "$tmp/fork.out" "$tmp/fork.err" >&2
fi

[ $fails -eq 0 ] && echo "all preload checks passed" || echo "$fails preload checks failed"
[ $fails -eq 0 ]
