#!/usr/bin/env python3
"""hwsync report: turn `hwsync bench --out` JSON (schema hwsync-bench/1) into
PNG plots, DIR/report.md and DIR/report.html.

    report.py RESULTS.json -o DIR

Every experiment gets a table (median and 95% CI of the median per metric,
and the ratio to the best peer in the same parameter group, computed here),
its summary table when it has one (locks: hwsync-auto / peer per repetition)
and one bar chart per metric; asym gets the throughput-vs-light-work curve of
[AK08] Fig. 4, interference the slowdown per kernel of [T2SPIN] and shim
its paired shim/native ratios per pattern.
What was skipped is listed with its reason.  Unknown experiments get the
generic table and charts, so new experiments need no change here."""
import argparse
import html
import json
import math
import os
import sys

SCHEMA = "hwsync-bench/1"
ROW_KEYS = ("impl", "policy", "threads", "cpus")


def fail(msg):
    print(f"hwsync report: {msg}", file=sys.stderr)
    sys.exit(1)


def load(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except OSError as e:
        fail(f"cannot read '{path}': {e.strerror}")
    except json.JSONDecodeError as e:
        fail(f"'{path}' is not JSON: {e}")
    if not isinstance(d, dict) or d.get("schema") != SCHEMA:
        fail(f"'{path}' is not {SCHEMA} results (schema: {d.get('schema') if isinstance(d, dict) else None!r})")
    return d


def metrics_of(row):
    return {k: v for k, v in row.items() if isinstance(v, dict)}


def params_of(row):
    return {k: v for k, v in row.items()
            if not isinstance(v, (dict, list)) and k not in ("impl", "policy")}


def label(row):
    return row["impl"] + (f" {row['policy']}" if row.get("policy") else "")


def group_key(row):
    return tuple(sorted((k, str(v)) for k, v in params_of(row).items()))


def is_peer(row):
    return not row["impl"].startswith("hwsync") and row["impl"] != "alone"


def higher_is_better(metric):
    return metric.get("unit", "").endswith("/s")


def fmt(v, unit):
    if v is None:
        return "-"
    if unit == "ns":
        for div, u in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
            if abs(v) >= 10 * div:
                return f"{v / div:.3g} {u}"
        return f"{v:.3g} ns"
    return f"{v:.4g} {unit}"


def best_peer(rows, name):
    """Best peer median per parameter group for metric `name`."""
    best = {}
    for r in rows:
        m = metrics_of(r).get(name)
        if not m or not is_peer(r) or m.get("median") is None:
            continue
        k = group_key(r)
        hib = higher_is_better(m)
        if k not in best or (m["median"] > best[k][0] if hib else m["median"] < best[k][0]):
            best[k] = (m["median"], label(r))
    return best


def table(rows, best=True):
    """Rows as a table: parameters, then per metric the median [95% CI] and,
    when best, the ratio to the best peer of the same parameters."""
    pkeys = []
    mkeys = []
    for r in rows:
        for k in params_of(r):
            if k not in pkeys:
                pkeys.append(k)
        for k in metrics_of(r):
            if k not in mkeys:
                mkeys.append(k)
    head = ["impl", "policy"] + pkeys
    for m in mkeys:
        head += [m, f"{m} / best peer"] if best else [m]
    body = []
    bests = {m: best_peer(rows, m) for m in mkeys}
    for r in rows:
        line = [r["impl"], r.get("policy") or "-"] + [str(r.get(k, "-")) for k in pkeys]
        for mk in mkeys:
            m = metrics_of(r).get(mk)
            if not m:
                line += ["-", "-"] if best else ["-"]
                continue
            ci = m.get("ci95") or [None, None]
            line.append(f"{fmt(m['median'], m['unit'])} [{fmt(ci[0], m['unit'])} - {fmt(ci[1], m['unit'])}]")
            if not best:
                continue
            b = bests[mk].get(group_key(r))
            line.append(f"{m['median'] / b[0]:.3g}x ({b[1]})" if b and b[0] else "-")
        body.append(line)
    return head, body


def bar_plots(exp, outdir, plt):
    files = []
    rows = exp["rows"]
    mkeys = []
    for r in rows:
        for k in metrics_of(r):
            if k not in mkeys:
                mkeys.append(k)
    for mk in mkeys:
        sel = [r for r in rows if mk in metrics_of(r) and metrics_of(r)[mk].get("median") is not None]
        if not sel:
            continue
        unit = metrics_of(sel[0])[mk]["unit"]
        labels, med, lo, hi, colors = [], [], [], [], []
        for r in sel:
            m = metrics_of(r)[mk]
            ci = m.get("ci95") or [m["median"], m["median"]]
            ps = " ".join(f"{k}={v}" for k, v in params_of(r).items() if k != "threads")
            labels.append(f"{label(r)}  {ps}")
            med.append(m["median"])
            lo.append(max(m["median"] - (ci[0] if ci[0] is not None else m["median"]), 0))
            hi.append(max((ci[1] if ci[1] is not None else m["median"]) - m["median"], 0))
            colors.append("tab:blue" if r["impl"].startswith("hwsync") else
                          "tab:gray" if r["impl"] == "alone" else "tab:orange")
        fig, ax = plt.subplots(figsize=(9, 0.28 * len(sel) + 1.4))
        y = range(len(sel))
        ax.barh(list(y), med, xerr=[lo, hi], color=colors, capsize=2)
        ax.set_yticks(list(y))
        ax.set_yticklabels(labels, fontsize=7)
        ax.invert_yaxis()
        pos = [v for v in med if v > 0]
        if pos and max(pos) / min(pos) > 100:
            ax.set_xscale("log")
        ax.set_xlabel(f"{mk} ({unit}), median and 95% CI; blue = hwsync, orange = peers")
        ax.set_title(f"{exp['name']}: {mk} ({exp.get('reproduces', '')})", fontsize=9)
        fig.tight_layout()
        name = f"{exp['name']}-{mk}.png"
        fig.savefig(os.path.join(outdir, name), dpi=90)
        plt.close(fig)
        files.append(name)
    return files


def asym_plot(exp, outdir, plt):
    """[AK08] Fig. 4: throughput vs the light thread's work."""
    series = {}
    for r in exp["rows"]:
        m = metrics_of(r).get("throughput")
        if m and "light" in r:
            key = (label(r), r.get("placement"))
            series.setdefault(key, []).append((r["light"], m["median"]))
    if not series:
        return []
    fig, ax = plt.subplots(figsize=(8, 5))
    for (lab, pl), pts in sorted(series.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{lab} ({pl})",
                linestyle="-" if lab.startswith("hwsync") else "--")
    ax.set_xlabel("light thread's work (units of 10x10 matmul; heavy does 10)")
    ax.set_ylabel("throughput (" + metrics_of(exp["rows"][0])["throughput"]["unit"] + ")")
    ax.set_title("asym: barrier throughput vs asymmetry ([AK08] Fig. 4)", fontsize=9)
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "asym-fig4.png"), dpi=90)
    plt.close(fig)
    return ["asym-fig4.png"]


