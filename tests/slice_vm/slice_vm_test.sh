#!/usr/bin/env bash
# The kernel's rseq time-slice extension on a real kernel that has it, in a
# throw-away VM (qemu-system-x86_64, software emulation: -accel tcg).
#   slice_vm_test.sh SRCROOT WORKDIR VMTEST [BUILD]
# SLICE_VM_KERNEL: the bzImage to boot (tests/slice_vm/build_kernel.sh).
# VMTEST: the static slice_vmtest.  BUILD (optional): an hwsync build
# directory; its CLI, shim, hwsync-shim-patterns, the preload
# conformance program and the detection's unit test (test_rseq_slice: hwsync
# agrees with the kernel's prctl answers) go into the VM with the shared libraries they load,
# and run there with this machine's C library.
# SLICE_VM_SID_INDEX and SLICE_VM_MIRROR (optional): a Debian Packages index
# (.xz) and the mirror's base URL; the C library package named there
# (libc6) is fetched by name, and the same programs run through its loader
# too.  The VM's console goes to WORKDIR/vm.log; WORKDIR/summary.log has the
# lines that matter.  Emulated timing: counts, not speed.
set -euo pipefail
root=${1:?usage: slice_vm_test.sh SRCROOT WORKDIR VMTEST [BUILD]}
work=${2:?} vmtest=${3:?} build=${4:-}
skip() { echo "SKIP: $*" >&2; exit 77; }

kernel=${SLICE_VM_KERNEL:-}
[ -n "$kernel" ] && [ -f "$kernel" ] ||
	skip "no kernel image (set SLICE_VM_KERNEL to a bzImage from build_kernel.sh)"
"$root/scripts/deps.sh" slice-vm ||
	skip "the slice-vm packages are missing and cannot be installed here (scripts/deps.sh slice-vm as root)"
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
	skip "no static /bin/busybox (busybox-static)"
[ -x "$vmtest" ] || { echo "FAIL: no test program $vmtest" >&2; exit 1; }

mkdir -p "$work"
work=$(cd "$work" && pwd)
d=$work/initramfs
rm -rf "$d" && mkdir -p "$d"/{bin,dev,proc,sys,tmp}

. "$root/tests/slice_vm/fetch.sh"

# copy_with_libs FILE...: into the image under the same absolute paths, with
# the shared libraries ldd names for them (and the loader).
copy_libs() {
	local f lib
	for f in "$@"; do
		for lib in $(ldd "$f" 2>/dev/null | grep -o '/[^ ]*'); do
			mkdir -p "$d$(dirname "$lib")"
			cp -L "$lib" "$d$lib"
		done
	done
}

cp /bin/busybox "$d/bin/"
ln -s busybox "$d/bin/sh"
cp "$vmtest" "$d/slice_vmtest"
cp "$root/tests/slice_vm/vm_init.sh" "$d/init"
chmod +x "$d/init"
if [ -n "$build" ]; then
	mkdir -p "$d/hws"
	progs=("$build/hwsync" "$build/hwsync-shim-patterns" "$build/tests/preload/preload_conform"
	       "$build/tests/arch/test_rseq_slice")
	for f in "${progs[@]}" "$build/libhwsync-preload.so"; do
		[ -f "$f" ] || { echo "FAIL: $f is missing (build the targets first)" >&2; exit 1; }
	done
	nice gcc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$d/hws/rseq_probe" \
		"$root/tests/slice_vm/rseq_probe.c"
	cp "${progs[@]}" "$build/libhwsync-preload.so" "$d/hws/"
	# the shim opens libhwloc itself when it is there: the CLI's libraries cover it
	copy_libs "${progs[@]}" "$build/libhwsync-preload.so" "$d/hws/rseq_probe"
	if [ -n "${SLICE_VM_SID_INDEX:-}" ] && [ -n "${SLICE_VM_MIRROR:-}" ]; then
		fetch_deb libc6 "$SLICE_VM_SID_INDEX" "$SLICE_VM_MIRROR" "$work/debs" "$d/sid"
		rm -rf "$d/sid/usr/share" "$d/sid/etc"
	else
		echo "slice_vm_test: no SLICE_VM_SID_INDEX/SLICE_VM_MIRROR: no second C library" >&2
	fi
fi
(cd "$d" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initramfs.cpio.gz"

log=$work/vm.log rc=0 t0=$SECONDS
timeout 300 qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 1G \
	-kernel "$kernel" -initrd "$work/initramfs.cpio.gz" \
	-append "console=ttyS0 panic=-1 oops=panic rdinit=/init loglevel=4" \
	-nographic -no-reboot -monitor none </dev/null >"$log.raw" 2>&1 || rc=$?
tr -d '\r' <"$log.raw" >"$log" && rm -f "$log.raw"
echo "slice_vm_test: qemu exit $rc after $((SECONDS - t0)) s (console: $log)" >&2

# The summary: the checks, the steps' codes, and the counters' changes.
sum=$work/summary.log
{
	grep -E "^(SLICE-VM|STEP-RC|SAME|KERNEL-LOG)|^[a-z0-9-]*: (rseq_probe|ops=|CHECK|GRANTS|SLICE-VM-RESULT|slice_vmtest:|slice simulation)|-info-slice: |-unit: (rseq time-slice|after a lock hold)" "$log" || true
	awk '$1 == "STATS" && $2 ~ /^(before|after)-/ {
		split($2, w, "-"); when = w[1]; what = substr($2, length(when) + 2)
		v[what, when, $3] = $4; names[$3] = 1; steps[what] = 1 }
	END {
		for (s in steps) {
			line = "STATS-DELTA " s ":"
			for (n in names) if ((s, "after", n) in v)
				line = line " " n " " v[s, "after", n] - v[s, "before", n]
			print line
		} }' "$log" | sort
} >"$sum"
cat "$sum" >&2

fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }
grep -q "^SLICE-VM-DONE" "$log" || { bad "the VM did not finish; last lines:"; tail -n 40 "$log" >&2; }
grep -q "^vmtest: SLICE-VM-RESULT PASS" "$log" || bad "slice_vmtest did not pass"
grep -q "^SLICE-VM kernel .*, 2 CPUs" "$log" || bad "the VM's kernel did not bring up 2 CPUs"
steprc() { sed -n "s/^STEP-RC $1 //p" "$log"; }
if [ -n "$build" ]; then
	for s in v1-probe v1-info v1-unit v1-native v1-shim; do
		[ "$(steprc $s)" = 0 ] || bad "step $s: exit status $(steprc $s)"
	done
	if [ -d "$d/sid" ]; then
		for s in sid-probe sid-info sid-unit sid-native-oversub sid-shim-oversub sid-shim-off-oversub \
			 sid-native-yield8 sid-shim-yield8 sid-native-conform sid-shim-conform; do
			[ "$(steprc $s)" = 0 ] || bad "step $s: exit status $(steprc $s)"
		done
		for s in sid-shim-oversub-50us sid-shim-yield8-50us; do   # where the grant could be set longer
			[ -z "$(steprc $s)" ] || [ "$(steprc $s)" = 0 ] || bad "step $s: exit status $(steprc $s)"
		done
		grep -q "^SAME sid-conform yes" "$log" ||
			bad "the conformance program's output under the shim differs from the native run"
	fi
fi
grep -q "^KERNEL-LOG" "$log" && bad "the kernel complained (KERNEL-LOG lines)"
[ $fail = 0 ] || exit 1
echo "slice_vm_test: PASS"
