#!/bin/sh
# cli_sweep.sh BINARY: sweeps, plans, merges, MPI and Slurm, end to end.
#
#   bad input: a path matching nothing names the closest paths, a value of
#     the wrong kind names the path; exit 2 and no database written
#   determinism: the same sweep with 1 and 2 worker processes, and one point
#     swept alone, store the same JSON (but for wall_* fields) per
#     (point, replica); replicas of a point differ from each other
#   resume: a sweep interrupted by SIGTERM keeps what finished, and the same
#     command completes it without rerunning those; extending the grid runs
#     only the new points
#   report: HTML (well-formed, its charts exist), CSV rows per point and metric
#   Slurm: --emit-slurm writes a job array; its tasks run here one by one
#     (SLURM_ARRAY_TASK_ID set by hand) and merge.sh combines their
#     databases into the same results as a local sweep; merging again adds
#     nothing
#   MPI: mpirun -np 2 gives the same results as a local sweep (skipped,
#     visibly, without mpirun or without MPI built in); runs dealt to 2 and
#     3 ranks (with and without local workers, and resuming half the runs)
#     store the same results and print the same tables as one process
#   plan: a toy problem whose answer is known (tests/sweep/toy-batch.xml:
#     5 nodes) found by bisection, and a goal nothing meets exits 1
#   planning's numbers (issue 17): a point that does not fit is recorded
#     with its reason and the sweep/plan goes on; a goal naming a job,
#     service or queue that does not exist exits 2 naming those that do;
#     the answer states the configuration's GPUs; --replicas auto stops
#     early on a clear goal and runs to the maximum on a borderline one
# Prints ok/FAIL/skip per check and a summary; exits 1 on any failure.
suite=sweep
. "$(dirname "$0")/clilib.sh"
[ -x "$bin" ] || { echo "$0: $bin is not an executable" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "$0: needs python3" >&2; exit 2; }
# dump DB: one line per (point, replica): key, replica, seed, the JSON without wall_* fields
dump() {
  python3 - "$1" <<'PY'
import re, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
rows = con.execute("SELECT r.point_key, r.replica, r.seed, u.results_json FROM sweep_runs r "
                   "JOIN runs u ON u.id = r.run_id ORDER BY r.point_key, r.replica").fetchall()
for k, rep, seed, js in rows:
    print(k, rep, seed, re.sub(r'"wall[a-z_]*": *[-0-9.e+]+', '"wall"', js).replace("\n", " "))
PY
}
count() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM sweep_runs").fetchone()[0])' "$1" 2>/dev/null || echo 0; }

f=scenarios/pretrain-70b-1024gpu.xml
toy=tests/sweep/toy-batch.xml
big=scenarios/plan-70b-deadline.xml
tokens='workload/training[@name="pretrain"]/@tokens=60T'    # ~0.1 s a run: long enough to interrupt
ckpt='workload/training[@name="pretrain"]/checkpoint/@interval'

# ---- bad input ----
expect_status 2 "a path matching nothing" "$bin" sweep $f --vary 'cluster/node/@count=128,132' --db "$tmp/bad.db"
grep -q 'cluster/node/@count: matches nothing' "$tmp/err" && grep -q 'closest paths: cluster/nodes/@count' "$tmp/err" \
  && ok "it names the path and the closest existing paths" || no "path error message: $(cat "$tmp/err")"
expect_status 2 "a predicate matching nothing" "$bin" sweep $f --vary 'workload/training[@name="pretrian"]/checkpoint/@interval=1h' --db "$tmp/bad.db"
grep -q "closest paths: $(echo "$ckpt" | sed 's/\[/\\[/g')" "$tmp/err" && ok "the closest path has the right predicate" \
  || no "predicate suggestion: $(cat "$tmp/err")"
expect_status 2 "a value of the wrong kind" "$bin" sweep $f --vary "$ckpt=1h,64GB" --db "$tmp/bad.db"
grep -q 'checkpoint/@interval=64GB: scenarios/pretrain-70b-1024gpu.xml:21: <checkpoint interval="64GB">' "$tmp/err" \
  && ok "it names the path, the value and the line" || no "wrong-kind message: $(cat "$tmp/err")"
