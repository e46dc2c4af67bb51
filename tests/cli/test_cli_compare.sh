#!/usr/bin/env bash
# hwsync compare on toy programs that read the configuration from the
# environment: the verdict names the configuration that sleeps least (the
# sleeps differ by 10x and more, and the verdict takes the median of 3
# rounds, so one run delayed by a loaded machine cannot reorder them; whether
# the difference is "beyond noise" depends on every round, so the test checks
# only that the verdict agrees with the interval it prints); a failing
# program, a signal, differing outputs and bad options each stop with one
# line; --budget stops starting rounds; --setup runs before every run; the
# JSON has its schema.  About 15 s of sleeps in all.
set -euo pipefail
hws=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

# --- the verdict picks the fastest -------------------------------------------
cat > toy.sh <<'EOF'
#!/bin/sh
case "${HWSYNC_LOCK:-}" in
  mcs) sleep 0.05 ;;
  auto) sleep 0.5 ;;
  *) sleep 1 ;;
esac
echo same
EOF
chmod +x toy.sh
HWSYNC_LOCK=mcs "$hws" compare --configs native,auto,mcs:futex -n 3 --out r.json --out-dir out \
  --check-output -- ./toy.sh > table.txt 2> progress.txt || fail "toy run: $(cat progress.txt)"
grep -Eq '^verdict: mcs:futex is fastest, .*: (not )?faster beyond noise \(3 rounds\)$' table.txt ||
  fail "verdict: $(cat table.txt)"
grep -qx '  hwsync run --lock mcs --wait futex -- ./toy.sh' table.txt || fail "run line: $(cat table.txt)"
[ "$(grep -c '^hwsync compare: round [1-3]/3 ' progress.txt)" = 9 ] || fail "progress: $(cat progress.txt)"
grep -q 'elapsed [0-9]*:[0-9][0-9]  left ~' progress.txt || fail "progress lacks elapsed/left"
python3 - r.json out <<'PY' || fail "JSON"
import json, os, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "hwsync-compare/1"
assert d["rounds_done"] == 3 and d["params"]["rounds"] == 3 and not d["budget_stop"]
assert d["reference"] == "native" and d["program"] == ["./toy.sh"]
names = [c["name"] for c in d["configs"]]
assert names == ["native", "auto", "mcs:futex"], names
for c in d["configs"]:
    for m in ("wall_s", "cpu_s", "rss_kib"):
        assert c[m]["n"] == 3, c
        lo, hi = c[m]["ci95"]
        assert lo <= c[m]["median"] <= hi, c
        if c["native"]:
            assert c[m + "_ratio"] is None
        else:
            assert c[m + "_ratio"]["n"] == 3
    assert c["exit_status"] == 0
mcs = d["configs"][2]
assert mcs["lock"] == "mcs" and mcs["wait"] == "futex"
assert mcs["run"] == "hwsync run --lock mcs --wait futex -- ./toy.sh"
assert mcs["wall_s_ratio"]["median"] < 1
orders = [tuple(r["order"]) for r in d["rounds"]]
assert len(set(orders)) == 3 and len(set(o[0] for o in orders)) == 3, orders
for r in d["rounds"]:
    assert isinstance(r["flagged"], bool)
    for run in r["runs"]:
        out = open(os.path.join(sys.argv[2], run["stdout"])).read()
        assert out == "same\n", (run, out)
        assert os.path.exists(os.path.join(sys.argv[2], run["stderr"]))
v = d["verdict"]
assert v["best"] == "mcs:futex", v
assert v["beyond_noise"] == (mcs["wall_s_ratio"]["ci95"][1] < 1), (v, mcs)
assert ("not faster" in v["text"]) != v["beyond_noise"], v
PY
# a sleep uses no CPU: no configuration's CPU time differs beyond noise here
# unless its shell start-up does; the line, when present, names configurations
if grep -q '^CPU time differs' table.txt; then
  grep -Eq "^CPU time differs from native's beyond noise:( (auto|mcs:futex) [0-9.]+x \[[0-9.]+, [0-9.]+\],?)+$" \
    table.txt || fail "CPU line: $(grep '^CPU' table.txt)"
fi
# the user's own HWSYNC_LOCK=mcs did not reach the native runs
grep -q '^native  ' table.txt || fail "table lacks native"

# --- native fastest ----------------------------------------------------------
cat > slow.sh <<'EOF'
#!/bin/sh
if [ -n "${HWSYNC_LOCK:-}" ]; then sleep 0.6; fi
EOF
chmod +x slow.sh
"$hws" compare -q --configs auto,native -n 3 --out-dir out2 -- ./slow.sh > t2.txt ||
  fail "slow run"
grep -q '^verdict: native is fastest; the closest, auto, takes ' t2.txt || fail "native verdict: $(cat t2.txt)"

# --- failures stop with one line ---------------------------------------------
one_line() {   # what, expected exit status, stderr file, pattern
  local n; n=$(wc -l < "$3")
  [ "$n" = 1 ] || fail "$1: $n lines on stderr: $(cat "$3")"
  grep -q -- "$4" "$3" || fail "$1: '$4' not in: $(cat "$3")"
}
cat > bad.sh <<'EOF'
#!/bin/sh
case "${HWSYNC_LOCK:-}" in
  mcs) exit 3 ;;
  ticket) kill -SEGV $$ ;;
