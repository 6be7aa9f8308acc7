#!/bin/sh
# cli_snapshot.sh BINARY: `clustertwin snapshot --from slurm` (issue 22,
# docs/live-cluster.md) end to end. The same cluster state written as each
# Slurm release's JSON (tests/slurm/<release>/, data parsers v0.0.38 to
# v0.0.43) snapshots to the same scenario and trace; the scenario checks
# and runs (running jobs start at -elapsed, the held job never starts, the
# array's four tasks run); sacct -P text gives the history sacct --json
# gives; --replay replays the history with a replay object; an unknown GPU
# model needs --node-type; a missing squeue is a clear error; every
# malformed report in tests/slurm/bad/ exits 2 with its file:line message
# and writes nothing; a target that is not a regular file is refused.
suite=snapshot
. "$(dirname "$0")/clilib.sh"

AT=1764149400     # 2025-11-26T09:30:00Z, when the fixtures were "read"
snap() {          # snap RELEASE OUT [more options]: snapshot the release's three files
  r=$1 out=$2; shift 2
  "$bin" snapshot --from slurm --squeue "tests/slurm/$r/squeue.json" --sinfo "tests/slurm/$r/sinfo.json" \
    --sacct "tests/slurm/$r/sacct.json" --at $AT --out "$out" "$@"
}

for r in 22.05 23.02 23.11 24.05 24.11 25.05; do
  expect_status 0 "snapshot Slurm $r" snap $r "$tmp/s-$r.xml"
  grep -q '2 running, 6 pending, 1 held' "$tmp/out" || no "$r: the summary counts the jobs: $(cat "$tmp/out")"
done
# 22.05's sinfo has no partitions (so no max-time) and its source line differs; the trace is the same.
for r in 23.02 23.11 24.05 24.11 25.05; do
  cmp -s "$tmp/s-23.02.jobs.csv" "$tmp/s-$r.jobs.csv" && ok "$r: the same trace as 23.02" || no "$r: trace differs from 23.02"
  sed 1,2d "$tmp/s-23.02.xml" | sed 's/s-23.02/S/g' >"$tmp/a" && sed 1,2d "$tmp/s-$r.xml" | sed "s/s-$r/S/g" >"$tmp/b"
  cmp -s "$tmp/a" "$tmp/b" && ok "$r: the same scenario as 23.02" || no "$r: scenario differs: $(diff "$tmp/a" "$tmp/b" | head -5)"
done
# 22.05 knows no PriorityTier (its sinfo lists no partitions), so only the priority column differs.
cut -d, -f1-3,5- "$tmp/s-22.05.jobs.csv" >"$tmp/a"; cut -d, -f1-3,5- "$tmp/s-23.02.jobs.csv" >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" && ok "22.05: the same trace but priorities" || no "22.05: trace differs"
grep -q '^105_0,-300,debug,2,' "$tmp/s-22.05.jobs.csv" && grep -q '^105_0,-300,debug,6,' "$tmp/s-23.02.jobs.csv" \
  && ok "the debug partition's higher PriorityTier ranks its jobs first (23.02+)" || no "tier ranks"

f=$tmp/s-24.05.xml
grep -q '<nodes type="dgx-h100" count="6" names="gpu\[01-06\]"/>' "$f" && ok "node group named by hostlist" || no "nodes: $(grep '<nodes' "$f")"
grep -q '<unavailable nodes="gpu05" state="drained" reason="XID 79 GPU fell off the bus"/>' "$f" \
  && grep -q '<unavailable nodes="gpu06" state="down"' "$f" && ok "drained and down nodes" || no "unavailable: $(grep unavailable "$f")"
# gpu holds every node (no nodes=: any node); debug only gpu01 and gpu02.
grep -q '<queue name="gpu" max-time="172800s"/>' "$f" && grep -q '<queue name="debug" max-time="3600s" nodes="gpu\[01-02\]"/>' "$f" \
  && ok "partitions as queues with max-time and node sets" || no "queues: $(grep queue "$f")"
grep -q '<ratios user="alice" values="0.5 0.5"/>' "$f" && ok "runtime-history per user" || no "ratios: $(grep ratios "$f")"
grep -q '^101,-8000,gpu,4,16,,86400,running,7200,alice,ml,,gpu\[01-02\],train-a$' "$tmp/s-24.05.jobs.csv" \
  && ok "running job row: elapsed, limit, nodes" || no "row 101: $(grep ^101 "$tmp/s-24.05.jobs.csv")"
