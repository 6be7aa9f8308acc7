#!/bin/sh
# cli_slurm.sh BINARY: a real Slurm (Debian 12's slurm-wlm 22.05) on this
# machine (tests/slurmlib.sh: munged, mariadbd, slurmdbd, slurmctld, 4
# slurmd with 8 fake GPUs each, loopback only, all in a temporary
# directory). It makes a history (jobs that complete, fail, are cancelled,
# time out, are requeued, and one that dies with its node), drains a node
# with an XID reason, leaves another down, then submits a queue (multi-node,
# arrays with a throttle, a dependency, a held job, --nice, two accounts),
# captures what squeue, sinfo, sacct and scontrol say, and lets Slurm run
# the queue to the end. Checks that Slurm really ran it by its own rules
# (states, exit codes, the dependency, the throttle, priorities, no job on
# the drained or down node) and records the order it started the jobs in.
# Where `clustertwin snapshot` and `forecast` exist, snapshots the live
# queue, forecasts it and checks the forecast's p50 start order of the
# pending jobs against the order Slurm then followed; first the same from
# the capture in tests/slurm/22.05-queue, which needs no Slurm.
# Skips the real Slurm (exit 0, "skip ... SKIP:") when not root or the
# packages are missing.
# SLURM_CAPTURE=DIR copies what was captured into DIR (tests/slurm/22.05-queue/
# was made so; tests/slurm/README.md).
suite=slurm
SLURM_NODES=5
. "$(dirname "$0")/slurmlib.sh"
slurm_isolate "$0" "$@"
. "$(dirname "$0")/clilib.sh"
# same_order FORECAST_JSON SLURM_ORDER WHAT: the forecast's p50 start order
# of the jobs pending at the snapshot is the order Slurm then started them
# in (slurm_order.txt). Starts less than 3 s apart in sacct (1-second
# resolution, one scheduling pass) are ties; so are equal p50s.
same_order() {
  python3 - "$1" "$2" >"$tmp/cmp" 2>&1 <<'PY' \
    && ok "forecast p50 start order of the pending jobs = Slurm's, $3 ($(tail -n 1 "$tmp/cmp"))" \
    && echo "     $suite: job Slurm's start/forecast p50, s after the snapshot: $(tail -n 2 "$tmp/cmp" | head -n 1)" \
    || no "forecast start order vs Slurm's, $3: $(tr '\n' ';' <"$tmp/cmp" | head -c 900)"
import json, sys
f = json.load(open(sys.argv[1]))
p50 = {j["id"]: j["start_p50_s"] for j in f["variants"][0]["jobs"]
       if j.get("state_at_snapshot") == "pending"}
slurm = {}
for line in open(sys.argv[2]):
    i, name, state, start, *_ = line.rstrip("\n").split("|")
    if start != "" and i in p50:
        slurm[i] = int(start)
ids = sorted(slurm, key=slurm.get)
bad = []
for a in ids:
    for b in ids:
        if slurm[b] - slurm[a] >= 3:
            pa, pb = p50[a], p50[b]
            if pa is None or (pb is not None and pa > pb):
                bad.append(f"{a} (Slurm {slurm[a]} s, p50 {pa}) before {b} (Slurm {slurm[b]} s, p50 {pb})")
for x in bad:
    print(x)
print("  ".join(f"{i} {slurm[i]}/{p50[i]:.0f}" if p50[i] is not None else f"{i} {slurm[i]}/-" for i in ids))
print(f"{len(ids)} pending jobs compared, {len(bad)} pairs out of order")
sys.exit(1 if bad or len(ids) < 4 else 0)
PY
}

