#!/usr/bin/env bash
# The differential misuse test: misuse.c's sequences natively and under the
# shim with every lock kind (hwsync info --json) and the futex and adaptive
# policies, and once with HWSYNC_RWLOCK=bravo (configurations are named
# KIND:WAIT:RWLOCK); each sequence's output (return values, whether the
# object still works, how the child ended) must be the same as natively, or
# the difference must be listed in EXPECTED with its reason (docs/preload.md
# explains each).
#
#   test_misuse.sh HWSYNC PRELOAD MISUSE EXPECTED
#
# EXPECTED: lines "KIND | WAIT | SEQUENCE | GLIBC PRINTS | THE SHIM PRINTS |
# REASON"; KIND, WAIT and SEQUENCE may be patterns (*).  A sequence's output
# under the shim is explained when replacing each listed glibc line by the
# shim's line in glibc's output gives it ("*" for both: any difference).  A
# line starting with '#' is a comment.  Exit 0 when every difference is
# explained, 1 when one is not (or a run failed), 77 when nothing can run.
. "$(dirname "$0")/common.sh"
[ $# -eq 4 ] || { echo "usage: $0 HWSYNC PRELOAD MISUSE EXPECTED" >&2; exit 2; }
hwsync=$1 lib=$2 prog=$3 expected=$4

kinds=$("$hwsync" info --json 2>/dev/null | python3 -c '
import json, sys
l = json.load(sys.stdin).get("locks", [])
print(" ".join(x if isinstance(x, str) else x.get("name", "") for x in l))' 2>/dev/null)
[ -n "$kinds" ] || { echo "skip: hwsync info --json lists no lock kinds"; exit 77; }
echo "lock kinds: $kinds"

if ! "$prog" native > "$tmp/native.out" 2> "$tmp/native.err"; then
  echo "FAIL: the native run failed"; cat "$tmp/native.out" "$tmp/native.err"; exit 1
fi
if grep '^end: ' "$tmp/native.out" | grep -qv '^end: exit 0$'; then
  echo "FAIL: natively a sequence did not end with exit 0:"; cat "$tmp/native.out"; exit 1
fi

# configurations KIND:WAIT:RWLOCK; default rwlocks also with bravo once
configs=
for k in $kinds; do
  configs="$configs $k:futex:reader $k:adaptive:reader"
done
configs="$configs auto:adaptive:bravo"
for c in $configs; do
  IFS=: read -r k w r <<< "$c"
  out="$tmp/shim.$c.out"
  if ! env LD_PRELOAD="$lib" HWSYNC_LOCK="$k" HWSYNC_WAIT="$w" HWSYNC_RWLOCK="$r" "$prog" shim \
      > "$out" 2> "$tmp/shim.err"; then
    echo "FAIL: $c: the run failed"; cat "$tmp/shim.err"
    echo "run-failed" > "$out"
  elif [ -s "$tmp/shim.err" ]; then
    echo "FAIL: $c: the shim printed:"; cat "$tmp/shim.err"
    echo "run-failed" > "$out"
  fi
done

python3 - "$tmp" "$expected" $configs <<'EOF'
import difflib, fnmatch, os, sys

tmp, expected, configs = sys.argv[1], sys.argv[2], sys.argv[3:]

def blocks(path):
    out, name = {}, None
    for line in open(path):
        if line.startswith("== "):
            name = line[3:].strip()
            out[name] = []
        elif name:
            out[name].append(line.rstrip("\n"))
    return out

rules = []
for n, line in enumerate(open(expected), 1):
    if line.lstrip().startswith("#") or not line.strip():
        continue
    f = [x.strip() for x in line.split("|", 5)]
    if len(f) != 6 or not all(f):
        print(f"FAIL: {expected}:{n}: expected 'KIND | WAIT | SEQUENCE | GLIBC PRINTS | "
              "THE SHIM PRINTS | REASON'")
        sys.exit(1)
    rules.append(f + [0])

def explained(want, got, rs):
    """Does the shim's output follow from glibc's by the rules' line swaps?"""
    if any(r[3] == "*" for r in rs):
        return True
    swap = {r[3]: r[4] for r in rs}
    return got is not None and [swap.get(l, l) for l in want] == got

native = blocks(os.path.join(tmp, "native.out"))
fails = listed = 0
for c in configs:
    k, w, rwl = c.split(":")
    path = os.path.join(tmp, f"shim.{c}.out")
    if open(path).read().startswith("run-failed"):
        fails += 1
        continue
    shim = blocks(path)
    for seq, want in native.items():
        got = shim.get(seq)
        if got == want:
            continue
        rs = [r for r in rules if fnmatch.fnmatchcase(k, r[0]) and
              fnmatch.fnmatchcase(w, r[1]) and fnmatch.fnmatchcase(seq, r[2])]
        diff = list(difflib.unified_diff(want, got or ["(missing)"], "glibc", "shim",
                                         n=0, lineterm=""))[2:]
        if explained(want, got, rs):
            for r in rs:
                r[6] += 1
            listed += 1
            print(f"listed: {c}: {seq}: " + ", ".join(d for d in diff[:4]
                                                       if d[:1] in "+-"))
        else:
            fails += 1
            print(f"FAIL: {c}: {seq} differs from glibc (not as listed in "
                  f"{os.path.basename(expected)}):")
            for d in diff:
                print(f"    {d}")
for r in rules:
    what = f"{r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]}"
    if r[6]:
        print(f"listed difference seen {r[6]} times: {what}: {r[5]}")
    else:
        print(f"note: listed but not seen: {what}")
print(f"{len(native)} sequences x {len(configs)} configurations: {listed} listed "
      f"differences, {fails} failures")
sys.exit(1 if fails else 0)
EOF
