"""Runs side by side: `hwsync report A.json B.json [...] -o DIR`.

Rows are matched, per experiment, by every scalar field that identifies them
(implementation, policy, threads, placement and the experiment's own
parameters such as cs, light, wait or kernel; not the CPU list, which
depends on the machine).  For each metric of a matched row the page gives
each later run's median over the first run's (B/A) with a 95% interval:

* both files keep each repetition's value (hwsync-bench/2, "reps"): a
  percentile bootstrap, resampling each run's repetitions independently
  (2000 resamples, a fixed seed) and taking the ratio of the two medians;
* otherwise (a hwsync-bench/1 file, or a single repetition): the two medians'
  own 95% intervals combined, [lo_B / hi_A, hi_B / lo_A], which is wider than
  it needs to be; such intervals are marked approximate (~).

Rows found in only some runs are listed as such.  Runs from different
machines are labelled by machine."""
import os

from common import (esc, fmt, plain_ratio_axis, Figures, axes_meta, higher_is_better, html_table, md_table,
                    median, metrics_of, page, params_of, MAX_HEIGHT_IN)
from figures import SPECS
from single import machine_lines

BOOT = 2000
MAX_CHART_ROWS = 30


def identity(row):
    """What identifies a row across runs: impl, policy and every scalar field."""
    return (("impl", row["impl"]), ("policy", row.get("policy"))) + tuple(
        sorted((k, v) for k, v in params_of(row).items() if k != "cpus"))


def ident_text(key):
    d = dict(key)
    rest = ", ".join(f"{k}={v}" for k, v in key if k not in ("impl", "policy"))
    return f"{d['impl']}{' ' + d['policy'] if d.get('policy') else ''}" + \
        (f" ({rest})" if rest else "")


def machine_key(d):
    m = d.get("machine", {})
    cpu = m.get("cpu", {})
    return (m.get("hostname"), cpu.get("model"), cpu.get("online"))


def run_labels(docs, paths):
    """Label runs by machine when they come from different machines, else by
    file name; letters keep them apart."""
    by_machine = len({machine_key(d) for d in docs}) > 1
    out = []
    for i, (d, p) in enumerate(zip(docs, paths)):
        letter = chr(ord("A") + i)
        if by_machine:
            h, model, n = machine_key(d)
            out.append(f"{letter}: {h} ({model}, {n} CPUs)")
        else:
            out.append(f"{letter}: {os.path.basename(p)}")
    return out, by_machine


def ratio_interval(ma, mb, rng):
    """B/A with a 95% interval and whether the interval is approximate."""
    a, b = median(ma), median(mb)
    if a is None or b is None or a == 0:
        return None, None, None, True
    ra, rb = ma.get("reps"), mb.get("reps")
    if isinstance(ra, list) and isinstance(rb, list) and len(ra) >= 2 and len(rb) >= 2:
        import numpy as np
        A = np.asarray(ra, dtype=float)
        B = np.asarray(rb, dtype=float)
        mA = np.median(A[rng.integers(0, len(A), (BOOT, len(A)))], axis=1)
        mB = np.median(B[rng.integers(0, len(B), (BOOT, len(B)))], axis=1)
        ok = mA != 0
        r = mB[ok] / mA[ok]
        if len(r) >= BOOT // 2:
            lo, hi = np.percentile(r, [2.5, 97.5])
            return b / a, float(lo), float(hi), False
    la, ha = ma.get("ci95") or [None, None]
    lb, hb = mb.get("ci95") or [None, None]
    if None in (la, ha, lb, hb) or la <= 0 or ha <= 0:
        return b / a, None, None, True
    return b / a, lb / ha, hb / la, True


def verdict(r, lo, hi, unit):
    if r is None or lo is None:
        return "", ""
    if lo <= 1 <= hi:
        return "within noise", ""
    up = lo > 1
    better = up == higher_is_better(unit)
    return ("better" if better else "worse"), ("better" if better else "worse")


def chart_metric(exp_name, metric_names):
    for m in SPECS.get(exp_name, {}).get("metrics") or []:
        if m in metric_names:
            return m
    return metric_names[0] if metric_names else None


