#!/usr/bin/env bash
# The packages as a Debian 12 user gets them: a fresh bookworm chroot
# (debootstrap, minbase), `apt-get install ./*.deb` resolving the
# dependencies from Debian's archive, then:
#   * the DKMS package installs although the running kernel has no headers
#     there, says the module was not built and why, and creates group hwsync;
#   * `hwsync info` works, `hwsync run` finds the preload library;
#   * `hwsync report` without matplotlib says to install python3-matplotlib
#     (never a source-tree venv), and works once what hwsync Recommends is in;
#   * a consumer builds against libhwsync-dev with CMake and with pkg-config.
# Recommends are installed in a second step (APT::Install-Recommends=false
# first): dkms recommends kernel headers, which would build the module for
# the chroot's kernel rather than show the missing-headers case, and make the
# test slower.  The minbase root and apt's downloads are cached in CACHE, so a
# second run does not fetch them again.  Root only; skips (77) without root,
# debootstrap or Debian's archive.
#   test_deb_install.sh DEBS_DIR CACHE_DIR SOURCE_DIR
set -euo pipefail
debs=$1 cache=$2 src=$3
[ "$(id -u)" = 0 ] || { echo "skip: needs root (chroot, mounts)"; exit 77; }
command -v debootstrap >/dev/null || { echo "skip: no debootstrap (scripts/deps.sh test)"; exit 77; }
ls "$debs"/*.deb >/dev/null 2>&1 || { echo "FAIL: no .deb files in $debs (make deb)"; exit 1; }
mirror=${HWS_DEB_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$cache/apt-archives/partial"
base=$cache/bookworm-minbase.tar.gz
root=$(mktemp -d "$cache/root.XXXXXX")
mounts=()
cleanup() {
  set +e
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}"; done
  # never remove through a mount that is still there
  if ! grep -q " $root/" /proc/mounts; then rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
t0=$SECONDS

# ---- the chroot: a cached minbase tree, or debootstrap once ------------------------
if [ -s "$base" ]; then
  tar -C "$root" -xzf "$base"
else
  if ! debootstrap --variant=minbase bookworm "$root" "$mirror" > "$cache/debootstrap.log" 2>&1; then
    grep -q "Failed getting release file\|Couldn't download\|Temporary failure resolving" "$cache/debootstrap.log" &&
      { echo "skip: Debian's archive is not reachable ($mirror)"; exit 77; }
    tail -5 "$cache/debootstrap.log"; fail "debootstrap"
  fi
  tar -C "$root" --one-file-system -czf "$base.tmp" . && mv "$base.tmp" "$base"
fi
echo "deb_install: chroot ready after $((SECONDS - t0)) s"
mnt() { mount "$@"; mounts+=("${@: -1}"); }
mnt -t proc proc "$root/proc"
mnt --bind /sys "$root/sys"
mnt --bind /dev "$root/dev"
mnt --bind /dev/pts "$root/dev/pts"
mnt --bind "$cache/apt-archives" "$root/var/cache/apt/archives"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
echo "deb $mirror bookworm main" > "$root/etc/apt/sources.list"
# keep what apt downloads (the cache is reused by the next run)
echo 'Binary::apt::APT::Keep-Downloaded-Packages "true";' > "$root/etc/apt/apt.conf.d/01keep"
rm -f "$root/etc/apt/apt.conf.d/docker-clean"
mkdir -p "$root/tmp/debs" "$root/tmp/consumer"
cp "$debs"/*.deb "$root/tmp/debs/"
cp "$src/tests/install/consumer/"* "$root/tmp/consumer/"
cp "$src/tests/report/data/a.json" "$root/tmp/a.json"
inroot() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
         DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }
apt() { inroot apt-get -y -q -o APT::Install-Recommends=false -o Dpkg::Use-Pty=0 "$@"; }

apt update > "$cache/apt-update.log" 2>&1 || { tail -5 "$cache/apt-update.log"; fail "apt-get update"; }

# ---- apt-get install ./*.deb --------------------------------------------------------------
if ! inroot sh -c 'cd /tmp/debs && apt-get -y -q -o APT::Install-Recommends=false -o Dpkg::Use-Pty=0 install ./*.deb' \
     > "$cache/install.log" 2>&1; then
  tail -20 "$cache/install.log"; fail "apt-get install ./*.deb"
fi
echo "deb_install: packages installed after $((SECONDS - t0)) s"
for p in hwsync libhwsync0 libhwsync-dev hwsync-mwait-dkms libhwloc15 dkms; do
  inroot dpkg-query -W -f='${Status}\n' "$p" | grep -q "install ok installed" || fail "$p is not installed"
done
grep -q "hwsync-mwait-dkms: the module was not built: no headers for the running kernel $(uname -r)" \
  "$cache/install.log" || { grep -i "hwsync-mwait" "$cache/install.log"; fail "no word on the module not built"; }
inroot getent group hwsync >/dev/null || fail "group hwsync not created"
inroot dkms status | grep -q "^hwsync-mwait/[0-9.]*: added" || { inroot dkms status; fail "module source not added to DKMS"; }
grep -q 'GROUP="hwsync", MODE="0660"' "$root/usr/lib/udev/rules.d/60-hwsync-mwait.rules" || fail "udev rule"

# ---- the tool ----------------------------------------------------------------------------
inroot hwsync info > "$cache/info.log" 2>&1 || { cat "$cache/info.log"; fail "hwsync info"; }
grep -q "^CPU" "$cache/info.log" || { head "$cache/info.log"; fail "hwsync info says nothing of the CPU"; }
inroot hwsync run --lock mcs -- /bin/true || fail "hwsync run (the preload library)"
if err=$(inroot hwsync report /tmp/a.json -o /tmp/rep 2>&1); then fail "report without matplotlib"; fi
[ "$err" = "hwsync report: no Python 3 with matplotlib; install it with: apt-get install python3-matplotlib" ] ||
  fail "report without matplotlib said: $err"
rec=$(inroot dpkg-query -W -f='${Recommends}' hwsync | tr -d ,)
case " $rec " in *" python3-matplotlib "*) ;; *) fail "hwsync does not recommend python3-matplotlib: $rec" ;; esac
# shellcheck disable=SC2086
apt install $rec > "$cache/recommends.log" 2>&1 || { tail -5 "$cache/recommends.log"; fail "installing $rec"; }
inroot hwsync report /tmp/a.json -o /tmp/rep > "$cache/report.log" 2>&1 || { cat "$cache/report.log"; fail "hwsync report"; }
for f in report.html report.md figures.json; do [ -s "$root/tmp/rep/$f" ] || fail "report: no $f"; done
ls "$root/tmp/rep/"*.png >/dev/null || fail "report: no figure"
echo "deb_install: tool checked after $((SECONDS - t0)) s"

# ---- a consumer of libhwsync-dev -----------------------------------------------------------
apt install cmake make gcc libc6-dev pkg-config > "$cache/build-tools.log" 2>&1 ||
  { tail -5 "$cache/build-tools.log"; fail "installing cmake and pkg-config"; }
inroot sh -c 'cmake -S /tmp/consumer -B /tmp/cm >/dev/null && cmake --build /tmp/cm >/dev/null && /tmp/cm/consumer' |
  grep -q "consumer: ok" || fail "consumer built with CMake"
inroot sh -c 'cc -std=gnu11 -o /tmp/pc /tmp/consumer/consumer.c $(pkg-config --cflags --libs hwsync) && /tmp/pc' |
  grep -q "consumer: ok" || fail "consumer built with pkg-config"
inroot sh -c 'cc -std=gnu11 -static-libgcc -o /tmp/pcs /tmp/consumer/consumer.c $(pkg-config --cflags hwsync) \
          /usr/lib/*/libhwsync.a $(pkg-config --libs hwloc) -lpthread && /tmp/pcs' |
  grep -q "consumer: ok" || fail "consumer linked with the static library"
echo "deb_install: ok ($((SECONDS - t0)) s)"