esac
echo "${HWSYNC_LOCK:-native}"
EOF
chmod +x bad.sh
set +e
"$hws" compare -q --configs native,mcs -n 2 --out-dir out3 --out f.json -- ./bad.sh > /dev/null 2> e1.txt
rc=$?
set -e
[ $rc = 1 ] || fail "failing program: exit $rc"
[ ! -e f.json ] || fail "failing program: --out left a file"
one_line "failing program" 1 e1.txt 'round 1, mcs: ./bad.sh exited with status 3, not 0'
set +e
"$hws" compare -q --configs native,ticket -n 2 --out-dir out3 -- ./bad.sh > /dev/null 2> e2.txt
rc=$?
set -e
[ $rc = 1 ] || fail "signal: exit $rc"
one_line "signal" 1 e2.txt 'ticket: ./bad.sh killed by signal 11'
set +e
"$hws" compare -q --configs native,auto --check-output -n 2 --out-dir out3 -- ./bad.sh \
  > /dev/null 2> e3.txt
rc=$?
set -e
[ $rc = 1 ] || fail "--check-output: exit $rc"
one_line "--check-output" 1 e3.txt "check-output: round 1: auto's output differs from native's at byte 0"
# without --check-output the same outputs are fine
"$hws" compare -q --configs native,auto -n 1 --out-dir out3 -- ./bad.sh > /dev/null ||
  fail "differing output without --check-output"
# --expect-status accepts another status, the same in every configuration
"$hws" compare -q --configs native,auto -n 1 --expect-status 4 --out-dir out3 -- sh -c 'exit 4' \
  > /dev/null || fail "--expect-status 4"
set +e
"$hws" compare -q --configs native,auto -n 1 --timeout 0.5 --out-dir out3 -- sleep 5 \
  > /dev/null 2> e4.txt
rc=$?
set -e
[ $rc = 1 ] || fail "--timeout: exit $rc"
one_line "--timeout" 1 e4.txt 'took longer than --timeout 0.5 s (killed)'

# --- --setup before every run, --budget --------------------------------------
cat > eat.sh <<'EOF'
#!/bin/sh
test -f input || exit 5
rm input
EOF
chmod +x eat.sh
"$hws" compare -q --configs native,auto -n 2 --setup 'echo made; touch input' --out-dir out4 \
  -- ./eat.sh > /dev/null || fail "--setup"
[ "$(grep -c made out4/setup.log)" = 4 ] || fail "setup ran $(grep -c made out4/setup.log) times, not 4"
"$hws" compare -q --configs native,auto -n 40 --budget 1.5 --out b.json --out-dir out5 \
  -- sleep 0.3 > t5.txt || fail "--budget"
grep -q -- '--budget 1.5 s: [0-9]* of 40 rounds fitted' t5.txt || fail "budget line: $(cat t5.txt)"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["budget_stop"] and 1 <= d["rounds_done"] < 40, d["rounds_done"]
assert all(len(r["runs"]) == 2 for r in d["rounds"])
' b.json || fail "--budget JSON"

# --- the default configurations ----------------------------------------------
"$hws" compare -q -n 1 --out d.json --out-dir out6 -- true > /dev/null || fail "defaults"
python3 -c '
import json, sys
names = [c["name"] for c in json.load(open(sys.argv[1]))["configs"]]
assert names[:4] == ["native", "auto", "mcs:futex", "auto:futex"], names
assert len(names) in (4, 5) and all(n.startswith("auto:") for n in names[4:]), names
' d.json || fail "default configs"
# a policy's own parameters follow it after commas
"$hws" compare -q -n 1 --configs native,mcs:backoff:min=4,max=4096 --out c.json --out-dir out6 \
  -- true > /dev/null || fail "policy parameters"
python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["configs"][1]
assert c["name"] == "mcs:backoff:min=4,max=4096" and c["wait"] == "backoff:min=4,max=4096", c
' c.json || fail "policy parameters JSON"

# --- bad options: one line, exit 2 -------------------------------------------
bad() {
  local err rc
  set +e
  err=$("$hws" compare "$@" 2>&1 >/dev/null)
  rc=$?
  set -e
  [ $rc = 2 ] || fail "'$*': exit $rc, not 2"
  [ "$(wc -l <<<"$err")" = 1 ] || fail "'$*': more than one line: $err"
  [ -n "$err" ] || fail "'$*': no message"
}
bad --configs native,mcz -- true
bad --configs native,mcs:futx -- true
bad --configs native,mcs:backoff:max=abc -- true
bad --configs native,native -- true
bad --configs , -- true
bad -n 0 -- true
bad -n 2.5 -- true
bad --rounds abc -- true
bad --budget -1 -- true
bad --timeout 0 -- true
bad --expect-status 300 -- true
bad --frobnicate -- true
bad -n
bad --configs native
bad --out /nonexistent-dir/x.json -- true
bad --preload /nonexistent.so -- true
if ! "$hws" info --wait umwait > /dev/null 2>&1; then
  bad --configs native,auto:umwait -- true
fi
# (the text in a variable first: grep -q stops reading early, and under
# pipefail the writer's SIGPIPE would fail the pipeline)
help=$("$hws" compare --help)
grep -q -- '--check-output' <<<"$help" || fail "--help"
help=$("$hws" --help)
grep -q '^  compare ' <<<"$help" || fail "hwsync --help lacks compare"
echo "compare: ok"