# The twin against what Slurm did, from the capture in tests/slurm/22.05-queue
# (needs neither root nor Slurm): snapshot at the capture, forecast, and
# compare with the order Slurm started the queue in that run.
twin=no
if "$bin" snapshot --help >/dev/null 2>&1 && "$bin" forecast --help >/dev/null 2>&1; then
  twin=yes
  q=tests/slurm/22.05-queue
  expect_status 0 "snapshot of the captured queue ($q)" "$bin" snapshot --from slurm --squeue $q/squeue.json \
    --sinfo $q/sinfo.json --sacct $q/sacct.json --at "$(cat $q/at.txt)" --out "$tmp/q.xml"
  expect_status 0 "forecast of the captured queue" "$bin" forecast "$tmp/q.xml" --replicas 20 --json "$tmp/qf.json"
  same_order "$tmp/qf.json" $q/slurm_order.txt "as captured in $q"
else
  skip "this clustertwin has no snapshot and forecast commands: the forecast was not compared with Slurm"
fi

slurm_start || { echo "$n checks, $fails failed"; [ $fails = 0 ]; exit; }
ok "a private Slurm ($(sl sinfo -V)) with $SLURM_NODES nodes of 8 GPUs starts on 127.0.0.1$(
  [ -n "${CLUSTERTWIN_SLURM_NETNS:-}" ] && echo ", in a network namespace of its own")"
cap=$tmp/capture
mkdir -p "$cap"

# field ID FORMAT: squeue's FORMAT for job ID in any state (a line per array task).
field() { sl squeue -h -t all -j "$1" -o "$2" 2>/dev/null; }
# wait_job ID STATE: poll until every row of job ID is in STATE.
wait_job() {
  poll "[ \"\$(field $1 %T | sort -u)\" = $2 ]" 'slurm_alive slurmctld' \
    || no "job $1 reaches $2 (it is $(field "$1" %T | sort -u | tr '\n' ' '))"
}
# acct ID: the final state of job ID's allocation(s) in accounting.
acct() { sl sacct -n -X -P -j "$1" -o State 2>/dev/null | sed 's/ by .*//' | sort -u | tr '\n' ' '; }
# node_state NODE: sinfo's compact state of NODE (idle, mix, drain, down*...).
node_state() { sl sinfo -h -N -n "$1" -o %t 2>/dev/null | head -n 1; }

# --- History: every way a job ends -------------------------------------
# Every job that ends by itself runs a third of its limit (20 s of 1 min),
# as the live queue's jobs below do: a snapshot learns run time / limit
# from this history (<runtime-history>), so the forecast can know the
# queue's run times only if the history is like the queue. The timed-out
# job adds a ratio of 1, one in 14.
h_timeout=$(sb -J h-timeout -t 1 --gres=gpu:1 -w node05 --wrap 'sleep 600')
h_ok=$(sb -J h-ok -t 1 --gres=gpu:1 --wrap 'sleep 20')
h_multi=$(sb -J h-multi -t 1 -N 2 --gres=gpu:4 --account=vision --wrap 'sleep 20')
h_arr=$(sb -J h-arr -t 1 --array=0-9 --gres=gpu:1 --wrap 'sleep 20')
h_fail=$(sb -J h-fail -t 1 --gres=gpu:1 --wrap 'sleep 20; exit 3')
h_cancel=$(sb -J h-cancel -t 5 --gres=gpu:2 --wrap 'sleep 600')
h_requeue=$(sb -J h-requeue -t 5 --requeue --gres=gpu:1 --wrap 'sleep 600')
h_nodefail=$(sb -J h-nodefail -t 5 --no-requeue -w node04 --gres=gpu:8 --wrap 'sleep 600')
[ -n "$h_timeout" ] && [ -n "$h_nodefail" ] && ok "sbatch submits the history jobs" \
  || no "sbatch submits the history jobs"
wait_job "$h_cancel" RUNNING
sl scancel "$h_cancel"
wait_job "$h_requeue" RUNNING
sl scontrol requeue "$h_requeue"
poll "sl sacct -n -X -D -P -j $h_requeue -o State | grep -q REQUEUED" 'slurm_alive slurmctld' \
  && ok "a requeued job has a REQUEUED record in sacct" || no "requeued job: $(sl sacct -n -X -D -P -j "$h_requeue" -o State)"
