#!/usr/bin/env bash
# One measured run of memcached for `hwsync compare` (scripts/programs.sh):
# start memcached on 127.0.0.1 only, in the environment we were given (under
# `hwsync compare` that is the configuration's: the shim in LD_PRELOAD and its
# HWSYNC_* variables), load it with memcslap from libmemcached-tools run
# natively (the shim is taken out of the client's environment, so only the
# server's locks change), then stop the server and wait for it, so that its
# CPU time is in our rusage.  Exit status: memcslap's.
#   scripts/memcached_load.sh PORT [memcslap options...]
set -uo pipefail
port=${1:?usage: memcached_load.sh PORT [memcslap options]}
shift
user=()
[ "$(id -u)" = 0 ] && user=(-u nobody)   # memcached refuses to run as root
memcached -l 127.0.0.1 -p "$port" -U 0 -t 2 -m 64 "${user[@]}" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null' EXIT
# wait until it accepts connections (at most about 5 s)
for _ in $(seq 50); do
  env -u LD_PRELOAD memcping --servers="127.0.0.1:$port" 2>/dev/null && break
  sleep 0.1
done
env -u LD_PRELOAD memcslap --servers="127.0.0.1:$port" "$@"
rc=$?
kill "$server"
wait "$server" 2>/dev/null
trap - EXIT
exit $rc
