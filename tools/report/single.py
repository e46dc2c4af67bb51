"""The report of one bench run: a summary first (the machine, what was
skipped and why, the one or two numbers that matter per experiment), then
per experiment its figures with captions and the full sortable table."""
import math
import os

from common import (comparable, esc, fmt, Figures, higher_is_better, html_table, is_hwsync,
                    is_peer, label, md_table, median, metrics_of, page, params_of)
from figures import experiment_figures, interference_slowdown, shim_ratios


def machine_lines(m):
    cpu, t, tsc = m.get("cpu", {}), m.get("topology", {}), m.get("tsc", {})
    en = m.get("energy", {})
    pol = m.get("policies", [])
    return [
        f"CPU: {cpu.get('vendor')} {cpu.get('model')} ({cpu.get('arch')}), "
        f"{cpu.get('online')} CPUs online, hypervisor: {cpu.get('hypervisor')}",
        f"Topology ({t.get('source')}): {t.get('packages')} package(s), {t.get('cores')} cores, "
        f"{t.get('pus')} hardware threads, SMT: {t.get('smt')}, NUMA nodes: {t.get('numa_nodes')}",
        f"TSC: {(tsc.get('hz') or 0) / 1e6:.1f} MHz ({tsc.get('source')}), "
        f"read overhead {tsc.get('read_overhead_cycles')} cycles",
        f"Kernel {m.get('kernel')}, {m.get('compiler')}, hwsync {m.get('hwsync_version')}, "
        f"run {m.get('date')} on {m.get('hostname')}",
        "Energy: " + ("RAPL readable" if en.get("available") else f"skipped: {en.get('reason')}"),
        "Wait policies available: " + ", ".join(p["name"] for p in pol if p.get("available")),
        "Not available: " + ("; ".join(f"{p['name']} ({p['reason']})" for p in pol
                                       if not p.get("available")) or "none"),
    ]


def machine_name(m):
    cpu = m.get("cpu", {})
    return f"{m.get('hostname')} ({cpu.get('model')}, {cpu.get('online')} CPUs)"


# ---- the numbers that matter ------------------------------------------------
def best(rows, mk, pred):
    """The row with the best median of mk among rows matching pred."""
    cand = [(median(metrics_of(r).get(mk)), r) for r in rows if pred(r)]
    cand = [(v, r) for v, r in cand if v is not None]
    if not cand:
        return None, None
    hib = higher_is_better(metrics_of(cand[0][1])[mk]["unit"])
    v, r = (max if hib else min)(cand, key=lambda c: c[0])
    return v, r


def groups(rows, keys):
    g = {}
    for r in rows:
        g.setdefault(tuple(r.get(k) for k in keys), []).append(r)
    return sorted(g.items(), key=lambda kv: [str(x) for x in kv[0]])


def versus(rows, mk, keys, ref_pred, ref_name, where=""):
    """Per group of keys: the best hwsync row against the best reference."""
    out = []
    for gk, gr in groups(rows, keys):
        hv, hr = best(gr, mk, is_hwsync)
        rv, rr = best(gr, mk, ref_pred)
        if hr is None or rr is None or not rv:
            continue
        unit = metrics_of(hr)[mk]["unit"]
        ctx = ", ".join(f"{k}={v}" for k, v in zip(keys, gk) if v is not None)
        ratio = hv / rv
        better = ratio > 1 if higher_is_better(unit) else ratio < 1
        if 0.1 <= ratio <= 10:
            rtext = f"{ratio:.2f}x ({'better' if better else 'worse'})"
        else:
            rtext = (f"{ratio:.2g}x ({'better' if better else 'worse'}: "
                     f"{max(ratio, 1 / ratio):.0f} times {'more' if ratio > 1 else 'less'})")
        out.append((f"{where}{mk}{' (' + ctx + ')' if ctx else ''}",
                    f"{label(hr)} {fmt(hv, unit)} vs {ref_name or label(rr)} {fmt(rv, unit)}: "
                    + rtext))
    return out


