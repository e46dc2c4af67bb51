#!/usr/bin/env bash
# make deb, checked: scripts/deb.sh builds the four packages into OUT; lintian
# finds no error; each package holds exactly the files of tests/deb/PKG.files
# (and libhwsync-dev every public header of include/hwsync/); the control
# fields say what docs/packaging.md says (libhwloc15 listed for the shim's
# dlopen, python3-matplotlib recommended, libhwloc-dev for the -dev package,
# the DKMS package's group and udev rule).  Skips (77) without dpkg-deb.
#   test_deb_packages.sh SOURCE_DIR OUT
set -euo pipefail
src=$1 out=$2
command -v dpkg-deb >/dev/null || { echo "skip: not a Debian system"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
"$src/scripts/deb.sh" "$out" >/dev/null
ver=$(sed -n 's/^project(hwsync VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
multi=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
arch=$(dpkg --print-architecture)
deb() { case $1 in hwsync-mwait-dkms) echo "$out/${1}_${ver}_all.deb" ;; *) echo "$out/${1}_${ver}_$arch.deb" ;; esac; }

# lintian: no error (warnings are printed, not fatal)
if command -v lintian >/dev/null; then
  lint=$(lintian "$out"/*.deb 2>&1 | grep -v "running with root privileges" || true)
  [ -z "$lint" ] || echo "$lint"
  ! grep -q "^E: " <<<"$lint" || fail "lintian errors"
else
  echo "note: no lintian (scripts/deps.sh deb installs it)"
fi

# file lists
for pkg in hwsync libhwsync0 libhwsync-dev hwsync-mwait-dkms; do
  f=$(deb "$pkg")
  [ -s "$f" ] || fail "no $f"
  mapfile -t pats < <(grep -v '^#' "$src/tests/deb/$pkg.files" | sed "s/{multiarch}/$multi/g; s/{version}/$ver/g")
  mapfile -t files < <(dpkg-deb -c "$f" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./||')
  for file in "${files[@]}"; do
    ok=0
    for p in "${pats[@]}"; do
      # shellcheck disable=SC2053
      [[ $file == $p ]] && { ok=1; break; }
    done
    [ $ok = 1 ] || fail "$pkg: unexpected file $file"
  done
  for p in "${pats[@]}"; do
    ok=0
    for file in "${files[@]}"; do
      # shellcheck disable=SC2053
      [[ $file == $p ]] && { ok=1; break; }
    done
    [ $ok = 1 ] || fail "$pkg: no file for $p"
  done
done
want=$(cd "$src/include/hwsync" && ls *.h | grep -v '^kmwait_abi\.h$' | sort)
have=$(dpkg-deb -c "$(deb libhwsync-dev)" | awk '{print $6}' | sed -n 's|^\./usr/include/hwsync/||p' | grep . | sort)
[ "$want" = "$have" ] || fail "libhwsync-dev headers differ from include/hwsync: $(diff <(echo "$want") <(echo "$have") | grep '^[<>]' | tr '\n' ' ')"

# dependencies and maintainer scripts
field() { dpkg-deb -f "$(deb "$1")" "$2"; }
[[ ", $(field hwsync Depends)," == *", libhwloc15,"* ]] || fail "hwsync does not list libhwloc15: $(field hwsync Depends)"
[[ "$(field hwsync Recommends)" == *python3-matplotlib* ]] || fail "hwsync does not recommend python3-matplotlib"
[[ "$(field libhwsync-dev Depends)" == *"libhwsync0 (= $ver)"*libhwloc-dev* ]] || fail "libhwsync-dev Depends: $(field libhwsync-dev Depends)"
[[ "$(field hwsync-mwait-dkms Depends)" == *dkms* ]] || fail "the DKMS package does not depend on dkms"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
dpkg-deb -e "$(deb hwsync-mwait-dkms)" "$tmp/ctl"
grep -q "addgroup --quiet --system hwsync" "$tmp/ctl/postinst" || fail "postinst creates no group"
grep -q "the module was not built" "$tmp/ctl/postinst" || fail "postinst says nothing without headers"
dpkg-deb -x "$(deb hwsync-mwait-dkms)" "$tmp/dk"
grep -qx 'KERNEL=="hwsync-mwait", SUBSYSTEM=="misc", GROUP="hwsync", MODE="0660"' \
  "$tmp/dk/usr/lib/udev/rules.d/60-hwsync-mwait.rules" || fail "udev rule"
grep -q 'KERNEL=="hwsync-mwait", SUBSYSTEM=="misc", GROUP="hwsync", MODE="0660"' "$src/docs/kmwait.md" ||
  fail "the udev rule is not the one docs/kmwait.md documents"
grep -q '^PACKAGE_VERSION="'"$ver"'"$' "$tmp/dk/usr/src/hwsync-mwait-$ver/dkms.conf" || fail "dkms.conf version"
# the packaged module source builds as DKMS builds it, where some kernel's headers are here
kb=$(ls -d /lib/modules/*/build 2>/dev/null | head -1 || true)
if [ -n "$kb" ] && [ -e "$kb/Makefile" ]; then
  make -s -C "$kb" M="$tmp/dk/usr/src/hwsync-mwait-$ver" modules >"$tmp/kbuild.log" 2>&1 ||
    { tail -5 "$tmp/kbuild.log"; fail "the DKMS source does not build against $kb"; }
  [ -s "$tmp/dk/usr/src/hwsync-mwait-$ver/hwsync_mwait.ko" ] || fail "no hwsync_mwait.ko from the DKMS source"
else
  echo "note: no kernel headers here: the DKMS source was not built"
fi
dpkg-deb -e "$(deb libhwsync0)" "$tmp/lib"
grep -qx "libhwsync 0 libhwsync0 (>= $ver)" "$tmp/lib/shlibs" || fail "libhwsync0 shlibs"
# the installed tool looks for report.py in share/hwsync and the preload library in its directory
dpkg-deb -x "$(deb hwsync)" "$tmp/h"
grep -qx "/usr/lib/$multi/hwsync" <(strings "$tmp/h/usr/bin/hwsync") || fail "hwsync run does not look in /usr/lib/$multi/hwsync"
echo "deb_packages: ok ($(cd "$out" && ls *.deb | tr '\n' ' '))"
