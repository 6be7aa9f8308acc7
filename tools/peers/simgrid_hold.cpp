/*
 * simgrid_hold: SimGrid (S4U) running the pure event-churn model of
 * tests/bench_engine.c, for `make bench-peers`.
 *
 * Hold model: N actors on one host; each repeatedly sleeps for an
 * exponential increment (mean 1 us), each wake-up being one event, until
 * OPS events in total have run. The increments are drawn once into an
 * array (1M values from a fixed seed) and used cyclically, as
 * bench_engine does, so RNG cost is left out. SimGrid keeps the pending
 * wake-ups in its timer heap; each event costs a context switch to the
 * actor and back, which is how any SimGrid model advances.
 *
 * usage: simgrid_hold N OPS
 * prints: simgrid hold N=1000: 1.23 M events/s (5000000 events in 4.06 s)
 */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

namespace sg4 = simgrid::s4u;

static std::vector<double> incr;
static long long remaining, done_events;
static size_t next_incr;

static void holder() {
    while (remaining > 0) {
        remaining--;
        double d = incr[next_incr++ & (incr.size() - 1)];
        sg4::this_actor::sleep_for(d);
        done_events++;
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s N OPS\n", argv[0]);
        return 2;
    }
    int n = std::atoi(argv[1]);
    long long ops = std::atoll(argv[2]);
    xbt_log_control_set("root.thresh:critical");
    int one = 1;
    char name[] = "simgrid_hold";
    char *args[] = { name, nullptr };
    sg4::Engine e(&one, args);
    auto *zone = sg4::create_full_zone("zone");
    sg4::Host *host = zone->create_host("host", 1e9)->seal();
    zone->seal();

    std::mt19937_64 g(1);
    std::exponential_distribution<double> dist(1.0 / 1e-6);
    incr.resize(1u << 20);
    for (auto &x : incr) x = dist(g);
    remaining = ops;
    for (int i = 0; i < n; i++) sg4::Actor::create("holder", host, holder);

    auto t0 = std::chrono::steady_clock::now();
    e.run();
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("simgrid hold N=%d: %.2f M events/s (%lld events in %.2f s)\n", n, done_events / dt / 1e6,
                done_events, dt);
    return 0;
}
