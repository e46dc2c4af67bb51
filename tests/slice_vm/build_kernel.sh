#!/usr/bin/env bash
# A small x86-64 kernel for the time-slice extension VM test.
#   build_kernel.sh SRC OUT
# SRC: an unpacked Linux 7.x source tree (left untouched: the build goes to
# OUT with make O=OUT).  Starts from tinyconfig, switches on what the busybox
# initramfs, the serial console, the test programs and the extension need
# (ACPI: how the kernel finds the second CPU),
# and fails if CONFIG_RSEQ_SLICE_EXTENSION did not survive olddefconfig.
# Skips the build when OUT/arch/x86/boot/bzImage exists and OUT/.config is
# the one this script would write (the wanted options are kept beside it).
set -euo pipefail
src=${1:?usage: build_kernel.sh SRC OUT} out=${2:?usage: build_kernel.sh SRC OUT}
here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "SKIP: $*" >&2; exit 77; }

[ -f "$src/Makefile" ] && [ -f "$src/kernel/rseq.c" ] || skip "no kernel source tree at $src"
grep -q "config RSEQ_SLICE_EXTENSION" "$src/init/Kconfig" ||
	skip "the kernel source at $src has no RSEQ_SLICE_EXTENSION (Linux 7.0 or later needed)"
"$here/../../scripts/deps.sh" slice-vm ||
	skip "the slice-vm packages are missing and cannot be installed here (scripts/deps.sh slice-vm as root)"

# The options, y unless a value is given.
opts=(
	64BIT SMP NR_CPUS=4 PRINTK TTY SERIAL_8250 SERIAL_8250_CONSOLE
	BLK_DEV_INITRD RD_GZIP BINFMT_ELF BINFMT_SCRIPT PROC_FS PROC_SYSCTL SYSFS
	DEVTMPFS DEBUG_FS DEBUG_FS_ALLOW_ALL FUTEX EPOLL SIGNALFD TIMERFD EVENTFD
	POSIX_TIMERS HIGH_RES_TIMERS ADVISE_SYSCALLS MULTIUSER SHMEM TMPFS
	EXPERT RSEQ RSEQ_SLICE_EXTENSION RSEQ_STATS
	PREEMPT HZ_250 ACPI X86_MPPARSE
)
want=$(printf '%s\n' "${opts[@]}")

mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -f "$out/arch/x86/boot/bzImage" ] && [ -f "$out/.config" ] &&
   [ -f "$out/slice-vm.opts" ] && [ "$(cat "$out/slice-vm.opts")" = "$want" ] &&
   [ -f "$out/slice-vm.config" ] && cmp -s "$out/.config" "$out/slice-vm.config"; then
	echo "build_kernel: $out/arch/x86/boot/bzImage is up to date" >&2
	exit 0
fi

mk() { nice make -C "$src" O="$out" ARCH=x86_64 "$@"; }
log=$out/build.log
mk tinyconfig >"$log" 2>&1 || { tail -n 30 "$log" >&2; echo "FAIL: make tinyconfig" >&2; exit 1; }
args=()
for o in "${opts[@]}"; do
	case $o in
		*=*) args+=(--set-val "${o%%=*}" "${o#*=}") ;;
		*) args+=(--enable "$o") ;;
	esac
done
"$src/scripts/config" --file "$out/.config" "${args[@]}" --disable PREEMPT_NONE \
	--disable PREEMPT_VOLUNTARY --disable PREEMPT_LAZY --disable HZ_100
mk olddefconfig >>"$log" 2>&1 || { tail -n 30 "$log" >&2; echo "FAIL: make olddefconfig" >&2; exit 1; }

# Every wanted option must have stuck; the extension first, with its dependencies.
bad=0
for o in RSEQ HIGH_RES_TIMERS GENERIC_ENTRY HAVE_GENERIC_TIF_BITS RSEQ_SLICE_EXTENSION; do
	grep -qx "CONFIG_$o=y" "$out/.config" || { echo "FAIL: CONFIG_$o is not y after olddefconfig" >&2; bad=1; }
done
for o in "${opts[@]}"; do
	case $o in
		*=*) grep -qx "CONFIG_$o" "$out/.config" ;;
		*) grep -qx "CONFIG_$o=y" "$out/.config" ;;
	esac || { echo "FAIL: CONFIG_$o did not stick after olddefconfig" >&2; bad=1; }
done
[ $bad = 0 ] || exit 1
cp "$out/.config" "$out/slice-vm.config"
printf '%s\n' "$want" >"$out/slice-vm.opts.new"

echo "build_kernel: building $out/arch/x86/boot/bzImage (nice make -j2, some minutes)" >&2
if ! mk -j2 bzImage >>"$log" 2>&1; then
	tail -n 40 "$log" >&2
	echo "FAIL: kernel build (log: $log)" >&2
	exit 1
fi
mv "$out/slice-vm.opts.new" "$out/slice-vm.opts"
echo "build_kernel: $out/arch/x86/boot/bzImage ($(make -s -C "$src" O="$out" kernelrelease 2>/dev/null))" >&2