def key_numbers(exp):
    rows, name = exp["rows"], exp["name"]
    if not rows:
        return []
    if name == "wake":
        out = []
        for w in ("long", "short"):
            sel = [r for r in rows if r.get("wait") == w]
            out += versus(sel, "twakeup", ["placement"],
                          lambda r: r["impl"] == "pthread-cond", "pthread_cond", f"wait={w}: ")
        return out[:4]
    if name == "locks":
        sel = [r for r in rows if r.get("threads") == 2]
        return versus(sel, "throughput", ["cs", "placement"], is_peer, None,
                      "2 threads: best lock vs best peer, ")[:4]
    if name in ("barriers", "barrier-pair"):
        mk = "overhead" if name == "barriers" else "twakeup"
        omp = [r for r in rows if r["impl"].startswith("omp")]
        ref = (lambda r: r["impl"].startswith("omp")) if omp else is_peer
        return versus(rows, mk, ["work_us", "threads", "placement"] if name == "barriers"
                      else ["placement"], ref, "OpenMP" if omp else None,
                      "vs OpenMP: " if omp else "")[:4]
    if name == "asym":
        lights = sorted({r.get("light") for r in rows if r.get("light") is not None})
        sel = [r for r in rows if lights and r.get("light") == lights[0]]
        return versus(sel, "throughput", ["light", "placement"], is_peer, None)[:2]
    if name == "interference":
        sl = interference_slowdown(exp)
        per = {}
        for s in sl:
            per.setdefault((s["policy"], s["placement"], s["waiters"]), []).append(s["slowdown"])
        gm = {k: math.exp(sum(math.log(v) for v in vs) / len(vs))
              for k, vs in per.items() if all(v > 0 for v in vs)}
        if not gm:
            return []
        b = min(gm, key=gm.get)
        out = [("least slowdown of the active kernel",
                f"{b[0]} ({b[1]}, {b[2]} waiter): {100 * (gm[b] - 1):+.1f}% (geometric mean "
                "over kernels)")]
        spin = [k for k in gm if k[0] == "spin" and k[1:] == b[1:]]
        if spin:
            out.append(("spin, for reference", f"{100 * (gm[spin[0]] - 1):+.1f}%"))
        return out
    if name == "shim":
        sr = shim_ratios(exp)
        sp = [(lab, v["speed"][0]) for lab, v, _ in sr if v.get("speed") and v["speed"][0]]
        if not sp:
            return []
        g = math.exp(sum(math.log(s) for _, s in sp) / len(sp))
        worst = min(sp, key=lambda s: s[1])
        return [("speed under the shim, geometric mean over patterns",
                 f"{g:.3g}x native (>1 = faster)"),
                ("slowest pattern under the shim", f"{worst[0].strip()}: {worst[1]:.3g}x native")]
    if name == "atomics":
        th = max(r.get("threads", 1) for r in rows)
        sel = [r for r in rows if r.get("threads") == th]
        out = []
        for (pl,), gr in groups(sel, ["placement"]):
            v, r = best(gr, "latency", lambda r: True)
            w = max(((median(metrics_of(x).get("latency")), x) for x in gr
                     if median(metrics_of(x).get("latency")) is not None),
                    key=lambda c: c[0], default=(None, None))
            if r is not None and w[1] is not None:
                out.append((f"latency at {th} threads ({pl})",
                            f"fastest {label(r)} {fmt(v, 'ns')}, slowest {label(w[1])} "
                            f"{fmt(w[0], 'ns')}"))
        return out[:2]
    if name == "rwlocks":
        th = 2 if any(r.get("threads") == 2 for r in rows) else max(r.get("threads", 1) for r in rows)
        sel = [r for r in rows if r.get("threads") == th]
        return versus(sel, "throughput", ["read_pct", "cs", "placement"], is_peer, None,
                      f"{th} threads: ")[:2]
    if name == "spr":
        return versus(rows, "speedup", ["kernel", "placement"], is_peer, None)[:3]
    # uncontended and experiments this report does not know: the first
    # comparable metric, best hwsync row against the best peer
    for r in rows:
        for mk, m in metrics_of(r).items():
            if comparable(m.get("unit", "")) and any(is_peer(x) for x in rows):
                return versus(rows, mk, ["placement"] if name != "spr" else ["kernel"],
                              is_peer, None)[:2]
    return []


