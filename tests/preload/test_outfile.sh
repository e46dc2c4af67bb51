#!/usr/bin/env bash
# Per-process output files (shim/outfile.c).  Usage: test_outfile.sh HWSYNC PRELOAD PROG
# Two live processes given the same HWSYNC_TRACE both keep a whole trace
# (NAME and NAME.<pid>); a program that forks and execs itself under the
# shim too; %p and %h expand; a finished run's file is overwritten by the
# next run; a bad % sequence is one line and a native run.
. "$(dirname "$0")/common.sh"
hwsync=$1 lib=$2 prog=$3
trap 'exec 7>&- 8>&- 2>/dev/null; kill $pa $pb 2>/dev/null; rm -rf "$tmp"' EXIT
pa= pb=
# check_trace FILE PID: valid trace JSON, events of that process, mutex spans
check_trace() {
  python3 - "$1" "$2" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
pids = {e["pid"] for e in ev}
assert pids == {int(sys.argv[2])}, (pids, sys.argv[2])
assert any(e["ph"] == "X" for e in ev), "no spans"
PY
}

# 1. two live processes, one name: the second gets NAME.<pid>
mkfifo "$tmp/a.in" "$tmp/b.in"
t=$tmp/trace.json
timeout 60 env HWSYNC_TRACE=$t LD_PRELOAD=$lib "$prog" wait < "$tmp/a.in" > "$tmp/a.out" & pa=$!
exec 7> "$tmp/a.in"
timeout 60 env HWSYNC_TRACE=$t LD_PRELOAD=$lib "$prog" wait < "$tmp/b.in" > "$tmp/b.out" & pb=$!
exec 8> "$tmp/b.in"
for f in a b; do   # both have started (and so opened their trace) before either ends
  for _ in $(seq 600); do grep -q ready "$tmp/$f.out" 2>/dev/null && break; sleep 0.1; done
done
exec 7>&- 8>&-
wait $pa; ra=$?; wait $pb; rb=$?
pa= pb=
ida=$(sed -n 's/^pid //p' "$tmp/a.out"); idb=$(sed -n 's/^pid //p' "$tmp/b.out")
if [ $ra -ne 0 ] || [ $rb -ne 0 ] || [ -z "$ida" ] || [ -z "$idb" ]; then
  fail "two processes: exit $ra/$rb"
else
  # whichever took the name first keeps it; the other writes NAME.<its pid>
  if [ -f "$t.$idb" ]; then first=$ida second=$idb; else first=$idb second=$ida; fi
  if check_trace "$t" "$first" && check_trace "$t.$second" "$second"; then
    pass "two processes, one HWSYNC_TRACE: trace.json (pid $first) and trace.json.$second"
  else
    fail "two processes: traces $(ls "$tmp")"
  fi
fi

# 2. a traced program that forks and execs a traced child
rm -f "$tmp"/trace.json*
timeout 60 env HWSYNC_TRACE=$t LD_PRELOAD=$lib "$prog" spawn > "$tmp/s.out" || fail "spawn: exit $?"
# the exec'd child prints its "pid" line first
idp=$(sed -n 's/^pid //p' "$tmp/s.out" | tail -n 1); idc=$(sed -n 's/^child //p' "$tmp/s.out")
if [ -n "$idc" ] && check_trace "$t" "$idp" && check_trace "$t.$idc" "$idc"; then
  pass "fork+exec under the shim: parent's trace.json and child's trace.json.$idc"
else
  fail "fork+exec: traces $(ls "$tmp")"
fi

# 3. %p and %h expand; %% is a percent sign
rm -f "$tmp"/trace*
host=$(hostname 2>/dev/null || echo localhost)
timeout 60 env HWSYNC_TRACE="$tmp/t-%h-%p-100%%.json" LD_PRELOAD=$lib "$prog" plain > "$tmp/p.out" ||
  fail "%p: exit $?"
id=$(sed -n 's/^pid //p' "$tmp/p.out")
if [ -f "$tmp/t-$host-$id-100%.json" ] && check_trace "$tmp/t-$host-$id-100%.json" "$id"; then
  pass "%h-%p-100%% expands to t-$host-$id-100%.json"
else
  fail "%p: expected t-$host-$id-100%.json, have: $(ls "$tmp")"
fi

# 4. a file left by a finished run is overwritten, not avoided
echo garbage > "$t"
timeout 60 env HWSYNC_TRACE=$t LD_PRELOAD=$lib "$prog" plain > "$tmp/o.out" || fail "overwrite: exit $?"
id=$(sed -n 's/^pid //p' "$tmp/o.out")
if check_trace "$t" "$id" && ! ls "$tmp"/trace.json.* >/dev/null 2>&1; then
  pass "a finished run's trace.json is overwritten"
else
  fail "overwrite: $(ls "$tmp")"
fi

# 5. an unknown % sequence: one line naming it, the program runs natively
timeout 60 env HWSYNC_TRACE="$tmp/t-%q.json" LD_PRELOAD=$lib "$prog" plain > /dev/null 2> "$tmp/e.err" ||
  fail "bad %: exit $?"
if [ "$(grep -c . "$tmp/e.err")" -eq 1 ] && grep -q "HWSYNC_TRACE=.*%q" "$tmp/e.err" &&
   [ ! -e "$tmp/t-%q.json" ]; then
  pass "bad %q: $(cat "$tmp/e.err")"
else
  fail "bad %q:"; cat "$tmp/e.err" >&2
fi

# 6. hwsync run --trace passes the spec through
HWSYNC_TRACE= timeout 60 "$hwsync" run --trace "$tmp/r-%p.json" -- "$prog" plain > "$tmp/r.out" ||
  fail "hwsync run: exit $?"
id=$(sed -n 's/^pid //p' "$tmp/r.out")
[ -f "$tmp/r-$id.json" ] && pass "hwsync run --trace r-%p.json" || fail "hwsync run --trace: $(ls "$tmp")"
# 7. hwsync run checks the spec without creating or truncating the file
echo keep > "$tmp/busy.json"
for spec in "$tmp/x-%q.json" /nonexistent-dir/t.json "$tmp/"; do
  if "$hwsync" run --trace "$spec" -- true 2> "$tmp/re.err"; then
    fail "hwsync run --trace '$spec' accepted"
  elif [ "$(grep -c . "$tmp/re.err")" -ne 1 ]; then
    fail "hwsync run --trace '$spec': not one line"; cat "$tmp/re.err" >&2
  else
    pass "hwsync run --trace '$spec': $(cat "$tmp/re.err")"
  fi
done
HWSYNC_TRACE= "$hwsync" run --trace "$tmp/busy.json" -- true ||
  fail "hwsync run --trace busy.json: exit $?"
exit $((fails > 0))
