#!/usr/bin/env python3
"""Check a contention profile (HWSYNC_PROFILE) against what the program knows.

    check_profile.py PROFILE.json STDERR EXPECT [--schema-only]

PROFILE.json must match the schema below (hwsync-profile, version 1; the
fields are described in docs/preload.md).  EXPECT is the output of
profile_check.c, one line per fact:

    expect FAMILY ADDRESS|- FUNCTION N|min:N   the object with the most total
        wait in FAMILY is at ADDRESS, its first call-site frame is FUNCTION
        (by dladdr) and it was acquired exactly N times (at least N)
    cold FAMILY FIRST STRIDE COUNT N           COUNT objects at FIRST + i*STRIDE,
        each acquired exactly N times and never contended
    ended FAMILY FIRST STRIDE COUNT N          the same for objects destroyed before
        exit: one ended entry each (the address may have had other lives)
    count FAMILY ADDRESS N                      acquired exactly N times
    countany FAMILY N                           some object of FAMILY acquired exactly
        N times (one the program cannot name, such as libgomp's unnamed critical)

STDERR is what the program wrote on stderr: the table at exit must name
every expected object with its function.  Prints one line per failure;
exit status 0 when everything holds.  Standard library only.
"""
import json
import re
import sys

HEX = re.compile(r"^0x[0-9a-f]+$")
FAMILIES = {"pthread_mutex", "omp_lock", "omp_nest_lock", "omp critical", "pthread_spin",
            "pthread_cond", "sem", "pthread_rwlock"}

