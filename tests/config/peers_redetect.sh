#!/usr/bin/env bash
# A peer installed after the first configure is found by the next one.
# Concurrency Kit stands for every peer: a scratch build is configured through
# the top-level Makefile while pkg-config cannot see ck (PKG_CONFIG_LIBDIR holds
# every .pc file of this machine but ck.pc), then with ck visible ("installed"),
# then hidden again ("removed"); after each, the CLI's compile definitions must
# say HWS_HAVE_CK=0, 1, 0.  And `make build`, `make demo` and `make test`
# run the configure step before they build (make -n).
#   peers_redetect.sh SOURCE_DIR
set -euo pipefail
src=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v pkg-config >/dev/null && pkg-config --exists ck ||
	{ echo "skip: Concurrency Kit is not installed (libck-dev)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

mkdir "$T/pc"
IFS=: read -ra dirs <<<"$(pkg-config --variable pc_path pkg-config)"
for d in "${dirs[@]}"; do
	for f in "$d"/*.pc; do
		n=${f##*/}
		[ -e "$f" ] && [ "$n" != ck.pc ] && [ ! -e "$T/pc/$n" ] && ln -s "$f" "$T/pc/$n"
	done
done
! PKG_CONFIG_LIBDIR="$T/pc" pkg-config --exists ck || fail "ck.pc still visible"

# make from inside ctest (itself maybe under make): no inherited jobserver
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$src" "$@"; }
configure() {   # configure [hidden]
	if [ "${1:-}" = hidden ]; then
		PKG_CONFIG_LIBDIR="$T/pc" mk configure BUILD="$T/b" CMAKE_FLAGS=-DHWS_BUILD_TESTS=OFF
	else
		mk configure BUILD="$T/b" CMAKE_FLAGS=-DHWS_BUILD_TESTS=OFF
	fi >"$T/log" 2>&1 || { cat "$T/log" >&2; fail "configure ${1:-}"; }
}
ck_define() {   # the value of HWS_HAVE_CK in the CLI's compile flags
	grep -rhoE --include=build.ninja --include=flags.make -e "-DHWS_HAVE_CK=[01]" "$T/b" |
		sort -u | tr '\n' ' '
}

configure hidden
[ "$(ck_define)" = "-DHWS_HAVE_CK=0 " ] || fail "ck hidden: $(ck_define)"
grep -q "hwsync peers: Concurrency Kit 0" "$T/log" || fail "ck hidden: no status line"
configure
[ "$(ck_define)" = "-DHWS_HAVE_CK=1 " ] || fail "ck installed since: $(ck_define)"
grep -q "hwsync peers: Concurrency Kit 1" "$T/log" || fail "ck installed since: no status line"
configure hidden
[ "$(ck_define)" = "-DHWS_HAVE_CK=0 " ] || fail "ck removed since: $(ck_define)"

# The make targets that build configure first (dry run: nothing executed
# but the recursive makes).
for t in build demo test; do
	mk -n "$t" BUILD="$T/b" >"$T/n" 2>&1 || { cat "$T/n" >&2; fail "make -n $t"; }
	c=$(grep -n -m1 -- "cmake -S . -B $T/b" "$T/n" | cut -d: -f1)
	b=$(grep -n -m1 -- "cmake --build $T/b" "$T/n" | cut -d: -f1)
	[ -n "$c" ] && [ -n "$b" ] && [ "$c" -lt "$b" ] ||
		{ cat "$T/n" >&2; fail "make $t does not configure before it builds"; }
done
echo "config peers redetect: ok (CMake looked for ck again on each configure)"
