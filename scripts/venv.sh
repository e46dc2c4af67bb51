#!/usr/bin/env bash
# Create .venv at the top of the repository with matplotlib, for `hwsync
# report` (tools/report/report.py) on a machine without Debian's
# python3-matplotlib (which `hwsync report` tries first, and scripts/deps.sh
# test|demo installs).  Idempotent: does nothing when present.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
venv="$top/.venv"
if [ -x "$venv/bin/python3" ] && "$venv/bin/python3" -c 'import matplotlib' 2>/dev/null; then
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check matplotlib
echo "venv: $venv with matplotlib" >&2