expect_status 2 "a range without a step" "$bin" sweep $f --vary 'cluster/nodes/@count=128..256' --db "$tmp/bad.db"
expect_status 2 "--vary without '='" "$bin" sweep $f --vary 'cluster/nodes/@count' --db "$tmp/bad.db"
expect_status 2 "--part out of range" "$bin" sweep $f --vary 'cluster/nodes/@count=132' --part 3/3 --db "$tmp/bad.db"
[ -e "$tmp/bad.db" ] && no "bad input left a database" || ok "bad input writes no database"

# ---- determinism ----
expect_status 0 "sweep with 1 process" "$bin" sweep $f --vary "$ckpt=30min..2h*2" --replicas 3 --jobs 1 --db "$tmp/j1.db" --quiet
expect_status 0 "the same sweep with 2 processes" "$bin" sweep $f --vary "$ckpt=30min..2h*2" --replicas 3 --jobs 2 --db "$tmp/j2.db"
grep -q '3 points x 3 replicas; 9 runs done now' "$tmp/out" && ok "sweep says what it ran" || no "sweep summary: $(head -3 "$tmp/out")"
grep -q 'jobs\[pretrain\].lost_work_s' "$tmp/out" && ok "sweep prints each metric's table" || no "sweep table missing"
dump "$tmp/j1.db" >"$tmp/d1"; dump "$tmp/j2.db" >"$tmp/d2"
[ "$(wc -l <"$tmp/d1")" = 9 ] && cmp -s "$tmp/d1" "$tmp/d2" && ok "1 and 2 processes store the same results" \
  || no "1 and 2 processes differ"
expect_status 0 "one point swept alone" "$bin" sweep $f --vary "$ckpt=60min" --replicas 3 --jobs 1 --db "$tmp/one.db" --quiet
dump "$tmp/one.db" >"$tmp/d3"
grep '"60min"' "$tmp/d1" >"$tmp/d1-60"
[ -s "$tmp/d3" ] && cmp -s "$tmp/d1-60" "$tmp/d3" && ok "a point rerun alone gives the same bytes" || no "a point rerun alone differs"
python3 - "$tmp/d1" <<'PY' && ok "replicas have distinct seeds and results; replica 0 uses the scenario's seed" || no "replica seeds/results"
import sys
rows = [l.split(" ", 3) for l in open(sys.argv[1])]
by = {}
for k, rep, seed, js in rows:
    by.setdefault(k, []).append((int(rep), int(seed), js))
for k, v in by.items():
    assert len({s for _, s, _ in v}) == len(v), v
    assert len({j for _, _, j in v}) == len(v)
    assert [s for r, s, _ in v if r == 0] == [1]
PY
"$bin" run $f --json "$tmp/r0.json" --no-db >/dev/null 2>&1
"$bin" sweep $f --vary 'cluster/spares/@warm=4' --db "$tmp/same.db" --quiet >/dev/null 2>&1
python3 - "$tmp/r0.json" "$tmp/same.db" <<'PY' && ok "replica 0 at the file's own values equals 'run'" || no "replica 0 differs from run"
import re, sqlite3, sys
strip = lambda t: re.sub(r'"wall[a-z_]*": *[-0-9.e+]+', '"wall"', t).strip()
run = open(sys.argv[1]).read()
js = sqlite3.connect(sys.argv[2]).execute("SELECT results_json FROM runs").fetchone()[0]
assert strip(run) == strip(js)
PY

# ---- resume ----
expect_status 0 "extending the grid" "$bin" sweep $f --vary "$ckpt=30min..4h*2" --replicas 3 --jobs 2 --db "$tmp/j2.db"
grep -q '3 runs done now, 9 already in' "$tmp/out" && ok "only the new point runs" || no "extend: $(head -1 "$tmp/out")"
# Interrupted after exactly its 2nd stored run, however fast or slow the
# machine: the test-only pause hook (cli/testpause.h) stops the sweep there
# until SIGTERM has been sent. timeout guards against a hang only.
guard=; command -v timeout >/dev/null 2>&1 && guard="timeout 600"
mkfifo "$tmp/pause"
# The runner writes the sweep's pid first and, once it has exited, opens the
# FIFO read-write (never blocks), which ends the wait if it never paused.
( CT_TEST_PAUSE_FIFO=$tmp/pause CT_TEST_PAUSE_AFTER=2 sh -c 'echo $$ >"$0" && exec "$@"' "$tmp/res.pid" \
    "$bin" sweep $big --vary 'cluster/spares/@warm=0,2' --set "$tokens" --replicas 10 --jobs 1 --db "$tmp/res.db" --quiet \
    >"$tmp/res.out" 2>"$tmp/res.err"
  echo $? >"$tmp/res.rc"; : <>"$tmp/pause" ) &
