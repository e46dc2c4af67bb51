#!/usr/bin/env bash
# kmod_bochs: does a store, not the next interrupt, end the driver's MWAIT?
#   bochs_test.sh SRCROOT WORKDIR KMWAIT_VMTEST
# QEMU's software MWAIT ignores the monitored line, so kmod_qemu cannot tell
# a correctly armed monitor from a wrong one.  Bochs models the monitor (a
# write to the armed line ends MWAIT), so this boots Debian's kernel there,
# from an isolinux CD image, with two CPUs of a model that has MONITOR/MWAIT
# (Haswell: Debian 12's kernel stops early on Bochs' tigerlake and ryzen),
# and runs `kmwait_vmtest storewake` with the module's exit statistics on:
# for every line of a mapped page and every line of a pinned user page, the
# MWAIT that follows the store must end without an interrupt.  Then it loads
# the module with test_misarm=1 (MONITOR on the line next door) and requires
# the same test to fail.  Slow: Bochs interprets every instruction (the
# kernel's own decompression alone is several billion), so the run takes
# about 3 minutes.  Installs its Debian packages with scripts/deps.sh kmod-bochs (as
# root) and skips (77) with one line when they are missing all the same.
set -euo pipefail
root=$1 work=$2 vmtest=$3
. "$root/tests/kmod/common.sh"
if ! "$root/scripts/deps.sh" kmod-bochs; then
	skip "the Bochs test's packages are missing and cannot be installed here" \
	     "(run scripts/deps.sh kmod-bochs as root)"
fi
need() { command -v "$1" >/dev/null || skip "no $1 (scripts/deps.sh kmod-bochs installs it)"; }
need bochs
need xorriso
need script
need cpio
isolinux=/usr/lib/ISOLINUX/isolinux.bin
ldlinux=/usr/lib/syslinux/modules/bios/ldlinux.c32
bios=/usr/share/bochs/BIOS-bochs-latest
vgabios=/usr/share/bochs/VGABIOS-lgpl-latest
for f in "$isolinux" "$ldlinux" "$bios" "$vgabios"; do
	[ -r "$f" ] || skip "no $f (scripts/deps.sh kmod-bochs installs it)"
done
[ -e /usr/lib/x86_64-linux-gnu/bochs/plugins/libbx_term_gui.so.0.0.0 ] ||
	skip "no Bochs term display (bochs-term; scripts/deps.sh kmod-bochs installs it)"
find_kernel image || skip "no linux-headers-*-amd64 with a matching /boot/vmlinuz"
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
	skip "no static /bin/busybox (busybox-static)"

build_module "$root" "$work/module"
make_initramfs "$root" "$work" "$vmtest"
iso=$work/iso
rm -rf "$iso" && mkdir -p "$iso/isolinux"
cp "$isolinux" "$ldlinux" "$iso/isolinux/"
cp "/boot/vmlinuz-$KVER" "$iso/isolinux/vmlinuz"
cp "$work/initramfs.cpio.gz" "$iso/isolinux/initrd.gz"
# mitigations=off: fewer MSR writes and barriers for Bochs to interpret.
cat >"$iso/isolinux/isolinux.cfg" <<EOF
default kmod
prompt 0
timeout 0
label kmod
  kernel vmlinuz
  append initrd=initrd.gz console=ttyS0,115200 panic=-1 oops=panic softlockup_panic=1 rdinit=/init loglevel=4 mitigations=off hwsync_storewake
EOF
xorriso -as mkisofs -quiet -o "$work/boot.iso" -b isolinux/isolinux.bin -c isolinux/boot.cat \
	-no-emul-boot -boot-load-size 4 -boot-info-table "$iso" 2>/dev/null

# A minimal PC: 2 CPUs, 256 MiB, the CD, COM1 into a file.  Debian's Bochs
# has no headless display, so the term display runs on a pseudo-terminal
# (script); its debugger stops before the first instruction, hence -rc "c".
cpu_model=${HWS_BOCHS_CPU:-corei7_haswell_4770}
cat >"$work/bochsrc" <<EOF
config_interface: textconfig
display_library: term
romimage: file=$bios
vgaromimage: file=$vgabios
cpu: model=$cpu_model, count=2, ips=50000000, reset_on_triple_fault=0
memory: guest=256, host=256
pci: enabled=1, chipset=i440fx
ata0-master: type=cdrom, path=$work/boot.iso, status=inserted
boot: cdrom
com1: enabled=1, mode=file, dev=$work/serial.log
clock: sync=none, time0=local
mouse: enabled=0
speaker: enabled=0
log: $work/bochs.log
panic: action=fatal
error: action=ignore
info: action=ignore
debug: action=ignore
EOF
echo c >"$work/debugger.rc"
rm -f "$work/serial.log"
limit=${HWS_BOCHS_TIMEOUT:-1080}
# kill_tree PID: PID and its descendants, by id (Bochs runs in script's own
# session and ignores SIGTERM).
kill_tree() {
	local c
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill_tree "$c"; done
	kill -KILL "$1" 2>/dev/null || true
}
t0=$SECONDS rc=0 why=
(cd "$work" && exec script -qfec "bochs -q -f $work/bochsrc -rc $work/debugger.rc" \
	/dev/null </dev/null >"$work/term.log" 2>&1) &
pid=$!
trap 'kill_tree $pid' EXIT
# The guest powers off when done; Bochs may stay in its debugger after
# that, so stop it once the result line is out.
while kill -0 "$pid" 2>/dev/null; do
	if grep -q "^KMOD-VM-RESULT" "$work/serial.log" 2>/dev/null; then
		sleep 5
		break
	fi
	if [ $((SECONDS - t0)) -ge "$limit" ]; then
		why="Bochs did not finish within $limit s (HWS_BOCHS_TIMEOUT)"
		break
	fi
	sleep 2
done
kill_tree "$pid"
wait "$pid" 2>/dev/null || rc=$?
trap - EXIT
out=$(tr -d '\r' <"$work/serial.log" 2>/dev/null || true)
grep -E "KMOD-VM|storewake|misarm|hwsync|CHECK|Kernel panic|BUG" <<<"$out" >&2 || true
echo "kmod_bochs: bochs ($cpu_model x2) stopped (status $rc) after $((SECONDS - t0)) s (console: $work/serial.log)" >&2
if grep -q "^KMOD-VM-RESULT PASS" <<<"$out"; then
	echo "kmod_bochs: PASS (kernel $KVER)"
	exit 0
fi
[ -n "$why" ] && echo "FAIL: $why" >&2
echo "FAIL: no PASS marker; last lines of the console:" >&2
tail -n 30 <<<"$out" >&2
exit 1
