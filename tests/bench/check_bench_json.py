#!/usr/bin/env python3
"""Check a `hwsync bench --out` file against the hwsync-bench/2 schema
(docs/bench-schema.md) and, optionally, what one experiment must contain.

usage: check_bench_json.py FILE [--exp NAME] [--impl PREFIX:METRIC,METRIC ...]
                           [--min-rows N] [--trace FILE --trace-max N]

--impl PREFIX:METRICS  every row whose impl starts with PREFIX has these
                       metrics, and there is at least one such row
Exit 0 when it conforms, 1 with the reasons on stderr."""
import json
import sys

from check_schema import validate

errors = []


def err(msg):
    errors.append(msg)


NUM = (int, float)


def check_file(doc):
    """The schema (check_schema.validate), and no skipped entry that is an error."""
    validate(doc)
    exps = doc["experiments"]
    for e in exps:
        for s in e["skipped"]:
            if s["reason"].startswith("error"):
                err(f"experiment {e['name']}: {s['what']}: {s['reason']}")
    return exps


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        doc = json.load(f)
    exps = check_file(doc)
    args = argv[2:]
    exp = None
    trace_slices = []
    i = 0
    while i < len(args):
        a, v = args[i], args[i + 1] if i + 1 < len(args) else None
        i += 2
        if a == "--exp":
            exp = next((e for e in exps if e.get("name") == v), None)
            if exp is None:
                err(f"no experiment '{v}'")
        elif a == "--impl":
            prefix, metrics = v.split(":", 1)
            rows = [r for r in (exp or {}).get("rows", []) if r.get("impl", "").startswith(prefix)]
            if not rows:
                err(f"no row of '{prefix}'")
            for r in rows:
                for m in filter(None, metrics.split(",")):
                    if not isinstance(r.get(m), dict):
                        err(f"row {r.get('impl')}/{r.get('policy')}: no metric '{m}'")
        elif a == "--min-rows":
            n = len((exp or {}).get("rows", []))
            if n < int(v):
                err(f"{n} rows, expected at least {v}")
        elif a == "--trace":
            with open(v) as f:
                tr = json.load(f)
            evs = tr.get("traceEvents")
            if not isinstance(evs, list):
                err("trace: no traceEvents list")
                evs = []
            slices = [e for e in evs if e.get("ph") == "X"]
            trace_slices = slices
            if not slices:
                err("trace: no slices")
            for e in slices:
                if e.get("name") not in ("wait", "hold") or not isinstance(e.get("ts"), NUM) \
                        or not isinstance(e.get("dur"), NUM) or e["dur"] < 0 or e["ts"] < 0:
                    err(f"trace: bad slice {e}")
                    break
            pids = {e.get("pid") for e in evs if e.get("ph") == "M" and e.get("name") == "process_name"}
            if exp is not None and len(pids) != len(exp.get("rows", [])):
                err(f"trace: {len(pids)} processes for {len(exp.get('rows', []))} rows")
        elif a == "--trace-max":
            per_row = int(v)
            by_pid = {}
            for e in trace_slices:
                by_pid[e["pid"]] = by_pid.get(e["pid"], 0) + 1
            if any(n > per_row for n in by_pid.values()):
                err(f"trace: more than {per_row} events in a row: {max(by_pid.values())}")
        else:
            err(f"unknown argument {a}")
    for e in errors:
        print("check_bench_json: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
