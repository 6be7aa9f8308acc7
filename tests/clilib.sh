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

# poll COND ALIVE: evaluate the shell command COND every 0.1 s until it holds
# (status 0), or until ALIVE fails, i.e. the process that would make COND
# hold is gone (then COND is tried once more). Nothing here is a deadline on
# speed: a slow machine only polls longer. A guard of 6000 polls (ten
# minutes of sleeping) stops a test whose process hangs alive (status 1).
poll() {
  _guard=6000
  while ! eval "$1"; do
    eval "$2" || { eval "$1"; return; }
    _guard=$((_guard - 1))
    [ $_guard -gt 0 ] || return 1
    sleep 0.1
  done
}

# A private tmux server in the foreground on $tmp/sock (-D: it needs no
# daemon(), which fails where /dev/null is not a device); T runs tmux
# against it. tmux_server fails when the server exits before its socket
# appears; tmux_server_stop stops it by its pid.
T() { tmux -S "$tmp/sock" -f "$tmp/tmux.conf" "$@"; }
tmux_server() {
  : >"$tmp/tmux.conf"
  tmux -S "$tmp/sock" -f "$tmp/tmux.conf" -D >"$tmp/tmux.log" 2>&1 &
  tmux_pid=$!
  poll '[ -S "$tmp/sock" ]' 'kill -0 "$tmux_pid" 2>/dev/null'
}
tmux_server_stop() {
  [ -n "${tmux_pid:-}" ] || return 0
  T kill-server >/dev/null 2>&1
  kill "$tmux_pid" 2>/dev/null
  wait "$tmux_pid" 2>/dev/null
}
