# Helpers for the bench smoke tests (sourced): $HWSYNC, $PY, $CHECK, $T (tmp dir).
HWSYNC=$1
PY=$2
CHECK=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A bad option: exit status 2 and exactly one line on stderr.
expect_error() {
	local rc=0
	"$HWSYNC" bench "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 2 ] || fail "hwsync bench $*: exit $rc, expected 2"
	[ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err" >&2; fail "hwsync bench $*: not one line"; }
}

# --help: the sections a man page has, exit 0.
expect_help() {
	"$HWSYNC" bench "$1" --help >"$T/help" || fail "$1 --help failed"
	for s in NAME DESCRIPTION METRICS 'EXPERIMENT OPTIONS' IMPLEMENTATIONS; do
		grep -q "^$s" "$T/help" || fail "$1 --help: no $s section"
	done
}
