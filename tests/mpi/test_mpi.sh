#!/usr/bin/env bash
# The shim under Open MPI: both launch forms against the native run.
#   test_mpi.sh HWSYNC HYBRID_PROG_OR_EMPTY THREADS_PROG_OR_EMPTY
# For each program: `mpirun -np 2 PROG` natively, then
#   A: mpirun -np 2 hwsync run --stats --trace DIR/trace.json -- PROG
#   B: hwsync run --stats --trace DIR/t-%h-%p.json -- mpirun -np 2 PROG
# three times each.  The output must be the native one; the stats must come
# from every rank (and from mpirun itself in B) and show the shim took the
# program's locks; every process must leave a whole trace of its own (in A
# the ranks share one name: trace.json and trace.json.<pid>).
. "$(dirname "$0")/../preload/common.sh"
hwsync=$1 hybrid=$2 threads=$3
command -v mpirun >/dev/null || { echo "skip: mpirun not found (scripts/deps.sh test installs openmpi-bin)"; exit 77; }
[ -n "$threads" ] || { echo "skip: MPI not found at configure time (scripts/deps.sh test installs libopenmpi-dev)"; exit 77; }
# mpirun refuses to run as root without these; 2 ranks on a 2-CPU machine with
# OpenMP or pthreads inside need --oversubscribe, and --bind-to none, or Open
# MPI binds each rank to one core and OpenMP gives it a team of one.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=2
# no single-copy (CMA) transfers: a container may forbid process_vm_readv
export OMPI_MCA_btl_vader_single_copy_mechanism=none
unset HWSYNC_LOCK HWSYNC_WAIT HWSYNC_BARRIER HWSYNC_STATS HWSYNC_TRACE HWSYNC_VERBOSE
mpi=(mpirun -np 2 --oversubscribe --bind-to none)

# check_run NAME FORM DIR MIN_PROCS STATS_PATTERN: output, stats and traces of one run
check_run() {
  local name=$1 form=$2 dir=$3 min=$4 pat=$5
  if ! diff -u "$tmp/$name.native" "$dir/out" > "$dir/diff"; then
    fail "$name $form: output differs from the native run"; cat "$dir/diff" "$dir/err" >&2; return
  fi
  # processes that printed stats, and those whose stats show the pattern
  local procs with
  procs=$(grep -Eo '^hwsync\[[0-9]+\]: stats' "$dir/err" | sort -u | wc -l)
  with=$(grep -E "^hwsync\[[0-9]+\]: +$pat" "$dir/err" | grep -Eo '^hwsync\[[0-9]+\]' | sort -u | wc -l)
  if [ "$procs" -lt "$min" ] || [ "$with" -lt 2 ]; then
    fail "$name $form: stats from $procs processes ($min expected), '$pat' in $with (2 ranks)"
    cat "$dir/err" >&2; return
  fi
  if ! python3 - "$dir" "$min" <<'PY'; then
import glob, json, sys
files = [f for f in glob.glob(sys.argv[1] + "/*.json*")]
pids = set()
for f in files:
    t = json.load(open(f))            # every file a whole trace
    p = {e["pid"] for e in t["traceEvents"]}
    assert len(p) == 1, (f, p)        # of one process
    pids |= p
assert len(files) >= int(sys.argv[2]) and len(pids) == len(files), (files, pids)
PY
    fail "$name $form: traces: $(ls "$dir")"; return
  fi
  pass "$name $form: native output; stats from $procs processes; $(ls "$dir" | grep -c json) traces"
}

run_prog() {   # NAME PROG STATS_PATTERN
  local name=$1 prog=$2 pat=$3
  if ! timeout 60 "${mpi[@]}" "$prog" > "$tmp/$name.native" 2> "$tmp/$name.native.err"; then
    fail "$name natively"; cat "$tmp/$name.native" "$tmp/$name.native.err" >&2; return
  fi
  for rep in 1 2 3; do
    local a=$tmp/$name.A.$rep b=$tmp/$name.B.$rep
    mkdir -p "$a" "$b"
    timeout 60 "${mpi[@]}" "$hwsync" run --stats --trace "$a/trace.json" -- "$prog" \
      > "$a/out" 2> "$a/err" || fail "$name A (mpirun ... hwsync run -- prog): exit $?"
    check_run "$name" "A.$rep (mpirun -np 2 hwsync run -- prog)" "$a" 2 "$pat"
    timeout 60 "$hwsync" run --stats --trace "$b/t-%h-%p.json" -- "${mpi[@]}" "$prog" \
      > "$b/out" 2> "$b/err" || fail "$name B (hwsync run -- mpirun ... prog): exit $?"
    check_run "$name" "B.$rep (hwsync run -- mpirun -np 2 prog)" "$b" 3 "$pat"
  done
}

run_prog threads "$threads" 'pthread_barrier +[1-9]'
if [ -n "$hybrid" ]; then
  run_prog hybrid "$hybrid" 'omp barrier +[1-9]'
else
  echo "skip: the hybrid MPI + OpenMP program (no OpenMP compiler support)"
fi
[ $fails -eq 0 ] && echo "all MPI checks passed"
[ $fails -eq 0 ]
