#!/usr/bin/env bash
# Every interposed call on a PTHREAD_STACK_MIN stack, through its slow paths,
# at most LIMIT bytes deep (stack_depth.c measures; LD_BIND_NOW=1 so that the
# dynamic linker's first resolution of a symbol is not charged to a call).
#
#   test_stack_depth.sh HWSYNC PRELOAD STACK_DEPTH [LIMIT]
#
# Runs: natively (reported, for comparison); every lock kind with the
# default policy (adaptive), and with futex, HWSYNC_STATS=1 and HWSYNC_TRACE;
# HWSYNC_RWLOCK=bravo; HWSYNC_VERBOSE=1;
# every other available wait policy (hwsync info --json) with the default
# kind and stats on.  Each run is a fresh process, so the first calls of the
# process are measured in every configuration.  With stats on, the summary
# must show contended mutex acquisitions and blocked semaphore waits: the
# slow paths were taken.  Exit 0 when every run passed, 1 otherwise.
. "$(dirname "$0")/common.sh"
[ $# -ge 3 ] || { echo "usage: $0 HWSYNC PRELOAD STACK_DEPTH [LIMIT]" >&2; exit 2; }
hwsync=$1 lib=$2 prog=$3 limit=${4:-4096}
deepest=0 deepest_what=none

read -r kinds policies < <("$hwsync" info --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
kinds = [x if isinstance(x, str) else x.get("name", "") for x in d.get("locks", [])]
pols = [p["name"] for p in d.get("policies", []) if p.get("available")]
print(",".join(kinds), ",".join(pols))')
[ -n "${kinds:-}" ] || { echo "skip: hwsync info --json lists no lock kinds"; exit 77; }
echo "lock kinds: ${kinds//,/ }; available policies: ${policies//,/ }"

# run NAME MODE VAR=VALUE...: one process of the program under env VARs.
# With stats or trace on, the small-stack thread calls exit(), so that the
# shim's report at exit runs on its stack too.
run() {
  local name=$1 mode=$2 how=
  shift 2
  case "$*" in *HWSYNC_STATS=1*|*HWSYNC_TRACE=*) how=exit ;; esac
  timeout 90 env LD_BIND_NOW=1 "$@" "$prog" "$limit" "$mode" $how > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  local d
  d=$(sed -n 's/^deepest \([0-9]*\) \(.*\) (measuring.*/\1/p' "$tmp/out")
  local what
  what=$(sed -n 's/^deepest [0-9]* \(.*\) (measuring.*/\1/p' "$tmp/out")
  if [ $rc -ne 0 ]; then
    case $rc in
      124) echo "FAIL: $name: hung (killed after 90 s)" ;;
      13[0-9]|14[0-9]) echo "FAIL: $name: killed by signal $((rc - 128))" ;;
      *) echo "FAIL: $name: exit status $rc" ;;
    esac
    grep -E '^FAIL' "$tmp/out"
    cat "$tmp/err" >&2
    fails=$((fails + 1))
    return 1
  fi
  echo "ok: $name: deepest $d bytes ($what)"
  if [ "$mode" = shim ] && [ "${d:-0}" -gt "$deepest" ]; then
    deepest=$d deepest_what="$name: $what"
  fi
  return 0
}

run native native || true
echo "--- native (glibc, libgomp), for comparison:"
sed 's/^/    /' "$tmp/out"

# stats must show the slow paths: contended mutexes, blocked semaphore waits
slow_paths_seen() {   # NAME
  local c b
  c=$(sed -n 's/.*pthread_mutex  *[0-9]* acquisitions, \([0-9]*\) contended.*/\1/p' "$tmp/err")
  b=$(sed -n 's/.* sem  *[0-9]* waits (\([0-9]*\) blocked.*/\1/p' "$tmp/err")
  if [ "${c:-0}" -eq 0 ] || [ "${b:-0}" -eq 0 ]; then
    echo "FAIL: $1: the stats show no slow path (contended mutex: ${c:-none}, blocked sem: ${b:-none})"
    cat "$tmp/err" >&2
    fails=$((fails + 1))
  fi
}

for k in ${kinds//,/ }; do
  run "kind $k, adaptive" shim LD_PRELOAD="$lib" HWSYNC_LOCK="$k" || true
  name="kind $k, futex, stats, trace"
  if run "$name" shim LD_PRELOAD="$lib" HWSYNC_LOCK="$k" HWSYNC_WAIT=futex HWSYNC_STATS=1 \
       HWSYNC_TRACE="$tmp/trace.json"; then
    slow_paths_seen "$name"
    [ -s "$tmp/trace.json" ] || { echo "FAIL: $name: no trace written"; fails=$((fails + 1)); }
  fi
  [ "$k" = auto ] && cp "$tmp/out" "$tmp/auto.out"
done
# the other rwlock algorithm for default rwlocks
run "kind auto, adaptive, rwlock bravo" shim LD_PRELOAD="$lib" HWSYNC_RWLOCK=bravo || true
# every message the shim may print while running (HWSYNC_VERBOSE: what is
# passed to glibc, once per kind, on the thread that passes it)
run "kind auto, adaptive, verbose" shim LD_PRELOAD="$lib" HWSYNC_VERBOSE=1 &&
  grep -q 'passing recursive pthread mutexes' "$tmp/err" ||
  { echo "FAIL: verbose: no message about the recursive mutex"; fails=$((fails + 1)); }
for p in ${policies//,/ }; do
  case $p in adaptive|futex) continue ;; esac
  name="kind auto, $p, stats"
  run "$name" shim LD_PRELOAD="$lib" HWSYNC_LOCK=auto HWSYNC_WAIT="$p" HWSYNC_STATS=1 &&
    slow_paths_seen "$name"
done

echo "--- kind auto, futex, stats, trace (per call):"
[ -f "$tmp/auto.out" ] && sed 's/^/    /' "$tmp/auto.out"
echo "deepest under the shim: $deepest bytes ($deepest_what); limit $limit"
if [ $fails -ne 0 ]; then
  echo "$fails run(s) failed"
  exit 1
fi
echo "all runs within $limit bytes"
