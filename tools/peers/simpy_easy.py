#!/usr/bin/python3
"""FIFO + EASY-backfill peer of clustertwin's scheduler, on Debian's
python3-simpy (SimPy 2.3, the SimPy.Simulation API).

usage: tools/peers/simpy_easy.py TRACE.csv NODES [GPUS_PER_NODE]

Reads a job trace (scenarios/trace.h's columns submit, gpus, duration;
rows with tokens, i.e. training runs, are refused: the peer has no
training model) and schedules it on NODES nodes the way clustertwin does
with policy="fifo" backfill="easy" placement="pack" and no failures:

  - a job of a node or more takes whole idle nodes (the lowest-numbered),
    a smaller job the lowest-numbered node with the fewest free GPUs that
    fit (best fit); a job starts only when all its GPUs are free (gang);
  - the head of the queue (submit order) starts when it fits; otherwise
    it gets a reservation: the earliest time enough GPUs free up as
    running jobs end (by expected end), and the GPUs spare then; one
    scan of up to DEPTH (500, Slurm's bf_max_job_test) jobs behind it
    starts those that fit now and end before the reservation, or fit in
    the spare GPUs (which they then use up).

Prints one line: jobs, started, mean wait of the started jobs (s), and
the wall time of the simulation (s), e.g.
  simpy-easy: jobs 99000 started 99000 mean_wait_s 1234.5 wall_s 30.1
"""
import csv, heapq, math, sys, time

from SimPy.Simulation import Process, Simulation, hold

DEPTH = 500          # as clustertwin's SCHED_DEFAULT_DEPTH (Slurm's bf_max_job_test default)


def seconds(text):
    units = {"s": 1, "min": 60, "h": 3600, "d": 86400}
    for u in ("min", "s", "h", "d"):
        if text.endswith(u):
            return float(text[: -len(u)]) * units[u]
    return float(text)


class Job:
    __slots__ = ("i", "submit", "gpus", "dur", "start", "end", "nodes", "each")

    def __init__(self, i, submit, gpus, dur):
        self.i, self.submit, self.gpus, self.dur = i, submit, gpus, dur
        self.start = self.end = None
        self.nodes, self.each = (), 0


class Cluster:
    """Free GPUs per node, with a lazy heap of node numbers per free count."""

    def __init__(self, nodes, per):
        self.per = per
        self.free = [per] * nodes
        self.by_free = [0] * (per + 1)
        self.by_free[per] = nodes
        self.total_free = nodes * per
        self.heaps = [[] for _ in range(per + 1)]
        self.heaps[per] = list(range(nodes))

    def set_free(self, n, f):
        old = self.free[n]
        self.by_free[old] -= 1
        self.by_free[f] += 1
        self.total_free += f - old
        self.free[n] = f
        if f > 0:
            heapq.heappush(self.heaps[f], n)

    def can_alloc(self, g):
        if g > self.total_free:
            return False
        if g < self.per:
            return any(self.by_free[f] for f in range(g, self.per + 1))
        return self.by_free[self.per] >= math.ceil(g / self.per)

    def lowest(self, f):
        h = self.heaps[f]
        while h and self.free[h[0]] != f:
            heapq.heappop(h)
        return h[0] if h else None

    def alloc(self, j):
        if j.gpus < self.per:
            for f in range(j.gpus, self.per + 1):
                n = self.lowest(f) if self.by_free[f] else None
                if n is not None:
                    heapq.heappop(self.heaps[f])
                    self.set_free(n, f - j.gpus)
                    j.nodes, j.each = (n,), j.gpus
                    return
            raise AssertionError("alloc without room")
        nodes = []
        for _ in range(math.ceil(j.gpus / self.per)):
            n = self.lowest(self.per)
            heapq.heappop(self.heaps[self.per])
            self.set_free(n, 0)
            nodes.append(n)
        j.nodes, j.each = nodes, self.per

    def release(self, j):
        for n in j.nodes:
            self.set_free(n, min(self.per, self.free[n] + j.each))


class Runner(Process):
    def run(self, sched, j):
        yield hold, self, j.dur
        sched.finish(j)


class Arrivals(Process):
    def run(self, sched, jobs):
        for j in jobs:
            dt = j.submit - self.sim.now()
            if dt > 0:
                yield hold, self, dt
            sched.submit(j)


class Sched:
    def __init__(self, sim, cluster):
        self.sim, self.c = sim, cluster
        self.queue = []              # submit order
        self.running = {}            # job index -> job

    def submit(self, j):
        self.queue.append(j)
        self.dispatch()

    def finish(self, j):
        del self.running[j.i]
        self.c.release(j)
        self.dispatch()

    def start(self, k):
        j = self.queue.pop(k)
        now = self.sim.now()
        j.start, j.end = now, now + j.dur
        self.c.alloc(j)
        self.running[j.i] = j
        r = Runner(sim=self.sim)
        self.sim.activate(r, r.run(self, j))

    def reservation(self, head):
        free = self.c.total_free
        t = self.sim.now()
        for j in sorted(self.running.values(), key=lambda x: (x.end, x.start, x.i)):
            if free >= head.gpus:
                break
            free += j.gpus
            t = j.end
        return (t if free >= head.gpus else math.inf), free - head.gpus

    def dispatch(self):
        now = self.sim.now()
        while self.queue:
            if self.c.can_alloc(self.queue[0].gpus):
                self.start(0)
                continue
            shadow, extra = self.reservation(self.queue[0])
            k, scanned = 1, 0
            while k < len(self.queue) and scanned < DEPTH:
                j = self.queue[k]
                scanned += 1
                if self.c.can_alloc(j.gpus):
                    before = now + j.dur <= shadow
                    if before or j.gpus <= extra:
                        if not before:
                            extra -= j.gpus
                        self.start(k)
                        continue
                k += 1
            return


def read(path):
    jobs = []
    with open(path) as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        for r in rows:
            if r.get("tokens"):
                sys.exit("simpy_easy: %s: training rows are not supported (job %s)" % (path, r.get("name")))
            jobs.append(Job(len(jobs), float(r["submit"]), int(r["gpus"]), seconds(r["duration"])))
    jobs.sort(key=lambda j: (j.submit, j.i))
    return jobs


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__.split("\n\n")[1])
    jobs = read(argv[1])
    per = int(argv[3]) if len(argv) > 3 else 8
    t0 = time.perf_counter()
    sim = Simulation()
    sim.initialize()
    sched = Sched(sim, Cluster(int(argv[2]), per))
    a = Arrivals(sim=sim)
    sim.activate(a, a.run(sched, jobs))
    sim.simulate(until=365 * 86400)
    wall = time.perf_counter() - t0
    started = [j for j in jobs if j.start is not None]
    mean = sum(j.start - j.submit for j in started) / max(1, len(started))
    print("simpy-easy: jobs %d started %d mean_wait_s %.1f wall_s %.2f" % (len(jobs), len(started), mean, wall))


if __name__ == "__main__":
    main(sys.argv)
