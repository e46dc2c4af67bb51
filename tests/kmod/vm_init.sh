#!/bin/sh
# /init of the kmod test VM (tests/kmod/qemu_test.sh).  Prints exactly one
# "KMOD-VM-RESULT PASS" or "KMOD-VM-RESULT FAIL <why>" line, then powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo 4 > /proc/sys/kernel/printk     # keep the console for our output

result() { echo "KMOD-VM-RESULT $*"; poweroff -f; sleep 5; }

if grep -q hwsync_nomonitor /proc/cmdline; then
	# Booted with -cpu max,-monitor: the module must refuse, and say why.
	grep -qw monitor /proc/cpuinfo && result FAIL "the CPU still has MONITOR"
	insmod /hwsync_mwait.ko 2>/dev/null && result FAIL "loaded on a CPU without MONITOR/MWAIT"
	dmesg | grep "hwsync_mwait: not loading: this CPU has no MONITOR/MWAIT" ||
		result FAIL "no kernel log line naming the missing MONITOR/MWAIT"
	result PASS
fi

grep -qw monitor /proc/cpuinfo || result FAIL "the emulated CPU has no MONITOR/MWAIT"
/kmwait_vmtest unloaded || result FAIL "kmwait_vmtest unloaded"
insmod /hwsync_mwait.ko || result FAIL "insmod"
dmesg | grep "hwsync_mwait:"
/kmwait_vmtest loaded || result FAIL "kmwait_vmtest loaded"
grep -q hwsync_mwait /proc/modules && result FAIL "the module is still loaded"
dmesg | grep -E "BUG:|WARNING:|Oops|Call Trace|blocked for more than|soft lockup|rcu.*stall" && result FAIL "kernel complained"
result PASS