runner=$!
got=$($guard head -c 1 "$tmp/pause")
if [ "$got" = P ]; then
  kill -TERM "$(cat "$tmp/res.pid")" 2>/dev/null
  $guard sh -c ': >"$1"' sh "$tmp/pause"     # let it go on: it sees the signal and stops
else
  no "the sweep never reached its pause after 2 runs"
fi
wait $runner; st=$(cat "$tmp/res.rc" 2>/dev/null || echo none)
before=$(count "$tmp/res.db")
if [ $st = 1 ] && grep -q 'interrupted' "$tmp/res.err" && [ "$before" = 2 ]; then
  ok "an interrupted sweep exits 1 keeping $before finished runs"
else
  no "interrupt: exit $st, $before runs, $(cat "$tmp/res.err")"
fi
expect_status 0 "the same command resumes" "$bin" sweep $big --vary 'cluster/spares/@warm=0,2' --set "$tokens" --replicas 10 --jobs 2 --db "$tmp/res.db"
grep -q "$((20 - before)) runs done now, $before already in" "$tmp/out" && [ "$(count "$tmp/res.db")" = 20 ] \
  && ok "resume skips the runs already stored" || no "resume: $(head -1 "$tmp/out")"
expect_status 0 "the sweep uninterrupted" "$bin" sweep $big --vary 'cluster/spares/@warm=0,2' --set "$tokens" --replicas 10 --db "$tmp/full.db" --quiet
dump "$tmp/res.db" >"$tmp/r1"; dump "$tmp/full.db" >"$tmp/r2"
cmp -s "$tmp/r1" "$tmp/r2" && ok "interrupted + resumed = uninterrupted" || no "resumed results differ"

# ---- report ----
expect_status 0 "report of a sweep (HTML)" "$bin" report "$tmp/j2.db" --out "$tmp/rep"
python3 - "$tmp/rep" <<'PY' && ok "HTML is well-formed and its charts exist" || no "sweep HTML"
import os, re, sys, xml.dom.minidom
d = sys.argv[1]
xml.dom.minidom.parse(os.path.join(d, "index.html"))
html = open(os.path.join(d, "index.html")).read()
assert "jobs[pretrain].lost_work_s" in html and "p90" in html
for img in re.findall(r'src="([^"]+)"', html):
    assert os.path.exists(os.path.join(d, img)), img
PY
expect_status 0 "report of a sweep (CSV)" "$bin" report "$tmp/j2.db" --out "$tmp/rep" --format csv
python3 - "$tmp/rep/sweep.csv" <<'PY' && ok "CSV: mean, p10, p90 per point and metric, p10 <= mean-ish <= p90" || no "sweep CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
pts = {r['workload/training[@name="pretrain"]/checkpoint/@interval'] for r in rows}
assert pts == {"30min", "60min", "120min", "240min"}, pts
lw = [r for r in rows if r["metric"] == "jobs[pretrain].lost_work_s"]
assert len(lw) == 4 and all(int(r["runs"]) == 3 for r in lw)
for r in lw:
    assert float(r["p10"]) <= float(r["p50"]) <= float(r["p90"])
# lost work grows with the interval
m = {r['workload/training[@name="pretrain"]/checkpoint/@interval']: float(r["mean"]) for r in lw}
assert m["30min"] < m["60min"] < m["120min"] < m["240min"], m
PY

# ---- Slurm ----
expect_status 0 "--emit-slurm" "$bin" sweep $f --vary "$ckpt=30min..2h*2" --replicas 3 --emit-slurm "$tmp/slurm" --tasks 3 --db "$tmp/slurm.db"
[ -x "$tmp/slurm/sweep.sbatch" ] && [ "$(wc -l <"$tmp/slurm/tasks.txt")" = 3 ] && grep -q '^#SBATCH --array=0-2$' "$tmp/slurm/sweep.sbatch" \
  && ok "a job array of 3 tasks" || no "slurm files"
