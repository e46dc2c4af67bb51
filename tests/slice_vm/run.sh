#!/usr/bin/env bash
# make test-slice-vm: kernel, static test program, VM run.
#   run.sh SRCROOT BUILD KERNEL_SRC
# KERNEL_SRC: an unpacked Linux 7.x source tree (for instance Debian's
# linux-source-7.x package, unpacked).  The kernel is built once into
# BUILD/slice-vm/kernel (some minutes at -j2) and reused while its
# configuration is the same; the VM's logs go to BUILD/slice-vm/vm.
# SLICE_VM_SID_INDEX and SLICE_VM_MIRROR are passed on (slice_vm_test.sh).
set -euo pipefail
root=$(cd "${1:?usage: run.sh SRCROOT BUILD KERNEL_SRC}" && pwd)
build=$(cd "${2:?}" && pwd) ksrc=${3:-}
[ -n "$ksrc" ] || { echo "SKIP: no kernel source tree (make test-slice-vm SLICE_VM_SRC=DIR)" >&2; exit 77; }
out=$build/slice-vm
mkdir -p "$out"
"$root/tests/slice_vm/build_kernel.sh" "$ksrc" "$out/kernel"
nice gcc -std=gnu11 -static -O2 -Wall -Wextra -Werror -pthread -o "$out/slice_vmtest" \
	"$root/tests/slice_vm/slice_vmtest.c"
SLICE_VM_KERNEL=$out/kernel/arch/x86/boot/bzImage \
	exec "$root/tests/slice_vm/slice_vm_test.sh" "$root" "$out/vm" "$out/slice_vmtest" "$build"
