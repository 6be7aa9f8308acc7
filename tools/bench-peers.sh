#!/bin/sh
# tools/bench-peers.sh [--no-install]: our engine against SimGrid on the same
# pure event-churn (hold) model, N pending events, OPS events run.
#
# Installs Debian's libsimgrid-dev with apt-get when missing and running as
# root (`make bench-peers`); with --no-install (`make bench`) or as another
# user it skips with a message instead. Builds tools/peers/simgrid_hold.cpp
# into build/peers/, runs it and build/tests/bench_engine N OPS, and prints
# both rates and the ratio next to the target (>= 5x); then the flow-level
# fabric against SimGrid's flow model (below). Exit 1 when missed.
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

# The flow-level fabric against SimGrid's flow model (CM02) on the same
# platform and ring traffic (tools/peers/simgrid_flow.cpp, bench_flow
# --peer): FLOW_PEER="NODES GPUS PER_LEAF OVERSUB BYTES pack|spread"
# (default 32 nodes of 8 GPUs, 8 per leaf, 16:1 so that the leaves'
# uplinks are shared, 1 GiB, spread across the leaves; 512 nodes is the
# issue's 4,096 ranks, which SimGrid takes minutes to run). Target: the
# simulated times within 5%.
if [ ! -x build/peers/simgrid_flow ] || [ tools/peers/simgrid_flow.cpp -nt build/peers/simgrid_flow ]; then
    $CXX -O2 -std=c++17 -o build/peers/simgrid_flow tools/peers/simgrid_flow.cpp -lsimgrid || exit 1
fi
[ -x build/tests/bench_flow ] || { echo "bench-peers: build/tests/bench_flow missing (make build/tests/bench_flow)"; exit 1; }
set -- ${FLOW_PEER:-32 8 8 16 1073741824 spread}
caps=$(build/tests/bench_flow --peer-capacities) || exit 1
sg=$(build/peers/simgrid_flow "$1" "$2" "$3" "$4" "$5" $caps "$6") || exit 1
ours=$(build/tests/bench_flow --peer "$@") || exit 1
printf '%s\n%s\n' "$ours" "$sg" | awk '
    /^simgrid/ { s = $5; sw = $8 }
    /^ours/ && /reused/ { o = $5; ow = $8 }
    /^ours/ && /every/ { ew = $8; n = $4; sub(":", "", n) }
    END {
        e = (o - s) / s; if (e < 0) e = -e; ok = e <= 0.05
        printf "flow fabric vs SimGrid 3.32 CM02, ring %s: %.6f s vs %.6f s simulated (%.4f%%, target within 5%%) %s; wall %.4f s (one solve reused), %.3f s (every step solved) vs SimGrid %.2f s\n",
               n, o, s, 100 * e, ok ? "ok" : "MISSED", ow, ew, sw
        exit !ok }' || fail=1
exit $fail