[ -e "$tmp/slurm.db" ] && no "--emit-slurm ran something" || ok "--emit-slurm runs nothing"
bash -n "$tmp/slurm/sweep.sbatch" && ok "sweep.sbatch parses" || no "sweep.sbatch syntax"
allok=1
for t in 0 1 2; do SLURM_ARRAY_TASK_ID=$t bash "$tmp/slurm/sweep.sbatch" >"$tmp/t$t.log" 2>&1 || allok=0; done
[ $allok = 1 ] && [ -f "$tmp/slurm/task-2.db" ] && ok "each array task runs its line" || no "slurm tasks: $(cat "$tmp"/t*.log | head -5)"
expect_status 0 "merge.sh" sh "$tmp/slurm/merge.sh"
grep -q '9 runs added' "$tmp/out" && ok "the tasks' 9 runs merged" || no "merge: $(cat "$tmp/out")"
dump "$tmp/slurm.db" >"$tmp/s1"
cmp -s "$tmp/s1" "$tmp/d1" && ok "merged Slurm tasks = a local sweep" || no "merged Slurm results differ"
expect_status 0 "merging again" "$bin" merge "$tmp/slurm.db" "$tmp/slurm/task-0.db"
grep -q '0 runs added, 3 already there skipped' "$tmp/out" && ok "merging again adds nothing" || no "re-merge: $(cat "$tmp/out")"
cp "$tmp/slurm.db" "$tmp/keep.db"
printf 'not a database at all, just text that SQLite will refuse to read as a file of pages' >"$tmp/junk.db"
expect_status 2 "merging a file that is not a database" "$bin" merge "$tmp/slurm.db" "$tmp/slurm/task-1.db" "$tmp/junk.db"
cmp -s "$tmp/slurm.db" "$tmp/keep.db" && ok "a failed merge leaves OUT as it was" || no "a failed merge changed OUT"
expect_status 0 "report of the merged database" "$bin" report "$tmp/slurm.db" --out "$tmp/srep" --format md
grep -q 'jobs\[pretrain\].end_s' "$tmp/srep/report.md" && ok "report of merged tasks" || no "merged report"

# ---- MPI ----
if ! command -v mpirun >/dev/null 2>&1; then
  skip "MPI with 2 ranks: no mpirun on this machine"
elif ! "$bin" sweep --help >/dev/null 2>&1; then
  no "sweep --help"
