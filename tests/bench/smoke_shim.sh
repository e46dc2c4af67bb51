#!/bin/bash
# Smoke test of `hwsync bench shim`: a reduced --quick run, the JSON against
# the schema, every pattern either run natively and under the shim (with the
# paired ratios of every round) or skipped with its reason; explicit kinds and
# policies; the whole experiment skipped when the shim library is missing.
#   smoke_shim.sh HWSYNC PYTHON CHECK PRELOAD_LIB_OR_EMPTY INSTALL_LIBDIR
set -u
. "$(dirname "$0")/smoke_common.sh"
PRELOAD=$4
LIBDIR=$5

expect_help shim
expect_error shim --patterns mutex,nosuch
expect_error shim --starts 0
expect_error shim --churn many
expect_error shim --impls native,hwsync-shim-nosuch
expect_error shim --policies no-such-policy
grep -q "^ *shim .*not in suite" <<<"$("$HWSYNC" bench list)" || fail "list: shim not marked"

if [ -z "$PRELOAD" ]; then   # no shim in this build: the experiment says so
	"$HWSYNC" bench shim --quick --reps 1 --out "$T/r.json" >"$T/stdout" 2>"$T/stderr" ||
		{ cat "$T/stderr" >&2; fail "shim run without the shim"; }
	grep -q "skipped: every pattern: libhwsync-preload.so not found" "$T/stdout" ||
		fail "not skipped without the shim"
	exit 0
fi

"$HWSYNC" bench shim --quick --reps 2 --warmup 1 --duration 10ms --starts 4 --churn 20000 \
	--raw --out "$T/r.json" >"$T/stdout" 2>"$T/stderr" || { cat "$T/stderr" >&2; fail "shim run"; }
grep -q '^== shim' "$T/stdout" || fail "no table"
"$PY" "$CHECK" "$T/r.json" --exp shim --min-rows 30 || fail "shim JSON"
"$PY" - "$T/r.json" <<'PY' || fail "shim rows"
import json, sys
e = json.load(open(sys.argv[1]))["experiments"][0]
reps = e["params"]["reps"]
patterns = ["mutex", "spin", "sem", "omp-lock", "mutex-contended", "mutex-private",
            "sem-pingpong", "omp-lock-contended", "omp-critical", "omp-barrier",
            "mutex-yield", "spin-contended", "spin-oversub", "startup", "churn",
            "cond-periodic", "cond-consumer", "mutex-empty", "mutex-empty-async",
            "mutex-yield8-1", "mutex-yield8-4", "mutex-yield8-16", "mutex-rt",
            "omp-parallel", "omp-parallel-for", "omp-for-dynamic", "omp-sections",
            "omp-ordered", "rwlock-read99", "mutex-paired", "omp-lock-paired",
            "cond-periodic-paired", "cond-consumer-paired"]
fair = {"rwlock-read99", "mutex-contended", "mutex-private", "mutex-yield", "spin-contended", "spin-oversub",
        "mutex-empty", "mutex-empty-async", "mutex-yield8-1", "mutex-yield8-4",
        "mutex-yield8-16", "mutex-rt"}
p99 = {"mutex-contended", "omp-lock-contended", "omp-critical", "mutex-yield", "spin-contended",
       "spin-oversub", "mutex-empty", "mutex-empty-async", "mutex-yield8-1", "mutex-yield8-4",
       "mutex-yield8-16", "mutex-rt"}
