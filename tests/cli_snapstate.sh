#!/bin/sh
# cli_snapstate.sh BINARY: a scenario that starts from a live cluster's
# state (issue 22, docs/cluster-state.md), end to end through `run`:
# scenarios/snapshot-example.xml reports its snapshot time and the nodes
# out at t = 0; running jobs started before t = 0 (start_s = -elapsed) and
# end when what was left of them ran; the held job and the job waiting for
# it never start; a job waits for the one it names in after; the same
# scenario and seed give the same bytes; a trace with actual_start gives a
# replay object whose tau is 1 when the simulated order is the actual one;
# a queue's jobs run only on its node set (<queue nodes=>).
suite=snapstate
. "$(dirname "$0")/clilib.sh"

expect_status 0 "run snapshot-example" "$bin" run scenarios/snapshot-example.xml --json "$tmp/a.json" --no-db
expect_status 0 "run it again" "$bin" run scenarios/snapshot-example.xml --json "$tmp/b.json" --no-db
grep -v '"wall' "$tmp/a.json" >"$tmp/a.cut"
grep -v '"wall' "$tmp/b.json" >"$tmp/b.cut"
cmp -s "$tmp/a.cut" "$tmp/b.cut" && ok "same scenario and seed, same bytes" || no "two runs differ"

python3 - "$tmp/a.json" >"$tmp/checks" 2>&1 <<'PY'
import sys
sys.path.insert(0, "tests")
from ctrun import Checks, jobs_by_id
d, jobs = jobs_by_id(sys.argv[1])
check = Checks()
check(d.get("snapshot_time") == "2026-11-26T09:30:00Z", "snapshot_time reported")
check(d["cluster"].get("nodes_unavailable_at_start") == 3, "3 nodes out at t = 0")
a = jobs["1001"]
check(a["state_at_snapshot"] == "running" and a["start_s"] == -10800 and a["end_s"] == 18000,
      "a running job: start_s = -elapsed, ends after duration - elapsed (%s, %s)" % (a["start_s"], a["end_s"]))
check(a["user"] == "alice" and a["account"] == "ml", "user and account reported")
h, w = jobs["1008"], jobs["1009"]
check(h["state"] == "pending" and h["state_at_snapshot"] == "held" and h["start_s"] is None, "the held job never starts")
check(w["start_s"] is None, "the job waiting for the held one never starts")
m, f = jobs["1005"], jobs["1007"]
check(f["start_s"] is not None and m["end_s"] is not None and f["start_s"] >= m["end_s"],
      "a dependency waits for the job it names")
check(m["queue_wait_s"] >= 7200, "a job submitted before t = 0 keeps its age in its wait (%s)" % m["queue_wait_s"])
check("replay" not in d, "no replay object without actual_start")
PY
while read -r word rest; do
  case $word in ok) ok "$rest" ;; *) no "$rest" ;; esac
done <"$tmp/checks"

# A replay: the real scheduler started the three jobs in the order the
# simulation does.
cat >"$tmp/r.csv" <<'CSV'
id,submit,gpus,duration,actual_start
p,0,16,1h,0
q,0,16,1h,1h
r,0,16,1h,2h
CSV
cat >"$tmp/r.xml" <<XML
<scenario name="replay" seed="1">
  <cluster><nodes type="dgx-h100" count="2"/></cluster>
  <workload><trace href="$tmp/r.csv"/></workload>
</scenario>
XML
expect_status 0 "run a replay" "$bin" run "$tmp/r.xml" --json "$tmp/r.json" --no-db
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["replay"]
sys.exit(0 if r == {"jobs": 3, "wait_error_median_s": 0, "wait_error_p90_s": 0, "start_order_kendall_tau": 1} else 1)
' "$tmp/r.json" && ok "replay: tau 1, no wait error when the orders agree" || no "replay: $(grep -A5 replay "$tmp/r.json")"

# Partitions (<queue nodes=>): "small" owns gpu4 only. x runs on gpu4
# until 3h; s (small) waits for it though gpu1-3 are free, and its
# reservation is gpu4's. y (big, 5h) may start beside it at once only when
# big's set, gpu[1-3], cannot touch gpu4; without a set it might, and waits.
cat >"$tmp/p.csv" <<'CSV'
id,submit,queue,gpus,duration,state,elapsed,nodes
x,-1h,big,8,4h,running,1h,gpu4
s,0,small,8,1h,pending,,
y,10,big,8,5h,pending,,
CSV
part() {   # part BIG_NODES_ATTR
  cat >"$tmp/p.xml" <<XML
<scenario name="part" seed="1">
  <cluster><nodes type="dgx-h100" count="4" names="gpu[1-4]"/></cluster>
  <scheduler policy="fifo" backfill="easy">
    <queue name="small" nodes="gpu4"/>
    <queue name="big"$1/>
  </scheduler>
  <workload><trace href="$tmp/p.csv"/></workload>
</scenario>
XML
  "$bin" run "$tmp/p.xml" --json "$tmp/p.json" --no-db >/dev/null && python3 -c '
import json, sys
j = {j["id"]: j for j in json.load(open(sys.argv[1]))["jobs"]}
print(j["s"]["start_s"], j["y"]["start_s"])' "$tmp/p.json"
}
[ "$(part ' nodes="gpu[1-3]"')" = "10800 10" ] && ok "partitions: s waits for its own node; y backfills on the others" \
  || no "partitions, disjoint: $(part ' nodes="gpu[1-3]"')"
[ "$(part '')" = "10800 10800" ] && ok "partitions: y of a queue that may use gpu4 does not jump s's reservation" \
  || no "partitions, overlapping: $(part '')"

[ $fails = 0 ] && echo "snapstate: all passed" || echo "snapstate: $fails failed"
[ $fails = 0 ]
