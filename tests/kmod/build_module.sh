#!/usr/bin/env bash
# kmod_build: build kmod/hwsync_mwait.ko against Debian's linux-headers-amd64
# with the kernel's extra warnings (W=1), warnings as errors.
#   build_module.sh SRCROOT OUTDIR
set -euo pipefail
root=$1 out=$2
. "$root/tests/kmod/common.sh"
kmod_deps "$root"
find_kernel "" || skip "no /usr/src/linux-headers-*-amd64 after scripts/deps.sh kmod"
build_module "$root" "$out"
modinfo "$out/hwsync_mwait.ko" | grep -E "^(vermagic|license|parm):" 
echo "kmod_build: hwsync_mwait.ko built against $KVER with W=1, no warnings"
