#!/usr/bin/env bash
# make deb: build hwsync's Debian packages with dpkg tooling into OUT
# (default build/deb):
#   hwsync             the hwsync command, the LD_PRELOAD library (in a private
#                      directory), the shim's pattern program, the report scripts
#   libhwsync0         the shared library
#   libhwsync-dev      headers, static library, CMake package, pkg-config file
#   hwsync-mwait-dkms  the kmod/ module source for DKMS, its udev rule, the group
# A build tree of its own (OUT/build, installed for /usr, Debian's hardening
# flags), split by file, stripped, each package with its copyright, changelog,
# md5sums and the maintainer scripts it needs; dependencies from
# dpkg-shlibdeps plus what it cannot see (docs/packaging.md).
#   scripts/deb.sh [OUT]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$top/build/deb}" && cd "${1:-$top/build/deb}" && pwd)
"$top/scripts/deps.sh" deb
ver=$(sed -n 's/^project(hwsync VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
arch=$(dpkg --print-architecture)
multi=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
maint="hwsync maintainers <maintainers@users.noreply.a-seed-0ea0df59.example>"
bdir=$out/build
stage=$out/stage
date=$(date -R -d "@${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)}")

# ---- build and install for /usr --------------------------------------------
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
cflags="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
cxxflags="$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
ldflags=$(dpkg-buildflags --get LDFLAGS)
gen=$(command -v ninja >/dev/null && echo "-G Ninja" || true)
[ -f "$bdir/CMakeCache.txt" ] && gen=
# shellcheck disable=SC2086
cmake -S "$top" -B "$bdir" $gen -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHWS_BUILD_TESTS=OFF \
  -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_LIBDIR="lib/$multi" \
  -DHWS_PRELOAD_LIBDIR="lib/$multi/hwsync" \
  -DCMAKE_C_FLAGS="$cflags" -DCMAKE_CXX_FLAGS="$cxxflags" \
  -DCMAKE_EXE_LINKER_FLAGS="$ldflags" -DCMAKE_SHARED_LINKER_FLAGS="$ldflags" >/dev/null
cmake --build "$bdir" -j "$(nproc)" >/dev/null
rm -rf "$stage"
mkdir -p "$stage"
DESTDIR="$stage/all" cmake --install "$bdir" >/dev/null
all=$stage/all

# ---- split -------------------------------------------------------------------
mv_into() {   # PKG PATH...: move staged paths into a package tree
  local pkg=$1; shift
  for p in "$@"; do
    mkdir -p "$stage/$pkg/$(dirname "$p")"
    mv "$all/$p" "$stage/$pkg/$p"
  done
}
L=usr/lib/$multi
mv_into hwsync usr/bin/hwsync "$L/hwsync" usr/libexec/hwsync usr/share/hwsync
mv_into libhwsync0 "$L/libhwsync.so.0" "$L/libhwsync.so.$ver"
mv_into libhwsync-dev usr/include "$L/libhwsync.a" "$L/libhwsync.so" "$L/cmake" "$L/pkgconfig"
left=$(cd "$all" && find . ! -type d)
[ -z "$left" ] || { echo "deb: files in no package: $left" >&2; exit 1; }

# the module source as DKMS builds it: kmod/ and the interface header
dk=$stage/hwsync-mwait-dkms
src=$dk/usr/src/hwsync-mwait-$ver
mkdir -p "$src/include/hwsync" "$dk/usr/lib/udev/rules.d"
cp "$top/kmod/hwsync_mwait.c" "$top/kmod/Makefile" "$src/"
cp "$top/include/hwsync/kmwait_abi.h" "$src/include/hwsync/"
sed 's|-I$(src)/../include|-I$(src)/include|' "$top/kmod/Kbuild" > "$src/Kbuild"
grep -q 'I$(src)/include' "$src/Kbuild" || { echo "deb: kmod/Kbuild include path moved" >&2; exit 1; }
cat > "$src/dkms.conf" <<EOF
PACKAGE_NAME="hwsync-mwait"
PACKAGE_VERSION="$ver"
BUILT_MODULE_NAME[0]="hwsync_mwait"
DEST_MODULE_LOCATION[0]="/updates/dkms"
MAKE[0]="make -C \${kernel_source_dir} M=\${dkms_tree}/\${PACKAGE_NAME}/\${PACKAGE_VERSION}/build modules"
CLEAN="make -C \${kernel_source_dir} M=\${dkms_tree}/\${PACKAGE_NAME}/\${PACKAGE_VERSION}/build clean"
AUTOINSTALL="yes"
EOF
# docs/kmwait.md, "Permissions": members of group hwsync may open the node
echo 'KERNEL=="hwsync-mwait", SUBSYSTEM=="misc", GROUP="hwsync", MODE="0660"' \
  > "$dk/usr/lib/udev/rules.d/60-hwsync-mwait.rules"

# ---- strip as dh_strip does ------------------------------------------------------
for f in "$stage/hwsync/usr/bin/hwsync" "$stage/hwsync/usr/libexec/hwsync/"*; do
  strip --remove-section=.comment --remove-section=.note "$f"
done
for f in "$stage/hwsync/$L/hwsync/"*.so "$stage/libhwsync0/$L/libhwsync.so.$ver"; do
  strip --remove-section=.comment --remove-section=.note --strip-unneeded "$f"
done
strip --strip-debug --remove-section=.comment --remove-section=.note \
  --enable-deterministic-archives "$stage/libhwsync-dev/$L/libhwsync.a"

# ---- per package: docs, control, scripts ------------------------------------------
docs() {   # PKG LICENSE-TEXT
  local d=$stage/$1/usr/share/doc/$1
  mkdir -p "$d"
  cat > "$d/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: hwsync
Source: the hwsync source tree

Files: *
Copyright: 2025-$(date -d "$date" +%Y) the hwsync authors
License: $2
EOF
  printf 'hwsync (%s) unstable; urgency=medium\n\n  * Packaged from the source tree (make deb).\n\n -- %s  %s\n' \
    "$ver" "$maint" "$date" | gzip -9n > "$d/changelog.gz"
}
docs hwsync "none stated: the terms are those of the hwsync source tree it was built from"
docs libhwsync0 "none stated: the terms are those of the hwsync source tree it was built from"
docs libhwsync-dev "none stated: the terms are those of the hwsync source tree it was built from"
docs hwsync-mwait-dkms "GPL-2
 The module declares MODULE_LICENSE(\"GPL\"), GNU General Public License version 2.
 On Debian systems, the full text is in /usr/share/common-licenses/GPL-2."

control() {   # PKG ARCH SECTION FIELDS... (DESCRIPTION last, its first line the synopsis)
  local pkg=$1 a=$2 sec=$3; shift 3
  local dir=$stage/$pkg
  mkdir -p "$dir/DEBIAN"
  local size
  size=$(du -sk --exclude=DEBIAN "$dir" | cut -f1)
  {
    echo "Package: $pkg"
    echo "Version: $ver"
    echo "Architecture: $a"
    echo "Maintainer: $maint"
    echo "Installed-Size: $size"
    for f in "$@"; do echo "$f"; done
    echo "Section: $sec"
    echo "Priority: optional"
  } > "$dir/DEBIAN/control"
}
shdeps() {   # PKG ELF...: the shared libraries they need, as Depends
  local pkg=$1; shift
  mkdir -p "$stage/deb-src/debian"
  (cd "$stage/deb-src" &&
   printf 'Source: hwsync\n\nPackage: %s\nArchitecture: any\n' "$pkg" > debian/control &&
   LD_LIBRARY_PATH="$stage/libhwsync0/$L" dpkg-shlibdeps -O -S"$stage/libhwsync0" \
     -l"$stage/libhwsync0/$L" "$@" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
}

# libhwsync0: the library's shlibs (so that dpkg-shlibdeps finds it) and ldconfig
mkdir -p "$stage/libhwsync0/DEBIAN"
echo "libhwsync 0 libhwsync0 (>= $ver)" > "$stage/libhwsync0/DEBIAN/shlibs"
echo "activate-noawait ldconfig" > "$stage/libhwsync0/DEBIAN/triggers"
control libhwsync0 "$arch" libs \
  "Depends: $(shdeps libhwsync0 "$stage/libhwsync0/$L/libhwsync.so.$ver")" \
  "Multi-Arch: same" \
  "Description: thread synchronization that knows the hardware it waits on (library)
 hwsync provides locks, barriers, events and condition waits over selectable
 wait policies (spinning, PAUSE, futex, UMWAIT/TPAUSE, MWAITX, WFE and
 MONITOR/MWAIT through a kernel module), chosen for the machine's topology.
 .
 This package contains the shared library."

# hwsync: the preload library loads hwloc with dlopen, which dpkg-shlibdeps
# cannot see: libhwloc15 is listed by hand (once, whatever the tool links)
hdeps=$(shdeps hwsync "$stage/hwsync/usr/bin/hwsync" "$stage/hwsync/$L/hwsync/libhwsync-preload.so" \
        "$stage/hwsync/usr/libexec/hwsync/"* | sed 's/, *libhwloc15[^,]*//; s/^libhwloc15[^,]*, *//')
control hwsync "$arch" utils \
  "Depends: $hdeps, libhwloc15" \
  "Recommends: python3, python3-matplotlib" \
  "Description: thread synchronization that knows the hardware it waits on (tools)
 hwsync provides locks, barriers, events and condition waits over selectable
 wait policies, chosen for the machine's topology.
 .
 This package contains the hwsync command: info (what this machine can do),
 bench (the experiments of the papers hwsync reproduces) and report (their
 figures; needs python3-matplotlib), run and compare (run an unmodified
 program with its pthread and OpenMP synchronization replaced through the
 LD_PRELOAD library shipped here)."

control libhwsync-dev "$arch" libdevel \
  "Depends: libhwsync0 (= $ver), libhwloc-dev" \
  "Multi-Arch: same" \
  "Description: thread synchronization that knows the hardware it waits on (development)
 hwsync provides locks, barriers, events and condition waits over selectable
 wait policies, chosen for the machine's topology.
 .
 This package contains the headers, the static library, the CMake package
 (find_package(hwsync)) and the pkg-config file (hwsync.pc)."

control hwsync-mwait-dkms all kernel \
  "Depends: dkms, adduser" \
  "Description: kernel module that runs MONITOR/MWAIT for hwsync's kmwait policy (DKMS)
 hwsync_mwait lets user threads wait with MONITOR/MWAIT, which user space may
 not execute, through the device /dev/hwsync-mwait; hwsync's kmwait wait
 policy uses it.  This package builds it with DKMS, installs a udev rule that
 gives the group hwsync read and write access to the device, and creates that
 group."

cat > "$dk/DEBIAN/postinst" <<EOF
#!/bin/sh
# Create the device group (docs/kmwait.md, "Permissions"), register the module
# source with DKMS and build it for the running kernel when its headers are
# there; without them the package installs all the same and says so.
set -e
name=hwsync-mwait
version=$ver
if [ "\$1" = configure ]; then
	getent group hwsync >/dev/null || addgroup --quiet --system hwsync
	dkms status -m \$name -v \$version 2>/dev/null | grep -q . || dkms add -m \$name -v \$version >/dev/null
	kernel=\$(uname -r)
	if [ -e "/lib/modules/\$kernel/build/Makefile" ]; then
		if dkms build -m \$name -v \$version -k "\$kernel" && dkms install -m \$name -v \$version -k "\$kernel"; then
			echo "hwsync-mwait-dkms: built and installed hwsync_mwait for kernel \$kernel (load it: modprobe hwsync_mwait)"
		else
			echo "hwsync-mwait-dkms: the module was not built for kernel \$kernel: the build failed (see dkms status and /var/lib/dkms/\$name/\$version/build/make.log)"
		fi
	else
		echo "hwsync-mwait-dkms: the module was not built: no headers for the running kernel \$kernel (/lib/modules/\$kernel/build is missing); install linux-headers-\$kernel, then run: dkms autoinstall"
	fi
fi
exit 0
EOF
cat > "$dk/DEBIAN/prerm" <<EOF
#!/bin/sh
set -e
if [ "\$1" = remove ] || [ "\$1" = upgrade ] || [ "\$1" = deconfigure ]; then
	dkms remove -m hwsync-mwait -v $ver --all >/dev/null 2>&1 || true
fi
exit 0
EOF
chmod 755 "$dk/DEBIAN/postinst" "$dk/DEBIAN/prerm"

# ---- build the .deb files -------------------------------------------------------
rm -f "$out"/*.deb
for pkg in hwsync libhwsync0 libhwsync-dev hwsync-mwait-dkms; do
  d=$stage/$pkg
  find "$d" -path "$d/DEBIAN" -prune -o -type d -exec chmod 755 {} +
  find "$d" -path "$d/DEBIAN" -prune -o -type f -exec chmod go-w {} +
  (cd "$d" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
     xargs -0 -r md5sum > DEBIAN/md5sums)
  dpkg-deb --root-owner-group -Zxz --build "$d" "$out" >/dev/null
done
ls "$out"/*.deb
