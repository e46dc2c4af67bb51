#!/usr/bin/env bash
# The contention profile (HWSYNC_PROFILE, docs/preload.md "Contention profile").
#
#   test_profile.sh HWSYNC PRELOAD PROFILE_CHECK PEAK_RSS CHURN
#
# 1. profile_check.c (known hot spots) under every lock kind, with the
#    profile alone and, for the default kind, with HWSYNC_STATS as well:
#    check_profile.py must find each hot object first in its family, with its
#    function and exact counts, in a JSON file that matches the schema, and
#    the table on stderr must name them.
# 2. `hwsync run --profile=DIR/p.%p.json`: one file named after the pid.
# 3. churn.c (a million objects of each type, initialised and abandoned in
#    reused batches) with the profile on: peak RSS <= 2 x native + 10 MiB,
#    the same output, a valid profile that reused slots.
# 4. `hwsync profile FILE`: the table with file:line (addr2line), --sort.
# 5. Bad HWSYNC_PROFILE_SLOTS: one line, the program runs natively.
. "$(dirname "$0")/common.sh"
[ $# -eq 5 ] || { echo "usage: $0 HWSYNC PRELOAD PROFILE_CHECK PEAK_RSS CHURN" >&2; exit 2; }
hwsync=$1 lib=$2 prog=$3 peak=$4 churn=$5
here=$(cd "$(dirname "$0")" && pwd)
check="python3 $here/check_profile.py"

kinds=$("$hwsync" run --lock '?' -- true 2>&1 | sed -n 's/.*(known: \(.*\)).*/\1/p' | tr -d ,)
[ -n "$kinds" ] || { echo "skip: no lock kinds in this build"; exit 77; }

# ---- 1. known hot spots, every kind ----
run_check() {   # LABEL ENV...
  local label=$1
  shift
  rm -f "$tmp/p.json"
  # every object that waited in the table on stderr (the hot ones need not
  # be the 10 longest waits overall: only the first of their family)
  timeout 120 env LD_PRELOAD="$lib" HWSYNC_PROFILE="$tmp/p.json" HWSYNC_PROFILE_TOP=100 \
    "$@" "$prog" > "$tmp/expect" 2> "$tmp/err"
  local rc=$?
  if [ $rc -ne 0 ]; then
    # status 3: the program's own counter came out wrong (a lock let two
    # threads in); 124: it hung
    fail "$label: profile_check failed with status $rc"; cat "$tmp/err" >&2; return
  fi
  if $check "$tmp/p.json" "$tmp/err" "$tmp/expect" > "$tmp/out"; then
    pass "$label: $(grep -c '^ok' "$tmp/out") facts hold"
  else
    fail "$label:"; cat "$tmp/out" >&2; head -30 "$tmp/err" >&2
  fi
}
for k in $kinds; do
  run_check "kind $k" HWSYNC_LOCK="$k"
done
run_check "kind auto with HWSYNC_STATS" HWSYNC_STATS=1

# ---- 2. hwsync run --profile=FILE with %p ----
mkdir -p "$tmp/run"
if "$hwsync" run --profile="$tmp/run/p.%p.json" -- "$prog" > /dev/null 2> "$tmp/err"; then
  files=("$tmp"/run/p.*.json)
  if [ ${#files[@]} -eq 1 ] && [[ ${files[0]} =~ /p\.[0-9]+\.json$ ]] &&
     $check --schema-only "${files[0]}" > "$tmp/out"; then
    pass "hwsync run --profile=p.%p.json: ${files[0]##*/}"
  else
    fail "hwsync run --profile=p.%p.json: ${files[*]}"; cat "$tmp/out" >&2
  fi
else
  fail "hwsync run --profile failed"; cat "$tmp/err" >&2
fi
out=$("$hwsync" run --profile=/nonexistent/dir/p.json -- true 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
  pass "hwsync run --profile into a missing folder: exit 2, one line" ||
  fail "hwsync run --profile into a missing folder: status $rc: $out"

# ---- 3. churn: flat memory with the profile on ----
if timeout 300 "$peak" "$tmp/rss" "$churn" all > "$tmp/native.out" 2>&1; then
  read -r native_kib _ < "$tmp/rss"
  limit=$((2 * native_kib + 10240))
  rm -f "$tmp/rss"
  timeout 300 "$peak" "$tmp/rss" env LD_PRELOAD="$lib" HWSYNC_PROFILE="$tmp/churn.json" \
    HWSYNC_PROFILE_TOP=0 "$churn" all > "$tmp/shim.out" 2>&1
  rc=$? kib=0
  [ -s "$tmp/rss" ] && read -r kib _ < "$tmp/rss"
  if [ $rc -ne 0 ]; then
    fail "churn with the profile: exit status $rc"; cat "$tmp/shim.out" >&2
  elif ! diff -u "$tmp/native.out" "$tmp/shim.out" >&2; then
    fail "churn with the profile: output differs from glibc"
  elif [ "$kib" -gt "$limit" ]; then
    fail "churn with the profile: peak RSS $kib KiB, native $native_kib KiB (allowed $limit)"
  elif ! $check --schema-only "$tmp/churn.json" > "$tmp/out"; then
    fail "churn with the profile: bad JSON"; cat "$tmp/out" >&2
  else
    reused=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["table"]["reused"])' \
             "$tmp/churn.json")
    if [ "$reused" -gt 0 ]; then
      pass "churn with the profile: peak RSS $kib KiB (native $native_kib KiB), $reused slots reused"
    else
      fail "churn with the profile: no slot reused (ended objects should make room)"
    fi
  fi
else
  fail "churn: native run failed"
fi

# ---- 4. hwsync profile: the table with file:line, sorted by any column ----
env LD_PRELOAD="$lib" HWSYNC_PROFILE="$tmp/t.json" HWSYNC_PROFILE_TOP=0 "$prog" > "$tmp/expect"
if ! "$hwsync" profile "$tmp/t.json" --family pthread_mutex --top 1 > "$tmp/table" 2>&1; then
  fail "hwsync profile failed"; cat "$tmp/table" >&2
else
  # the hot mutex's row, then its call site with the function and, when
  # addr2line is there (binutils, scripts/deps.sh test), the source line
  hot=$(awk '$1 == "expect" && $2 == "pthread_mutex" {print $3}' "$tmp/expect")
  hot=$(printf '0x%x' "$hot")
  want="hot_mutex_worker"
  command -v addr2line > /dev/null && want="hot_mutex_worker .*profile_check\.c:[0-9]+"
  if awk -v a="$hot" '$3 == a {on = 1; next} on && /^ +at / {print; next} {on = 0}'        "$tmp/table" | grep -Eq "at preload_profile_check\+0x[0-9a-f]+ $want"; then
    pass "hwsync profile: $hot from $want"
  else
    fail "hwsync profile: no row for $hot from $want:"; cat "$tmp/table" >&2
  fi
fi
for key in wait mean-wait max-wait contended acquisitions hold max-hold timeouts family address id; do
  "$hwsync" profile "$tmp/t.json" --top 0 --no-lines --sort "$key" > "$tmp/sorted" 2>&1 ||
    { fail "hwsync profile --sort $key failed"; cat "$tmp/sorted" >&2; continue; }
done
# rows sorted by a numeric column: the contended column never increases
if "$hwsync" profile "$tmp/t.json" --top 0 --no-lines --sort contended |
   sed 's/omp critical/omp_critical/' | awk '$1 ~ /^[0-9]+$/ && $3 ~ /^0x/ {print $5}' |
   sort -c -n -r 2>/dev/null; then
  pass "hwsync profile --sort contended: rows in order"
else
  fail "hwsync profile --sort contended: rows out of order"
fi
rows=$("$hwsync" profile "$tmp/t.json" --top 0 --no-lines --family pthread_cond |
       awk '$1 ~ /^[0-9]+$/ && $3 ~ /^0x/ {print $2}' | sort -u)
[ "$rows" = "pthread_cond" ] && pass "hwsync profile --family pthread_cond" ||
  fail "hwsync profile --family pthread_cond: families '$rows'"
for bad in "--sort nope" "--top x" "--nope"; do
  out=$("$hwsync" profile "$tmp/t.json" $bad 2>&1); rc=$?
  [ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] ||
    fail "hwsync profile $bad: status $rc: $out"
done
echo '{"schema": "hwsync-bench"}' > "$tmp/other.json"
out=$("$hwsync" profile "$tmp/other.json" 2>&1); rc=$?
[ $rc -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
  pass "hwsync profile: bad options exit 2, another file exits 1, one line each" ||
  fail "hwsync profile on a bench file: status $rc: $out"

# ---- 5. a bad setting: one line, native run ----
out=$(env LD_PRELOAD="$lib" HWSYNC_PROFILE=1 HWSYNC_PROFILE_SLOTS=12x "$prog" 2>&1 >/dev/null)
if [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && [[ $out == *HWSYNC_PROFILE_SLOTS* ]]; then
  pass "bad HWSYNC_PROFILE_SLOTS: one line"
else
  fail "bad HWSYNC_PROFILE_SLOTS: $out"
fi

[ $fails -eq 0 ] && echo "profile: all passed" || echo "profile: $fails failed"
[ $fails -eq 0 ]