else
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  ASAN_OPTIONS=detect_leaks=0 timeout 300 mpirun -np 2 "$bin" sweep $f --vary "$ckpt=30min..2h*2" --replicas 3 --db "$tmp/mpi.db" \
    >"$tmp/mpi.out" 2>"$tmp/mpi.err" </dev/null; st=$?
  if [ $st = 1 ] && grep -q 'built without MPI' "$tmp/mpi.err"; then
    skip "MPI with 2 ranks: this clustertwin was built without MPI"
  elif [ $st = 0 ]; then
    ok "mpirun -np 2 sweep"
    grep -q 'on 2 MPI ranks' "$tmp/mpi.out" && ok "rank 0 reports 2 ranks" || no "MPI summary: $(head -1 "$tmp/mpi.out")"
    dump "$tmp/mpi.db" >"$tmp/m1"
    cmp -s "$tmp/m1" "$tmp/d1" && ok "2 MPI ranks = a local sweep" || no "MPI results differ"
    ASAN_OPTIONS=detect_leaks=0 timeout 300 mpirun -np 2 "$bin" sweep $f --vary 'cluster/spares/@warm=0,2,lots' --db "$tmp/mpibad.db" \
      >"$tmp/mpi.out" 2>"$tmp/mpi.err" </dev/null; st=$?
    [ $st = 2 ] && [ "$(grep -c 'clustertwin sweep: cluster/spares/@warm=lots: ' "$tmp/mpi.err")" = 1 ] && [ ! -e "$tmp/mpibad.db" ] \
      && ok "a bad point checked on rank 1: exit 2, said once by rank 0, no database" || no "MPI bad input (exit $st): $(head -c 300 "$tmp/mpi.err")"
    # a point that does not fit, checked on rank 1: rank 0 records it and runs the rest
    ASAN_OPTIONS=detect_leaks=0 timeout 300 mpirun -np 2 "$bin" sweep $f --vary 'cluster/spares/@warm=0,2,64' --db "$tmp/mpiunfit.db" \
      --quiet >"$tmp/mpi.out" 2>"$tmp/mpi.err" </dev/null; st=$?
    [ $st = 0 ] && [ "$(count "$tmp/mpiunfit.db")" = 2 ] && python3 - "$tmp/mpiunfit.db" <<'PY' \
      && ok "a point that does not fit on rank 1 is recorded by rank 0; the others run" || no "MPI unfit (exit $st): $(head -c 300 "$tmp/mpi.err")"
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("SELECT point_key, reason FROM sweep_unfit").fetchall()
assert len(rows) == 1 and rows[0][0] == '["64"]' and "needs 1024 GPUs" in rows[0][1], rows
PY
    # runs dealt as ranks ask (plan/guided.h): 1, 2 and 3 ranks, with and
    # without local workers, and a resume of half the runs, store the same
    # results and print the same tables
    sp="scenarios/llama3-405b-spares.xml --vary cluster/spares/@warm=0,16,32,64 --replicas 10"
    "$bin" sweep $sp --jobs 1 --db "$tmp/rk1.db" >"$tmp/rk1.out" 2>&1
    dump "$tmp/rk1.db" >"$tmp/rk1"; sed 1d "$tmp/rk1.out" | grep -v "clustertwin report" >"$tmp/rk1.t"
    "$bin" sweep $sp --part 0/2 --jobs 1 --db "$tmp/rkres.db" --quiet >/dev/null 2>&1
    for v in 2 3 3j 3res; do
      np=${v%%[a-z]*} db="$tmp/rk$v.db" extra="" what="$np ranks"
      [ $v = 3j ] && extra="--jobs 2" what="3 ranks of 2 workers"
      [ $v = 3res ] && db="$tmp/rkres.db" what="3 ranks resuming"
      ASAN_OPTIONS=detect_leaks=0 timeout 300 mpirun -np $np "$bin" sweep $sp $extra --db "$db" >"$tmp/rk.out" 2>"$tmp/rk.err" </dev/null; st=$?
      dump "$db" >"$tmp/rk"; sed 1d "$tmp/rk.out" | grep -v "clustertwin report" >"$tmp/rk.t"
      [ $st = 0 ] && [ "$(wc -l <"$tmp/rk")" = 40 ] && cmp -s "$tmp/rk" "$tmp/rk1" && cmp -s "$tmp/rk.t" "$tmp/rk1.t" \
        && ok "$what: the same 40 stored results and tables as 1 process" || no "$what (exit $st): $(head -c 300 "$tmp/rk.err")"
    done
    grep -q '20 runs done now, 20 already in' "$tmp/rk.out" && ok "3 ranks resume the half a --part left" || no "MPI resume: $(head -1 "$tmp/rk.out")"
  else
    no "mpirun -np 2 sweep (exit $st): $(head -c 600 "$tmp/mpi.err")"
  fi
fi