grep -q '^104,.*,pending,,alice,ml,101,,post$' "$tmp/s-24.05.jobs.csv" && ok "dependency as after" || no "row 104"
[ "$(grep -c '^105_' "$tmp/s-24.05.jobs.csv")" = 4 ] && ok "array 105_[0-3] as four tasks" || no "array tasks"

expect_status 0 "the snapshot checks" "$bin" check "$f"
expect_status 0 "the snapshot runs" "$bin" run "$f" --json "$tmp/r.json" --no-db
python3 - "$tmp/r.json" >"$tmp/checks" 2>&1 <<'PY'
import sys
sys.path.insert(0, "tests")
from ctrun import Checks, jobs_by_id
d, jobs = jobs_by_id(sys.argv[1])
check = Checks()
check(d.get("snapshot_time") == "2025-11-26T09:30:00Z", "snapshot_time")
check(d["cluster"].get("nodes_unavailable_at_start") == 2, "2 nodes out at t = 0")
check(jobs["101"]["start_s"] == -7200 and jobs["101"]["state_at_snapshot"] == "running", "101 started at -elapsed")
check(jobs["103"]["state_at_snapshot"] == "held" and jobs["103"]["start_s"] is None, "held job never starts")
check(all(jobs["105_%d" % t]["start_s"] is not None for t in range(4)), "the array's tasks run")
check(jobs["104"]["start_s"] >= jobs["101"]["end_s"], "104 waits for 101")
PY
while read -r word rest; do case $word in ok) ok "$rest" ;; *) no "$rest" ;; esac; done <"$tmp/checks"

# sacct -P text and sacct --json give the same history, hence the same scenario.
expect_status 0 "snapshot with --sacct-text" "$bin" snapshot --from slurm --squeue tests/slurm/22.05/squeue.json \
  --sinfo tests/slurm/22.05/sinfo.json --sacct-text tests/slurm/22.05/sacct.txt --at $AT --out "$tmp/t.xml"
grep '<ratios' "$tmp/t.xml" >"$tmp/a"; grep '<ratios' "$tmp/s-22.05.xml" >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" && ok "sacct -P text: the same ratios as sacct --json" || no "ratios differ"

# A job that started in the snapshot's own second (start_time = --at, as a
# live snapshot on a busy machine can read it) has elapsed 0, not "-0". Both
# times are fixed here (the fixture's start_time and --at $AT): the check reads
# a written field, not the clock, so it holds however fast the machine is.
python3 - "$tmp" <<'PY'
import json, sys
d = json.load(open("tests/slurm/23.11/squeue.json"))
for j in d["jobs"]:
    if j["job_id"] == 108:
        j["start_time"] = {"set": True, "infinite": False, "number": 1764149400}
json.dump(d, open(sys.argv[1] + "/squeue-now.json", "w"))
PY
expect_status 0 "a job started at the snapshot's second" "$bin" snapshot --from slurm --squeue "$tmp/squeue-now.json" \
  --sinfo tests/slurm/23.11/sinfo.json --sacct tests/slurm/23.11/sacct.json --at $AT --out "$tmp/now.xml"
grep -q '^108,[^,]*,gpu,[^,]*,8,,[^,]*,running,0,' "$tmp/now.jobs.csv" && ok "its elapsed is 0" \
  || no "elapsed of a job started at --at: $(grep '^108,' "$tmp/now.jobs.csv")"

# Replay: the history as a trace; run compares the simulated starts with Slurm's.
expect_status 0 "--replay" "$bin" snapshot --from slurm --sacct tests/slurm/23.11/sacct.json --sinfo tests/slurm/23.11/sinfo.json \
  --replay --out "$tmp/rep.xml"
expect_status 0 "run the replay" "$bin" run "$tmp/rep.xml" --json "$tmp/rep.json" --no-db
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["replay"]; sys.exit(0 if r["jobs"] == 6 else 1)' "$tmp/rep.json" \
  && ok "replay object over the 6 jobs that ran" || no "replay: $(grep -A4 replay "$tmp/rep.json")"
expect_status 2 "--replay without sinfo or --node-type" "$bin" snapshot --from slurm --sacct-text tests/slurm/22.05/sacct.txt --replay --out "$tmp/x.xml"
grep -q "give --node-type" "$tmp/err" && ok "names --node-type" || no "message: $(cat "$tmp/err")"
expect_status 0 "--replay from text with --node-type" "$bin" snapshot --from slurm --sacct-text tests/slurm/22.05/sacct.txt \
  --replay --node-type dgx-h100 --out "$tmp/x.xml"

