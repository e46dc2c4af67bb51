#!/usr/bin/env bash
# Bad options of hwsync bench: non-zero exit and exactly one line on stderr
# that names the problem.  Also list/--help and a skipped placement.
set -euo pipefail
hws=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
bad() {   # bad WORD-IN-MESSAGE ARGS...
  local word=$1; shift
  local err
  if err=$("$hws" bench "$@" 2>&1 >/dev/null); then fail "accepted: $*"; fi
  [ "$(wc -l <<<"$err")" = 1 ] || fail "more than one line for '$*': $err"
  grep -qi -- "$word" <<<"$err" || fail "'$*': message lacks '$word': $err"
}
bad "unknown experiment 'nosuch'" nosuch
bad "unknown implementation 'bogus'" wake --impls bogus
bad "bogus" wake --policies bogus
bad "unknown placement 'nowhere'" atomics --placement nowhere
bad "zero threads" atomics --threads 0
bad "unknown or incomplete option" atomics --frobnicate
bad "duration" atomics --duration fast
bad "takes no --policies" atomics --policies futex
bad "unknown kernel" interference --kernels nosuch
ncpu=$(nproc)
bad "threads" atomics --threads $((ncpu + 1)) --placement core
# list and help
# not piped into grep -q: its early exit SIGPIPEs the writer, and pipefail fails
grep -q "^ *atomics" <<<"$("$hws" bench list)" || fail "bench list"
grep -q -- "--placement" <<<"$("$hws" bench --help)" || fail "bench --help"
# A placement the machine cannot give is skipped with its reason, not run another way.
if ! grep -q . <<<"$(lscpu 2>/dev/null | awk '/Thread\(s\) per core/ && $NF > 1')"; then
  out=$("$hws" bench atomics --placement smt --threads 2 --reps 1 --warmup 0 --duration 1ms)
  grep -q "skipped: .*no SMT siblings" <<<"$out" || fail "smt not skipped: $out"
fi
echo "bench options: ok"