sl scancel "$h_requeue"
# A node that dies under its job: stop node04's slurmd (its own PID); after
# SlurmdTimeout the controller marks the node down and the job NODE_FAIL.
wait_job "$h_nodefail" RUNNING
slurm_kill "$(awk '$2 == "slurmd-node04" { print $1 }' "$sd/pids")"
poll '[ "$(acct $h_nodefail)" = "NODE_FAIL " ]' 'slurm_alive slurmctld'
case $(node_state node04) in down*) ok "node04 is down after its slurmd stopped, its job NODE_FAIL" ;;
  *) no "node04 down ($(node_state node04)), job $h_nodefail NODE_FAIL ($(acct "$h_nodefail"))" ;; esac
for j in $h_ok $h_multi $h_arr $h_fail $h_cancel $h_requeue; do
  poll "! sl squeue -h -t PD,R,CG,CF -j $j 2>/dev/null | grep -q ." 'slurm_alive slurmctld'
done
# An XID 79 (GPU fallen off the bus: NVIDIA's XID catalogue) drains node03.
sl scontrol update nodename=node03 state=drain reason="XID 79 GPU fell off the bus"
poll '[ "$(node_state node03)" = drain ]' 'slurm_alive slurmctld'
[ "$(sl sinfo -h -N -n node03 -o %E)" = "XID 79 GPU fell off the bus" ] \
  && ok "node03 drained with reason 'XID 79 GPU fell off the bus'" || no "node03 drained ($(node_state node03))"
# An XID 48 (double-bit ECC error) drains node05 under its running job:
# DRAINING until h-timeout ends (TIMEOUT, past its 1-minute limit), then
# drained.
wait_job "$h_timeout" RUNNING
sl scontrol update nodename=node05 state=drain reason="XID 48 double-bit ECC error"
poll '[ "$(node_state node05)" = drng ]' 'slurm_alive slurmctld' \
  && ok "node05 draining under its job" || no "node05 draining ($(node_state node05))"

# The whole history ends before the live queue starts.
wait_job "$h_timeout" TIMEOUT
poll '[ "$(node_state node05)" = drain ]' 'slurm_alive slurmctld' \
  && ok "node05 drained once its job timed out" || no "node05 drained ($(node_state node05))"
want="$h_ok:COMPLETED $h_multi:COMPLETED $h_arr:COMPLETED $h_fail:FAILED $h_cancel:CANCELLED $h_timeout:TIMEOUT $h_nodefail:NODE_FAIL"
bad=""
for w in $want; do
  [ "$(acct "${w%%:*}")" = "${w#*:} " ] || bad="$bad ${w%%:*}=$(acct "${w%%:*}")(want ${w#*:})"
done
[ -z "$bad" ] && ok "the history ends as meant: completed, failed, cancelled, requeued, timed out, node failure" \
  || no "history states:$bad"
[ "$(sl sacct -n -X -P -j "$h_fail" -o ExitCode)" = "3:0" ] && ok "the failed job's exit code is 3" \
  || no "failed job's exit code: $(sl sacct -n -X -P -j "$h_fail" -o ExitCode)"

