#!/usr/bin/env python3
"""hwsync report: draw `hwsync bench --out` JSON (docs/bench-schema.md) as
report.html, report.md, PNG figures and figures.json.

    report.py RESULTS.json -o DIR            one run
    report.py A.json B.json [...] -o DIR     runs side by side (B/A per metric)

One run: a summary first (machine, what was skipped and why, the key number
of each experiment), then per experiment figures shaped like the papers'
(lines against threads, critical-section size or load, one panel per
placement; figures.py) and the full sortable table.  Several runs: see
compare.py.  The JSON of `hwsync compare` and the contention profile
(`hwsync run --profile`) are drawn by programs.py.  Needs matplotlib
(Debian: python3-matplotlib)."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BENCH_SCHEMAS, fail, import_plt, read_json, schema_of  # noqa: E402


OTHERS = ("hwsync-compare/1", "hwsync-profile/1")


def kind_of(d):
    s = schema_of(d)
    if s == "hwsync-profile" and isinstance(d, dict):   # its version is a field of its own
        s = f"hwsync-profile/{d.get('version')}"
    return s


def load(path, alone):
    d = read_json(path)
    s = kind_of(d)
    if s in OTHERS and not alone:
        fail(f"'{path}': a {s} file is drawn alone, not compared with other files")
    if s not in BENCH_SCHEMAS + OTHERS:
        fail(f"'{path}': cannot read schema {s!r} (this report reads "
             f"{', '.join(BENCH_SCHEMAS + OTHERS)})")
    return d


def main():
    ap = argparse.ArgumentParser(prog="hwsync report", description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", help="JSON written by `hwsync bench --out`")
    ap.add_argument("-o", "--out", required=True, metavar="DIR", help="output directory")
    a = ap.parse_args()
    docs = [load(p, len(a.results) == 1) for p in a.results]
    plt = import_plt()
    os.makedirs(a.out, exist_ok=True)
    kind = kind_of(docs[0])
    if kind == "hwsync-compare/1":
        import programs
        programs.compare_report(docs[0], a.results[0], a.out, plt)
    elif kind == "hwsync-profile/1":
        import programs
        programs.profile_report(docs[0], a.results[0], a.out, plt)
    elif len(docs) == 1:
        import single
        single.report(docs[0], a.out, plt, a.results[0])
    else:
        import compare
        compare.report(docs, a.results, a.out, plt)
    print(f"hwsync report: {os.path.join(a.out, 'report.html')} and report.md")


if __name__ == "__main__":
    main()