# ---- plan ----
expect_status 0 "plan on a toy problem" "$bin" plan $toy --goal "simulated_s <= 2.1h @ p90" --vary 'cluster/nodes/@count=1..40' --replicas 2 --db "$tmp/plan.db"
grep -q '^answer: cluster/nodes/@count=5$' "$tmp/out" && ok "the known answer: 5 nodes" || no "plan answer: $(grep answer "$tmp/out")"
grep -q 'bisection over 40 values; [0-9] points run' "$tmp/out" && ok "by bisection, fewer than 10 points of 40" || no "plan search: $(grep search "$tmp/out")"
grep -q 'cluster/nodes/@count=4  misses' "$tmp/out" && ok "evidence shows the failing neighbour" || no "plan evidence"
expect_status 0 "plan --json -" "$bin" plan $toy --goal "simulated_s <= 2.1h @ p90" --vary 'cluster/nodes/@count=1..40' --replicas 2 --db "$tmp/plan.db" --json -
python3 - "$tmp/out" <<'PY' && ok "plan's JSON: the answer, its statistics and the evidence" || no "plan JSON: $(head -c 300 "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["answer"]["values"]["cluster/nodes/@count"] == "5" and d["answer"]["meets"]
g = d["answer"]["goals"][0]
assert g["metric"] == "simulated_s" and abs(g["statistic"] - 7200) < 1 and g["replicas"]["runs"] == 2
ev = {p["values"]["cluster/nodes/@count"]: p["meets"] for p in d["evidence"]}
assert ev["4"] is False and ev["5"] is True and len(ev) == d["points_run"] < 10
PY
expect_status 0 "plan with an objective (cost) and a grid" "$bin" plan $toy --goal "simulated_s <= 4h" --minimize cluster.cost_usd --vary 'cluster/nodes/@count=3,4,5,8' --search grid --replicas 1 --db "$tmp/plan.db"
grep -q '^answer: cluster/nodes/@count=5$' "$tmp/out" && ok "cheapest meeting the goal: 5 nodes x 2 h, not 3 x 4 h or 4 x 3 h" || no "plan cost: $(grep answer "$tmp/out")"
grep -q 'next best: cluster/nodes/@count=[34] (\$' "$tmp/out" && ok "next best options with their cost" || no "plan next best: $(grep 'next best' "$tmp/out")"
expect_status 1 "plan with a goal nothing meets" "$bin" plan $toy --goal "simulated_s <= 30min" --vary 'cluster/nodes/@count=1..8' --replicas 1 --db "$tmp/plan.db"
grep -q 'no configuration meets the goals' "$tmp/out" && ok "says no configuration meets it" || no "plan none: $(cat "$tmp/out" | head -3)"
expect_status 2 "plan with a bad goal" "$bin" plan $toy --goal "simulated_s ~ 2h" --vary 'cluster/nodes/@count=1..8' --db "$tmp/plan.db"
expect_status 2 "plan with a bad metric" "$bin" plan $toy --goal "widgets[x].y <= 2h" --vary 'cluster/nodes/@count=1..8' --db "$tmp/plan.db"
expect_status 0 "plan on a service's latency" "$bin" plan scenarios/serving-chat-70b.xml --goal "services[chat].ttft_p99_s <= 1s @ p90" --vary 'workload/inference[@name="chat"]/@replicas=1..4' --replicas 2 --db "$tmp/serve.db"
grep -q '^answer: workload/inference\[@name="chat"\]/@replicas=' "$tmp/out" && ok "a replica count for a TTFT goal" || no "serving plan: $(head -5 "$tmp/out")"

# ---- planning: right numbers (issue 17) ----
# A configuration that does not fit (64 warm spares hold back 512 of the
# 1,056 GPUs the 1,024-GPU job needs) is recorded as "does not fit" with
# the reason, and the sweep or plan goes on (before: exit 2, nothing run).
expect_status 0 "a sweep where one point does not fit" "$bin" sweep $f --vary 'cluster/spares/@warm=0,4,64' --replicas 1 --jobs 1 --db "$tmp/unfit.db"
grep -q '3 points (1 does not fit: not run) x 1 replicas; 2 runs done now' "$tmp/out" && grep -q 'spares/@warm=64: .*needs 1024 GPUs, the cluster has 544' "$tmp/out" \
  && ok "the sweep runs the others and says why the point does not fit" || no "sweep unfit: $(head -5 "$tmp/out")"
