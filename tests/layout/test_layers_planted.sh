#!/usr/bin/env bash
# Proof that the layer checks can fail: in a scratch copy of the tree, plant
# an upward include and expect the check (scripts/check_layers.py) and, for a
# private header, the build of the layer's target to reject it.
# Also, that check_interposed.py rejects an archive that calls an interposed
# function.
#   test_layers_planted.sh SRCROOT CMAKE C_COMPILER GENERATOR NM
set -euo pipefail
root=$1 cmake=$2 cc=$3 gen=$4 nm=$5
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# the tree as git has it (committed, staged and new files), nothing built
(cd "$root" && git ls-files -z --cached --others --exclude-standard) |
	(cd "$root" && xargs -0 cp --parents -t "$scratch" 2>/dev/null || true)
[ -f "$scratch/cmake/layers.txt" ] || fail "could not copy the tree"
check() { python3 "$scratch/scripts/check_layers.py" "$scratch" >"$scratch/check.out" 2>&1; }
check || { cat "$scratch/check.out"; fail "the unmodified copy does not pass the check"; }

# 1. a public header of the wait layer includes one of prims
cp "$scratch/include/hwsync/wait.h" "$scratch/wait.h.orig"
sed -i 's|^#include <hwsync/arch.h>.*|&\n#include <hwsync/barrier.h>|' "$scratch/include/hwsync/wait.h"
grep -q '^#include <hwsync/barrier.h>' "$scratch/include/hwsync/wait.h" || fail "could not plant"
if check; then cat "$scratch/check.out"; fail "check passed with wait.h including barrier.h"; fi
grep -q '^include/hwsync/wait.h:[0-9]*: includes <hwsync/barrier.h> (layer prims), above wait$' \
	"$scratch/check.out" || { cat "$scratch/check.out"; fail "the check did not name wait.h -> barrier.h"; }
echo "ok: check rejects include/hwsync/wait.h including <hwsync/barrier.h>"
cp "$scratch/wait.h.orig" "$scratch/include/hwsync/wait.h"

# 2. a private include from the wait layer: first one below it (compiles),
#    then one above it (prims), which neither the check nor the build accept
planted=$scratch/lib/wait/planted_include.c
printf '#include "arch/internal.h"\nint hws_planted(void) { return 0; }\n' >"$planted"
check || { cat "$scratch/check.out"; fail "check rejected a downward include"; }
"$cmake" -S "$scratch" -B "$scratch/build" -G "$gen" -DCMAKE_C_COMPILER="$cc" \
	-DHWS_BUILD_TESTS=OFF -DHWS_WITH_HWLOC=OFF >"$scratch/configure.log" 2>&1 ||
	{ cat "$scratch/configure.log"; fail "cannot configure the scratch copy"; }
"$cmake" --build "$scratch/build" --target hwsync_wait >"$scratch/build.log" 2>&1 ||
	{ cat "$scratch/build.log"; fail "the wait layer does not build with a downward include"; }
echo "ok: the wait layer builds with #include \"arch/internal.h\""

printf '#include "prims/qnode.h"\nint hws_planted(void) { return 0; }\n' >"$planted"
if check; then cat "$scratch/check.out"; fail "check passed with lib/wait including prims/qnode.h"; fi
grep -q '^lib/wait/planted_include.c:1: includes "prims/qnode.h" (layer prims), above wait$' \
	"$scratch/check.out" || { cat "$scratch/check.out"; fail "the check did not name the planted file"; }
echo "ok: check rejects lib/wait including \"prims/qnode.h\""
if "$cmake" --build "$scratch/build" --target hwsync_wait >"$scratch/build.log" 2>&1; then
	fail "the wait layer built with #include \"prims/qnode.h\""
fi
grep -q 'prims/qnode.h' "$scratch/build.log" ||
	{ cat "$scratch/build.log"; fail "the build failed, but not on the planted include"; }
echo "ok: the wait layer does not build with #include \"prims/qnode.h\""

# 3. an object that calls pthread_mutex_lock, as the library must not
printf '#include <pthread.h>\nint hws_planted(pthread_mutex_t *m) { return pthread_mutex_lock(m); }\n' \
	>"$scratch/calls.c"
"$cc" -c -o "$scratch/calls.o" "$scratch/calls.c"
ar rc "$scratch/libcalls.a" "$scratch/calls.o"
if python3 "$root/tests/layout/check_interposed.py" "$nm" "$root/shim/preload.map" \
	"$scratch/libcalls.a" >"$scratch/interposed.out" 2>&1; then
	cat "$scratch/interposed.out"; fail "check_interposed.py accepted a call of pthread_mutex_lock"
fi
grep -q 'calls pthread_mutex_lock, which the shim interposes' "$scratch/interposed.out" ||
	{ cat "$scratch/interposed.out"; fail "check_interposed.py failed for another reason"; }
echo "ok: check_interposed.py rejects a call of pthread_mutex_lock"
echo "layers_check_fails: PASS"