# --- The live queue on node01 and node02 (16 GPUs) -----------------------
# Every job runs a third of its limit (20 s a minute). Running first:
# run-a 8 GPUs (ends at about 37 s after the capture), run-b 3 x 2 GPUs
# (about 77 s): 2 GPUs free.
r_a=$(sb -J run-a -t 2 --gres=gpu:8 --wrap 'sleep 40')
r_b=$(sb -J run-b -t 4 --array=0-2 --gres=gpu:2 --account=vision --wrap 'sleep 80')
for j in $r_a $r_b; do wait_job "$j" RUNNING; done
# Then the pending jobs, in this order of priority (priority/basic: earlier
# submitted first, --nice lowers it). pend-wide needs all 16 GPUs, so it
# waits for run-b; its reservation lets backfill start what ends before it,
# by the limits (Slurm) as by the run times (the twin): pend-arr's tasks
# two at a time (%2) in the 2 free GPUs, then, once run-a ends, pend-mid
# and pend-dep (whose dependency run-a was), then pend-nice. No decision
# is close either way (the nearest is 57 s vs a 77 s reservation), so the
# order does not hang on when Slurm's scheduler happens to run.
p_wide=$(sb -J pend-wide -t 1 -N 2 --gres=gpu:8 --wrap 'sleep 20')
p_mid=$(sb -J pend-mid -t 1 --gres=gpu:4 --wrap 'sleep 20')
p_dep=$(sb -J pend-dep -t 1 --gres=gpu:2 --dependency=afterany:$r_a --wrap 'sleep 20')
p_held=$(sb -J pend-held -t 1 --gres=gpu:1 --hold --wrap 'sleep 20')
p_nice=$(sb -J pend-nice -t 1 --gres=gpu:4 --nice=1000 --account=vision --wrap 'sleep 20')
p_arr=$(sb -J pend-arr -t 1 --array=0-3%2 --gres=gpu:1 --wrap 'sleep 20')
live="$r_a $r_b $p_wide $p_mid $p_dep $p_held $p_nice $p_arr"
reason() { field "$1" %r | head -n 1; }
poll '[ "$(reason $p_wide)" = Resources ] && [ "$(reason $p_mid)" = Priority ] && [ "$(reason $p_dep)" = Dependency ] && [ "$(reason $p_held)" = JobHeldUser ]' \
  'slurm_alive slurmctld' && ok "pending reasons: Resources, Priority, Dependency, JobHeldUser" \
  || no "pending reasons: wide $(reason "$p_wide"), mid $(reason "$p_mid"), dep $(reason "$p_dep"), held $(reason "$p_held")"
# What a snapshot reads, all at this moment (at.txt: when, for --at).
t0=$(date +%s)
echo "$t0" >"$cap/at.txt"
sl squeue --json >"$cap/squeue.json" 2>"$tmp/err" || no "squeue --json: $(head -c 300 "$tmp/err")"
sl sinfo --json >"$cap/sinfo.json" 2>"$tmp/err" || no "sinfo --json: $(head -c 300 "$tmp/err")"
sl sacct --json -a -S now-1days >"$cap/sacct.json" 2>"$tmp/err" || no "sacct --json: $(head -c 300 "$tmp/err")"
fmt=JobID,JobIDRaw,JobName,User,Account,Partition,State,ExitCode,Submit,Eligible,Start,End,Elapsed,Timelimit,NNodes,NodeList,ReqTRES,AllocTRES,Priority,Reason
sl sacct -a -P -S now-1days --format=$fmt >"$cap/sacct.txt" 2>"$tmp/err" || no "sacct -P: $(head -c 300 "$tmp/err")"
sl scontrol show node -o >"$cap/scontrol_nodes.txt" 2>&1
sl scontrol show job -o >"$cap/scontrol_jobs.txt" 2>&1
python3 - "$cap" <<'PY' && ok "squeue, sinfo and sacct --json parse (data parser v0.0.38)" || no "the captured JSON"
import json, sys
for f in ("squeue", "sinfo", "sacct"):
    d = json.load(open(f"{sys.argv[1]}/{f}.json"))
    assert d["meta"]["plugin"]["type"] in ("openapi/v0.0.38", "openapi/dbv0.0.38"), (f, d["meta"])
    assert d["jobs" if f != "sinfo" else "nodes"], f
PY

# The twin of this moment: from the captured files, and once from the live
# cluster (snapshot runs squeue, sinfo and sacct itself).
if [ $twin = yes ]; then
  mkdir -p "$tmp/snap" "$tmp/live"
  expect_status 0 "snapshot --from slurm of the captured files" "$bin" snapshot --from slurm \
    --squeue "$cap/squeue.json" --sinfo "$cap/sinfo.json" --sacct "$cap/sacct.json" --at "$t0" --out "$tmp/snap/S.xml"
  expect_status 0 "snapshot --from slurm of the live cluster" sl "$bin" snapshot --from slurm --out "$tmp/live/S.xml"
fi

