# Sourced by the shell tests of the shim (here and in tests/mpi) at their
# start: bash's -u and pipefail; $tmp, a temporary directory removed at exit;
# $fails, counted by fail MESSAGE (a "FAIL:" line on stderr), and pass
# MESSAGE (an "ok:" line); find_lock_kinds HWSYNC for the scripts that run a
# program under every lock kind.
set -uo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

# find_lock_kinds HWSYNC: $kinds, the lock kinds of this build as
# `HWSYNC info --json` lists them (else as `HWSYNC run --lock ?` names them),
# printed; exit 77 (skip) when the build has none.
find_lock_kinds() {
  kinds=$("$1" info --json 2>/dev/null | python3 -c '
import json, sys
try:
    l = json.load(sys.stdin).get("locks", [])
    print(" ".join(x if isinstance(x, str) else x.get("kind", x.get("name", "")) for x in l))
except Exception:
    pass' 2>/dev/null)
  if [ -z "$kinds" ]; then   # fall back to the error message that lists them
    kinds=$("$1" run --lock '?' -- true 2>&1 | sed -n 's/.*(known: \(.*\)).*/\1/p' | tr -d ,)
  fi
  [ -n "$kinds" ] && [ "$kinds" != "none in this build" ] ||
    { echo "skip: no lock kinds in this build"; exit 77; }
  echo "lock kinds: $kinds"
}