# Real Slurm 22.05.8 output (tests/slurm/22.05-real/, see tests/test_slurm.c): Gres=gpu:8 names no
# model, so --node-type; the snapshot runs, the held job never starts, the drained node is out.
real=tests/slurm/22.05-real
expect_status 0 "snapshot of a real Slurm 22.05" "$bin" snapshot --from slurm --squeue $real/squeue.json --sinfo $real/sinfo.json \
  --sacct $real/sacct.json --at "$(cat $real/at.txt)" --node-type dgx-h100 --out "$tmp/real.xml"
grep -q '2 running, 6 pending, 1 held' "$tmp/out" && ok "real: 2 running, 6 pending, 1 held" || no "real: $(cat "$tmp/out")"
grep -q '<unavailable nodes="node04" state="drained" reason="XID 79 GPU fell off the bus"/>' "$tmp/real.xml" \
  && ok "real: the drained node and its reason" || no "real: $(grep unavailable "$tmp/real.xml")"
expect_status 0 "run the real snapshot" "$bin" run "$tmp/real.xml" --json "$tmp/real.json" --no-db
python3 -c 'import json,sys; j={x["id"]: x for x in json.load(open(sys.argv[1]))["jobs"]}; sys.exit(0 if j["8"]["start_s"] is None and j["5"]["start_s"] < 0 else 1)' \
  "$tmp/real.json" && ok "real: held never starts, running started before t = 0" || no "real run"

# Unknown GPU model: an error naming the option; --node-type maps it.
sed 's/gpu:h100:8/gpu:tpu9:8/; s/gres\/gpu:h100=16/gres\/gpu=16/' tests/slurm/23.11/sinfo.json >"$tmp/sinfo-tpu.json"
expect_status 2 "unknown GPU model" "$bin" snapshot --from slurm --sinfo "$tmp/sinfo-tpu.json" --squeue tests/slurm/23.11/squeue.json --at $AT --out "$tmp/u.xml"
grep -q "GPU model 'tpu9' has no catalog node type; give --node-type" "$tmp/err" && ok "names the model and the option" || no "$(cat "$tmp/err")"
[ ! -e "$tmp/u.xml" ] && [ ! -e "$tmp/u.jobs.csv" ] && ok "nothing written" || no "wrote a file"
expect_status 0 "--node-type hgx-h200" "$bin" snapshot --from slurm --sinfo "$tmp/sinfo-tpu.json" --node-type hgx-h200 --at $AT --out "$tmp/u.xml"
grep -q 'type="hgx-h200"' "$tmp/u.xml" && ok "--node-type used" || no "type: $(grep '<nodes' "$tmp/u.xml")"
expect_status 2 "--node-type not in the catalog" "$bin" snapshot --from slurm --sinfo "$tmp/sinfo-tpu.json" --node-type nope --at $AT --out "$tmp/u.xml"

# A GPU count other than the catalog's: a <catalog> variant.
sed 's/gpu:h100:8/gpu:h100:4/' tests/slurm/23.11/sinfo.json >"$tmp/sinfo-4.json"
expect_status 0 "4-GPU nodes" "$bin" snapshot --from slurm --sinfo "$tmp/sinfo-4.json" --at $AT --out "$tmp/v.xml"
grep -q '<node name="dgx-h100-4gpu" base="dgx-h100" gpus="4"/>' "$tmp/v.xml" && ok "catalog variant for 4 GPUs" || no "variant"

# Running the commands: none on PATH is a clear error.
expect_status 2 "no squeue on PATH" env PATH=/nonexistent "$bin" snapshot --from slurm --out "$tmp/n.xml"
grep -q "not found" "$tmp/err" && ok "says the command is not found" || no "$(cat "$tmp/err")"

# Usage and targets.
expect_status 2 "--from k8s is not this source" "$bin" snapshot --from pbs --out "$tmp/n.xml"
expect_status 2 "--out must be .xml" snap 23.11 "$tmp/n.txt"
mkdir "$tmp/dir.xml"
expect_status 2 "a directory as --out" snap 23.11 "$tmp/dir.xml"
expect_status 2 "bad --at" snap 23.11 "$tmp/n.xml" --at yesterday

# Draining (Slurm's MIXED/ALLOCATED+DRAIN): 22.05's gpu03, running job 108,
# drained under it. The node is written draining and keeps its job; the run
# ends the job there and counts the node draining, not out of service.
python3 - tests/slurm/22.05/sinfo.json "$tmp/sinfo-drain.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for n in d["nodes"]:
    if n["name"] == "gpu03":
        n["state_flags"], n["reason"] = ["DRAIN"], "kernel update"
