"""The figures of one bench run, shaped like the papers' figures: one line per
implementation (and wait policy) against threads, critical-section size or
load; one panel per placement; hwsync in blues and greens with solid lines,
peers in reds and oranges with dashed lines; the 95% confidence interval of
each median as a band (lines) or a bar (dots); log scales where the values
span more than a factor 20.  A figure never grows taller than a screen: too
many series are split into several figures."""
import math

from common import (axes_meta, plain_ratio_axis, is_hwsync, is_peer, label, metrics_of, params_of,
                    median, MAX_HEIGHT_IN)

HW_COLORS = ["#08519c", "#31a354", "#6a51a3", "#3182bd", "#006d2c", "#807dba",
             "#6baed6", "#74c476", "#9e9ac8", "#08306b", "#00441b", "#3f007d",
             "#2b8cbe", "#41ab5d", "#54278f", "#4eb3d3"]
PEER_COLORS = ["#cb181d", "#e6550d", "#a63603", "#fb6a4a", "#fd8d3c", "#7f2704",
               "#de2d26", "#f16913", "#8c2d04", "#ef3b2c", "#d94801", "#bf812d"]
HW_MARKERS = "o^vDs<>ph"
PEER_MARKERS = "sxP*dX+"

# Parameters that follow from others (ncpu from threads and placement, the
# spr sizes from the kernel, wake's n from the wait kind): not facets.
DERIVED = {"ncpu", "MiB", "phases", "size", "n", "vs", "best"}

# Per experiment: the metrics drawn, the x axes tried in order (a numeric
# parameter with more than one value; none: one dot per implementation),
# the paper's figure and one sentence on how to read it.
SPECS = {
    "atomics": dict(metrics=["latency", "throughput"], xs=["threads"],
                    fig="[RAINA] Figs. 3-8",
                    read="Each line is one atomic operation on one shared cache line; "
                         "latency that climbs with threads is the line moving between cores, "
                         "and the panels show how far apart the threads are placed."),
    "wake": dict(metrics=["twakeup", "tcall", "oneway"], xs=[],
                 fig="[AK08] Table 1",
                 read="One dot per implementation and wait policy: Twakeup is the time from "
                      "the notify to the waiter running again, Tcall what the notify costs the "
                      "notifier; further left is better, and pthread_cond (red) is the "
                      "reference to beat."),
    "barrier-pair": dict(metrics=["twakeup", "tcall"], xs=[],
                         fig="[AK08] Table 2",
                         read="One dot per barrier: the time for the last arrival to release "
                              "the other thread (Twakeup) and the cost of arriving (Tcall); "
                              "further left is better."),
    "asym": dict(metrics=["throughput"], xs=["light"], fig="[AK08] Fig. 4",
                 read="Barrier episodes per second as the light thread's share of work grows "
                      "from none to equal; higher is better, and a line that stays high at "
                      "the left keeps the waiting thread from stealing the worker's core."),
    # the slowdown figures below; responsiveness is in the table
    "interference": dict(metrics=[], xs=[], fig="[T2SPIN] Figs. 4-9", read=""),
    "locks": dict(metrics=["throughput", "worst_wait", "cpu_per_acq"], xs=["threads", "cs"],
                  fig="[RAINA] Sec. 4.2 and [AKKAN13] Fig. 1",
                  read="One line per lock: acquisitions per second (higher is better), the "
                       "longest wait for the lock and the CPU time spent per acquisition "
                       "(lower is better) against the number of threads; dashed red lines are "
                       "the peers."),
    "uncontended": dict(metrics=["pair"], xs=[], fig="the uncontended acquire+release table",
                        read="One dot per lock: one acquire plus release with no other "
                             "thread; further left is cheaper."),
    "rwlocks": dict(metrics=["throughput"], xs=["threads", "read_pct"], fig="[BRAVO] Sec. 5",
                    read="One line per reader-writer lock: operations per second (higher is "
                         "better) against the number of threads, one figure per share of reads "
                         "and critical-section size; dashed red lines are the peers."),
    "barriers": dict(metrics=["overhead"], xs=["threads"], fig="[AKKAN13] Figs. 5-6",
                     read="Barrier overhead (episode time minus the work) per barrier; lower "
                          "is better, one figure per amount of work between barriers."),
    "spr": dict(metrics=["speedup"], xs=[], fig="[AK08] Sec. 4.4",
                read="Speedup of the kernel with a helper thread over running it alone; "
                     "further right is better, 1 means no gain."),
}
GENERIC = dict(metrics=None, xs=["threads", "cs", "light", "load", "work_us", "waiters"],
               fig=None, read="One line or dot per implementation; see the experiment's "
                              "help for what its metrics mean.")

