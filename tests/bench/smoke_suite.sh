#!/bin/bash
# `hwsync bench suite --quick`, as short as it goes: every experiment that
# `bench list` puts in the suite is there with rows, the file follows the
# schema, no two rows of an experiment share their keys, and every
# implementation an experiment names either has rows or is listed as skipped
# (a measurement that silently went missing fails here).
set -u
. "$(dirname "$0")/smoke_common.sh"

[ "$(nproc)" -ge 2 ] || { echo "skip: the two-thread rows need 2 CPUs"; exit 77; }
"$HWSYNC" bench list >"$T/list" || fail "bench list"
for e in $(awk '!/not in suite/ {print $1}' "$T/list"); do
	"$HWSYNC" bench "$e" --help >"$T/help" || fail "$e --help"
	printf '%s %s\n' "$e" "$(sed -n '/^IMPLEMENTATIONS/{n;p}' "$T/help" | tr -d ' ')"
done >"$T/impls"
"$HWSYNC" bench suite --quick --reps 1 --warmup 0 --duration 1ms --out "$T/r.json" \
	>"$T/stdout" 2>"$T/stderr" || { cat "$T/stderr" >&2; fail "suite --quick"; }
"$PY" "$CHECK" "$T/r.json" || fail "suite JSON"
"$PY" - "$T/r.json" "$T/impls" <<'PY' || fail "suite contents"
import json, sys
exps = {e["name"]: e for e in json.load(open(sys.argv[1]))["experiments"]}
bad = []
for line in open(sys.argv[2]):
    name, impls = line.split()
    e = exps.get(name)
    if e is None or not e["rows"]:
        bad.append(f"{name}: not in the suite or no rows")
        continue
    keys = set()
    for r in e["rows"]:
        k = tuple(sorted((a, str(b)) for a, b in r.items() if not isinstance(b, (dict, list))))
        if k in keys:
            bad.append(f"{name}: two rows {dict(k)}")
        keys.add(k)
    for i in impls.split(","):
        if not any(r["impl"] == i for r in e["rows"]) and \
           not any(s["what"].startswith(i) for s in e["skipped"]):
            bad.append(f"{name}: {i} neither ran nor was skipped")
extra = set(exps) - {l.split()[0] for l in open(sys.argv[2])}
if extra:
    bad.append(f"not in `bench list`: {sorted(extra)}")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
# the report draws every experiment of the suite: figures with the expected
# axes, read back from what the plotting code recorded (figures.json)
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	HWS_PYTHON=/usr/bin/python3 "$HWSYNC" report "$T/r.json" -o "$T/rep" >/dev/null || fail "report of the suite"
	/usr/bin/python3 "$(dirname "$0")/check_report_figures.py" "$T/r.json" "$T/rep" >"$T/figs" ||
		{ cat "$T/figs" >&2; fail "the suite's figures"; }
else
	echo "note: no python3-matplotlib: the suite's report was not drawn"
fi
exit 0
