#!/usr/bin/env bash
# hwsync info: text and JSON describe every policy; --wait resolves good
# specs and rejects bad ones with one line that quotes them.
set -euo pipefail
hws=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$hws" info)
for word in vendor WAITPKG MONITORX "Wait policies" adaptive futex "Topology" \
            "Hardware waits: checks passed"; do
  grep -q "$word" <<<"$out" || fail "info text lacks '$word'"
done

# Barrier groups of a synthetic two-socket machine (hwloc reads HWLOC_XMLFILE).
if grep -q "Topology (hwloc)" <<<"$out"; then
  xml=$(dirname "$0")/../topo/data/two-socket.xml
  HWLOC_XMLFILE=$xml "$hws" info | grep -q "barrier groups: 2 (numa)" ||
    fail "info on $xml lacks 'barrier groups: 2 (numa)'"
fi

"$hws" info --json > /tmp/hws-info.$$.json
python3 - /tmp/hws-info.$$.json <<'PY' || fail "info --json"
import json, sys
d = json.load(open(sys.argv[1]))
names = [p["name"] for p in d["policies"]]
for n in ["spin", "pause", "backoff", "delay-div", "delay-fdiv", "delay-cas", "delay-miss",
          "yield", "futex", "umwait", "tpause", "mwaitx", "wfe", "kmwait", "adaptive"]:
    assert n in names, n
for p in d["policies"]:
    assert set(p) == {"name", "available", "reason"}, p
    assert (p["reason"] is None) == p["available"], p
assert isinstance(d["locks"], list) and isinstance(d["barriers"], list)
hw = d["hw_checks"]
assert set(hw) == {"umwait", "tpause", "mwaitx", "wfe", "kmwait"}, hw
for n, c in hw.items():
    assert c["level"] in ("hardware", "emulated-store-wake", "emulated", "compiled"), (n, c)
    assert c["detail"], n
assert d["tsc"]["hz"] > 0
PY
rm -f /tmp/hws-info.$$.json

"$hws" info --wait 'backoff:max=4096' | grep -q 'backoff:min=1,max=4096' || fail "--wait good spec"
"$hws" info --wait futex --json | python3 -c 'import json,sys; json.load(sys.stdin)' || fail "--wait --json"

# Bad specs: non-zero exit, exactly one line on stderr, quoting the spec.
for spec in 'bogus' 'backoff:max=abc' 'umwait:state=c9' 'pause:' 'backoff:min=9,max=2'; do
  if err=$("$hws" info --wait "$spec" 2>&1 >/dev/null); then fail "'$spec' accepted"; fi
  [ "$(wc -l <<<"$err")" = 1 ] || fail "'$spec': more than one line: $err"
  grep -qF "'$spec'" <<<"$err" || fail "'$spec' not quoted: $err"
done
# Unknown option / command.
if "$hws" info --frobnicate 2>/dev/null; then fail "unknown option accepted"; fi
if "$hws" frobnicate 2>/dev/null; then fail "unknown command accepted"; fi
"$hws" info --help | grep -q -- '--wait SPEC' || fail "info --help"
# The lists in help texts and in info come from the library's registries.
help=$("$hws" info --help)
grep -q '^wait policies *spin, pause, backoff,' <<<"$help" || fail "info --help: policies"
grep -q '^lock kinds *tas, ttas, ticket, mcs, clh, 1spinner, mutex, auto$' <<<"$help" ||
  fail "info --help: lock kinds"
grep -q 'barrier kinds  *central, pair, hier, dissemination, tree$' <<<"$out" ||
  fail "info: barrier kinds"
help=$("$hws" run --help)
grep -q '^barrier kinds *central, pair' <<<"$help" || fail "run --help: barrier kinds"
help=$("$hws" bench --help)
grep -A3 '^WAIT POLICIES' <<<"$help" | grep -q 'kmwait, adaptive' || fail "bench --help: policies"
echo "cli_info: ok"
