#!/bin/sh
# tools/bench-peers.sh [--no-install]: our engine against SimGrid on the same
# pure event-churn (hold) model, N pending events, OPS events run.
#
# Installs Debian's libsimgrid-dev with apt-get when missing and running as
# root (`make bench-peers`); with --no-install (`make bench`) or as another
# user it skips with a message instead. Builds tools/peers/simgrid_hold.cpp
# into build/peers/, runs it and build/tests/bench_engine N OPS, and prints
# both rates and the ratio next to the target (>= 5x). Exit 1 when missed.
set -u
install=1
[ "${1:-}" = --no-install ] && install=0
have() { [ -f /usr/include/simgrid/s4u.hpp ]; }
if ! have; then
    if [ $install = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "bench-peers: installing libsimgrid-dev (apt-get)"
        apt-get install -y libsimgrid-dev >/dev/null 2>&1 ||
            { apt-get update >/dev/null 2>&1 && apt-get install -y libsimgrid-dev >/dev/null 2>&1; }
    fi
fi
if ! have; then
    echo "engine vs SimGrid: skipped (libsimgrid-dev not installed; 'make bench-peers' as root installs it)"
    exit 0
fi
CXX=${CXX:-g++}
mkdir -p build/peers
if [ ! -x build/peers/simgrid_hold ] || [ tools/peers/simgrid_hold.cpp -nt build/peers/simgrid_hold ]; then
    $CXX -O2 -std=c++17 -o build/peers/simgrid_hold tools/peers/simgrid_hold.cpp -lsimgrid || exit 1
fi
[ -x build/tests/bench_engine ] || { echo "bench-peers: build/tests/bench_engine missing (make build/tests/bench_engine)"; exit 1; }
fail=0
for cfg in "1000 2000000" "10000 2000000"; do
    set -- $cfg
    sg=$(build/peers/simgrid_hold "$1" "$2") || exit 1
    ours=$(build/tests/bench_engine "$1" 10000000 | sed -n 's/.*: \([0-9.]*\) M events\/s, bare.*/\1/p')
    sgr=$(printf '%s\n' "$sg" | sed -n 's/.*: \([0-9.]*\) M events\/s.*/\1/p')
    [ -n "$ours" ] && [ -n "$sgr" ] || { echo "bench-peers: could not read the rates ($sg)"; exit 1; }
    awk -v n="$1" -v o="$ours" -v s="$sgr" 'BEGIN {
        r = o / s; ok = r >= 5
        printf "engine vs SimGrid 3.32 hold N=%s: %.1f M events/s vs %.2f M events/s, ratio %.1fx (target >= 5x) %s\n",
               n, o, s, r, ok ? "ok" : "MISSED"
        exit !ok }' || fail=1
done
exit $fail
