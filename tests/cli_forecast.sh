#!/bin/sh
# cli_forecast.sh BINARY: `clustertwin forecast` end to end on
# scenarios/forecast-example.xml (a full 4-node partition, six jobs waiting).
#
#   the JSON has the interface's names (issue 22, section 4); every waiting
#     job's p10 <= p50 <= p90; a percentile is null exactly when fewer than
#     that share of the replicas started the job
#   a job behind a full cluster starts no earlier than the first of the
#     jobs holding the cluster ends (read from `run --json` with the same
#     seeds), and the queue drains no earlier than the last waiting job starts
#   more nodes never delay the p50 of the head of the queue (the job of
#     highest priority), and the variants are listed in order
#   a priority what-if moves that job's start earlier
#   a held job (and one waiting for it) never starts and is not counted
#     in the drain (scenarios/snapshot-example.xml)
#   the same seed gives byte-identical JSON; --jobs 2 gives the same as
#     --jobs 1; another seed gives other numbers
#   the table names the jobs and the drain and utilisation lines
#   bad input: exit 2, one line, no JSON written
# Prints ok/FAIL per check and a summary; exits 1 on any failure.
suite=forecast
. "$(dirname "$0")/clilib.sh"
[ -x "$bin" ] || { echo "$0: $bin is not an executable" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "$0: needs python3" >&2; exit 2; }
f=scenarios/forecast-example.xml

# ---- the forecast and its JSON ----
expect_status 0 "forecast the example" "$bin" forecast $f --replicas 12 --json "$tmp/a.json"
grep -q '2005 *train-a *alice *16  pending' "$tmp/out" && grep -q 'queue of now drains: p10' "$tmp/out" \
  && grep -q 'GPU utilisation by day' "$tmp/out" && grep -q '(4 running at the snapshot)' "$tmp/out" \
  && ok "the table names the jobs, the drain and the utilisation" || no "table: $(head -5 "$tmp/out")"
grep -q 'snapshot at 2026-11-26T09:30:00Z' "$tmp/out" && grep -q 'h, 11-2[67] [0-2][0-9]:[0-5][0-9]Z' "$tmp/out" \
  && ok "times from now and in UTC from the snapshot-time" || no "wall-clock times: $(head -5 "$tmp/out")"
python3 - "$tmp/a.json" <<'PY' && ok "JSON: the interface's names; p10 <= p50 <= p90; nulls follow the started share" \
  || no "JSON shape"
import json, math, sys
d = json.load(open(sys.argv[1]))
for k in ("scenario", "replicas", "snapshot_time", "variants"):
    assert k in d, k
assert d["snapshot_time"] == "2026-11-26T09:30:00Z"
assert d["replicas"] == 12
v = d["variants"][0]
assert v["label"] == "baseline"
for k in ("label", "drain_p10_s", "drain_p50_s", "drain_p90_s", "utilization_by_day", "jobs"):
    assert k in v, k
assert len(v["utilization_by_day"]) == 7
assert all(u is None or 0 <= u <= 1 + 1e-9 for u in v["utilization_by_day"])
for j in v["jobs"]:
    for k in ("id", "name", "user", "gpus", "state_at_snapshot", "start_p10_s", "start_p50_s", "start_p90_s",
              "started_share"):
        assert k in j, k
    if j["state_at_snapshot"] != "pending":
        continue
    p = [j["start_p10_s"], j["start_p50_s"], j["start_p90_s"]]
    for q, x in zip((10, 50, 90), p):
        # null exactly when fewer than q% of the 12 replicas started it
        need = math.ceil(12 * q / 100)
        assert (x is None) == (round(j["started_share"] * 12) < need), (j, q)
    xs = [x for x in p if x is not None]
    assert xs == sorted(xs), j
PY

# ---- a job behind a full cluster ----
# The first of the four 8-GPU jobs holding the 32 GPUs to end, in each of
# the seeds the forecast ran (1..12, read from `run --json`): no waiting job
# can start before it (p10 against p10). Running jobs have no start
# percentiles.
for s in 1 2 3 4 5 6 7 8 9 10 11 12; do
  "$bin" run $f --seed $s --no-db --json "$tmp/run$s.json" >/dev/null 2>&1 || no "run --seed $s"