def ratio_chart(figs, exp, mk, unit, items, runs, part, nparts):
    """items: (row text, [(r, lo, hi, approx) per later run])."""
    plt = figs.plt
    h = min(0.26 * len(items) + 1.7, MAX_HEIGHT_IN)
    fig, ax = plt.subplots(figsize=(10, h))
    colors = ["#08519c", "#cb181d", "#31a354", "#6a51a3", "#e6550d"]
    step = 0.7 / max(len(runs) - 1, 1)
    drawn = []
    for j in range(1, len(runs)):
        ys, xs, lo, hi = [], [], [], []
        for i, (_, rs) in enumerate(items):
            r, l, u, approx = rs[j - 1]
            if r is None or r <= 0:
                continue
            ys.append(i + (j - 1) * step - (0.35 if len(runs) > 2 else 0))
            xs.append(r)
            lo.append(max(r - l, 0) if l else 0)
            hi.append(max(u - r, 0) if u else 0)
        if xs:
            ax.errorbar(xs, ys, xerr=[lo, hi], fmt="o", color=colors[(j - 1) % len(colors)],
                        markersize=4, capsize=2, label=f"{runs[j]} / {runs[0]}")
            drawn.append(runs[j])
    ax.axvline(1, color="black", linewidth=0.8)
    ax.set_xscale("log")
    plain_ratio_axis(ax)
    ax.set_yticks(range(len(items)))
    ax.set_yticklabels([t for t, _ in items], fontsize=7)
    ax.set_ylim(len(items) - 0.5, -0.5)
    ax.set_xlabel(f"{mk} ratio to run {runs[0][0]} ({unit}; "
                  f"{'higher' if higher_is_better(unit) else 'lower'} is better), 95% interval")
    ax.set_ylabel("row")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    p = f" (part {part} of {nparts})" if nparts > 1 else ""
    ax.set_title(f"{exp}: {mk}, each run against run {runs[0][0]}{p}", fontsize=9)
    fig.tight_layout()
    cap = (f"{exp}: {mk} of each matched row in each run divided by run {runs[0][0]}'s{p}. "
           "A dot right of the line at 1 is a larger value; a bar that crosses 1 is within "
           "noise.")
    name = f"compare-{exp}-{mk}-{part}.png"
    return figs.save(fig, name, exp, cap, [axes_meta(ax, None, drawn)], metric=mk, x=None,
                     kind="ratios"), cap