def interference_slowdown(exp):
    """unit / unit of 'alone' for the same kernel: [T2SPIN]'s slowdown."""
    alone = {r["kernel"]: metrics_of(r)["unit"]["median"] for r in exp["rows"]
             if r["impl"] == "alone" and "unit" in metrics_of(r)}
    out = []
    for r in exp["rows"]:
        if r["impl"] == "alone" or r.get("kernel") not in alone or "unit" not in metrics_of(r):
            continue
        out.append((r["kernel"], r.get("policy") or r["impl"], r.get("placement"), r.get("waiters"),
                    metrics_of(r)["unit"]["median"] / alone[r["kernel"]]))
    return out


def interference_plot(exp, outdir, plt):
    sl = interference_slowdown(exp)
    if not sl:
        return []
    kernels = sorted({s[0] for s in sl})
    pols = sorted({(s[1], s[2], s[3]) for s in sl})
    fig, ax = plt.subplots(figsize=(10, 5))
    w = 0.8 / max(len(pols), 1)
    for j, p in enumerate(pols):
        vals = [next((s[4] for s in sl if s[0] == k and (s[1], s[2], s[3]) == p), math.nan)
                for k in kernels]
        ax.bar([i + j * w for i in range(len(kernels))], [100 * (v - 1) for v in vals], w,
               label=f"{p[0]} ({p[1]}, {p[2]} waiters)")
    ax.set_xticks([i + 0.4 - w / 2 for i in range(len(kernels))])
    ax.set_xticklabels(kernels, fontsize=8)
    ax.axhline(0, color="black", linewidth=0.5)
    ax.set_ylabel("slowdown of the active kernel vs alone (%)")
    ax.set_title("interference: slowdown per kernel and wait policy ([T2SPIN])", fontsize=9)
    ax.legend(fontsize=6, ncol=3)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "interference-slowdown.png"), dpi=90)
    plt.close(fig)
    return ["interference-slowdown.png"]


SHIM_BARS = (("speed", "speed: shim/native throughput, native/shim time (>1 = shim faster)", "tab:blue"),
             ("cpu_window_ratio", "CPU in the measured window, shim/native", "tab:orange"),
             ("cpu_ratio", "CPU of the whole process, shim/native", "tab:red"),
             ("rss_ratio", "peak RSS, shim/native", "tab:green"))