# --- Slurm runs the queue to the end (all but the held job) ------------
busy() { sl squeue -h -t PD,R,CG,CF -o %i 2>/dev/null | grep -v "^$p_held\$" | grep -q .; }
poll '! busy' 'slurm_alive slurmctld' && ok "Slurm runs the live queue to the end" \
  || no "the live queue did not end: $(sl squeue -h -o '%i %j %T %r' | tr '\n' ';')"
[ "$(field "$p_held" %T)" = PENDING ] && ok "the held job never starts" || no "held job: $(field "$p_held" %T)"
sl scancel "$p_held"
# Slurm's own record of the live queue: one line per job (array task) in
# the order it started them: id|name|state|start|end|nodes|nodelist, times
# in seconds after the capture.
for j in $live; do
  sl sacct -n -X -P -j "$j" -o JobID,JobName,State,Start,End,NNodes,NodeList
done | python3 -c '
import sys, datetime
t0 = int(sys.argv[1])
s = lambda x: int(datetime.datetime.fromisoformat(x).timestamp()) - t0 if x[:1].isdigit() else ""
rows = [l.rstrip("\n").split("|") for l in sys.stdin if l.strip()]
rows = [[r[0], r[1], r[2].split(" ")[0], s(r[3]), s(r[4]), r[5], r[6]] for r in rows]
rows.sort(key=lambda r: (r[3] == "", r[3] if r[3] != "" else 0, r[0]))
for r in rows:
    print("|".join(str(x) for x in r))' "$t0" >"$cap/slurm_order.txt"
sl sacct --json -a -S now-1days >"$cap/sacct_after.json" 2>/dev/null
python3 - "$cap/slurm_order.txt" <<'PY' && ok "Slurm ran the queue by its rules: states, dependency, array throttle, nice, no job on a drained or down node" || no "Slurm's run of the queue"
import sys
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1])]
job = {}
for i, name, state, start, end, nn, nl in rows:
    job.setdefault(name, []).append((i, state, int(start) if start else None, int(end) if end else None, int(nn), nl))
bad = []
for name, tasks in job.items():
    for i, state, start, end, nn, nl in tasks:
        want = "CANCELLED" if name == "pend-held" else "COMPLETED"
        if state != want:
            bad.append(f"{i} {name}: {state}, want {want}")
        if any(n in nl for n in ("node03", "node04", "node05")):
            bad.append(f"{i} {name} ran on {nl}")
assert len(job["pend-arr"]) == 4 and len(job["run-b"]) == 3, job
if job["pend-dep"][0][2] < job["run-a"][0][3]:
    bad.append("pend-dep started before run-a ended")
if job["pend-wide"][0][4] != 2:
    bad.append("pend-wide did not get 2 nodes")
if job["pend-nice"][0][2] < job["pend-mid"][0][2]:
    bad.append("pend-nice (nice 1000) started before pend-mid")
arr = [(t[2], t[3]) for t in job["pend-arr"]]
for s, _ in arr:
    running = sum(1 for s2, e2 in arr if s2 <= s < e2)
    if running > 2:
        bad.append(f"pend-arr: {running} tasks at once (throttle %2)")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
echo "     $suite: Slurm started the live queue in this order: $(cut -d'|' -f1,2,4 "$cap/slurm_order.txt" | tr '\n' ' ')"

if [ $twin = yes ]; then
  expect_status 0 "forecast the snapshot" "$bin" forecast "$tmp/snap/S.xml" --replicas 20 --json "$tmp/f.json"
  same_order "$tmp/f.json" "$cap/slurm_order.txt" "of this run"
fi

if [ -n "${SLURM_CAPTURE:-}" ]; then
  mkdir -p "$SLURM_CAPTURE" && cp "$cap"/* "$SLURM_CAPTURE"/ && sl sinfo -V >"$SLURM_CAPTURE/version.txt" \
    && ok "captured into $SLURM_CAPTURE" || no "copy the capture into $SLURM_CAPTURE"
fi
echo "$n checks, $fails failed"
[ $fails = 0 ]