def skipped_by_reason(exps):
    """What did not run, one line per reason: what, and in which experiments."""
    by = {}
    for e in exps:
        items = [(s["reason"], s["what"]) for s in e.get("skipped", [])]
        if not e["rows"]:
            items.append(("no rows ran", "all rows"))
        for reason, what in items:
            w, n = by.setdefault(reason, ([], []))
            if what not in w:
                w.append(what)
            if e["name"] not in n:
                n.append(e["name"])
    return [(r, "; ".join(w), ", ".join(n)) for r, (w, n) in by.items()]


# ---- tables -------------------------------------------------------------------
def best_peer(rows, mk):
    """Best peer median per group of the same parameters."""
    out = {}
    for r in rows:
        m = metrics_of(r).get(mk)
        if not m or not is_peer(r) or m.get("median") is None:
            continue
        k = tuple(sorted((k, str(v)) for k, v in params_of(r).items()))
        hib = higher_is_better(m.get("unit", ""))
        if k not in out or (m["median"] > out[k][0] if hib else m["median"] < out[k][0]):
            out[k] = (m["median"], label(r))
    return out


def full_table(rows, ratios=True):
    """Parameters, then per metric the median [95% CI] and, for times and
    rates of an experiment with peers, the ratio to the best peer with the
    same parameters."""
    pkeys, mkeys, units = [], [], {}
    for r in rows:
        for k in params_of(r):
            if k not in pkeys:
                pkeys.append(k)
        for k, m in metrics_of(r).items():
            if k not in mkeys:
                mkeys.append(k)
                units[k] = m.get("unit", "")
    has_peers = any(is_peer(r) for r in rows)
    head = ["impl", "policy"] + pkeys
    with_ratio = {m for m in mkeys if ratios and has_peers and comparable(units[m])}
    for m in mkeys:
        head += [f"{m} ({units[m]})"] + ([f"{m} / best peer"] if m in with_ratio else [])
    bests = {m: best_peer(rows, m) for m in with_ratio}
    body = []
    for r in rows:
        line = [r["impl"], r.get("policy") or "-"]
        for k in pkeys:
            v = r.get(k, "-")
            line.append((str(v), v) if isinstance(v, (int, float)) else str(v))
        for mk in mkeys:
            m = metrics_of(r).get(mk)
            if not m or m.get("median") is None:
                line += ["-"] * (2 if mk in with_ratio else 1)
                continue
            lo, hi = m.get("ci95") or [None, None]
            u = "ns" if m["unit"] == "ns" else ""   # other units are in the heading
            line.append((f"{fmt(m['median'], u)} [{fmt(lo, u)} - {fmt(hi, u)}]", m["median"]))
            if mk not in with_ratio:
                continue
            b = bests[mk].get(tuple(sorted((k, str(v)) for k, v in params_of(r).items())))
            line.append((f"{m['median'] / b[0]:.3g}x ({b[1]})", m["median"] / b[0])
                        if b and b[0] else "-")
        body.append(line)
    return head, body