def shim_ratios(exp):
    """Per shim row: its label and (median, lo, hi) of each paired ratio.  The
    ratios are per round (shim run / native run of the same round), stored by
    the experiment; 'speed' turns time ratios around so that >1 is faster."""
    out = []
    for r in exp["rows"]:
        m = metrics_of(r)
        if not r["impl"].startswith("hwsync"):
            continue
        vals = {}
        for k in ("cpu_window_ratio", "cpu_ratio", "rss_ratio"):
            if k in m and m[k].get("median") is not None:
                vals[k] = (m[k]["median"], *(m[k].get("ci95") or [None, None]))
        if "throughput_ratio" in m and m["throughput_ratio"].get("median") is not None:
            t = m["throughput_ratio"]
            vals["speed"] = (t["median"], *(t.get("ci95") or [None, None]))
        elif "time_ratio" in m and m["time_ratio"].get("median"):
            t = m["time_ratio"]
            lo, hi = t.get("ci95") or [None, None]
            vals["speed"] = (1 / t["median"], 1 / hi if hi else None, 1 / lo if lo else None)
        if not vals:
            continue
        where = f" {r['threads']}t" if r.get("threads", 1) > 1 else ""
        where += f" {r['placement']}" if r.get("placement") else ""
        added = m.get("added", {}).get("median")
        out.append((f"{r.get('pattern')}{where}  {label(r)}", vals, added))
    return out


