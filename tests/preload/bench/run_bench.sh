#!/usr/bin/env bash
# Shim vs native, in the same run, interleaved round-robin (not a test).
#   tests/preload/bench/run_bench.sh BUILD_DIR [REPS] [KINDS] [POLICIES]
# Writes a Markdown table of median ratios (shim / native) to stdout:
# OpenMP lock, critical and barrier throughput with fairness, and the wall
# time of `xz -T2` on a generated 7 MB text.
set -euo pipefail
b=${1:?build dir}; reps=${2:-5}
kinds=${3:-$("$b/hwsync" info --json | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["locks"]))')}
policies=${4:-"adaptive futex"}
ms=${BENCH_MS:-300}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 -c '
import random, sys
r = random.Random(6)
w = ["".join(r.choice("abcdefghij") for _ in range(r.randint(2, 9))) for _ in range(2000)]
with open(sys.argv[1], "w") as f:
    for i in range(200000): f.write(" ".join(r.choice(w) for _ in range(6)) + "\n")' "$tmp/in.txt"
configs=("native")
for k in $kinds; do for p in $policies; do configs+=("$k/$p"); done; done
runit() {   # CONFIG CMD...
  if [ "$1" = native ]; then "${@:2}"; else
    "$b/hwsync" run --lock "${1%/*}" --wait "${1#*/}" -- "${@:2}"; fi
}
for r in $(seq "$reps"); do
  for c in "${configs[@]}"; do
    for mode in lock critical barrier; do
      echo "$c $(OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=true runit "$c" "$b/tests/preload/omp_bench" $mode $ms)"
    done
    s=$(date +%s.%N); runit "$c" xz -T2 -1 -c < "$tmp/in.txt" > /dev/null; e=$(date +%s.%N)
    echo "$c xz threads=2 secs=$(python3 -c "print($e - $s)")"
  done
done > "$tmp/raw"
python3 - "$tmp/raw" <<'PY'
import sys, statistics as st, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p = line.split(); cfg, mode = p[0], p[1]
    kv = dict(x.split("=") for x in p[2:])
    rows[(cfg, mode)].append({k: float(v) for k, v in kv.items()})
cfgs = list(dict.fromkeys(c for c, _ in rows))
def med(c, m, k): return st.median(x[k] for x in rows[(c, m)])
def spread(c, m, k):
    v = [x[k] for x in rows[(c, m)]]; return (max(v) - min(v)) / st.median(v) if st.median(v) else 0
print("| config | lock ops/s (ratio) | lock min/max | critical ops/s (ratio) | critical min/max | barrier episodes/s (ratio) | xz -T2 s (ratio) |")
print("|---|---|---|---|---|---|---|")
for c in cfgs:
    cells = []
    for m, k in (("lock", "ops_per_s"), ("critical", "ops_per_s"), ("barrier", "ops_per_s"), ("xz", "secs")):
        v, n = med(c, m, k), med("native", m, k)
        cells.append(f"{v:,.0f} ({v / n:.2f}, ±{spread(c, m, k) * 50:.0f}%)" if k != "secs" else f"{v:.2f} ({v / n:.2f})")
        if m in ("lock", "critical"):
            cells.append(f"{med(c, m, 'min_over_max'):.2f}")
    print(f"| {c} | " + " | ".join(cells) + " |")
PY