XLABELS = {"threads": "threads", "cs": "critical section (volatile increments)",
           "light": "light thread's work (heavy does 10)", "work_us": "work between barriers (us)",
           "waiters": "waiting threads"}

MAX_LINES = 14        # series on one line plot before splitting by policy
MAX_DOTS = 32         # rows of one dot plot before splitting


def style(labels_rows):
    """Colour, line style and marker per series: colour family by who wrote
    the implementation, shades and markers within it."""
    out, nh, npr = {}, 0, 0
    for lab, r in labels_rows:
        if lab in out:
            continue
        if is_hwsync(r):
            out[lab] = (HW_COLORS[nh % len(HW_COLORS)], "-", HW_MARKERS[nh % len(HW_MARKERS)])
            nh += 1
        elif is_peer(r):
            out[lab] = (PEER_COLORS[npr % len(PEER_COLORS)], "--",
                        PEER_MARKERS[npr % len(PEER_MARKERS)])
            npr += 1
        else:
            out[lab] = ("black", ":", ".")
    return out


def numeric_values(rows, key):
    vals = set()
    for r in rows:
        v = r.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return None
        vals.add(v)
    return sorted(vals)


def log_needed(vals):
    pos = [v for v in vals if v is not None and v > 0]
    return len(pos) >= 2 and max(pos) / min(pos) > 20 and len(pos) == len(
        [v for v in vals if v is not None])


def split_series(rows):
    """Groups of rows to draw together: all, or when there are too many
    series, the peers with the hwsync rows of one policy at a time."""
    labels = {label(r) for r in rows}
    pols = sorted({r.get("policy") or "" for r in rows if is_hwsync(r)})
    if len(labels) <= MAX_LINES or len(pols) < 2:
        return [("", rows)]
    # peers, and hwsync kinds without a policy (auto), go into every group
    others = [r for r in rows if not is_hwsync(r) or not r.get("policy")]
    return [(f"hwsync with {p}",
             others + [r for r in rows if is_hwsync(r) and r.get("policy") == p])
            for p in pols if p]


def facets(rows, x):
    """Rows grouped by the identifying parameters that are neither the x
    axis nor the placement (one figure per group)."""
    keys = []
    for r in rows:
        for k in params_of(r):
            if k not in keys and k not in (x, "placement", "cpus") and k not in DERIVED:
                keys.append(k)
    keys = [k for k in keys if len({str(r.get(k)) for r in rows}) > 1 and
            not (k == "threads" and x is None and _threads_follow_impl(rows))]
    groups = {}
    for r in rows:
        groups.setdefault(tuple((k, r.get(k)) for k in keys), []).append(r)
    return sorted(groups.items(), key=lambda kv: [str(v) for _, v in kv[0]])


def _threads_follow_impl(rows):
    """A reference row alone on one thread (spr's sequential run) does not
    make threads a facet."""
    by = {}
    for r in rows:
        by.setdefault(label(r), set()).add(r.get("threads"))
    return all(len(v) == 1 for v in by.values())


def panels_of(rows):
    pl = sorted({r.get("placement") for r in rows if r.get("placement") not in (None, "-")})
    return pl or [None]


def series_of(rows):
    """(label, its first row) for each series, in the order rows first name them."""
    first = {}
    for r in rows:
        first.setdefault(label(r), r)
    return list(first.items())


def in_panel(r, p):
    return p is None or r.get("placement") in (p, "-", None)


def ci(m):
    lo, hi = (m.get("ci95") or [None, None])
    return lo, hi