def report(docs, paths, outdir, plt):
    import numpy as np
    rng = np.random.default_rng(1)
    figs = Figures(outdir, plt)
    runs, by_machine = run_labels(docs, paths)
    hp = ["<h1>hwsync bench: runs compared</h1>", "<h2>Runs</h2>"]
    md = ["# hwsync bench: runs compared", "", "## Runs", ""]
    rt = []
    for lab, d, p in zip(runs, docs, paths):
        m = d.get("machine", {})
        rt.append([lab, os.path.basename(p), d.get("schema"), m.get("date"),
                   d.get("command", "")])
    hp.append(html_table(["run", "file", "schema", "date", "command"], rt, sortable=False))
    md += md_table(["run", "file", "schema", "date", "command"], rt)
    if by_machine:
        hp.append("<p>The runs come from different machines:</p>")
        md += ["", "The runs come from different machines:", ""]
        for lab, d in zip(runs, docs):
            hp.append(f"<h3>{esc(lab)}</h3><ul>" + "".join(
                f"<li>{esc(l)}</li>" for l in machine_lines(d.get("machine", {}))) + "</ul>")
            md += [f"- {lab}: " + "; ".join(machine_lines(d.get("machine", {}))[:2])]
    approx_any = any(d.get("schema") == "hwsync-bench/1" for d in docs)
    hp.append("<p>Ratio: each later run's median over run A's, with a 95% interval from a "
              "bootstrap over the repetitions of both runs; intervals marked ~ are approximate "
              "(from the two medians' own intervals, for files without repetitions).  "
              "better/worse: the interval lies wholly on one side of 1.</p>")
    if approx_any:
        hp.append("<p class='approx'>A file of schema hwsync-bench/1 keeps no repetitions: its "
                  "intervals are approximate (~).</p>")
        md += ["", "A file of schema hwsync-bench/1 keeps no repetitions: its intervals are "
               "approximate (~).", ""]
    names = []
    for d in docs:
        for e in d.get("experiments", []):
            if e["name"] not in names:
                names.append(e["name"])
    for name in names:
        exps = [next((e for e in d.get("experiments", []) if e["name"] == name), None)
                for d in docs]
        hp.append(f"<h2 id='exp-{esc(name)}'>{esc(name)}</h2>")
        md += ["", f"## {name}", ""]
        missing = [runs[i] for i, e in enumerate(exps) if e is None]
        if missing:
            hp.append(f"<p class='only'>Not in {esc(', '.join(missing))}.</p>")
            md.append(f"Not in {', '.join(missing)}.")
        idx = [{identity(r): r for r in e["rows"]} if e else {} for e in exps]
        keys = []
        for ix in idx:
            for k in ix:
                if k not in keys:
                    keys.append(k)
        matched = [k for k in keys if all(k in ix for ix, e in zip(idx, exps) if e)]
        if len([e for e in exps if e]) < 2:
            matched = []
        only = [(ident_text(k), ", ".join(runs[i] for i, ix in enumerate(idx) if k in ix))
                for k in keys if k not in matched]
        head = ["row", "metric", f"{runs[0]}"]
        for j in range(1, len(runs)):
            head += [runs[j], f"{runs[j][0]}/{runs[0][0]} [95%]", "verdict"]
        body = []
        chart = {}
        for k in matched:
            rows = [ix.get(k) for ix in idx]
            base = rows[0]
            if base is None:
                continue
            for mk, ma in metrics_of(base).items():
                unit = ma.get("unit", "")
                line = [ident_text(k), f"{mk} ({unit})", (fmt(median(ma), unit), median(ma))]
                per = []
                for j in range(1, len(runs)):
                    mb = metrics_of(rows[j]).get(mk) if rows[j] else None
                    if not mb:
                        line += ["-", "-", ""]
                        per.append((None, None, None, True))
                        continue
                    r, lo, hi, approx = ratio_interval(ma, mb, rng)
                    v, cls = verdict(r, lo, hi, unit)
                    iv = "" if lo is None else f" [{'~' if approx else ''}{lo:.3g} - {hi:.3g}]"
                    line += [(fmt(median(mb), unit), median(mb)),
                             ("-" if r is None else f"{r:.3g}{iv}", r, "approx" if approx else ""),
                             (v, None, cls)]
                    per.append((r, lo, hi, approx))
                body.append(line)
                chart.setdefault(mk, (unit, []))[1].append((ident_text(k), per))
        if body:
            mk = chart_metric(name, list(chart))
            if mk:
                unit, items = chart[mk]
                parts = [items[i:i + MAX_CHART_ROWS] for i in range(0, len(items), MAX_CHART_ROWS)]
                for n, part in enumerate(parts):
                    f, cap = ratio_chart(figs, name, mk, unit, part, runs, n + 1, len(parts))
                    hp.append(f"<figure><img src='{esc(f)}' alt='{esc(f)}'>"
                              f"<figcaption>{esc(cap)}</figcaption></figure>")
                    md += [f"![{f}]({f})", "", f"*{cap}*", ""]
            hp += [f"<details open><summary>{len(matched)} rows in every run: each metric "
                   "(click a column to sort)</summary>", html_table(head, body), "</details>"]
            md += md_table(head, body)
        elif not missing:
            hp.append("<p>No row is in every run.</p>")
            md.append("No row is in every run.")
        if only:
            hp += [f"<h3>Rows in some runs only ({len(only)})</h3>",
                   html_table(["row", "only in"], only)]
            md += ["", f"Rows in some runs only ({len(only)}):", ""]
            md += [f"- {t}: only in {w}" for t, w in only]
    figs.write()
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(outdir, "report.html"), "w") as f:
        f.write(page("hwsync bench: runs compared", hp))