done
python3 - "$tmp" <<'PY' && ok "no waiting job starts before the first running job ends (p10 over seeds 1..12)" \
  || no "a waiting job starts while the cluster is full"
import json, sys
t = sys.argv[1]
d = json.load(open(t + "/a.json"))["variants"][0]
running = {j["name"] for j in d["jobs"] if j["state_at_snapshot"] == "running"}
assert len(running) == 4, running
first_end = []
for s in range(1, 13):
    r = json.load(open("%s/run%d.json" % (t, s)))
    ends = sorted(j["end_s"] for j in r["jobs"] if j["name"] in running)
    assert len(ends) == 4 and ends[0] > 0
    first_end.append(ends[0])
first_end.sort()
p10_first_end = first_end[1]          # the 2nd smallest of 12: ceil(12 * 0.10) = 2
for j in d["jobs"]:
    if j["state_at_snapshot"] == "running":
        assert j["start_p10_s"] is None and j["start_p50_s"] is None and j["start_p90_s"] is None
        assert j["started_share"] == 1
        continue
    if j["start_p10_s"] is None:
        continue
    assert j["start_p10_s"] >= p10_first_end - 1e-6, (j["name"], j["start_p10_s"], p10_first_end)
starts = [j["start_p90_s"] for j in d["jobs"] if j["start_p90_s"] is not None]
assert d["drain_p90_s"] is None or d["drain_p90_s"] >= max(starts) - 1e-6
PY

# ---- held jobs (scenarios/snapshot-example.xml) ----
expect_status 0 "forecast the snapshot example" "$bin" forecast scenarios/snapshot-example.xml --replicas 5 \
  --json "$tmp/snap.json" --quiet
python3 - "$tmp/snap.json" <<'PY' && ok "a held job and its dependant never start and do not keep the queue from draining" \
  || no "held jobs"
import json, sys
v = json.load(open(sys.argv[1]))["variants"][0]
j = {x["id"]: x for x in v["jobs"]}
assert j["1008"]["state_at_snapshot"] == "held" and j["1008"]["start_p10_s"] is None and j["1008"]["started_share"] == 0
assert j["1009"]["state_at_snapshot"] == "pending" and j["1009"]["started_share"] == 0
assert j["1001"]["state_at_snapshot"] == "running" and j["1001"]["user"] == "alice"
assert j["1010"]["state_at_snapshot"] == "later"
assert v["drain_p90_s"] is not None and v["drain_p90_s"] >= j["1007"]["start_p90_s"]
PY

# ---- what-ifs ----
expect_status 0 "more nodes as variants" "$bin" forecast $f --replicas 12 --vary 'cluster/nodes/@count=5,6,8' \
  --json "$tmp/nodes.json" --quiet
python3 - "$tmp/nodes.json" <<'PY' && ok "more nodes never delay the head of the queue's p50; variants in order" \
  || no "more nodes delayed the head of the queue"
import json, sys
v = json.load(open(sys.argv[1]))["variants"]
assert [x["label"] for x in v] == ["baseline", "cluster/nodes/@count=5", "cluster/nodes/@count=6",
                                   "cluster/nodes/@count=8"], [x["label"] for x in v]
head = [next(j for j in x["jobs"] if j["name"] == "train-a")["start_p50_s"] for x in v]
assert all(h is not None for h in head) and head == sorted(head, reverse=True), head
assert v[-1]["drain_p50_s"] <= v[0]["drain_p50_s"]
PY
expect_status 0 "a priority what-if" "$bin" forecast $f --replicas 12 --vary 'jobs[notebook-f].priority=100' \
  --vary 'jobs[2010].priority=100' \
  --json "$tmp/prio.json" --quiet
python3 - "$tmp/prio.json" <<'PY' && ok "raising a job's priority (by name or id) moves its p50 start earlier" || no "priority what-if"
import json, sys
v = json.load(open(sys.argv[1]))["variants"]
p = [next(j for j in x["jobs"] if j["name"] == "notebook-f")["start_p50_s"] for x in v]
assert v[1]["label"] == "jobs[notebook-f].priority=100" and p[1] < p[0], p
assert v[2]["label"] == "jobs[2010].priority=100" and p[2] == p[1], p     # by the trace's id
PY