json.dump(d, open(sys.argv[2], "w"))
PY
expect_status 0 "snapshot a node draining under a job" "$bin" snapshot --from slurm --squeue tests/slurm/22.05/squeue.json \
  --sinfo "$tmp/sinfo-drain.json" --at $AT --out "$tmp/dr.xml"
grep -q '(2 out of service, 1 draining)' "$tmp/out" && ok "draining: counted apart" || no "draining summary: $(cat "$tmp/out")"
grep -q '<unavailable nodes="gpu03" state="draining" reason="kernel update"/>' "$tmp/dr.xml" \
  && ok "draining: written state=draining" || no "draining: $(grep unavailable "$tmp/dr.xml")"
grep -q '^108,.*,running,1800,.*,gpu03,infer$' "$tmp/dr.jobs.csv" && ok "draining: the job keeps its node" \
  || no "draining row 108: $(grep ^108 "$tmp/dr.jobs.csv")"
expect_status 0 "the draining snapshot runs" "$bin" run "$tmp/dr.xml" --json "$tmp/dr.json" --no-db
python3 - "$tmp/dr.json" <<'PY' && ok "draining run: 108 ends where it ran, 1 draining, 2 out" || no "draining run"
import json, sys
d = json.load(open(sys.argv[1]))
j = {j["id"]: j for j in d["jobs"]}["108"]
assert j["start_s"] == -1800 and j["state"] in ("done", "timeout"), j
assert d["cluster"]["nodes_draining_at_start"] == 1 and d["cluster"]["nodes_unavailable_at_start"] == 2, d["cluster"]
PY

# Kubernetes (tests/k8s/, docs/live-k8s.md): pods, nodes, Kueue Workloads and
# AppWrappers snapshot the same way. Pods carry no time limit: without
# --default-limit every job is left out and said so; with it the trace holds
# the running, pending and held jobs; a gang only partly placed (aw-c: 2 of its
# 4 pods on nodes) and a pod sharing a full node (notebook-abc) are written
# without nodes, so the scheduler places them and the snapshot forecasts.
K8S_AT=1795685400   # 2026-11-26T09:30:00Z (tests/test_k8s.c's NOW)
k8s() { "$bin" snapshot --from k8s --pods tests/k8s/pods.json --nodes tests/k8s/nodes.json \
    --workloads tests/k8s/workloads.json --appwrappers tests/k8s/appwrappers.json --at $K8S_AT "$@"; }
expect_status 0 "snapshot --from k8s without a default limit" k8s --out "$tmp/k0.xml"
grep -q '6 without a time limit' "$tmp/out" && [ "$(sed 1d "$tmp/k0.jobs.csv")" = "$(grep '^ml/train-a,' "$tmp/k0.jobs.csv")" ] \
  && ok "k8s: jobs without a limit are left out and counted (train-a has activeDeadlineSeconds)" || no "k8s no limit: $(cat "$tmp/out")"
expect_status 0 "snapshot --from k8s --default-limit 3d" k8s --default-limit 3d --out "$tmp/k.xml"
grep -q '3 running, 3 pending, 1 held' "$tmp/out" && ok "k8s: the summary counts the jobs" || no "k8s summary: $(cat "$tmp/out")"
grep -q '^ml/train-a,.*,running,.*"gpu-node-1,gpu-node-2",train-a$' "$tmp/k.jobs.csv" \
  && grep -q '^ml/aw-c,.*,running,[0-9]*,,ml,,,aw-c$' "$tmp/k.jobs.csv" \
  && grep -q '^ml/notebook-abc,.*,running,[0-9]*,,ml,,,notebook-abc$' "$tmp/k.jobs.csv" \
  && ok "k8s: a fully placed gang keeps its nodes; a partial gang and a shared node are placed by the scheduler" \
  || no "k8s trace: $(cat "$tmp/k.jobs.csv")"
grep -q 'state="drained" reason="cordoned' "$tmp/k.xml" && grep -q 'state="down" reason="NodeStatusUnknown' "$tmp/k.xml" \
  && ok "k8s: cordoned nodes drained, NotReady nodes down" || no "k8s unavailable: $(grep unavailable "$tmp/k.xml")"