def shim_plot(exp, outdir, plt):
    """The shim's cost per pattern: paired shim/native ratios, log scale."""
    rows = shim_ratios(exp)
    if not rows:
        return []
    fig, ax = plt.subplots(figsize=(10, 0.55 * len(rows) + 1.8))
    h = 0.8 / len(SHIM_BARS)
    for j, (key, name, color) in enumerate(SHIM_BARS):
        ys, med, lo, hi = [], [], [], []
        for i, (_, vals, _) in enumerate(rows):
            if key not in vals or not vals[key][0] or vals[key][0] <= 0:
                continue
            m, l, u = vals[key]
            ys.append(i + j * h)
            med.append(m)
            lo.append(max(m - (l if l else m), 0))
            hi.append(max((u if u else m) - m, 0))
        if ys:   # bars grow from 1 (= no difference) to the median
            ax.barh(ys, [m - 1 for m in med], h, left=1, xerr=[lo, hi], color=color,
                    label=name, capsize=2)
    ax.set_xscale("log")
    ax.axvline(1, color="black", linewidth=0.8)
    ax.set_yticks([i + 0.4 - h / 2 for i in range(len(rows))])
    ax.set_yticklabels([r[0] for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("shim / native, median of per-round ratios and its 95% CI (log scale)")
    ax.set_title("shim: cost of the LD_PRELOAD shim per pattern", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "shim-ratios.png"), dpi=90, bbox_inches="tight")
    plt.close(fig)
    return ["shim-ratios.png"]


def machine_lines(m):
    cpu, t, tsc = m.get("cpu", {}), m.get("topology", {}), m.get("tsc", {})
    en = m.get("energy", {})
    pol = m.get("policies", [])
    return [
        f"CPU: {cpu.get('vendor')} {cpu.get('model')} ({cpu.get('arch')}), "
        f"{cpu.get('online')} CPUs online, hypervisor: {cpu.get('hypervisor')}",
        f"Topology ({t.get('source')}): {t.get('packages')} package(s), {t.get('cores')} cores, "
        f"{t.get('pus')} hardware threads, SMT: {t.get('smt')}, NUMA nodes: {t.get('numa_nodes')}",
        f"TSC: {tsc.get('hz', 0) / 1e6:.1f} MHz ({tsc.get('source')}), "
        f"read overhead {tsc.get('read_overhead_cycles')} cycles",
        f"Kernel {m.get('kernel')}, {m.get('compiler')}, hwsync {m.get('hwsync_version')}, "
        f"run {m.get('date')} on {m.get('hostname')}",
        "Energy: " + ("RAPL readable" if en.get("available") else f"skipped: {en.get('reason')}"),
        "Wait policies available: " + ", ".join(p["name"] for p in pol if p.get("available")),
        "Not available: " + "; ".join(f"{p['name']} ({p['reason']})" for p in pol
                                      if not p.get("available")),
    ]


def main():
    ap = argparse.ArgumentParser(prog="hwsync report", description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="JSON written by `hwsync bench --out`")
    ap.add_argument("-o", "--out", required=True, metavar="DIR", help="output directory")
    a = ap.parse_args()
    d = load(a.results)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("matplotlib is missing: apt-get install python3-matplotlib")
    os.makedirs(a.out, exist_ok=True)
    md = ["# hwsync bench report", "", f"Command: `{d.get('command', '')}`", "", "## Machine", ""]
    md += [f"- {l}" for l in machine_lines(d.get("machine", {}))]
    hp = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>hwsync bench report</title>",
          "<style>body{font-family:sans-serif;max-width:1200px;margin:auto}"
          "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}"
          "img{max-width:100%}</style></head><body>",
          "<h1>hwsync bench report</h1>", f"<p>Command: <code>{html.escape(d.get('command', ''))}</code></p>",
          "<h2>Machine</h2><ul>"]
    hp += [f"<li>{html.escape(l)}</li>" for l in machine_lines(d.get("machine", {}))]
    hp.append("</ul>")
    md += ["", "Ratios are to the best peer (non-hwsync implementation) with the same parameters "
           "in the same run; for times lower is better, for rates (/s) higher is better.", ""]
    for exp in d.get("experiments", []):
        md += ["", f"## {exp['name']}: {exp.get('title', '')}", "", f"Reproduces {exp.get('reproduces', '')}.", ""]
        hp += [f"<h2>{html.escape(exp['name'])}: {html.escape(exp.get('title', ''))}</h2>",
               f"<p>Reproduces {html.escape(exp.get('reproduces', ''))}.</p>"]
        imgs = []
        if exp["rows"]:
            imgs += asym_plot(exp, a.out, plt) if exp["name"] == "asym" else []
            imgs += interference_plot(exp, a.out, plt) if exp["name"] == "interference" else []
            imgs += shim_plot(exp, a.out, plt) if exp["name"] == "shim" else []
            imgs += bar_plots(exp, a.out, plt)
            tables = [(None, table(exp["rows"]))]
            if exp.get("summary"):   # computed by the experiment from its rows
                tables.append((exp.get("summary_title") or "summary",
                               table(exp["summary"], best=False)))
            for title, (head, body) in tables:
                if title:
                    md += ["", f"Summary: {title}.", ""]
                    hp.append(f"<p>Summary: {html.escape(title)}.</p>")
                md += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
                md += ["| " + " | ".join(c.replace("|", "/") for c in line) + " |" for line in body]
                hp.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>")
                hp += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in line) + "</tr>" for line in body]
                hp.append("</table>")
        else:
            md.append("No rows ran.")
            hp.append("<p>No rows ran.</p>")
        if exp["name"] == "interference":
            sl = interference_slowdown(exp)
            if sl:
                md += ["", "Slowdown of the active kernel (unit time / alone):", "",
                       "| kernel | policy | placement | waiters | slowdown |", "|---|---|---|---|---|"]
                md += [f"| {k} | {p} | {pl} | {w} | {100 * (s - 1):+.1f}% |" for k, p, pl, w, s in sl]
        if exp["name"] == "shim":
            sr = shim_ratios(exp)
            if sr:
                def cell(v):
                    return "-" if v is None or v[0] is None else \
                        f"{v[0]:.3g} [{v[1]:.3g} - {v[2]:.3g}]" if v[1] and v[2] else f"{v[0]:.3g}"
                md += ["", "Shim / native, paired per round (median [95% CI]); speed > 1 = the shim "
                       "is faster, CPU and RSS > 1 = it costs more:", "",
                       "| row | speed | CPU (window) | CPU (process) | peak RSS | added per process |",
                       "|---|---|---|---|---|---|"]
                md += [f"| {lab} | {cell(v.get('speed'))} | {cell(v.get('cpu_window_ratio'))} | "
                       f"{cell(v.get('cpu_ratio'))} | {cell(v.get('rss_ratio'))} | "
                       f"{'-' if add is None else f'{add:.0f} us'} |" for lab, v, add in sr]
        md.append("")
        md += [f"![{i}]({i})" for i in imgs]
        hp += [f"<p><img src='{html.escape(i)}' alt='{html.escape(i)}'></p>" for i in imgs]
        if exp.get("skipped"):
            md += ["", "Skipped:", ""] + [f"- skipped: {s['what']}: {s['reason']}" for s in exp["skipped"]]
            hp.append("<p>Skipped:</p><ul>" + "".join(
                f"<li>skipped: {html.escape(s['what'])}: {html.escape(s['reason'])}</li>"
                for s in exp["skipped"]) + "</ul>")
    hp.append("</body></html>")
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(a.out, "report.html"), "w") as f:
        f.write("\n".join(hp) + "\n")
    print(f"hwsync report: {os.path.join(a.out, 'report.html')} and report.md")


if __name__ == "__main__":
    main()