python3 - "$tmp/unfit.db" <<'PY' && ok "the database records the point and its reason, and the means with their intervals" || no "unfit database"
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
rows = con.execute("SELECT point_key, reason FROM sweep_unfit").fetchall()
assert rows == [('["64"]', rows[0][1])] and "needs 1024 GPUs" in rows[0][1], rows
assert con.execute("SELECT count(*) FROM sweep_runs WHERE point_key = '[\"64\"]'").fetchone()[0] == 0
n = con.execute("SELECT count(*) FROM sweep_stats WHERE statistic = 'mean' AND ci_level = 0.95").fetchone()[0]
assert n > 10, n
PY
expect_status 0 "report of a sweep with a point that does not fit (CSV)" "$bin" report "$tmp/unfit.db" --out "$tmp/unfitrep" --format csv
python3 - "$tmp/unfitrep/sweep.csv" <<'PY' && ok "CSV: the point's rows say why; the others have the mean's interval" || no "unfit CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = [r for r in rows if r["cluster/spares/@warm"] == "64"]
assert bad and all("needs 1024 GPUs" in r["does_not_fit"] and r["runs"] == "0" for r in bad)
PY
expect_status 0 "a grid plan where one point does not fit" "$bin" plan $f --goal "jobs[pretrain].end_s <= 60d" --vary 'cluster/spares/@warm=0,4,64' --search grid --replicas 1 --db "$tmp/unfitplan.db" --json "$tmp/unfitplan.json"
grep -q '^answer: cluster/spares/@warm=0$' "$tmp/out" && grep -q 'cluster/spares/@warm=64  does not fit' "$tmp/out" \
  && grep -q 'does not fit: .*needs 1024 GPUs' "$tmp/out" && ok "the plan answers; the point that does not fit is evidence with its reason" \
  || no "plan unfit: $(cat "$tmp/out" | head -20)"
python3 - "$tmp/unfitplan.json" <<'PY' && ok "plan JSON: fits false and the reason" || no "plan unfit JSON"
import json, sys
d = json.load(open(sys.argv[1]))
ev = {p["values"]["cluster/spares/@warm"]: p for p in d["evidence"]}
assert ev["64"]["fits"] is False and "needs 1024 GPUs" in ev["64"]["reason"] and ev["64"]["meets"] is False
assert ev["0"]["fits"] is True and d["points_unfit"] == 1
PY
# bisection: the range's upper end does not fit; plan finds the values
# that do (by checks, no runs) and searches among them
expect_status 0 "a bisection whose upper end does not fit" "$bin" plan $f --goal "jobs[pretrain].end_s <= 60d" --vary 'cluster/spares/@warm=0..64' --replicas 1 --db "$tmp/unfitplan.db"
grep -q '^answer: cluster/spares/@warm=0$' "$tmp/out" && grep -q '@warm=64  does not fit' "$tmp/out" \
  && ok "bisection narrows to the values that fit" || no "bisect unfit: $(head -20 "$tmp/out")"
# A goal naming a job that does not exist: exit 2 at once, naming the jobs
# there are, before anything runs (before: every run counted as missing).
expect_status 2 "a goal naming a job that does not exist" "$bin" plan $big --goal "jobs[pretrain-70b].end_s <= 90d @ p90" --vary 'workload/training[@name="pretrain"]/@dp=16..256+4' --db "$tmp/noname.db"
grep -q "has no job named 'pretrain-70b'; its jobs: pretrain$" "$tmp/err" && [ ! -e "$tmp/noname.db" ] \
  && ok "it names the jobs that exist and runs nothing" || no "missing job: $(cat "$tmp/err")"
