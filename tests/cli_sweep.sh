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
#     visibly, without mpirun or without MPI built in)
#   plan: a toy problem whose answer is known (tests/sweep/toy-batch.xml:
#     5 nodes) found by bisection, and a goal nothing meets exits 1
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
    ASAN_OPTIONS=detect_leaks=0 timeout 300 mpirun -np 2 "$bin" sweep $f --vary 'cluster/spares/@warm=0,2,64' --db "$tmp/mpibad.db" \
      >"$tmp/mpi.out" 2>"$tmp/mpi.err" </dev/null; st=$?
    [ $st = 2 ] && [ "$(grep -c 'clustertwin sweep: at \["64"\]' "$tmp/mpi.err")" = 1 ] && [ ! -e "$tmp/mpibad.db" ] \
      && ok "a bad point checked on rank 1: exit 2, said once by rank 0, no database" || no "MPI bad input (exit $st): $(head -c 300 "$tmp/mpi.err")"
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

echo "sweep: $n checks, $fails failed"
[ $fails = 0 ]
