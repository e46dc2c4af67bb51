#!/bin/sh
# /init of the time-slice extension VM (tests/slice_vm/slice_vm_test.sh).
# Each step prints its output prefixed with its name, then "STEP-RC NAME RC";
# the kernel's rseq counters are printed as "STATS WHEN NAME VALUE" around
# the steps that should ask for extensions.  Ends with "SLICE-VM-DONE", then
# powers off (reboot -f: qemu runs with -no-reboot).
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /tmp
echo 4 > /proc/sys/kernel/printk     # keep the console for our output

D=/sys/kernel/debug/rseq
stats() {   # WHEN
	if [ -r $D/stats ]; then
		sed "s/^\([a-z]*\): *\([0-9]*\)$/STATS $1 \1 \2/" $D/stats
	else
		echo "STATS $1 none"
	fi
}
step() {    # NAME SECONDS COMMAND...: OUT/NAME.out holds the output
	name=$1 secs=$2
	shift 2
	echo "== STEP $name: $*"
	timeout "$secs" "$@" > /tmp/$name.out 2>&1
	rc=$?
	sed "s/^/$name: /" /tmp/$name.out
	echo "STEP-RC $name $rc"
}
same() {    # NAME A B: the outputs of steps A and B are equal
	if cmp -s /tmp/$2.out /tmp/$3.out; then
		echo "SAME $1 yes"
	else
		echo "SAME $1 no"
		diff /tmp/$2.out /tmp/$3.out | head -n 20 | sed "s/^/$1: /"
	fi
}

echo "SLICE-VM kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"
echo "SLICE-VM slice_ext_nsec $(cat $D/slice_ext_nsec 2>/dev/null || echo none)"

# 1. The extension from a program of our own (its own rseq areas).
stats before-vmtest
step vmtest 120 env GLIBC_TUNABLES=glibc.pthread.rseq=0 /slice_vmtest 1.5 20
stats after-vmtest

H=/hws
if [ -x $H/hwsync ]; then
	# 2. The shim with this image's own C library (the build machine's).
	step v1-probe 30 $H/rseq_probe
	step v1-info 60 $H/hwsync info
	grep -i slice /tmp/v1-info.out | sed 's/^/v1-info-slice: /'
	# the detection's unit test: hwsync agrees with the kernel's answers
	step v1-unit 60 $H/test_rseq_slice
	step v1-native 60 $H/hwsync-shim-patterns spin-oversub 50000000 0,1
	stats before-v1-shim
	step v1-shim 60 env LD_PRELOAD=$H/libhwsync-preload.so \
		$H/hwsync-shim-patterns spin-oversub 50000000 0,1
	stats after-v1-shim
fi

if [ -x $H/hwsync ] && [ -d /sid ]; then
	# 3. The same binaries through another C library's loader.
	SLD=$(ls /sid/usr/lib64/ld-linux-x86-64.so.2 /sid/lib64/ld-linux-x86-64.so.2 2>/dev/null | head -n 1)
	SLP=/sid/usr/lib/x86_64-linux-gnu:/sid/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu
	S="$SLD --library-path $SLP"   # no blanks in these paths
	step sid-probe 30 $S $H/rseq_probe
	step sid-info 60 $S $H/hwsync info
	grep -i slice /tmp/sid-info.out | sed 's/^/sid-info-slice: /'
	step sid-unit 60 $S $H/test_rseq_slice
	stats before-sid-native-oversub
	step sid-native-oversub 120 $S $H/hwsync-shim-patterns spin-oversub 500000000 0,1
	stats after-sid-native-oversub
	stats before-sid-oversub
	step sid-shim-oversub 120 env LD_PRELOAD=$H/libhwsync-preload.so \
		$S $H/hwsync-shim-patterns spin-oversub 500000000 0,1
	stats after-sid-oversub
	# the shim told not to ask: no grants expected
	stats before-sid-shim-off-oversub
	step sid-shim-off-oversub 120 env LD_PRELOAD=$H/libhwsync-preload.so HWSYNC_SLICE=0 \
		$S $H/hwsync-shim-patterns spin-oversub 500000000 0,1
	stats after-sid-shim-off-oversub
	step sid-native-yield8 120 $S $H/hwsync-shim-patterns mutex-yield8-4 500000000 0,1
	stats before-sid-yield8
	step sid-shim-yield8 120 env LD_PRELOAD=$H/libhwsync-preload.so \
		$S $H/hwsync-shim-patterns mutex-yield8-4 500000000 0,1
	stats after-sid-yield8
	step sid-native-conform 120 $S $H/preload_conform
	stats before-sid-conform
	step sid-shim-conform 120 env LD_PRELOAD=$H/libhwsync-preload.so \
		$S $H/preload_conform
	stats after-sid-conform
	same sid-conform sid-native-conform sid-shim-conform
	# the longest grant the kernel allows (50 us against 5 us by default)
	if echo 50000 > $D/slice_ext_nsec 2>/dev/null; then
		echo "SLICE-VM slice_ext_nsec $(cat $D/slice_ext_nsec)"
		stats before-sid-oversub-50us
		step sid-shim-oversub-50us 120 env LD_PRELOAD=$H/libhwsync-preload.so \
			$S $H/hwsync-shim-patterns spin-oversub 500000000 0,1
		stats after-sid-oversub-50us
		stats before-sid-yield8-50us
		step sid-shim-yield8-50us 120 env LD_PRELOAD=$H/libhwsync-preload.so \
			$S $H/hwsync-shim-patterns mutex-yield8-4 500000000 0,1
		stats after-sid-yield8-50us
		echo 5000 > $D/slice_ext_nsec
	fi
	step sid-shim-conform-stats 120 env LD_PRELOAD=$H/libhwsync-preload.so HWSYNC_STATS=1 \
		$S $H/preload_conform
fi

dmesg | grep -E "BUG:|WARNING:|Oops|Call Trace|segfault|soft lockup|rcu.*stall" | sed 's/^/KERNEL-LOG: /'
echo "SLICE-VM-DONE"
reboot -f
sleep 5
