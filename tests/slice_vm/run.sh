#!/usr/bin/env bash
# make test-slice-vm: kernel, static test program, VM run.
#   run.sh SRCROOT BUILD [KERNEL_SRC]
# KERNEL_SRC: an unpacked Linux 7.x source tree.  Without it, given a
# Packages index and a mirror (SLICE_VM_SID_INDEX, SLICE_VM_MIRROR), the
# newest linux-source-7.x (or later) package named there is fetched by name
# and unpacked into BUILD/slice-vm/src (once).  The kernel is built once into
# BUILD/slice-vm/kernel (some minutes at -j2) and reused while its
# configuration is the same; the VM's logs go to BUILD/slice-vm/vm.
# SLICE_VM_SID_INDEX and SLICE_VM_MIRROR are passed on (slice_vm_test.sh);
# with a mirror and no index, the mirror's unstable index is fetched.
set -euo pipefail
root=$(cd "${1:?usage: run.sh SRCROOT BUILD [KERNEL_SRC]}" && pwd)
build=$(cd "${2:?}" && pwd) ksrc=${3:-}
out=$build/slice-vm
mkdir -p "$out"
# A mirror without an index: Debian unstable's, fetched once.
if [ -z "${SLICE_VM_SID_INDEX:-}" ] && [ -n "${SLICE_VM_MIRROR:-}" ]; then
	SLICE_VM_SID_INDEX=$out/Packages-unstable.xz
	[ -s "$SLICE_VM_SID_INDEX" ] ||
		curl -sSf --retry 2 -o "$SLICE_VM_SID_INDEX" \
			"$SLICE_VM_MIRROR/dists/unstable/main/binary-amd64/Packages.xz" ||
		{ echo "SKIP: no package index from $SLICE_VM_MIRROR" >&2; rm -f "$SLICE_VM_SID_INDEX"; exit 77; }
	export SLICE_VM_SID_INDEX
fi
if [ -z "$ksrc" ] && [ -n "${SLICE_VM_SID_INDEX:-}" ] && [ -n "${SLICE_VM_MIRROR:-}" ]; then
	. "$root/tests/slice_vm/fetch.sh"
	pkg=$(newest_package 'linux-source-([7-9]|[1-9][0-9])\.[0-9]+' "$SLICE_VM_SID_INDEX") ||
		{ echo "SKIP: no Linux 7.x source package in $SLICE_VM_SID_INDEX" >&2; exit 77; }
	ksrc=$out/src/$pkg
	if [ ! -f "$ksrc/Makefile" ]; then
		rm -rf "$out/src" && mkdir -p "$out/src/deb"
		fetch_deb "$pkg" "$SLICE_VM_SID_INDEX" "$SLICE_VM_MIRROR" "$out/debs" "$out/src/deb"
		tar -xJf "$out/src/deb/usr/src/$pkg.tar.xz" -C "$out/src"
		rm -rf "$out/src/deb"
	fi
fi
[ -n "$ksrc" ] || { echo "SKIP: no kernel source tree (make test-slice-vm SLICE_VM_SRC=DIR, or SLICE_VM_SID_INDEX=FILE SLICE_VM_MIRROR=URL)" >&2; exit 77; }
"$root/tests/slice_vm/build_kernel.sh" "$ksrc" "$out/kernel"
nice gcc -std=gnu11 -static -O2 -Wall -Wextra -Werror -pthread -o "$out/slice_vmtest" \
	"$root/tests/slice_vm/slice_vmtest.c"
SLICE_VM_KERNEL=$out/kernel/arch/x86/boot/bzImage \
	exec "$root/tests/slice_vm/slice_vm_test.sh" "$root" "$out/vm" "$out/slice_vmtest" "$build"
