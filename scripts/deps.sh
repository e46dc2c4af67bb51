#!/usr/bin/env bash
# Make sure the Debian packages a make target needs are present.
#   scripts/deps.sh build|test|demo|deb|tsan|arm64|kmod|kmod-bochs|slice-vm|programs
# As root with apt-get available, installs what is missing; otherwise stops
# with a message naming the packages to install.
set -euo pipefail
what=${1:-build}
pkgs=(cmake gcc g++ make pkg-config libhwloc-dev hwloc-nox)
case "$what" in
  build) ;;
  # python3-matplotlib: `hwsync report` (tools/report); chromium: the report's
  # browser test; the deb tools: `make deb`, lintian and the chroot install test;
  # Open MPI: the shim under MPI ranks (tests/mpi); the clients label: CPython's
  # thread tests (run with python3.11), stress-ng, sysbench, GLib's installed
  # tests (the GRWLock test, tests/clients)
  test)  pkgs+=(libck-dev libgomp1 python3 python3-venv python3-matplotlib chromium
                xz-utils zstd strace binutils dpkg-dev fakeroot lintian debootstrap
                openmpi-bin libopenmpi-dev
                python3.11 libpython3.11-testsuite stress-ng sysbench libglib2.0-tests) ;;
  demo)  pkgs+=(libck-dev libgomp1 python3 python3-matplotlib) ;;
  deb)   pkgs+=(dpkg-dev fakeroot lintian) ;;
  tsan)  pkgs+=(clang libclang-rt-dev) ;;   # libclang-rt-dev: the TSan runtime (a Recommends)
  arm64) pkgs+=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user) ;;
  kmod)  pkgs+=(linux-headers-amd64 linux-image-amd64 qemu-system-x86 busybox-static cpio kmod) ;;
  kmod-bochs) pkgs+=(linux-headers-amd64 linux-image-amd64 busybox-static cpio kmod
                     bochs bochs-term bochsbios vgabios isolinux syslinux-common xorriso bsdutils) ;;
  # tests/slice_vm: a small kernel built from a Linux 7.x source tree with the
  # rseq time-slice extension, booted under qemu with a busybox initramfs
  slice-vm) pkgs+=(xz-utils flex bison bc libelf-dev libssl-dev
                   qemu-system-x86 busybox-static cpio) ;;
  # the third-party programs scripts/programs.sh measures with hwsync compare
  programs) pkgs+=(pigz xz-utils sysbench memcached libmemcached-tools rocksdb-tools
                   python3-numpy libopenblas0-openmp) ;;
  *) echo "deps.sh: unknown target '$what' (build, test, demo, deb, tsan, arm64, kmod, kmod-bochs, slice-vm, programs)" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  # Refresh the package lists once if an install fails on a stale list.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
    apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  }
else
  echo "hwsync needs these Debian packages: ${missing[*]}" >&2
  echo "install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
