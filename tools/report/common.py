"""Shared by the report's pages: reading bench JSON, row helpers, number
formatting, the HTML page with its sortable tables, and saving a figure
together with what it plots (figures.json, read back by the tests)."""
import html
import json
import math
import os
import sys

# The bench schemas this report reads.  /2 keeps each repetition's value of
# every metric ("reps"); /1 files load too, and intervals computed from them
# are marked approximate (docs/report.md).
BENCH_SCHEMAS = ("hwsync-bench/1", "hwsync-bench/2")


def fail(msg):
    print(f"hwsync report: {msg}", file=sys.stderr)
    sys.exit(1)


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        fail(f"cannot read '{path}': {e.strerror}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        fail(f"'{path}' is not JSON: {e}")


def schema_of(d):
    return d.get("schema") if isinstance(d, dict) else None


def metrics_of(row):
    return {k: v for k, v in row.items() if isinstance(v, dict)}


def params_of(row):
    return {k: v for k, v in row.items()
            if not isinstance(v, (dict, list)) and k not in ("impl", "policy")}


def label(row):
    return row["impl"] + (f" {row['policy']}" if row.get("policy") else "")


def is_hwsync(row):
    return row["impl"].startswith("hwsync")


def is_peer(row):
    return not is_hwsync(row) and row["impl"] not in ("alone", "native")


def higher_is_better(unit):
    return unit.endswith("/s") or unit in ("x",)


def comparable(unit):
    """Units where 'ratio to the best peer' means something: times and rates,
    not counts, percentages, indices or paired ratios."""
    return unit in ("ns", "us", "ms", "s", "ns/acq", "x") or unit.endswith("/s")


def median(m):
    return m.get("median") if isinstance(m, dict) else None


def fmt(v, unit=""):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if unit == "ns":
        for div, u in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
            if abs(v) >= 10 * div:
                return f"{v / div:.3g} {u}"
        return f"{v:.3g} ns"
    return f"{v:.4g} {unit}".rstrip()


def esc(s):
    return html.escape(str(s))


# ---- HTML ------------------------------------------------------------------
CSS = """body{font-family:sans-serif;max-width:1280px;margin:auto;padding:0 1em;color:#222}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}
th{background:#f3f3f3}th.sortable{cursor:pointer}th.sortable:after{content:" \\2195";color:#999}
.scroll{overflow-x:auto;max-width:100%}figure{margin:1em 0}figcaption{font-size:13px;max-width:900px}
img{max-width:100%}.key td:first-child{font-weight:bold}.approx{color:#a0522d}
.only{color:#777}.better{color:#1a7f37}.worse{color:#b42318}nav a{margin-right:1em}"""

# Click a header to sort by that column; cells carry their number in data-v.
SORT_JS = """document.querySelectorAll('table.sortable').forEach(function(t){
 t.querySelectorAll('th').forEach(function(th,i){th.classList.add('sortable');
  th.addEventListener('click',function(){
   var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
   var dir=th.dataset.dir==='asc'?-1:1;th.dataset.dir=dir>0?'asc':'desc';
   rows.sort(function(a,b){var x=a.cells[i],y=b.cells[i];
    var u=parseFloat(x.dataset.v),v=parseFloat(y.dataset.v);
    if(!isNaN(u)&&!isNaN(v))return dir*(u-v);
    if(!isNaN(u))return -1;if(!isNaN(v))return 1;
    return dir*x.textContent.localeCompare(y.textContent);});
   rows.forEach(function(r){body.appendChild(r);});});});});"""


def page(title, body):
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + f"\n<script>{SORT_JS}</script>\n</body></html>\n")


def html_table(head, body, sortable=True, cls=""):
    """body: rows of cells, a cell is text or (text, number to sort by)."""
    out = [f"<div class='scroll'><table class='{'sortable ' if sortable else ''}{cls}'>",
           "<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    for line in body:
        cells = []
        for c in line:
            if isinstance(c, tuple):
                v = c[1]
                dv = f" data-v='{v:.9g}'" if isinstance(v, (int, float)) and math.isfinite(v) else ""
                cl = f" class='{c[2]}'" if len(c) > 2 and c[2] else ""
                cells.append(f"<td{dv}{cl}>{esc(c[0])}</td>")
            else:
                cells.append(f"<td>{esc(c)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


def md_table(head, body):
    def t(c):
        return (c[0] if isinstance(c, tuple) else str(c)).replace("|", "/")
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + \
           ["| " + " | ".join(t(c) for c in line) + " |" for line in body]


# ---- figures ---------------------------------------------------------------
MAX_HEIGHT_IN = 9.0   # at DPI, 810 px: fits a laptop screen with the caption
DPI = 90


class Figures:
    """Saves figures and keeps what each plots for figures.json."""

    def __init__(self, outdir, plt):
        self.outdir, self.plt, self.meta = outdir, plt, []

    def save(self, fig, name, experiment, caption, axes, **extra):
        w, h = fig.get_size_inches()
        if h > MAX_HEIGHT_IN + 1e-6:
            raise AssertionError(f"{name}: {h:.1f} in tall (split it by panel)")
        fig.savefig(os.path.join(self.outdir, name), dpi=DPI)
        self.plt.close(fig)
        self.meta.append(dict(file=name, experiment=experiment, caption=caption,
                              width_px=round(w * DPI), height_px=round(h * DPI),
                              axes=axes, **extra))
        return name

    def write(self):
        with open(os.path.join(self.outdir, "figures.json"), "w") as f:
            json.dump({"figures": self.meta}, f, indent=1)


def axes_meta(ax, panel=None, series=None):
    return dict(panel=panel, xlabel=ax.get_xlabel(), ylabel=ax.get_ylabel(),
                xscale=ax.get_xscale(), yscale=ax.get_yscale(), series=series or [])


def plain_ratio_axis(ax):
    """A log x axis of ratios labelled 0.5, 1, 2 rather than 5x10^-1."""
    from matplotlib.ticker import FuncFormatter
    lo, hi = ax.get_xlim()
    f = FuncFormatter(lambda v, _: f"{v:g}")
    ax.xaxis.set_major_formatter(f)
    if hi / max(lo, 1e-300) < 30:
        ax.xaxis.set_minor_formatter(f)
        ax.tick_params(axis="x", which="minor", labelsize=7)


def import_plt():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("matplotlib is missing: apt-get install python3-matplotlib")
    return plt
