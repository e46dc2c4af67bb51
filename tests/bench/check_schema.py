#!/usr/bin/env python3
"""Check a hwsync-bench/2 results file (docs/bench-schema.md).
usage: check_schema.py FILE.json [EXPERIMENT [MIN_ROWS]]"""
import json
import math
import sys


def err(msg):
    print(f"schema: {msg}", file=sys.stderr)
    sys.exit(1)


def check_metric(where, m, raw, reps=None):
    """reps: the run's repetitions (cells: at most one value each), or None
    for a summary row (one sample per repetition: as many values as n)."""
    for k in ("unit", "n", "median", "p5", "p95", "p99", "ci95", "mean", "min", "max", "reps"):
        if k not in m:
            err(f"{where}: metric lacks '{k}'")
    if not isinstance(m["n"], int) or m["n"] < 1:
        err(f"{where}: n = {m['n']!r}")
    vals = [m[k] for k in ("min", "p5", "median", "p95", "p99", "max")]
    if any(not isinstance(v, (int, float)) or not math.isfinite(v) for v in vals):
        err(f"{where}: non-numeric statistics {vals}")
    if sorted(vals) != vals:
        err(f"{where}: statistics out of order {vals}")
    rv = m["reps"]
    if not isinstance(rv, list) or not rv or any(
            not isinstance(v, (int, float)) or not m["min"] - 1e-9 * abs(m["min"]) - 1e-9 <= v <=
            m["max"] + 1e-9 * abs(m["max"]) + 1e-9 for v in rv):
        err(f"{where}: reps {rv} not values within [min, max]")
    if (reps is not None and len(rv) > reps) or (reps is None and len(rv) != m["n"]):
        err(f"{where}: {len(rv)} values in reps (n = {m['n']}, repetitions {reps})")
    lo, hi = m["ci95"]
    if not (m["min"] <= lo <= m["median"] <= hi <= m["max"]):
        err(f"{where}: ci95 {m['ci95']} does not bracket the median {m['median']}")
    if m["unit"] == "ns":
        c = m.get("cycles")
        if not isinstance(c, dict) or not all(k in c for k in ("median", "p5", "p95", "p99", "ci95")):
            err(f"{where}: timed metric lacks cycles statistics")
        if raw and len(m.get("raw_cycles", [])) != m["n"]:
            err(f"{where}: raw_cycles has {len(m.get('raw_cycles', []))} samples, n = {m['n']}")
    elif raw and len(m.get("raw", [])) != m["n"]:
        err(f"{where}: raw has {len(m.get('raw', []))} samples, n = {m['n']}")


def validate(d, want=None, min_rows=1):
    """Exit 1 with a message unless d conforms; return the experiment names."""
    if d.get("schema") != "hwsync-bench/2":
        err(f"schema is {d.get('schema')!r}")
    m = d.get("machine")
    for k in ("cpu", "tsc", "topology", "energy", "policies"):
        if k not in m:
            err(f"machine lacks '{k}'")
    if not m["tsc"]["hz"] > 0:
        err("tsc.hz")
    if not m["energy"]["available"] and not m["energy"]["reason"]:
        err("energy unavailable without a reason")
    exps = d.get("experiments")
    if not isinstance(exps, list) or not exps:
        err("no experiments")
    seen = []
    for e in exps:
        for k in ("name", "title", "reproduces", "params", "rows", "skipped"):
            if k not in e:
                err(f"experiment lacks '{k}'")
        seen.append(e["name"])
        raw = "--raw" in d.get("command", "")
        for i, r in enumerate(e["rows"]):
            where = f"{e['name']} row {i}"
            if not isinstance(r.get("impl"), str) or not r["impl"]:
                err(f"{where}: impl")
            if "policy" not in r or not (r["policy"] is None or isinstance(r["policy"], str)):
                err(f"{where}: policy")
            if not isinstance(r.get("threads"), int) or len(r.get("cpus", [])) != r["threads"]:
                err(f"{where}: threads/cpus")
            metrics = {k: v for k, v in r.items() if isinstance(v, dict)}
            if not metrics:
                err(f"{where}: no metrics")
            for k, v in metrics.items():
                check_metric(f"{where} {k}", v, raw, e["params"]["reps"])
        # optional: rows an experiment computed from other rows after the run
        if "summary" in e:
            if not isinstance(e["summary"], list) or not isinstance(e.get("summary_title"), str):
                err(f"{e['name']}: summary is not a list with a summary_title")
        for i, r in enumerate(e.get("summary", [])):
            where = f"{e['name']} summary row {i}"
            if not isinstance(r.get("impl"), str) or "policy" not in r:
                err(f"{where}: impl/policy")
            if not isinstance(r.get("threads"), int) or len(r.get("cpus", [])) != r["threads"]:
                err(f"{where}: threads/cpus")
            for k, v in r.items():
                if isinstance(v, dict):
                    check_metric(f"{where} {k}", v, raw)
        for s in e["skipped"]:
            if set(s) != {"what", "reason"} or not s["what"] or not s["reason"]:
                err(f"{e['name']}: bad skipped entry {s}")
        if want and e["name"] == want and len(e["rows"]) < min_rows:
            err(f"{want}: {len(e['rows'])} rows, expected at least {min_rows}")
    if want and want not in seen:
        err(f"no experiment '{want}' (have {seen})")
    return seen


if __name__ == "__main__":
    seen = validate(json.load(open(sys.argv[1])), sys.argv[2] if len(sys.argv) > 2 else None,
                    int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    print(f"schema ok: {', '.join(seen)}")