def line_figure(figs, exp, mk, x, sub, rows, caption, fname):
    plt = figs.plt
    panels = panels_of(rows)
    unit = metrics_of(rows[0])[mk]["unit"]
    labs = series_of(rows)
    sty = style(labs)
    xs = numeric_values(rows, x) or []
    ys = [median(metrics_of(r)[mk]) for r in rows]
    fig, axs = plt.subplots(1, len(panels), figsize=(5.0 * len(panels) + 2.8, 4.4),
                            squeeze=False, sharey=True)
    meta = []
    for ax, p in zip(axs[0], panels):
        drawn = []
        for lab, _ in labs:
            pts = sorted((r[x], metrics_of(r)[mk]) for r in rows
                         if label(r) == lab and in_panel(r, p))
            if not pts:
                continue
            c, ls, mkr = sty[lab]
            px = [v for v, _ in pts]
            py = [median(m) for _, m in pts]
            ax.plot(px, py, color=c, linestyle=ls, marker=mkr, markersize=4, linewidth=1.3,
                    label=lab)
            lo = [ci(m)[0] if ci(m)[0] is not None else median(m) for _, m in pts]
            hi = [ci(m)[1] if ci(m)[1] is not None else median(m) for _, m in pts]
            ax.fill_between(px, lo, hi, color=c, alpha=0.12, linewidth=0)
            drawn.append(lab)
        if xs and log_needed(xs):
            ax.set_xscale("log", base=2 if x == "threads" else 10)
        if xs and len(xs) <= 12:   # ticks at the measured values (1, 2, 8 threads)
            ax.set_xticks(xs)
            ax.set_xticklabels([f"{v:g}" for v in xs])
        if log_needed(ys):
            ax.set_yscale("log")
        ax.set_xlabel(XLABELS.get(x, x.replace("_", " ")))
        ax.set_title(f"placement {p}" if p else exp["name"], fontsize=9)
        ax.grid(True, alpha=0.3)
        meta.append(axes_meta(ax, p, drawn))
    axs[0][0].set_ylabel(f"{mk} ({unit}), median, 95% CI band")
    meta[0]["ylabel"] = axs[0][0].get_ylabel()
    axs[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(f"{exp['name']}: {mk} against {x}{(' - ' + sub) if sub else ''}", fontsize=10)
    fig.tight_layout()
    return figs.save(fig, fname, exp["name"], caption, meta, metric=mk, x=x, kind="lines")


def dot_figure(figs, exp, mk, rows, caption, fname, title):
    """One dot per series and panel (placement), with its 95% CI as a bar."""
    plt = figs.plt
    panels = panels_of(rows)
    unit = metrics_of(rows[0])[mk]["unit"]
    labs = series_of(rows)
    # hwsync first, then the peers, each by name: the colour families group
    labs.sort(key=lambda lr: (not is_hwsync(lr[1]), lr[0]))
    sty = style(labs)
    h = min(0.24 * len(labs) + 1.5, MAX_HEIGHT_IN)
    fig, axs = plt.subplots(1, len(panels), figsize=(3.6 * len(panels) + 3.2, h),
                            squeeze=False, sharey=True)
    vals = [median(metrics_of(r)[mk]) for r in rows]
    meta = []
    for ax, p in zip(axs[0], panels):
        drawn = []
        for i, (lab, _) in enumerate(labs):
            ms = [metrics_of(r)[mk] for r in rows if label(r) == lab and in_panel(r, p)]
            if not ms:
                continue
            m = ms[0]
            lo, hi = ci(m)
            v = median(m)
            c, _, mkr = sty[lab]
            err = [[max(v - lo, 0) if lo is not None else 0],
                   [max(hi - v, 0) if hi is not None else 0]]
            ax.errorbar([v], [i], xerr=err, fmt=mkr, color=c, markersize=5, capsize=2)
            drawn.append(lab)
        if log_needed(vals):
            ax.set_xscale("log")
        ax.set_xlabel(f"{mk} ({unit}), median and 95% CI")
        ax.set_title(f"placement {p}" if p else exp["name"], fontsize=9)
        ax.grid(True, axis="x", alpha=0.3)
        meta.append(axes_meta(ax, p, drawn))
    ax0 = axs[0][0]
    ax0.set_yticks(range(len(labs)))
    ax0.set_yticklabels([l for l, _ in labs], fontsize=7)
    for t, (lab, r) in zip(ax0.get_yticklabels(), labs):
        t.set_color(sty[lab][0])
    ax0.set_ylim(len(labs) - 0.5, -0.5)
    ax0.set_ylabel("implementation and policy (blue/green: hwsync, red/orange: peers)",
                   fontsize=8)
    meta[0]["ylabel"] = ax0.get_ylabel()
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return figs.save(fig, fname, exp["name"], caption, meta, metric=mk, x=None, kind="dots")


def facet_text(key):
    return ", ".join(f"{k}={v}" for k, v in key)


def experiment_figures(figs, exp):
    """Draw the experiment's figures; returns [(file, caption)]."""
    spec = SPECS.get(exp["name"], GENERIC)
    rows = exp["rows"]
    out = []
    if exp["name"] == "interference":
        out += interference_figures(figs, exp)
    if exp["name"] == "shim":
        out += shim_figures(figs, exp)
        return out
    mkeys = spec["metrics"]
    if mkeys is None:
        mkeys = []
        for r in rows:
            for k, m in metrics_of(r).items():
                if k not in mkeys and isinstance(m, dict) and m.get("unit") not in ("count",):
                    mkeys.append(k)
    fig_ref = spec["fig"] or exp.get("reproduces", "")
    n = 0
    for mk in mkeys:
        sel = [r for r in rows if median(metrics_of(r).get(mk)) is not None]
        if not sel:
            continue
        x = next((x for x in spec["xs"] if (numeric_values(sel, x) or [0]).__len__() > 1), None)
        for fkey, frows in facets(sel, x):
            for sub, srows in split_series(frows) if x else [("", frows)]:
                what = " ".join(p for p in (facet_text(fkey), sub) if p)
                if x:
                    n += 1
                    cap = (f"Reproduces {fig_ref}: {mk} against {x}"
                           f"{' (' + what + ')' if what else ''}, one panel per placement. "
                           + spec["read"])
                    out.append((line_figure(figs, exp, mk, x, what, srows, cap,
                                            f"{exp['name']}-{mk}-{n}.png"), cap))
                    continue
                labs = [lab for lab, _ in series_of(srows)]
                chunks = [labs[i:i + MAX_DOTS] for i in range(0, len(labs), MAX_DOTS)]
                for ci_, chunk in enumerate(chunks):
                    n += 1
                    part = f" (part {ci_ + 1} of {len(chunks)})" if len(chunks) > 1 else ""
                    cap = (f"Reproduces {fig_ref}: {mk}{' for ' + what if what else ''}{part}, "
                           "one panel per placement. " + spec["read"])
                    out.append((dot_figure(figs, exp, mk, [r for r in srows if label(r) in chunk],
                                           cap, f"{exp['name']}-{mk}-{n}.png",
                                           f"{exp['name']}: {mk}{' - ' + what if what else ''}"
                                           f"{part}"), cap))
    return out


# ---- interference: [T2SPIN]'s slowdown of the active thread ----------------
def interference_slowdown(exp):
    """unit / unit of 'alone' for the same kernel: [T2SPIN]'s slowdown."""
    alone = {r["kernel"]: metrics_of(r)["unit"]["median"] for r in exp["rows"]
             if r["impl"] == "alone" and "unit" in metrics_of(r)}
    out = []
    for r in exp["rows"]:
        if r["impl"] == "alone" or r.get("kernel") not in alone or "unit" not in metrics_of(r):
            continue
        m = metrics_of(r)["unit"]
        lo, hi = ci(m)
        a = alone[r["kernel"]]
        out.append(dict(kernel=r["kernel"], policy=r.get("policy") or r["impl"],
                        placement=r.get("placement"), waiters=r.get("waiters"),
                        slowdown=m["median"] / a, lo=(lo / a) if lo else None,
                        hi=(hi / a) if hi else None))
    return out


def interference_figures(figs, exp):
    sl = interference_slowdown(exp)
    if not sl:
        return []
    plt = figs.plt
    kernels = sorted({s["kernel"] for s in sl})
    out = []
    for waiters in sorted({s["waiters"] for s in sl}, key=str):
        ss = [s for s in sl if s["waiters"] == waiters]
        panels = sorted({s["placement"] for s in ss}, key=str)
        pols = sorted({s["policy"] for s in ss})
        fig, axs = plt.subplots(len(panels), 1, figsize=(11, min(3.6 * len(panels) + 1.2,
                                                                MAX_HEIGHT_IN)), squeeze=False)
        meta = []
        w = 0.8 / max(len(pols), 1)
        cmap = plt.get_cmap("viridis")
        for ax, p in zip(axs[:, 0], panels):
            for j, pol in enumerate(pols):
                pts = {s["kernel"]: s for s in ss if s["placement"] == p and s["policy"] == pol}
                xs = [i + j * w for i, k in enumerate(kernels) if k in pts]
                ys = [100 * (pts[k]["slowdown"] - 1) for k in kernels if k in pts]
                err = [[max(100 * (pts[k]["slowdown"] - pts[k]["lo"]), 0) if pts[k]["lo"] else 0
                        for k in kernels if k in pts],
                       [max(100 * (pts[k]["hi"] - pts[k]["slowdown"]), 0) if pts[k]["hi"] else 0
                        for k in kernels if k in pts]]
                ax.bar(xs, ys, w, yerr=err, capsize=1, label=pol,
                       color=cmap(j / max(len(pols) - 1, 1)))
            ax.set_xticks([i + 0.4 - w / 2 for i in range(len(kernels))])
            ax.set_xticklabels(kernels, fontsize=8)
            ax.axhline(0, color="black", linewidth=0.5)
            ax.set_xlabel("active kernel")
            ax.set_ylabel("slowdown vs alone (%)")
            ax.set_title(f"placement {p}, {waiters} waiter(s)", fontsize=9)
            ax.grid(True, axis="y", alpha=0.3)
            meta.append(axes_meta(ax, p, pols))
        axs[0][0].legend(fontsize=7, ncol=1, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.tight_layout()
        cap = ("Reproduces [T2SPIN] Figs. 4-9: how much slower each active kernel runs while "
               f"{waiters} thread(s) wait beside it, per wait policy, one panel per placement. "
               "Bars near zero mean the waiting policy leaves the core's other thread alone; "
               "the error bars are the 95% CI of the kernel's time divided by its time alone.")
        out.append((figs.save(fig, f"interference-slowdown-{waiters}.png", exp["name"], cap,
                              meta, metric="slowdown", x="kernel", kind="bars"), cap))
    return out


# ---- shim: paired shim/native ratios ---------------------------------------
SHIM_BARS = (("speed", "speed: shim/native throughput, native/shim time (>1 = shim faster)",
              "#08519c"),
             ("cpu_window_ratio", "CPU in the measured window, shim/native", "#e6550d"),
             ("cpu_ratio", "CPU of the whole process, shim/native", "#cb181d"),
             ("rss_ratio", "peak RSS, shim/native", "#31a354"))


def shim_ratios(exp):
    """Per shim row: its label, (median, lo, hi) of each paired ratio and the
    startup time added.  'speed' turns time ratios around (>1 = faster)."""
    out = []
    for r in exp["rows"]:
        m = metrics_of(r)
        if not is_hwsync(r):
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


def shim_figures(figs, exp):
    rows = shim_ratios(exp)
    plt = figs.plt
    out = []
    per = 12
    chunks = [rows[i:i + per] for i in range(0, len(rows), per)]
    for n, chunk in enumerate(chunks):
        fig, ax = plt.subplots(figsize=(10, min(0.55 * len(chunk) + 2.2, MAX_HEIGHT_IN)))
        h = 0.8 / len(SHIM_BARS)
        for j, (key, name, color) in enumerate(SHIM_BARS):
            ys, med, lo, hi = [], [], [], []
            for i, (_, vals, _) in enumerate(chunk):
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
        plain_ratio_axis(ax)
        ax.axvline(1, color="black", linewidth=0.8)
        ax.set_yticks([i + 0.4 - h / 2 for i in range(len(chunk))])
        ax.set_yticklabels([r[0] for r in chunk], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("shim / native, median of per-round ratios and its 95% CI (log scale)")
        ax.set_ylabel("pattern, threads, placement and shim lock")
        part = f" (part {n + 1} of {len(chunks)})" if len(chunks) > 1 else ""
        ax.set_title(f"shim: cost of the LD_PRELOAD shim per pattern{part}", fontsize=9)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
        fig.tight_layout()
        cap = ("The shim against the native run of the same program, paired round by round "
               f"(as in the shim results page){part}. A blue bar right of 1 means the program "
               "ran faster under the shim; orange, red and green bars right of 1 mean it used "
               "more CPU or memory.")
        out.append((figs.save(fig, f"shim-ratios-{n + 1}.png", exp["name"], cap,
                              [axes_meta(ax, None, [s[1] for s in SHIM_BARS])],
                              metric="ratios", x=None, kind="bars"), cap))
    return out
