#!/usr/bin/env python3
"""Write a synthetic year-long job trace (the format of scenarios/trace.h).

usage: tools/gen-trace.py [--jobs N] [--seed S] [--scale K] > scenarios/traces/year-10k.csv

--scale K multiplies every job's GPUs by K (batch jobs above one node in
whole nodes; training runs with K times the tokens), for a cluster K times
larger:
tools/gen-trace.py --jobs 100000 --seed 1 --scale 10 > tests/scale/year-100k.csv

Deterministic for a seed. Four teams with their own arrival rates, job
sizes (GPUs) and lognormal durations, sized to keep a 10,000-GPU cluster
about 75% busy for a year; 1% of jobs are training runs given in tokens of
a catalog model (the simulator plans them).
"""
import math, random, sys

def main(argv):
    jobs, seed, scale = 100000, 1, 1
    for i, a in enumerate(argv):
        if a == "--jobs": jobs = int(argv[i + 1])
        if a == "--seed": seed = int(argv[i + 1])
        if a == "--scale": scale = int(argv[i + 1])
    r = random.Random(seed)
    year = 365 * 86400
    teams = [  # queue, share of jobs, priority, sizes and weights, median hours
        ("research", 0.35, 0, [8, 32, 128, 512], [0.40, 0.35, 0.18, 0.07], 10.0),
        ("product", 0.25, 5, [8, 16, 64, 256], [0.45, 0.25, 0.20, 0.10], 6.0),
        ("infra", 0.20, 0, [1, 2, 8], [0.60, 0.25, 0.15], 1.5),
        ("eval", 0.20, 0, [1, 4, 8], [0.50, 0.30, 0.20], 0.8),
    ]
    models = [("llama3-8b", 8, "20B"), ("llama3-8b", 64, "100B"), ("llama3-70b", 256, "20B")]
    rate = jobs / year
    t = 0.0
    if scale == 1:
        print("# synthetic year-long trace for 10,000 GPUs: tools/gen-trace.py --jobs %d --seed %d" % (jobs, seed))
    else:
        print("# synthetic year-long trace for %d GPUs: tools/gen-trace.py --jobs %d --seed %d --scale %d"
              % (10000 * scale, jobs, seed, scale))
    print("submit,queue,priority,gpus,duration,tokens,model,name")
    for n in range(jobs):
        t += r.expovariate(rate)
        q, _, prio, sizes, weights, med = r.choices(teams, [x[1] for x in teams])[0]
        if r.random() < 0.01:
            model, gpus, tokens = r.choice(models)
            # Weak scaling: K times the GPUs train K times the tokens, so a
            # run lasts as long as on the smaller cluster (with the tokens
            # fixed, the larger data-parallel degree would strong-scale
            # badly and flood the larger cluster with GPU-hours).
            tokens = "%g%s" % (float(tokens[:-1]) * scale, tokens[-1])
            print("%.0f,%s,%d,%d,,%s,%s,train-%d" % (t, q, prio, gpus * scale, tokens, model, n))
            continue
        gpus = r.choices(sizes, weights)[0] * scale
        if scale > 1 and gpus > 8:
            # Whole 8-GPU nodes, nearest: a 10-GPU job would hold two nodes
            # and overload the larger cluster by node granularity alone.
            gpus = int(gpus / 8 + 0.5) * 8
        hours = med * math.exp(r.gauss(0, 1.0))
        print("%.0f,%s,%d,%d,%.0fmin,,,job-%d" % (t, q, prio, gpus, max(1, hours * 60), n))

if __name__ == "__main__":
    main(sys.argv[1:])
