# Shared by the kmod test scripts (sourced).  Sets KVER and KDIR: the Debian
# amd64 kernel whose headers are installed (and, with need_image, whose
# vmlinuz too), newest first.  Not `uname -r`: that is the host's kernel.
skip() { echo "SKIP: $*" >&2; exit 77; }

kmod_deps() {
	local root=$1
	if ! "$root/scripts/deps.sh" kmod; then
		skip "the kmod packages are missing and cannot be installed here" \
		     "(run scripts/deps.sh kmod as root)"
	fi
}

find_kernel() {
	local need_image=$1 d v
	KVER= KDIR=
	for d in $(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -rV); do
		v=${d#/usr/src/linux-headers-}
		[ -f "$d/Makefile" ] || continue
		if [ -n "$need_image" ] && [ ! -r "/boot/vmlinuz-$v" ]; then
			continue
		fi
		KVER=$v KDIR=$d
		return 0
	done
	return 1
}

# build_module SRCROOT OUTDIR: hwsync_mwait.ko in OUTDIR, W=1, warnings fatal.
build_module() {
	local root=$1 out=$2 log
	rm -rf "$out" && mkdir -p "$out/kmod" "$out/include/hwsync"
	# the module's Kbuild finds the interface header at ../include
	cp "$root"/kmod/hwsync_mwait.c "$root"/kmod/Kbuild "$out"/kmod/
	cp "$root"/include/hwsync/kmwait_abi.h "$out"/include/hwsync/
	log=$out/build.log
	if ! make -C "$KDIR" M="$out/kmod" W=1 KCFLAGS=-Werror modules >"$log" 2>&1; then
		cat "$log" >&2
		echo "FAIL: module build against $KDIR" >&2
		return 1
	fi
	if grep -q "warning:" "$log"; then
		cat "$log" >&2
		echo "FAIL: the module build has warnings" >&2
		return 1
	fi
	cp "$out/kmod/hwsync_mwait.ko" "$out/"
}

# make_initramfs SRCROOT WORK VMTEST: WORK/initramfs.cpio.gz with a static
# busybox, vm_init.sh as /init, WORK/module/hwsync_mwait.ko and VMTEST.
make_initramfs() {
	local root=$1 work=$2 vmtest=$3 d=$2/initramfs
	rm -rf "$d" && mkdir -p "$d"/{bin,dev,proc,sys}
	cp /bin/busybox "$d/bin/"
	ln -s busybox "$d/bin/sh"
	cp "$work/module/hwsync_mwait.ko" "$vmtest" "$d/"
	cp "$root/tests/kmod/vm_init.sh" "$d/init"
	chmod +x "$d/init"
	(cd "$d" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initramfs.cpio.gz"
}
