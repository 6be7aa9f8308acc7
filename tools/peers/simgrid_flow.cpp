/*
 * simgrid_flow: SimGrid's flow-level network model (S4U, CM02) on the same
 * platform and ring traffic as `build/tests/bench_flow --peer`, for
 * `make bench-peers` (tools/bench-peers.sh).
 *
 * Platform (one full zone, every link one direction, latency 0, shared):
 * one host per GPU; per GPU an NVLink out and in link (nvl bytes/s); per
 * node `gpus` NICs with an up and a down link (nic bytes/s), GPU i on NIC
 * i; nodes in leaf groups of per_leaf, each leaf with an uplink and a
 * downlink to a non-blocking spine of per_leaf x gpus x nic / oversub
 * bytes/s. The routes are clustertwin's (models/flow_topo.c): inside a node
 * GPU out then GPU in; between nodes NIC up, the two leaves' links when
 * the leaves differ, NIC down.
 *
 * Traffic: a ring all-reduce of BYTES over every GPU, 2(n-1) steps, in
 * each step every rank sends BYTES/n to the next (ranks: GPU g of the k-th
 * node of the ring; the ring visits the nodes in order (pack) or striding
 * across the leaves (spread)); a step ends when its last transfer does.
 * One driver actor starts each step's n transfers (Comm::sendto_async) and
 * waits for all of them.
 *
 * Model: CM02 (max-min sharing, no bandwidth or latency correction), TCP
 * cross-traffic off (no reverse ack flows: clustertwin has none).
 *
 * usage: simgrid_flow NODES GPUS PER_LEAF OVERSUB BYTES NVL_BW NIC_BW pack|spread
 * prints: simgrid flow ring n=256: 1.234567 s simulated, 2.34 s wall (510 steps)
 */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

namespace sg4 = simgrid::s4u;

static int nodes, gpus, per_leaf, spread;
static double oversub, bytes, nvl_bw, nic_bw;
static std::vector<sg4::Host *> hosts;
static std::vector<int> order;   /* ring position -> node */

static int rank_node(int r) { return order[r / gpus]; }

static void driver() {
    int n = nodes * gpus;
    uint64_t chunk = (uint64_t)(bytes / n);
    for (int s = 0; s < 2 * (n - 1); s++) {
        std::vector<sg4::CommPtr> c;
        c.reserve(n);
        for (int r = 0; r < n; r++) {
            int q = (r + 1) % n;
            c.push_back(sg4::Comm::sendto_async(hosts[rank_node(r) * gpus + r % gpus],
                                                hosts[rank_node(q) * gpus + q % gpus], chunk));
        }
        sg4::Comm::wait_all(c);
    }
}

static sg4::Link *link(sg4::NetZone *z, const std::string &name, double bw) {
    return z->create_link(name, bw)->set_latency(0)->seal();
}

static void platform(sg4::NetZone *z) {
    int leaves = (nodes + per_leaf - 1) / per_leaf;
    std::vector<sg4::Link *> out, in, up, down, lup, ldown;
    for (int g = 0; g < nodes * gpus; g++) {
        hosts.push_back(z->create_host("h" + std::to_string(g), 1e9)->seal());
        out.push_back(link(z, "o" + std::to_string(g), nvl_bw));
        in.push_back(link(z, "i" + std::to_string(g), nvl_bw));
        up.push_back(link(z, "u" + std::to_string(g), nic_bw));
        down.push_back(link(z, "d" + std::to_string(g), nic_bw));
    }
    for (int l = 0; l < leaves; l++) {
        lup.push_back(link(z, "lu" + std::to_string(l), per_leaf * gpus * nic_bw / oversub));
        ldown.push_back(link(z, "ld" + std::to_string(l), per_leaf * gpus * nic_bw / oversub));
    }
    int n = nodes * gpus;
    for (int r = 0; r < n; r++) {
        int q = (r + 1) % n, sn = rank_node(r), dn = rank_node(q);
        int sg = sn * gpus + r % gpus, dg = dn * gpus + q % gpus;
        std::vector<sg4::LinkInRoute> route;
        if (sn == dn) {
            route = { sg4::LinkInRoute(out[sg]), sg4::LinkInRoute(in[dg]) };
        } else {
            route.push_back(sg4::LinkInRoute(up[sg]));
            if (sn / per_leaf != dn / per_leaf) {
                route.push_back(sg4::LinkInRoute(lup[sn / per_leaf]));
                route.push_back(sg4::LinkInRoute(ldown[dn / per_leaf]));
            }
            route.push_back(sg4::LinkInRoute(down[dg]));
        }
        z->add_route(hosts[sg]->get_netpoint(), hosts[dg]->get_netpoint(), nullptr, nullptr, route, false);
    }
}

int main(int argc, char **argv) {
    if (argc != 9) {
        std::fprintf(stderr, "usage: %s NODES GPUS PER_LEAF OVERSUB BYTES NVL_BW NIC_BW pack|spread\n", argv[0]);
        return 2;
    }
    nodes = std::atoi(argv[1]);
    gpus = std::atoi(argv[2]);
    per_leaf = std::atoi(argv[3]);
    oversub = std::atof(argv[4]);
    bytes = std::atof(argv[5]);
    nvl_bw = std::atof(argv[6]);
    nic_bw = std::atof(argv[7]);
    spread = !std::strcmp(argv[8], "spread");
    int leaves = (nodes + per_leaf - 1) / per_leaf;
    for (int k = 0; k < nodes; k++)
        order.push_back(spread ? (k % leaves) * per_leaf + k / leaves : k);
    xbt_log_control_set("root.thresh:critical");
    int one = 1;
    char name[] = "simgrid_flow";
    char *args[] = { name, nullptr };
    sg4::Engine e(&one, args);
    e.set_config("network/model:CM02");
    e.set_config("network/crosstraffic:0");
    auto *zone = sg4::create_full_zone("fabric");
    platform(zone);
    zone->seal();
    sg4::Actor::create("driver", hosts[0], driver);
    auto t0 = std::chrono::steady_clock::now();
    e.run();
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("simgrid flow ring n=%d: %.6f s simulated, %.2f s wall (%d steps)\n", nodes * gpus,
                sg4::Engine::get_clock(), dt, 2 * (nodes * gpus - 1));
    return 0;
}