latency = {"cond-periodic", "cond-consumer", "cond-periodic-paired", "cond-consumer-paired"}
inproc = {"mutex-paired", "omp-lock-paired", "cond-periodic-paired", "cond-consumer-paired"}
inproc_cond = {"cond-periodic-paired", "cond-consumer-paired"}
skipped = {s["what"]: s["reason"] for s in e["skipped"]}
for p in patterns:
    rows = [r for r in e["rows"] if r["pattern"] == p]
    if not rows:
        why = skipped.get(f"pattern={p}", "")
        assert (p.startswith("omp-") and "OpenMP" in why) or \
            (p == "mutex-rt" and "SCHED_FIFO" in why), (p, skipped)
        continue
    assert [r["impl"] for r in rows] == ["native", "hwsync-shim-auto"], (p, rows)
    nat, shim = rows
    assert shim["policy"] == "adaptive" and nat["policy"] is None, shim
    main = "throughput" if p not in ("startup", "churn") else "time"
    for r in rows:
        for m in (main, "cpu", "rss"):
            assert r[m]["n"] == reps and r[m]["median"] > 0, (p, r["impl"], m, r.get(m))
        assert r["rss"]["unit"] == "MiB" and r["rss"]["median"] < 4096, r["rss"]
        if p != "startup":
            assert 0 < r["cpu_window"]["median"] <= r["cpu"]["median"] * 1.05, (p, r)
    # a ratio every measured round, and it is the ratio of the same round
    for m in (main + "_ratio", "cpu_ratio", "rss_ratio"):
        assert shim[m]["n"] == reps and shim[m]["unit"] == "shim/native", (p, m)
    if p == "startup":
        assert shim["added"]["n"] == reps, shim
    nat_raw = sorted(nat[main]["raw"] if main == "throughput" else nat[main]["raw_cycles"])
    assert len(nat_raw) == reps
    if p in ("mutex-yield", "spin-oversub", "mutex-rt"):
        assert nat["threads"] == 4 * len(set(nat["cpus"])), nat
    if p.startswith("mutex-yield8-"):
        assert nat["threads"] == int(p.split("-")[-1]) * len(set(nat["cpus"])), nat
    if p in ("mutex-contended", "sem-pingpong", "rwlock-read99", "spin-contended", "cond-periodic",
             "cond-consumer", "mutex-empty", "mutex-empty-async") or p in inproc_cond:
        assert nat["threads"] == 2 and nat["placement"] == "core", nat
    # the wake latency, fairness and p99 wait where the pattern measures them,
    # and only there, with their paired shim/native samples
    for metric, which, paired in (("wake_latency", latency, "latency_ratio"),
                                  ("fairness", fair, "fairness_delta"),
                                  ("wait_p99", p99, "p99_ratio")):
        for r in rows:
            assert (metric in r) == (p in which), (p, r["impl"], metric)
            if p in which:
                assert r[metric]["n"] == reps and r[metric]["median"] > 0, (p, metric, r)
        if p in which:
            assert shim[paired]["n"] == reps, (p, paired, shim)
    if p in fair:
        for r in rows:
            assert r["fairness"]["median"] <= 1, (p, r["fairness"])
    # the in-process ratio on both rows of a paired pattern, and only there
    for r in rows:
        assert ("paired_ratio" in r) == (p in inproc), (p, r["impl"])
        if p in inproc:
            assert r["paired_ratio"]["n"] == reps and r["paired_ratio"]["median"] > 0, (p, r)
        for m in ("paired_cpu_ratio", "paired_latency_ratio"):
            assert (m in r) == (p in inproc_cond), (p, r["impl"], m)
            if p in inproc_cond:
                assert r[m]["n"] == reps and r[m]["median"] > 0, (p, m, r)
PY

# explicit kinds and policies: one shim row per kind x policy, after native
"$HWSYNC" bench shim --reps 1 --warmup 0 --duration 5ms --patterns mutex,sem-pingpong \
	--impls native,hwsync-shim-mutex,hwsync-shim-tas --policies futex,pause \
	--out "$T/k.json" >"$T/stdout" 2>"$T/stderr" || { cat "$T/stderr" >&2; fail "kinds run"; }
"$PY" "$CHECK" "$T/k.json" --exp shim --min-rows 10 --impl hwsync-shim-tas:throughput_ratio \
	|| fail "kinds JSON"
"$PY" - "$T/k.json" <<'PY' || fail "kinds rows"
import json, sys
rows = json.load(open(sys.argv[1]))["experiments"][0]["rows"]
got = [(r["pattern"], r["impl"], r["policy"]) for r in rows]
want = []
for p in ("mutex", "sem-pingpong"):
    want.append((p, "native", None))
    for k in ("mutex", "tas"):
        for pol in ("futex", "pause"):
            want.append((p, "hwsync-shim-" + k, pol))
assert got == want, got
PY

# an OpenMP team smaller than asked is one line and exit 1, not a gate that
# waits for threads that never come
PATTERNS="$(dirname "$HWSYNC")/hwsync-shim-patterns"
for p in omp-lock-contended omp-barrier; do
	"$PATTERNS" list | grep -q "^$p ok" || continue
	rc=0
	OMP_THREAD_LIMIT=1 timeout 60 "$PATTERNS" "$p" 10000000 0,0 >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 1 ] && grep -q "OpenMP gave 1 threads, asked 2" "$T/err" ||
		fail "$p with OMP_THREAD_LIMIT=1: exit $rc, $(cat "$T/err")"
done

# without the shim library (a copy of hwsync that has only the patterns
# program beside it) every pattern is skipped with the reason
if [ ! -e "$LIBDIR/libhwsync-preload.so" ]; then
	mkdir "$T/bin"
	cp "$HWSYNC" "$(dirname "$HWSYNC")/hwsync-shim-patterns" "$T/bin/"
	"$T/bin/hwsync" bench shim --reps 1 --warmup 0 --duration 5ms --out "$T/n.json" \
		>"$T/stdout" 2>"$T/stderr" || { cat "$T/stderr" >&2; fail "run without the shim"; }
	grep -q "skipped: every pattern: libhwsync-preload.so not found" "$T/stdout" ||
		fail "not skipped without the shim: $(cat "$T/stdout")"
	"$PY" - "$T/n.json" <<'PY' || fail "rows without the shim"
import json, sys
e = json.load(open(sys.argv[1]))["experiments"][0]
assert e["rows"] == [] and e["skipped"], e
PY
fi
exit 0