# ---- the page --------------------------------------------------------------------
def report(d, outdir, plt, src):
    figs = Figures(outdir, plt)
    exps = d.get("experiments", [])
    machine = machine_lines(d.get("machine", {}))
    hp = ["<h1>hwsync bench report</h1>",
          "<nav><a href='#summary'>Summary</a>" + "".join(
              f"<a href='#exp-{esc(e['name'])}'>{esc(e['name'])}</a>" for e in exps) + "</nav>",
          "<h2 id='summary'>Summary</h2>", "<h3>Machine</h3><ul>"]
    hp += [f"<li>{esc(l)}</li>" for l in machine]
    hp += ["</ul>", f"<p>Command: <code>{esc(d.get('command', ''))}</code> "
           f"(file {esc(os.path.basename(src))}, schema {esc(d.get('schema'))})</p>"]
    md = ["# hwsync bench report", "", "## Summary", "", "### Machine", ""]
    md += [f"- {l}" for l in machine] + ["", f"Command: `{d.get('command', '')}`", ""]
    keys = []
    for e in exps:
        keys += [(e["name"], w, v) for w, v in key_numbers(e)]
    hp.append("<h3>Key numbers</h3>")
    md += ["### Key numbers", ""]
    if keys:
        hp.append(html_table(["experiment", "what", "result"], keys, sortable=False, cls="key"))
        md += md_table(["experiment", "what", "result"], keys)
    else:
        hp.append("<p>No experiment has numbers to compare.</p>")
    skipped = skipped_by_reason(exps)
    hp.append("<h3>Skipped, and why</h3>")
    md += ["", "### Skipped, and why", ""]
    if skipped:
        hp.append(html_table(["reason", "what", "experiments"], skipped))
        md += [f"- skipped: {w} ({n}): {r}" for r, w, n in skipped]
    else:
        hp.append("<p>Nothing was skipped.</p>")
        md.append("Nothing was skipped.")
    hp.append("<p>Ratios are to the best peer (an implementation not from hwsync) with the same "
              "parameters in the same run, only for times and rates; for times lower is better, "
              "for rates (/s) higher.  Click a column heading to sort a table.</p>")
    for e in exps:
        hp += [f"<h2 id='exp-{esc(e['name'])}'>{esc(e['name'])}: {esc(e.get('title', ''))}</h2>",
               f"<p>Reproduces {esc(e.get('reproduces', ''))}.</p>"]
        md += ["", f"## {e['name']}: {e.get('title', '')}", "",
               f"Reproduces {e.get('reproduces', '')}.", ""]
        if not e["rows"]:
            hp.append("<p>No rows ran.</p>")
            md.append("No rows ran.")
        else:
            for f, cap in experiment_figures(figs, e):
                hp.append(f"<figure><img src='{esc(f)}' alt='{esc(f)}'>"
                          f"<figcaption>{esc(cap)}</figcaption></figure>")
                md += [f"![{f}]({f})", "", f"*{cap}*", ""]
            if e.get("summary"):
                head, body = full_table(e["summary"], ratios=False)
                t = e.get("summary_title") or "summary"
                hp += [f"<h3>Summary: {esc(t)}</h3>", html_table(head, body)]
                md += ["", f"Summary: {t}.", ""] + md_table(head, body)
            if e["name"] == "shim":
                sr = shim_ratios(e)

                def cell(v):
                    if v is None or v[0] is None:
                        return "-"
                    return (f"{v[0]:.3g} [{v[1]:.3g} - {v[2]:.3g}]", v[0]) if v[1] and v[2] \
                        else (f"{v[0]:.3g}", v[0])
                head = ["row", "speed", "CPU (window)", "CPU (process)", "peak RSS",
                        "added per process"]
                body = [[lab, cell(v.get("speed")), cell(v.get("cpu_window_ratio")),
                         cell(v.get("cpu_ratio")), cell(v.get("rss_ratio")),
                         "-" if add is None else (f"{add:.0f} us", add)] for lab, v, add in sr]
                if body:
                    hp += ["<h3>Shim / native, paired per round (median [95% CI])</h3>",
                           html_table(head, body)]
                    md += ["", "Shim / native, paired per round (median [95% CI]); speed > 1 = "
                           "the shim is faster, CPU and RSS > 1 = it costs more:", ""]
                    md += md_table(head, body)
            head, body = full_table(e["rows"])
            hp += [f"<details><summary>Full table: {len(body)} rows (click a column to sort)"
                   "</summary>", html_table(head, body), "</details>"]
            md += ["", "Full table (ratio: to the best peer with the same parameters):", ""]
            md += md_table(head, body)
        if e.get("skipped"):
            hp.append("<p>Skipped here: " + "; ".join(
                f"{esc(s['what'])} ({esc(s['reason'])})" for s in e["skipped"]) + "</p>")
            md += ["", "Skipped:", ""] + [f"- skipped: {s['what']}: {s['reason']}"
                                         for s in e["skipped"]]
    figs.write()
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(outdir, "report.html"), "w") as f:
        f.write(page("hwsync bench report", hp))
