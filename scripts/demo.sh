#!/usr/bin/env bash
# make demo: the main job.  For now: describe this machine (hwsync info).
set -euo pipefail
build=${1:-build}
"$build/hwsync" info