expect_status 2 "an objective naming a service that does not exist" "$bin" plan scenarios/serving-chat-70b.xml --goal "services[chat].ttft_p99_s <= 1s" --minimize 'services[chatbot].cost_usd' --vary 'workload/inference[@name="chat"]/@replicas=1..4' --db "$tmp/noname.db"
grep -q "has no service named 'chatbot'; its services: chat$" "$tmp/err" && ok "likewise for a service" || no "missing service: $(cat "$tmp/err")"
expect_status 2 "a goal naming a queue that does not exist" "$bin" plan $toy --goal "queues[gpu].mean_wait_s <= 1h" --vary 'cluster/nodes/@count=1..8' --db "$tmp/noname.db"
grep -q "its queues: default$" "$tmp/err" && ok "likewise for a queue (the default one)" || no "missing queue: $(cat "$tmp/err")"
# The answer states the GPUs the configuration uses: a service's replicas x
# tp on a fixed 8-GPU node, not the node's 8 (before: "8 GPUs on 1 nodes").
expect_status 0 "plan of a service's replicas" "$bin" plan scenarios/serving-chat-70b.xml --goal "services[chat].ttft_p99_s <= 1s @ p90" --vary 'workload/inference[@name="chat"]/@replicas=1..4' --replicas 2 --db "$tmp/serve.db" --json "$tmp/serve.json"
python3 - "$tmp/serve.json" "$tmp/out" <<'PY' && ok "the answer's GPUs are the service's (replicas x tp 2)" || no "plan GPUs: $(grep -A2 answer "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
a = d["answer"]
r = int(a["values"]['workload/inference[@name="chat"]/@replicas'])
assert a["gpus"] == 2 * r and a["gpus_of"] == "services[chat]" and a["cluster"]["gpus"] == 8, a
out = open(sys.argv[2]).read()
assert "  uses: %d GPUs (services[chat]), on the fixed cluster" % (2 * r) in out
assert "the cluster: 8 GPUs" not in out
PY
expect_status 0 "plan sizing the cluster" "$bin" plan $toy --goal "simulated_s <= 2.1h @ p90" --vary 'cluster/nodes/@count=1..40' --replicas 2 --db "$tmp/plan.db"
grep -q '^  the cluster: 40 GPUs on 5 nodes$' "$tmp/out" && ok "when the plan sizes the cluster, the answer is the cluster's GPUs" || no "cluster GPUs: $(grep -A2 answer "$tmp/out")"
# --replicas auto: replicas until the goal's confidence interval lies on one
# side of the threshold. Exponential job durations make the toy random; at
# 3 nodes the mean makespan is near 6 h. A clear goal (<= 24 h) is decided
# at the first look (10 runs); a borderline one (<= 6.04 h) is not, and
# runs to the maximum (20 here), saying so. The same command gives the
# same answer (the replicas' seeds are fixed).
expo='workload/jobs/@duration-distribution=exponential'
expect_status 0 "--replicas auto on a clear goal" "$bin" plan $toy --goal "simulated_s <= 24h @ mean" --vary 'cluster/nodes/@count=3' --set "$expo" --replicas auto --max-replicas 20 --db "$tmp/auto.db" --json "$tmp/auto1.json"
python3 - "$tmp/auto1.json" <<'PY' && ok "a clear goal stops at the first look, 10 runs" || no "auto clear: $(head -c 400 "$tmp/auto1.json")"
import json, sys
d = json.load(open(sys.argv[1]))
a = d["answer"]
assert d["replicas_auto"] and a["decided"] and a["replicas_run"] == 10 and d["runs"] == 10, a
g = a["goals"][0]
assert g["decided"] and g["ci"]["high"] < 24 * 3600 and g["ci"]["low"] <= g["statistic"] <= g["ci"]["high"]
PY
expect_status 0 "--replicas auto on a borderline goal" "$bin" plan $toy --goal "simulated_s <= 6.04h @ mean" --vary 'cluster/nodes/@count=3' --set "$expo" --replicas auto --max-replicas 20 --db "$tmp/auto.db" --json "$tmp/auto2.json"
python3 - "$tmp/auto2.json" <<'PY' && ok "a borderline goal runs to the maximum, undecided" || no "auto borderline: $(head -c 400 "$tmp/auto2.json")"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["evidence"][0]
assert not p["decided"] and p["replicas_run"] == 20, p
g = p["goals"][0]
assert g["ci"]["low"] < 6.04 * 3600 < g["ci"]["high"]
PY
"$bin" plan $toy --goal "simulated_s <= 6.04h @ mean" --vary 'cluster/nodes/@count=3' --set "$expo" --replicas auto --max-replicas 20 --db "$tmp/auto.db" >"$tmp/auto2.out" 2>&1
grep -q 'undecided at the maximum of 20 runs' "$tmp/auto2.out" && grep -q '1 point reached the maximum of 20 replicas undecided' "$tmp/auto2.out" \
  && ok "the output says the maximum was reached" || no "auto max message: $(cat "$tmp/auto2.out")"
"$bin" plan $toy --goal "simulated_s <= 6.04h @ mean" --vary 'cluster/nodes/@count=3' --set "$expo" --replicas auto --max-replicas 20 --db "$tmp/auto-b.db" --json "$tmp/auto3.json" >/dev/null 2>&1
cmp -s "$tmp/auto2.json" "$tmp/auto3.json" && ok "--replicas auto: the same command, a fresh database, the same JSON" || no "auto not deterministic"
expect_status 2 "--max-replicas without auto" "$bin" plan $toy --goal "simulated_s <= 6h" --vary 'cluster/nodes/@count=3' --max-replicas 20 --db "$tmp/auto.db"

echo "sweep: $n checks, $fails failed"
[ $fails = 0 ]
