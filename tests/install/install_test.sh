#!/usr/bin/env bash
# Install the build into a scratch prefix, then build and run a consumer with
# find_package(hwsync) and with pkg-config, statically and shared.
set -euo pipefail
build=$1 consumer=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -f "$tmp/prefix/include/hwsync/hwsync.h"
test -f "$tmp/prefix/bin/hwsync"
# the program `hwsync bench shim` runs natively and under the shim
test -x "$tmp/prefix/libexec/hwsync/hwsync-shim-patterns"
libdir=$(ls -d "$tmp"/prefix/lib*/ | head -1)
test -f "$libdir/libhwsync.a"
test -f "$libdir/pkgconfig/hwsync.pc"

# CMake package
cmake -S "$consumer" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cm" >/dev/null
LD_LIBRARY_PATH="$libdir" "$tmp/cm/consumer" | grep -q "consumer: ok"

# pkg-config
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# the .pc names the configured prefix; point it at the scratch prefix
pkgc() { pkg-config --define-variable=prefix="$tmp/prefix" "$@"; }
cc -std=gnu11 -o "$tmp/pc" "$consumer/consumer.c" $(pkgc --cflags --libs hwsync)
LD_LIBRARY_PATH="$libdir" "$tmp/pc" | grep -q "consumer: ok"
# static: libhwsync.a plus its dependencies (shared hwloc)
cc -std=gnu11 -o "$tmp/pcs" "$consumer/consumer.c" $(pkgc --cflags hwsync) \
   "$libdir/libhwsync.a" $(pkg-config --libs hwloc 2>/dev/null || true) -lpthread
"$tmp/pcs" | grep -q "consumer: ok"
echo "install_consumer: ok"
