#!/usr/bin/env bash
# Measure third-party programs from Debian with `hwsync compare`: natively and
# under hwsync's default configurations, interleaved (docs/compare.md).  The
# results and commands are recorded in docs/results/<machine>/programs.md.
#
#   scripts/programs.sh [PROGRAM...]
#
# PROGRAMs: pigz xz sysbench-threads sysbench-mutex sysbench-mutex-hot memcached rocksdb
# numpy
# (default: all).  Environment:
#   HWS=build/hwsync   the hwsync executable
#   OUT=DIR            where JSON, outputs and inputs go (default results/programs-DATE)
#   ROUNDS=6           rounds per program (hwsync compare -n; 6 is the fewest
#                      whose order-statistic interval reaches 95%)
#   BUDGET=150         seconds per program (hwsync compare --budget)
#   CONFIGS=...        hwsync compare --configs (default: its own default list)
# Installs the packages by name first (scripts/deps.sh programs).  memcached
# listens on 127.0.0.1 only and is stopped by scripts/memcached_load.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
hws=${HWS:-$root/build/hwsync}
out=${OUT:-results/programs-$(date -u +%Y%m%d-%H%M%S)}
rounds=${ROUNDS:-6}
budget=${BUDGET:-150}
all=(pigz xz sysbench-threads sysbench-mutex sysbench-mutex-hot memcached rocksdb numpy)
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=("${all[@]}")
for p in "${progs[@]}"; do
  [[ " ${all[*]} " == *" $p "* ]] || { echo "programs.sh: unknown program '$p' (${all[*]})" >&2; exit 2; }
done
[ -x "$hws" ] || { echo "programs.sh: $hws not found (make build first, or set HWS)" >&2; exit 2; }
"$root/scripts/deps.sh" programs
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=/usr/bin/python3   # Debian's python3, which has python3-numpy

# 32 MiB of text with the statistics of prose: words drawn from a fixed
# vocabulary with a fixed seed, so that every machine compresses the same bytes.
input=$out/input.txt
if [ ! -s "$input" ]; then
  "$py" - "$input" <<'PY'
import random, sys
r = random.Random(1)
vocab = ["".join(r.choice("etaoinshrdlucmfwypvbgkqjxz") for _ in range(r.randint(2, 10)))
         for _ in range(5000)]
weights = [1.0 / (i + 1) for i in range(len(vocab))]   # Zipf-like
with open(sys.argv[1], "w") as f:
    size = 0
    while size < 32 << 20:
        line = " ".join(r.choices(vocab, weights, k=12)) + "\n"
        f.write(line)
        size += len(line)
PY
fi
# xz is several times slower than gzip: a quarter of the text, in 1 MiB blocks
# so that both threads have blocks to compress
small=$out/input-8m.txt
[ -s "$small" ] || head -c 8M "$input" > "$small"

compare() {   # name, then hwsync compare options, then -- PROGRAM ARGS
  local name=$1
  shift
  echo "== $name" >&2
  local cfg=() opts=() setup=
  [ -n "${CONFIGS:-}" ] && cfg=(--configs "$CONFIGS")
  while [ "$1" != -- ]; do
    [ "$1" = --setup ] && setup=$2
    opts+=("$1")
    shift
  done
  shift
  "$hws" compare "${cfg[@]}" -n "$rounds" --budget "$budget" --out "$out/$name.json" \
    --out-dir "$out/$name" "${opts[@]}" -- "$@" | tee "$out/$name.txt"
  # then one run under the default configuration with HWSYNC_STATS and the
  # contention profile (one file per process): which of the program's objects
  # went through hwsync, how contended they were, and from where
  [ -z "$setup" ] || sh -c "$setup"
  rm -f "$out/$name".profile.*.json
  "$hws" run --stats --profile="$out/$name.profile.%p.json" -- "$@" > /dev/null \
    2> "$out/$name.stats.err" || true
  grep '^hwsync\[' "$out/$name.stats.err" > "$out/$name.stats" || true
  local biggest
  biggest=$(ls -S "$out/$name".profile.*.json 2>/dev/null | head -1)
  [ -z "$biggest" ] || "$hws" profile "$biggest" --top 8 > "$out/$name.profile.txt" || true
}

for p in "${progs[@]}"; do
  case "$p" in
    pigz)
      compare pigz -- pigz -p 2 -6 -k -f "$input" ;;
    xz)
      compare xz --setup "rm -f '$small.xz'" -- xz -T2 -2 --block-size=1MiB -k "$small" ;;
    sysbench-threads)
      # 8 threads on 2 CPUs, each request: lock one of 8 mutexes, yield, unlock
      compare sysbench-threads -- sysbench threads --threads=8 --thread-locks=8 \
        --thread-yields=100 --events=4000 --time=0 --percentile=0 run ;;
    sysbench-mutex)
      # 4 threads, each takes a random mutex of an array of 4096, 200000 times
      compare sysbench-mutex -- sysbench mutex --threads=4 --mutex-num=4096 \
        --mutex-locks=200000 --mutex-loops=2000 run ;;
    sysbench-mutex-hot)
      # the same with one mutex for all: the one contended program of the list
      compare sysbench-mutex-hot -- sysbench mutex --threads=4 --mutex-num=1 \
        --mutex-locks=5000000 --mutex-loops=50 run ;;
    memcached)
      port=$((20000 + $$ % 10000))
      compare memcached -- "$root/scripts/memcached_load.sh" "$port" --concurrency=4 \
        --execute-number=20000 --binary ;;
    rocksdb)
      # In-place updates of the memtable take its per-key rwlocks (the stripes
      # of inplace_update_num_locks); they need non-concurrent memtable writes.
      compare rocksdb --setup "rm -rf '$out/rocksdb-db'" -- db_bench \
        --benchmarks=fillrandom,readrandomwriterandom --num=50000 --threads=4 \
        --inplace_update_support=true --allow_concurrent_memtable_write=false \
        --value_size=100 --db="$out/rocksdb-db" --disable_wal=true --compression_type=none \
        --statistics=false --histogram=false ;;
    numpy)
      # OpenBLAS built for OpenMP: many short parallel regions (GOMP_parallel
      # and its barriers go through the shim).  LD_LIBRARY_PATH picks the
      # OpenMP build of libblas.so.3 for this program only; on a machine of
      # your own, update-alternatives --set libblas.so.3-x86_64-linux-gnu
      # /usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3 does it for all.
      cat > "$out/matmul.py" <<'PY'
import numpy as np
rng = np.random.default_rng(1)
a = rng.standard_normal((300, 300))
b = rng.standard_normal((300, 300))
c = np.zeros((300, 300))
for i in range(150):
    c += a @ b
    a, b = b, a
print(round(float(np.abs(c).sum()), -3))
PY
      LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp OMP_NUM_THREADS=2 \
        compare numpy --check-output -- "$py" "$out/matmul.py" ;;
  esac
done
echo "results in $out" >&2
