#!/bin/sh
# tools/bench-peers.sh [--no-install]: clustertwin against peers on the same work.
#
#   1. the engine against SimGrid on the same pure event-churn (hold) model,
#      N pending events, OPS events run: builds tools/peers/simgrid_hold.cpp
#      into build/peers/, runs it and build/tests/bench_engine N OPS, and
#      prints both rates and the ratio next to the target (>= 5x);
#   2. the flow-level fabric against SimGrid's flow model (below);
#   3. the scheduler against a SimPy FIFO + EASY-backfill peer
#      (tools/peers/simpy_easy.py, Debian's python3-simpy) on the 10K-GPU
#      year's batch jobs: build/tests/bench_sched writes the trace and the
#      scenario and times the twin; the peer runs the same trace; both mean
#      waits are printed (they must agree within 1%) and the ratio of the
#      wall times next to the target (>= 30x; MISSED is printed without
#      failing while issue 23 is open, different waits fail).
#
# Installs Debian's libsimgrid-dev and python3-simpy with apt-get when
# missing and running as root (`make bench-peers`); with --no-install
# (`make bench`) or as another user it skips a part with a message
# instead. Exit 1 when a target is missed.
set -u
install=1
[ "${1:-}" = --no-install ] && install=0

# install PACKAGE: apt-get it when allowed (root, not --no-install).
install() {
    if [ $install = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "bench-peers: installing $1 (apt-get)"
        apt-get install -y "$1" >/dev/null 2>&1 ||
            { apt-get update >/dev/null 2>&1 && apt-get install -y "$1" >/dev/null 2>&1; }
    fi
}

simgrid() {
    have() { [ -f /usr/include/simgrid/s4u.hpp ]; }
    have || install libsimgrid-dev
    if ! have; then
        echo "engine vs SimGrid: skipped (libsimgrid-dev not installed; 'make bench-peers' as root installs it)"
        return 0
    fi
    local_fail=0
    CXX=${CXX:-g++}
    mkdir -p build/peers
    if [ ! -x build/peers/simgrid_hold ] || [ tools/peers/simgrid_hold.cpp -nt build/peers/simgrid_hold ]; then
        $CXX -O2 -std=c++17 -o build/peers/simgrid_hold tools/peers/simgrid_hold.cpp -lsimgrid || return 1
    fi
    [ -x build/tests/bench_engine ] || { echo "bench-peers: build/tests/bench_engine missing (make build/tests/bench_engine)"; return 1; }
    for cfg in "1000 2000000" "10000 2000000"; do
        set -- $cfg
        sg=$(build/peers/simgrid_hold "$1" "$2") || return 1
        ours=$(build/tests/bench_engine "$1" 10000000 | sed -n 's/.*: \([0-9.]*\) M events\/s, bare.*/\1/p')
        sgr=$(printf '%s\n' "$sg" | sed -n 's/.*: \([0-9.]*\) M events\/s.*/\1/p')
        [ -n "$ours" ] && [ -n "$sgr" ] || { echo "bench-peers: could not read the rates ($sg)"; return 1; }
        awk -v n="$1" -v o="$ours" -v s="$sgr" 'BEGIN {
            r = o / s; ok = r >= 5
            printf "engine vs SimGrid 3.32 hold N=%s: %.1f M events/s vs %.2f M events/s, ratio %.1fx (target >= 5x) %s\n",
                   n, o, s, r, ok ? "ok" : "MISSED"
            exit !ok }' || local_fail=1
    done

    # The flow-level fabric against SimGrid's flow model (CM02) on the same
    # platform and ring traffic (tools/peers/simgrid_flow.cpp, bench_flow
    # --peer): FLOW_PEER="NODES GPUS PER_LEAF OVERSUB BYTES pack|spread"
    # (default 32 nodes of 8 GPUs, 8 per leaf, 16:1 so that the leaves'
    # uplinks are shared, 1 GiB, spread across the leaves; 512 nodes is the
    # issue's 4,096 ranks, which SimGrid takes minutes to run). Target: the
    # simulated times within 5%.
    if [ ! -x build/peers/simgrid_flow ] || [ tools/peers/simgrid_flow.cpp -nt build/peers/simgrid_flow ]; then
        $CXX -O2 -std=c++17 -o build/peers/simgrid_flow tools/peers/simgrid_flow.cpp -lsimgrid || return 1
    fi
    [ -x build/tests/bench_flow ] || { echo "bench-peers: build/tests/bench_flow missing (make build/tests/bench_flow)"; exit 1; }
    set -- ${FLOW_PEER:-32 8 8 16 1073741824 spread}
    caps=$(build/tests/bench_flow --peer-capacities) || return 1
    sg=$(build/peers/simgrid_flow "$1" "$2" "$3" "$4" "$5" $caps "$6") || return 1
    ours=$(build/tests/bench_flow --peer "$@") || return 1
    printf '%s\n%s\n' "$ours" "$sg" | awk '
        /^simgrid/ { s = $5; sw = $8 }
        /^ours/ && /reused/ { o = $5; ow = $8 }
        /^ours/ && /every/ { ew = $8; n = $4; sub(":", "", n) }
        END {
            e = (o - s) / s; if (e < 0) e = -e; ok = e <= 0.05
            printf "flow fabric vs SimGrid 3.32 CM02, ring %s: %.6f s vs %.6f s simulated (%.4f%%, target within 5%%) %s; wall %.4f s (one solve reused), %.3f s (every step solved) vs SimGrid %.2f s\n",
                   n, o, s, 100 * e, ok ? "ok" : "MISSED", ow, ew, sw
            exit !ok }' || local_fail=1
    return $local_fail
}

# The SimPy peer: Debian's python3-simpy is SimPy 2.3 for the system
# python (/usr/bin/python3), whatever python3 is first on PATH.
simpy() {
    py=/usr/bin/python3
    has_simpy() { $py -c 'import SimPy.Simulation' 2>/dev/null; }
    has_simpy || install python3-simpy
    if ! has_simpy; then
        echo "scheduler vs SimPy: skipped (python3-simpy not installed; 'make bench-peers' as root installs it)"
        return 0
    fi
    [ -x build/tests/bench_sched ] || { echo "bench-peers: build/tests/bench_sched missing (make build/tests/bench_sched)"; return 1; }
    twin=$(build/tests/bench_sched) || return 1
    peer=$($py tools/peers/simpy_easy.py build/peers/year-10k-batch.csv 1250) || return 1
    printf '%s\n%s\n' "$twin" "$peer" | awk '
        { for (i = 1; i < NF; i++) v[NR, $i] = $(i + 1) }
        END {
            tw = v[1, "wall_s"]; pw = v[2, "wall_s"]; a = v[1, "mean_wait_s"]; b = v[2, "mean_wait_s"]
            if (tw <= 0 || pw <= 0) { print "bench-peers: could not read the wall times"; exit 1 }
            same = v[1, "started"] == v[2, "started"] && (a - b <= 0.01 * b + 0.05 && b - a <= 0.01 * b + 0.05)
            r = pw / tw
            printf "scheduler vs SimPy 2.3 FIFO+EASY, 10K-GPU year (%s jobs): mean wait %s s vs %s s (%s), %.3f s vs %.2f s, ratio %.1fx (target >= 30x) %s\n",
                   v[1, "started"], a, b, same ? "same" : "DIFFERENT", tw, pw, r, same && r >= 30 ? "ok" : "MISSED"
            exit !same }'
}

fail=0
simgrid || fail=1
simpy || fail=1
exit $fail
