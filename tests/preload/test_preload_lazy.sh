#!/usr/bin/env bash
# The shim costs a process nothing it does not use: the preload library does
# not link libhwloc (nor, through it, libudev); a program under the shim loads
# them only when it creates a hier barrier (an OpenMP team barrier under
# HWSYNC_BARRIER=hier: dlopen on the first topology query); and a missing,
# corrupt or unreadable calibration cache changes no output and prints nothing.
#   test_preload_lazy.sh HWSYNC LIB CONFORM HAVE_HWLOC [OMP_PROGRAM]
set -euo pipefail
hwsync=$1 lib=$2 conform=$3 have_hwloc=$4 omp=${5:-}
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HWSYNC_CACHE_DIR=$tmp/cache

# 1. Not linked.
needed=$(readelf -d "$lib" | grep NEEDED || true)
! grep -qiE 'hwloc|udev' <<<"$needed" || fail "$lib needs: $needed"
undef=$(nm -D --undefined-only "$lib" | grep -i hwloc || true)
[ -z "$undef" ] || fail "$lib has undefined hwloc symbols: $undef"
pass "the preload library does not link hwloc or udev"

# 2. Not loaded by a program that does nothing, nor by one that locks.
for prog in /bin/true "$conform"; do
  LD_DEBUG=libs LD_PRELOAD=$lib "$prog" > /dev/null 2> "$tmp/libs" || fail "$prog under the shim"
  ! grep -qiE 'libhwloc|libudev' "$tmp/libs" || fail "$prog under the shim loads: $(grep -iE 'hwloc|udev' "$tmp/libs" | head -3)"
done
pass "no hwloc or udev loaded at start-up"

# 3. Loaded on demand: hier barriers (when the build has hwloc and OpenMP).
"$conform" > "$tmp/native.out" 2>&1 || fail "conform natively"
if [ -n "$omp" ]; then
  "$omp" > "$tmp/omp.native" 2>&1 || fail "$omp natively"
  HWSYNC_BARRIER=hier LD_DEBUG=libs LD_DEBUG_OUTPUT=$tmp/ld LD_PRELOAD=$lib "$omp" \
    > "$tmp/omp.hier" 2>&1 || fail "$omp under HWSYNC_BARRIER=hier"
  diff -q "$tmp/omp.native" "$tmp/omp.hier" > /dev/null || fail "$omp under hier differs"
  if [ "$have_hwloc" = 1 ]; then
    cat "$tmp"/ld.* | grep -q 'calling init: .*libhwloc' || fail "hier did not load libhwloc"
    pass "hier barriers load hwloc on first use"
  fi
  rm -f "$tmp"/ld.*
fi

# 4. A bad calibration cache: same output, nothing printed.
mkdir -p "$HWSYNC_CACHE_DIR"
check_quiet() {   # $1: what is wrong
  LD_PRELOAD=$lib /bin/true > "$tmp/out" 2> "$tmp/err" || fail "true under the shim, $1"
  [ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ] || fail "the shim printed with $1: $(cat "$tmp/err")"
  LD_PRELOAD=$lib "$conform" > "$tmp/shim.out" 2>&1 || fail "conform under the shim, $1"
  diff -q "$tmp/native.out" "$tmp/shim.out" > /dev/null || fail "conform differs with $1"
  pass "$1: no output, same results"
}
check_quiet "no cache"
name=$("$hwsync" info | sed -n 's/^  cache: none at \(.*\) (hwsync info.*/\1/p')
[ -n "$name" ] || fail "hwsync info does not name the cache file"
printf 'hwsync-adaptive-calibration 1\nkey nonsense\n\001\002\377' > "$name"
check_quiet "a corrupt cache"
rm -f "$name"; mkdir "$name"
check_quiet "an unreadable cache (a directory)"
rmdir "$name"
touch "$tmp/file"
HWSYNC_CACHE_DIR=$tmp/file/sub check_quiet "a cache directory below a file"
echo "preload_lazy: ok"
