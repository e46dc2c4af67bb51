"""Drawing what `hwsync compare` (hwsync-compare/1, docs/compare.md) and the
contention profile (hwsync-profile version 1, docs/preload.md) write."""
import os

from common import (axes_meta, esc, Figures, html_table, md_table, page, plain_ratio_axis,
                    MAX_HEIGHT_IN)
from single import machine_lines

RATIOS = (("wall_s_ratio", "wall time", "#08519c"), ("cpu_s_ratio", "CPU time", "#e6550d"),
          ("rss_kib_ratio", "peak RSS", "#31a354"))
PER_FIGURE = 24


def stat_text(s, unit="", scale=1.0):
    if not isinstance(s, dict) or s.get("median") is None:
        return "-"
    lo, hi = s.get("ci95") or [None, None]
    iv = f" [{lo * scale:.4g}, {hi * scale:.4g}]" if lo is not None and hi is not None else ""
    return (f"{s['median'] * scale:.4g}{unit}{iv}", s["median"] * scale)


def compare_report(d, path, outdir, plt):
    """hwsync compare: per configuration its ratio to the reference with the
    interval of the median of the per-round ratios, a chart and the rounds."""
    figs = Figures(outdir, plt)
    ref = d.get("reference")
    confs = d.get("configs", [])
    others = [c for c in confs if c.get("name") != ref]
    hp = ["<h1>hwsync compare</h1>", "<h2 id='summary'>Summary</h2>",
          f"<p>Program: <code>{esc(' '.join(d.get('program', [])))}</code>; reference "
          f"<b>{esc(ref)}</b>; {d.get('rounds_done')} rounds"
          f"{' (stopped by the budget)' if d.get('budget_stop') else ''}.</p>"]
    md = ["# hwsync compare", "", f"Program: `{' '.join(d.get('program', []))}`; reference "
          f"{ref}; {d.get('rounds_done')} rounds.", ""]
    v = d.get("verdict") or {}
    if v.get("text"):
        hp.append(f"<p><b>{esc(v['text'])}</b></p>")
        md += [f"**{v['text']}**", ""]
        if v.get("run"):
            hp.append(f"<p>Run it with: <code>{esc(v['run'])}</code></p>")
            md += [f"Run it with: `{v['run']}`", ""]
    hp.append("<h3>Machine</h3><ul>" + "".join(
        f"<li>{esc(l)}</li>" for l in machine_lines(d.get("machine", {}))) + "</ul>")
    cov = {c.get("wall_s_ratio", {}).get("coverage") for c in others
           if isinstance(c.get("wall_s_ratio"), dict)}
    covtxt = ", ".join(f"{x:.0%}" for x in sorted(c for c in cov if c is not None))
    parts = [others[i:i + PER_FIGURE] for i in range(0, len(others), PER_FIGURE)]
    for n, part in enumerate(parts):
        fig, ax = plt.subplots(figsize=(10, min(0.5 * len(part) + 1.8, MAX_HEIGHT_IN)))
        h = 0.8 / len(RATIOS)
        drawn = []
        for j, (key, name, color) in enumerate(RATIOS):
            ys, xs, lo, hi = [], [], [], []
            for i, c in enumerate(part):
                s = c.get(key)
                if not isinstance(s, dict) or not s.get("median") or s["median"] <= 0:
                    continue
                m = s["median"]
                l, u = s.get("ci95") or [m, m]
                ys.append(i + j * h - 0.4 + h / 2)
                xs.append(m)
                lo.append(max(m - (l or m), 0))
                hi.append(max((u or m) - m, 0))
            if xs:
                ax.errorbar(xs, ys, xerr=[lo, hi], fmt="o", color=color, capsize=2,
                            markersize=4, label=f"{name} / {ref}'s")
                drawn.append(name)
        ax.axvline(1, color="black", linewidth=0.8)
        ax.set_xscale("log")
        plain_ratio_axis(ax)
        ax.set_yticks(range(len(part)))
        ax.set_yticklabels([c.get("name") for c in part], fontsize=8)
        ax.set_ylim(len(part) - 0.5, -0.5)
        ax.set_xlabel(f"ratio to {ref} (median of per-round ratios, interval of the median; "
                      "log scale, < 1 = less)")
        ax.set_ylabel("configuration")
        ax.grid(True, axis="x", alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        p = f" (part {n + 1} of {len(parts)})" if len(parts) > 1 else ""
        ax.set_title(f"hwsync compare: each configuration against {ref}{p}", fontsize=9)
        fig.tight_layout()
        cap = (f"Each configuration's wall time, CPU time and peak RSS divided by {ref}'s in the "
               f"same round{p}; dots left of 1 are smaller (faster, cheaper). The bars are the "
               f"interval of the median ratio (coverage {covtxt or '-'}); a bar across 1 is "
               "within noise.")
        f = figs.save(fig, f"compare-ratios-{n + 1}.png", "compare", cap,
                      [axes_meta(ax, None, drawn)], metric="ratios", x=None, kind="ratios")
        hp.append(f"<figure><img src='{esc(f)}' alt='{esc(f)}'><figcaption>{esc(cap)}"
                  "</figcaption></figure>")
        md += [f"![{f}]({f})", "", f"*{cap}*", ""]
    head = ["configuration", "run", "wall s", "wall / ref", "CPU s", "CPU / ref", "RSS KiB",
            "RSS / ref"]
    body = [[c.get("name"), c.get("run", ""), stat_text(c.get("wall_s")),
             stat_text(c.get("wall_s_ratio")), stat_text(c.get("cpu_s")),
             stat_text(c.get("cpu_s_ratio")), stat_text(c.get("rss_kib")),
             stat_text(c.get("rss_kib_ratio"))] for c in confs]
    hp += ["<h2>Configurations</h2>", html_table(head, body)]
    md += ["## Configurations", ""] + md_table(head, body)
    rounds = d.get("rounds", [])
    rb = []
    for r in rounds:
        runs = {x.get("config"): x for x in r.get("runs", [])}
        rb.append([(str(r.get("round")), r.get("round")),
                   ("yes" if r.get("flagged") else "", None, "worse" if r.get("flagged") else ""),
                   ("-" if r.get("other_cpu") is None else f"{r['other_cpu']:.0%}",
                    r.get("other_cpu"))] +
                  [(f"{runs[c['name']]['wall_s']:.4g}", runs[c["name"]]["wall_s"])
                   if c.get("name") in runs and runs[c["name"]].get("wall_s") is not None
                   else "-" for c in confs])
    if rb:
        hp += ["<h2>Rounds</h2><p>Wall seconds per run; a flagged round had more than 10% of "
               "the CPUs busy with other work.</p>",
               html_table(["round", "flagged", "other load"] + [c.get("name") for c in confs],
                          rb)]
    hp.append(f"<p>Command: <code>{esc(d.get('command', ''))}</code> (file "
              f"{esc(os.path.basename(path))})</p>")
    figs.write()
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(outdir, "report.html"), "w") as f:
        f.write(page("hwsync compare", hp))


