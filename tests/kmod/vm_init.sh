#!/bin/sh
# /init of the kmod test VMs (tests/kmod/qemu_test.sh, bochs_test.sh).  Prints exactly one
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

# Kernel log lines that appeared since mark_log.
mark_log() { LOGMARK=$(dmesg | wc -l); }
new_log() { dmesg | tail -n +$((LOGMARK + 1)); }
complained() { new_log | grep -E "BUG:|WARNING:|Oops|Call Trace|blocked for more than|soft lockup|rcu.*stall"; }

if grep -q hwsync_storewake /proc/cmdline; then
	# Booted under Bochs (tests/kmod/bochs_test.sh), whose MONITOR watches
	# the line: a store must end the MWAIT, and a mis-armed monitor must fail.
	[ "$(grep -c ^processor /proc/cpuinfo)" -ge 2 ] || result FAIL "fewer than 2 CPUs"
	mark_log
	insmod /hwsync_mwait.ko exit_stats=1 || result FAIL "insmod exit_stats=1"
	new_log | grep "hwsync_mwait:"
	/kmwait_vmtest storewake || result FAIL "kmwait_vmtest storewake"
	rmmod hwsync_mwait || result FAIL "rmmod"
	insmod /hwsync_mwait.ko exit_stats=1 test_misarm=1 || result FAIL "insmod test_misarm=1"
	/kmwait_vmtest storewake >/misarm.log 2>&1 && {
		cat /misarm.log
		result FAIL "storewake passed with MONITOR armed on the wrong line"
	}
	sed 's/^/misarm: /' /misarm.log
	grep -q "the monitor did not see the store" /misarm.log ||
		result FAIL "with test_misarm=1 storewake failed for another reason"
	rmmod hwsync_mwait || result FAIL "rmmod"
	complained && result FAIL "kernel complained"
	result PASS
fi

# exit_stats=1 must load safely whether or not this CPU can classify exits
# (QEMU's MWAIT faults with ECX[0]=1: the module must notice, not oops).
mark_log
insmod /hwsync_mwait.ko exit_stats=1 || result FAIL "insmod exit_stats=1"
new_log | grep -E "hwsync_mwait: (exit_stats|/dev)"
rmmod hwsync_mwait || result FAIL "rmmod after exit_stats=1"
complained && result FAIL "kernel complained about exit_stats=1"

/kmwait_vmtest unloaded || result FAIL "kmwait_vmtest unloaded"
insmod /hwsync_mwait.ko || result FAIL "insmod"
dmesg | grep "hwsync_mwait:"
/kmwait_vmtest loaded || result FAIL "kmwait_vmtest loaded"
grep -q hwsync_mwait /proc/modules && result FAIL "the module is still loaded"
LOGMARK=0
complained && result FAIL "kernel complained"
result PASS
