#!/usr/bin/env bash
# kmod_qemu: functional test of hwsync_mwait in a throw-away VM.
#   qemu_test.sh SRCROOT WORKDIR KMWAIT_VMTEST
# Boots Debian's linux-image-amd64 under qemu-system-x86_64 with software
# emulation (TCG: -cpu max has MONITOR/MWAIT, KVM here would hide it), two
# vCPUs and a busybox initramfs holding the module, vm_init.sh and the static
# kmwait_vmtest.  Note: TCG's MWAIT does not watch the monitored line, so a
# store does not end it; the tests pass because the driver's loop re-checks
# the word after every MWAIT exit (timer ticks at the latest) - they check
# behaviour, not speed.  A second, short boot with -cpu max,-monitor checks
# that the module refuses to load there with a clear kernel log line.
set -euo pipefail
root=$1 work=$2 vmtest=$3
. "$root/tests/kmod/common.sh"
kmod_deps "$root"
find_kernel image || skip "no linux-headers-*-amd64 with a matching /boot/vmlinuz"
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
	skip "no static /bin/busybox (busybox-static)"

build_module "$root" "$work/module"
make_initramfs "$root" "$work" "$vmtest"

# boot NAME CPU EXTRA-CMDLINE: run the VM, log to WORK/NAME.log, check the marker.
boot() {
	local name=$1 cpu=$2 extra=$3 log=$work/$1.log t0=$SECONDS rc=0
	timeout 120 qemu-system-x86_64 -accel tcg -cpu "$cpu" -smp 2 -m 512M \
		-kernel "/boot/vmlinuz-$KVER" -initrd "$work/initramfs.cpio.gz" \
		-append "console=ttyS0 panic=-1 oops=panic softlockup_panic=1 rdinit=/init loglevel=4 $extra" \
		-nographic -no-reboot -monitor none </dev/null >"$log" 2>&1 || rc=$?
	tr -d '\r' <"$log" | grep -vE "^\[ *[0-9.]+\] (Run|Fre|RAS|x86|Key|Loading compiled|clocksource)" |
		sed -n '/KMOD-VM\|kmwait\|hwsync\|CHECK\|info:\|mmap:\|bad args\|timeouts:\|wake:\|signals:\|yields:\|halt:\|permission:\|library:\|unload\|exit_stats\|storewake\|misarm\|Kernel panic\|BUG\|WARNING/p' >&2
	echo "$name: qemu exit $rc after $((SECONDS - t0)) s (log: $log)" >&2
	if tr -d '\r' <"$log" | grep -q "^KMOD-VM-RESULT PASS"; then
		return 0
	fi
	echo "FAIL: $name: no PASS marker; last lines of the console:" >&2
	tail -n 40 "$log" >&2
	return 1
}

boot mwait max ""
boot nomonitor max,-monitor hwsync_nomonitor
echo "kmod_qemu: PASS (kernel $KVER)"
