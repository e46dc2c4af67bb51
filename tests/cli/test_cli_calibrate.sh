#!/usr/bin/env bash
# hwsync info --calibrate: measures, writes the per-machine cache where
# HWSYNC_CACHE_DIR says (creating it), and hwsync info then reports reading
# it; an unwritable place is one line and exit status 1, no file left behind.
set -euo pipefail
hws=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

export HWSYNC_CACHE_DIR=$tmp/cache/hwsync
"$hws" info | grep -q "cache: none at $HWSYNC_CACHE_DIR/adaptive-" || fail "info without a cache"
out=$("$hws" info --calibrate) || fail "--calibrate failed"
file=$(sed -n 's/^wrote \([^:]*\): futex hand-off [1-9][0-9]* ns.*/\1/p' <<<"$out")
[ -n "$file" ] || fail "--calibrate printed: $out"
[ "$(dirname "$file")" = "$HWSYNC_CACHE_DIR" ] || fail "cache written to $file"
[ "$(head -1 "$file")" = "hwsync-adaptive-calibration 1" ] || fail "cache header: $(head -1 "$file")"
grep -q '^key ' "$file" && grep -q '^handoff_ns [1-9]' "$file" || fail "cache content: $(cat "$file")"
[ "$(stat -c %a "$HWSYNC_CACHE_DIR")" = 700 ] || fail "cache directory is not private"
"$hws" info | grep -qF "cache: read $file (written for this machine)" || fail "info does not read the cache"
"$hws" info --json | python3 -c '
import json, sys
a = json.load(sys.stdin)["adaptive"]
assert a["source"] == "measured" and a["cache"].startswith("read "), a' || fail "info --json"

# XDG_CACHE_HOME when there is no override.
XDG_CACHE_HOME=$tmp/xdg HWSYNC_CACHE_DIR= "$hws" info --calibrate | grep -q "^wrote $tmp/xdg/hwsync/adaptive-" ||
  fail "--calibrate ignores XDG_CACHE_HOME"

# Unwritable: below a regular file.
touch "$tmp/file"
if err=$(HWSYNC_CACHE_DIR=$tmp/file/sub "$hws" info --calibrate 2>&1 >/dev/null); then
  fail "--calibrate below a file succeeded"
fi
[ "$(wc -l <<<"$err")" = 1 ] || fail "unwritable: more than one line: $err"
grep -q "cannot create the cache directory $tmp/file/sub" <<<"$err" || fail "unwritable: $err"

# --calibrate goes alone.
if "$hws" info --calibrate --json >/dev/null 2>&1; then fail "--calibrate --json accepted"; fi
"$hws" info --help | grep -q -- '--calibrate' || fail "info --help lacks --calibrate"
echo "cli_calibrate: ok"