# ---- determinism ----
expect_status 0 "the same forecast again" "$bin" forecast $f --replicas 12 --json "$tmp/b.json" --quiet
cmp -s "$tmp/a.json" "$tmp/b.json" && ok "the same seed gives the same bytes" || no "two runs differ"
expect_status 0 "with 2 worker processes" "$bin" forecast $f --replicas 12 --json "$tmp/c.json" --jobs 2 --quiet
cmp -s "$tmp/a.json" "$tmp/c.json" && ok "--jobs 2 gives the same bytes as --jobs 1" || no "--jobs 2 differs"
expect_status 0 "another seed" "$bin" forecast $f --replicas 12 --seed 100 --json "$tmp/d.json" --quiet
cmp -s "$tmp/a.json" "$tmp/d.json" && no "another seed gives the same numbers" || ok "another seed gives other numbers"
expect_status 0 "--json - prints JSON only" "$bin" forecast $f --replicas 2 --json -
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out" && ok "stdout is JSON" || no "stdout is not JSON"

# ---- bad input ----
bad() {   # description expected-message args... (usage errors add a "(see --help)" line)
  bad_what=$1; bad_says=$2; shift 2
  expect_status 2 "$bad_what" "$bin" forecast $f --json "$tmp/bad.json" "$@"
  head -n 1 "$tmp/err" | grep -q -- "$bad_says" && ! grep -v "^(see 'clustertwin forecast --help')\$" "$tmp/err" | sed 1d | grep -q . \
    && ok "$bad_what: one line: $bad_says" || no "$bad_what: message: $(cat "$tmp/err")"
}
bad "--replicas 0" "--replicas 0: expected a whole number" --replicas 0
bad "a bad --horizon" "--horizon 3GB" --horizon 3GB
bad "--days past the horizon" "longer than the horizon" --days 9 --horizon 7d
bad "a path matching nothing" "cluster/node/@count: matches nothing" --vary 'cluster/node/@count=5'
bad "a job nobody has" "no trace or training job is named nobody" --set 'jobs[nobody].priority=3'
bad "a priority that is not a number" 'priority "high"' --vary 'jobs[big-b].priority=high'
bad "a malformed job what-if" "expected jobs\[NAME\].priority" --set 'jobs[big-b].gpus=3'
bad "a variant the cluster cannot hold" "more GPUs than the cluster has" --vary 'cluster/nodes/@count=2'
# More nodes on a snapshot whose nodes are named: the added nodes are unnamed,
# and nothing waiting starts later for them.
"$bin" forecast scenarios/snapshot-example.xml --replicas 3 -q --vary 'cluster/nodes/@count=24' \
    --json "$tmp/more.json" >/dev/null 2>"$tmp/err" && python3 - "$tmp/more.json" <<'PY' \
    && ok "more nodes on a named snapshot: a variant, and no waiting job starts later" \
    || no "more nodes on a named snapshot: $(head -3 "$tmp/err")"
import json, sys
v = json.load(open(sys.argv[1]))["variants"]
assert len(v) == 2, len(v)
base, more = ({j["id"]: j for j in x["jobs"]} for x in v)
later = [k for k, j in base.items() if j["start_p50_s"] is not None
         and more[k]["start_p50_s"] is not None and more[k]["start_p50_s"] > j["start_p50_s"] + 1e-9]
assert not later, later
assert any(more[k]["start_p50_s"] is not None and (j["start_p50_s"] is None or more[k]["start_p50_s"] < j["start_p50_s"])
           for k, j in base.items()), "24 nodes moved no job earlier"
PY
[ -e "$tmp/bad.json" ] && no "bad input wrote JSON" || ok "bad input writes no JSON"
expect_status 2 "a missing file" "$bin" forecast "$tmp/nope.xml"

echo "$n checks, $fails failed"
[ "$fails" -eq 0 ]
