# clilib.sh: what the CLI test scripts share. A script sets suite=NAME and
# sources this with its arguments in place:
#     suite=sweep
#     . "$(dirname "$0")/clilib.sh"
# Then: $bin (the binary under test, absolute), the repository as the
# working directory, $tmp (removed on exit), ok / no / skip (counted in $n
# and $fails) and expect_status STATUS DESCRIPTION COMMAND... (its stdout and
# stderr in $tmp/out and $tmp/err).
set -u
[ $# -ge 1 ] || { echo "usage: $0 BINARY" >&2; exit 2; }
bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
cd "$(dirname "$0")/.." || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cli_$suite.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT HUP INT PIPE TERM
fails=0
n=0
ok() { n=$((n + 1)); echo "ok   $suite: $1"; }
no() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $suite: $1"; }
skip() { echo "skip $suite: $1"; }
expect_status() {   # expected-status description command...
  want=$1; what=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; got=$?
  if [ "$got" = "$want" ]; then ok "$what"; else no "$what (exit $got, want $want): $(head -c 600 "$tmp/err")"; fi
}