def site_text(site):
    if not site:
        return "(no call site: never contended)"
    f = site[0]
    if f.get("function"):
        return f"{f['function']}+{f.get('function_offset', '0x0')}" + \
            (f" ({os.path.basename(f['module'])})" if f.get("module") else "")
    if f.get("module"):
        return f"{os.path.basename(f['module'])}+{f.get('offset', '?')}"
    return f.get("pc", "?")


def profile_report(d, path, outdir, plt):
    """The contention profile: the objects' table, and total wait by call site."""
    figs = Figures(outdir, plt)
    objs = d.get("objects", [])
    t = d.get("table", {})
    hp = ["<h1>hwsync contention profile</h1>",
          f"<p>Program <code>{esc(d.get('program'))}</code> (pid {esc(d.get('pid'))}) under "
          f"lock kind <b>{esc(d.get('lock_kind'))}</b>, wait policy "
          f"<b>{esc(d.get('wait_policy'))}</b>; {len(objs)} objects recorded of "
          f"{esc(t.get('objects'))} seen ({esc(t.get('not_recorded'))} found no slot, "
          f"{esc(t.get('acquisitions_not_recorded'))} of their acquisitions not counted).</p>"]
    md = ["# hwsync contention profile", "",
          f"Program `{d.get('program')}` (pid {d.get('pid')}), lock kind {d.get('lock_kind')}, "
          f"wait policy {d.get('wait_policy')}; {len(objs)} objects.", ""]
    by = {}
    for o in objs:
        if not o.get("wait_ns"):
            continue
        k = (site_text(o.get("site")), o.get("family"))
        w = by.setdefault(k, [0, 0, 0])
        w[0] += o["wait_ns"]
        w[1] += o.get("contended", 0)
        w[2] += 1
    sites = sorted(by.items(), key=lambda kv: -kv[1][0])[:PER_FIGURE]
    if sites:
        fam = sorted({k[1] for k, _ in sites})
        colors = ["#08519c", "#cb181d", "#31a354", "#6a51a3", "#e6550d", "#7f2704", "#3182bd",
                  "#636363"]
        fig, ax = plt.subplots(figsize=(10, min(0.34 * len(sites) + 1.6, MAX_HEIGHT_IN)))
        for i, ((s, f_), (w, c, n)) in enumerate(sites):
            ax.barh(i, w / 1e6, color=colors[fam.index(f_) % len(colors)])
        handles = {}
        for p, ((s, f_), _) in zip(ax.patches, sites):
            handles.setdefault(f_, p)
        ax.legend(handles.values(), handles.keys(), fontsize=7, loc="lower right")
        ax.set_yticks(range(len(sites)))
        ax.set_yticklabels([f"{s}  [{f_}]" for (s, f_), _ in sites], fontsize=7)
        ax.set_ylim(len(sites) - 0.5, -0.5)
        vals = [w for _, (w, _, _) in sites if w > 0]
        if vals and max(vals) / min(vals) > 100:
            ax.set_xscale("log")
        ax.set_xlabel("total wait (ms), all threads, contended acquisitions")
        ax.set_ylabel("call site [family]")
        ax.grid(True, axis="x", alpha=0.3)
        ax.set_title("contention profile: wait by call site", fontsize=9)
        fig.tight_layout()
        cap = ("Total time threads waited, added up per call site (the first frame outside the "
               "shim of each object's first contended acquisition), longest first. A long bar "
               "is where threads could not go on; a condvar's bar is where they had nothing to "
               "do.")
        f = figs.save(fig, "profile-wait-by-site.png", "profile", cap,
                      [axes_meta(ax, None, fam)], metric="wait_ns", x="call site", kind="bars")
        hp.append(f"<figure><img src='{esc(f)}' alt='{esc(f)}'><figcaption>{esc(cap)}"
                  "</figcaption></figure>")
        md += [f"![{f}]({f})", "", f"*{cap}*", ""]
    else:
        hp.append("<p>No object was ever contended: nothing waited.</p>")
        md += ["No object was ever contended: nothing waited.", ""]
    head = ["family", "address", "id", "acquisitions", "contended", "contended %", "wait ms",
            "max wait ms", "timeouts", "mean hold ns", "max hold ns", "call site"]
    body = []
    for o in objs:
        acq, cont = o.get("acquisitions", 0), o.get("contended", 0)
        hs = o.get("hold_samples", 0)
        body.append([o.get("family"), o.get("address"), (str(o.get("id")), o.get("id")),
                     (str(acq), acq), (str(cont), cont),
                     (f"{100 * cont / acq:.1f}" if acq else "-", 100 * cont / acq if acq else None),
                     (f"{o.get('wait_ns', 0) / 1e6:.3f}", o.get("wait_ns", 0) / 1e6),
                     (f"{o.get('max_wait_ns', 0) / 1e6:.3f}", o.get("max_wait_ns", 0) / 1e6),
                     (str(o.get("timeouts", 0)), o.get("timeouts", 0)),
                     (f"{o.get('hold_ns', 0) / hs:.0f}" if hs else "-",
                      o.get("hold_ns", 0) / hs if hs else None),
                     (str(o.get("max_hold_ns", 0)) if hs else "-", o.get("max_hold_ns")),
                     site_text(o.get("site"))])
    hp += ["<h2>Objects</h2><p>Sorted by total wait; click a column to sort.</p>",
           html_table(head, body)]
    md += ["## Objects", ""] + md_table(head, body)
    figs.write()
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(outdir, "report.html"), "w") as f:
        f.write(page("hwsync contention profile", hp))