expect_status 0 "forecast a Kubernetes snapshot" "$bin" forecast "$tmp/k.xml" --replicas 3 -q --json "$tmp/kf.json"
python3 - "$tmp/kf.json" <<'PY' && ok "k8s forecast: the held workload never starts, the others do" || no "k8s forecast"
import json, sys
jobs = {j["id"]: j for j in json.load(open(sys.argv[1]))["variants"][0]["jobs"]}
assert jobs["ml/paused"]["state_at_snapshot"] == "held" and jobs["ml/paused"]["started_share"] == 0, jobs["ml/paused"]
assert all(jobs[k]["started_share"] == 1 for k in ("ml/ft-b", "research/aw-d", "ml/sweep")), jobs
PY
# Without files, kubectl's answers are read as text (a stand-in kubectl on
# PATH prints the same lists; this cluster serves no AppWrapper CRD): the
# same trace as from the files without --appwrappers; a list that is not
# JSON is refused naming the command and its line.
mkdir -p "$tmp/kbin"
cat >"$tmp/kbin/kubectl" <<SH
#!/bin/sh
case "\$2" in
  pods) cat "$(pwd)/tests/k8s/pods.json" ;;
  nodes) [ -n "\$K8S_BAD" ] && { echo '{"items": [}'; exit 0; }; cat "$(pwd)/tests/k8s/nodes.json" ;;
  workloads.*) cat "$(pwd)/tests/k8s/workloads.json" ;;
  *) echo "error: the server doesn't have a resource type \"\$2\"" >&2; exit 1 ;;
esac
SH
chmod +x "$tmp/kbin/kubectl"
expect_status 0 "snapshot --from k8s from kubectl's output" env PATH="$tmp/kbin:$PATH" "$bin" snapshot --from k8s \
  --default-limit 3d --at $K8S_AT --out "$tmp/kk.xml"
expect_status 0 "the same lists as files, without AppWrappers" "$bin" snapshot --from k8s --pods tests/k8s/pods.json \
  --nodes tests/k8s/nodes.json --workloads tests/k8s/workloads.json --default-limit 3d --at $K8S_AT --out "$tmp/kf2.xml"
cmp -s "$tmp/kk.jobs.csv" "$tmp/kf2.jobs.csv" && ok "k8s: kubectl's text gives the trace its files give" \
  || no "k8s text: $(diff "$tmp/kk.jobs.csv" "$tmp/kf2.jobs.csv" | head -5)"
expect_status 2 "kubectl printing bad JSON" env K8S_BAD=1 PATH="$tmp/kbin:$PATH" "$bin" snapshot --from k8s \
  --default-limit 3d --at $K8S_AT --out "$tmp/kx.xml"
grep -q '^kubectl get nodes:1: ' "$tmp/err" && [ ! -e "$tmp/kx.xml" ] && ok "k8s: bad kubectl output named by its command and line" \
  || no "k8s bad text: $(cat "$tmp/err")"
expect_status 2 "--from k8s with a Slurm report" k8s --squeue tests/slurm/23.02/squeue.json --out "$tmp/kb.xml"
grep -q 'not Slurm' "$tmp/err" && [ ! -e "$tmp/kb.xml" ] && ok "k8s: Slurm options refused" || no "k8s + squeue: $(cat "$tmp/err")"
expect_status 2 "--default-limit not a duration" k8s --default-limit 3GB --out "$tmp/kb.xml"
expect_status 2 "a malformed pod list" "$bin" snapshot --from k8s --pods tests/k8s/pods-bad-gpu.json --at $K8S_AT --out "$tmp/kb.xml"
grep -q '^tests/k8s/pods-bad-gpu.json:[0-9]*: ' "$tmp/err" && [ ! -e "$tmp/kb.xml" ] && ok "k8s: a bad pod list names file:line" \
  || no "k8s bad pods: $(cat "$tmp/err")"

# Malformed reports: exit 2, one line naming file:line, nothing written.
while IFS="|" read -r file line expect; do
  case $file in ''|'#'*) continue ;; esac
  case $file in squeue*) opt=--squeue ;; sinfo*) opt=--sinfo ;; *.txt) opt=--sacct-text ;; *) opt=--sacct ;; esac
  expect_status 2 "bad/$file" "$bin" snapshot --from slurm $opt "tests/slurm/bad/$file" --at $AT --out "$tmp/bad.xml"
  head -n 1 "$tmp/err" | grep -qF "tests/slurm/bad/$file:$line: " && grep -qF "$expect" "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ] \
    || no "bad/$file message: $(cat "$tmp/err")"
  [ ! -e "$tmp/bad.xml" ] || no "bad/$file wrote the scenario"
done <tests/slurm/bad/expected.txt

[ $fails = 0 ] && echo "snapshot: all $n passed" || echo "snapshot: $fails failed"
[ $fails = 0 ]
