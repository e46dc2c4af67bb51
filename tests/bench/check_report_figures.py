#!/usr/bin/env python3
"""Check a report directory against the results it was drawn from, through
the plotting code's own record of what it drew (figures.json), not pixels:
every experiment that has rows has figures; each figure's file is a PNG no
taller than a screen; its axes carry the expected x axis, a y label with a
unit, a panel per placement, and a caption naming the paper's figure.

    check_report_figures.py RESULTS.json REPORT_DIR"""
import json
import os
import sys

# experiment -> (kind of the main figure, its x axis, a word of its y or x label)
EXPECT = {
    "asym": ("lines", "light", "throughput"),
    "locks": ("lines", "threads", "throughput"),
    "atomics": ("lines", "threads", "latency"),
    "wake": ("dots", None, "twakeup"),
    "barrier-pair": ("dots", None, "twakeup"),
    "interference": ("bars", "kernel", "slowdown"),
    "shim": ("bars", None, "shim / native"),
    "rwlocks": ("lines", "threads", "throughput"),
    "barriers": ("dots", None, "overhead"),
    "uncontended": ("dots", None, "pair"),
    "spr": ("dots", None, "speedup"),
}
PNG = b"\x89PNG\r\n\x1a\n"


def main():
    res, rep = sys.argv[1], sys.argv[2]
    d = json.load(open(res))
    figs = json.load(open(os.path.join(rep, "figures.json")))["figures"]
    bad = []
    for f in figs:
        p = os.path.join(rep, f["file"])
        if not os.path.isfile(p) or open(p, "rb").read(8) != PNG:
            bad.append(f"{f['file']}: not a PNG file")
        if f["height_px"] > 810:
            bad.append(f"{f['file']}: {f['height_px']} px tall")
        if not f["caption"].startswith("Reproduces ") and f["experiment"] != "shim":
            bad.append(f"{f['file']}: caption names no paper figure: {f['caption'][:60]}")
        if f["caption"].count(". ") < 1:
            bad.append(f"{f['file']}: caption says nothing on how to read it")
        for ax in f["axes"]:
            if not ax["xlabel"] and not ax["ylabel"]:
                bad.append(f"{f['file']}: unlabelled axes")
            if not ax["series"]:
                bad.append(f"{f['file']}: a panel with nothing drawn")
    for e in d["experiments"]:
        mine = [f for f in figs if f["experiment"] == e["name"]]
        if not e["rows"]:
            continue
        if not mine:
            bad.append(f"{e['name']}: no figure")
            continue
        placements = {r.get("placement") for r in e["rows"]} - {None, "-"}
        if e["name"] not in EXPECT:
            continue
        kind, x, word = EXPECT[e["name"]]
        main_ = [f for f in mine if f["kind"] == kind and f.get("x") == x]
        if not main_:
            bad.append(f"{e['name']}: no {kind} figure against {x}")
            continue
        f = main_[0]
        labels = " ".join(a["xlabel"] + " " + a["ylabel"] for a in f["axes"])
        if word not in labels:
            bad.append(f"{f['file']}: axes '{labels}' do not name {word}")
        if kind in ("lines", "dots") and placements:
            panels = {a["panel"] for a in f["axes"]}
            if panels != placements:
                bad.append(f"{f['file']}: panels {sorted(panels)} for placements "
                           f"{sorted(placements)}")
        if kind == "lines" and x == "threads":
            xs = {r.get("threads") for r in e["rows"]}
            if len(xs) > 1 and not all(a["xlabel"] == "threads" for a in f["axes"]):
                bad.append(f"{f['file']}: x axis is not threads")
    for b in bad:
        print("FAIL:", b)
    print(f"{len(figs)} figures checked, {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