# A small schema language: a dict is an object with exactly these keys (a key
# ending in '?' may be missing), a list [S] an array of S, a type or a
# function a leaf.
def uint(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0

def hexstr(v):
    return isinstance(v, str) and bool(HEX.match(v))

def family(v):
    return v in FAMILIES

FRAME = {"pc": hexstr, "module?": str, "offset?": hexstr, "function?": str,
         "function_offset?": hexstr}
OBJECT = {"family": family, "address": hexstr, "id": uint, "ended": bool,
          "acquisitions": uint, "contended": uint, "wait_ns": uint, "max_wait_ns": uint,
          "timeouts": uint, "hold_samples": uint, "hold_ns": uint, "max_hold_ns": uint,
          "site": [FRAME]}
SCHEMA = {"schema": lambda v: v == "hwsync-profile", "version": lambda v: v == 1,
          "pid": uint, "program": str, "lock_kind": str, "wait_policy": str,
          "hold_sample_mean": uint,
          "table": {"slots": uint, "objects": uint, "recorded": uint, "not_recorded": uint,
                    "reused": uint, "acquisitions_not_recorded": uint,
                    "acquisitions_of_reused": uint, "counts_not_read": uint},
          "objects": [OBJECT]}


def validate(v, schema, path, errors):
    if isinstance(schema, dict):
        if not isinstance(v, dict):
            errors.append(f"{path}: not an object")
            return
        keys = {k.rstrip("?"): k.endswith("?") for k in schema}
        for k in v:
            if k not in keys:
                errors.append(f"{path}: unexpected key '{k}'")
        for k, optional in keys.items():
            if k in v:
                validate(v[k], schema[k + ("?" if optional else "")], f"{path}.{k}", errors)
            elif not optional:
                errors.append(f"{path}: missing key '{k}'")
    elif isinstance(schema, list):
        if not isinstance(v, list):
            errors.append(f"{path}: not an array")
            return
        for i, x in enumerate(v):
            validate(x, schema[0], f"{path}[{i}]", errors)
    elif isinstance(schema, type):
        if not isinstance(v, schema) or (schema is int and isinstance(v, bool)):
            errors.append(f"{path}: not a {schema.__name__}: {v!r}")
    elif not schema(v):
        errors.append(f"{path}: bad value {v!r}")


def consistency(d, errors):
    t = d["table"]
    if t["recorded"] != len(d["objects"]):
        errors.append(f"table.recorded {t['recorded']} != {len(d['objects'])} objects")
    if t["recorded"] > t["slots"]:
        errors.append("more objects recorded than slots")
    for i, o in enumerate(d["objects"]):
        where = f"objects[{i}] ({o['family']} {o['address']})"
        if o["contended"] > o["acquisitions"]:
            errors.append(f"{where}: more contended than acquisitions")
        if o["max_wait_ns"] > o["wait_ns"] or o["max_hold_ns"] > o["hold_ns"]:
            errors.append(f"{where}: a longest wait or hold above the total")
        if o["contended"] == 0 and (o["wait_ns"] or o["site"]):
            errors.append(f"{where}: wait time or call site without contention")
        if len(o["site"]) > 4:
            errors.append(f"{where}: more than 4 call-site frames")
    waits = [o["wait_ns"] for o in d["objects"]]
    if waits != sorted(waits, reverse=True):
        errors.append("objects are not sorted by total wait")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    schema_only = "--schema-only" in sys.argv
    if len(args) != (1 if schema_only else 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    errors = []
    try:
        with open(args[0]) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        print(f"FAIL: {args[0]}: not JSON: {e}")
        return 1
    validate(d, SCHEMA, "$", errors)
    if not errors:
        consistency(d, errors)
    if errors or schema_only:
        for e in errors:
            print(f"FAIL: schema: {e}")
        return 1 if errors else 0

    stderr = open(args[1]).read()
    objs = d["objects"]
    by_addr = {}
    for o in objs:
        by_addr.setdefault((o["family"], int(o["address"], 16)), []).append(o)
    for line in open(args[2]):
        w = line.split()
        if not w:
            continue
        fam = w[1].replace("omp_critical", "omp critical")
        if w[0] == "expect":
            addr, func, n = w[2], w[3], w[4]
            fam_objs = [o for o in objs if o["family"] == fam]
            if not fam_objs:
                errors.append(f"{fam}: no object in the profile")
                continue
            top = fam_objs[0]   # the file is sorted by total wait
            what = f"{fam}: the top object {top['address']}"
            if addr != "-" and int(top["address"], 16) != int(addr, 16):
                errors.append(f"{what} is not the hot one ({addr})")
                continue
            fn = top["site"][0].get("function") if top["site"] else None
            if fn != func:
                errors.append(f"{what}: call site {fn!r}, expected {func!r}")
            if n.startswith("min:"):
                if top["acquisitions"] < int(n[4:]):
                    errors.append(f"{what}: {top['acquisitions']} waits, expected at least "
                                  f"{n[4:]}")
            elif top["acquisitions"] != int(n):
                errors.append(f"{what}: {top['acquisitions']} acquisitions, expected {n}")
            if top["contended"] == 0:
                errors.append(f"{what}: never contended")
            # the table on stderr names it and its function
            m = re.search(r"^hwsync\[\d+\]:\s+\d+ " + re.escape(fam) + r"\s+" +
                          re.escape(top["address"]) + r" .*\n((?:hwsync\[\d+\]:\s+at .*\n)*)",
                          stderr, re.M)
            if not m:
                errors.append(f"{what} is not in the table on stderr")
            elif not re.search(r"at \S+\+0x[0-9a-f]+ " + re.escape(func) + r"$",
                               m.group(1), re.M):
                errors.append(f"{what}: the table on stderr does not name {func}")
            else:
                print(f"ok: {fam}: {top['address']} first, from {func}, "
                      f"{top['acquisitions']} acquisitions, {top['contended']} contended")
        elif w[0] in ("cold", "ended"):
            first, stride, count, n = int(w[2], 16), int(w[3]), int(w[4]), int(w[5])
            bad = 0
            for i in range(count):
                got = by_addr.get((fam, first + i * stride), [])
                if w[0] == "ended":
                    got = [o for o in got if o["ended"] and o["acquisitions"] == n] or got
                if len(got) != 1 or got[0]["acquisitions"] != n or got[0]["contended"]:
                    bad += 1
                    if bad <= 3:
                        errors.append(f"{fam}: cold object {hex(first + i * stride)}: "
                                      f"{[(o['acquisitions'], o['contended']) for o in got]}"
                                      f", expected one entry with {n} acquisitions")
            if not bad:
                print(f"ok: {fam}: {count} {w[0]} objects, {n} acquisitions each")
        elif w[0] == "countany":
            if any(o["family"] == fam and o["acquisitions"] == int(w[2]) for o in objs):
                print(f"ok: {fam}: an object with {w[2]} acquisitions")
            else:
                errors.append(f"{fam}: no object with exactly {w[2]} acquisitions")
        elif w[0] == "count":
            got = by_addr.get((fam, int(w[2], 16)), [])
            if len(got) != 1 or got[0]["acquisitions"] != int(w[3]):
                errors.append(f"{fam}: {w[2]}: {[o['acquisitions'] for o in got]}, expected "
                              f"one entry with {w[3]} acquisitions")
            else:
                print(f"ok: {fam}: {w[3]} acquisitions")
    for e in errors:
        print(f"FAIL: {e}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
