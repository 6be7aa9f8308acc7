#!/bin/sh
# End-to-end tests of the command line. Usage: tests/cli.sh BINARY
# Runs from the project root. Prints ok/FAIL per check; exits 1 on failure.
set -u
bin=${1:?usage: tests/cli.sh BINARY}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   cli: $1"; }
no() { echo "FAIL cli: $1"; fails=$((fails + 1)); }
expect_status() {   # expected-status description command...
  want=$1; what=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; got=$?
  if [ "$got" = "$want" ]; then ok "$what"; else no "$what (exit $got, want $want): $(head -c 300 "$tmp/err")"; fi
}

expect_status 0 "--version" "$bin" --version
grep -q '^clustertwin [0-9]' "$tmp/out" || no "--version prints the version"
expect_status 0 "--help" "$bin" --help
grep -q 'run' "$tmp/out" && grep -q 'check' "$tmp/out" || no "--help lists the commands"
for c in run check; do
  expect_status 0 "$c --help" "$bin" $c --help
  grep -q "usage: clustertwin $c" "$tmp/out" || no "$c --help prints usage"
done
expect_status 2 "no command" "$bin"
expect_status 2 "unknown command" "$bin" frobnicate
expect_status 2 "run without a file" "$bin" run
expect_status 2 "run with an unknown option" "$bin" run scenarios/default.xml --bogus
expect_status 2 "run with a bad --until" "$bin" run scenarios/default.xml --until 3GB
expect_status 2 "run with an --until past the clock's horizon" "$bin" run scenarios/default.xml --until 1e30s --no-db
grep -q "horizon of 100 years" "$tmp/err" || no "--until past the horizon names the horizon"
expect_status 2 "run a missing file" "$bin" run "$tmp/nope.xml"
grep -q "nope.xml:0: cannot open" "$tmp/err" || no "missing file message names the file"

# Every example scenario checks and runs.
for f in scenarios/*.xml; do
  expect_status 0 "check $f" "$bin" check "$f"
  expect_status 0 "run $f" "$bin" run "$f" --json "$tmp/r.json" --db "$tmp/all.db"
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/r.json" 2>/dev/null \
    && ok "$f writes valid JSON" || no "$f writes valid JSON"
done

# The contract's JSON names, and the summary on stdout.
expect_status 0 "run default --json -" "$bin" run scenarios/default.xml --json - --no-db
python3 - "$tmp/out" <<'PY' && ok "JSON has the contract's fields" || no "JSON has the contract's fields"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("scenario", "seed", "simulated_s", "wall_s", "events", "cluster", "jobs"):
    assert k in d, k
for k in ("gpus", "gpu_utilization", "gpu_hours", "cost_usd"):
    assert k in d["cluster"], k
t = [j for j in d["jobs"] if j["kind"] == "training"][0]
for k in ("name", "kind", "gpus", "state", "submit_s", "start_s", "end_s", "queue_wait_s",
          "step_time_s", "steps_done", "model_tflops_per_gpu", "hardware_tflops_per_gpu",
          "mfu", "tokens_per_s_per_gpu", "breakdown"):
    assert k in t, k
assert t["state"] == "done" and t["end_s"] > 0 and t["steps_done"] == t["steps_total"]
assert 0 < t["mfu"] < 1
assert any(j["kind"] == "batch" for j in d["jobs"])
PY
expect_status 0 "run default prints a summary" "$bin" run scenarios/default.xml --no-db
grep -q "training pretrain-70b" "$tmp/out" || no "summary names the training job"
# The first thing anyone runs shows what a twin is for: failures, work
# redone from the last checkpoint, restarts, an ETTR below 1, warm spares.
"$bin" run scenarios/default.xml --json "$tmp/d.json" --no-db >/dev/null 2>&1
python3 - "$tmp/d.json" <<'PY' && ok "the default scenario has failures, restarts and lost work" || no "the default scenario shows no failures"
import json, sys
d = json.load(open(sys.argv[1]))
j = [x for x in d["jobs"] if x["kind"] == "training"][0]
assert d["failures"]["total"] > 0, d["failures"]
assert j["interruptions"] > 0 and j["lost_work_s"] > 0 and 0 < j["ettr"] < 1, j
PY

# Determinism: same scenario and seed, identical bytes except wall_* fields.
"$bin" run scenarios/default.xml --json "$tmp/a.json" --no-db >/dev/null 2>&1
"$bin" run scenarios/default.xml --json "$tmp/b.json" --no-db >/dev/null 2>&1
grep -v '"wall' "$tmp/a.json" >"$tmp/a2"; grep -v '"wall' "$tmp/b.json" >"$tmp/b2"
cmp -s "$tmp/a2" "$tmp/b2" && ok "determinism: two runs give identical JSON" || no "determinism"
"$bin" run scenarios/default.xml --seed 7 --json "$tmp/c.json" --no-db >/dev/null 2>&1
grep -v '"wall' "$tmp/c.json" >"$tmp/c2"
cmp -s "$tmp/a2" "$tmp/c2" && no "--seed changes the run" || ok "--seed changes the run"

# Published training throughput replayed through the command line exactly as
# the shared acceptance tool does (tests/replay-training, a copy of it).
if command -v python3 >/dev/null 2>&1; then
  # From a scratch directory: run's default results database lands there.
  top=$(pwd); absbin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
  (cd "$tmp" && python3 "$top/tests/replay-training" --bin "$absbin" "$top/tests/validation/training.csv") >"$tmp/replay" 2>&1 \
    && ok "training validation ($(tail -n 1 "$tmp/replay"); $(tail -n 2 "$tmp/replay" | head -n 1))" \
    || { no "training validation"; cat "$tmp/replay"; }
  # Published cases from other sources (tests/validation/README.md): the
  # shared replay tool and `validate --published` build each row's scenario
  # the same way, so they must agree row by row (the same error, or both
  # without a result). The accuracy bounds live in tests/cli_published.sh.
  pub="$top/tests/validation/training_published.csv"
  (cd "$tmp" && python3 "$top/tests/replay-training" --bin "$absbin" "$pub") >"$tmp/replay-pub" 2>&1
  "$bin" validate --published tests/validation --only training --json "$tmp/pub.json" >/dev/null 2>&1
  python3 - "$pub" "$tmp/replay-pub" "$tmp/pub.json" >"$tmp/pub-sum" 2>&1 <<'PY' \
    && ok "published training cases: replay-training and validate --published agree ($(tail -n 1 "$tmp/pub-sum"))" \
    || { no "published training cases: replay-training and validate --published agree"; cat "$tmp/pub-sum"; }
import csv, json, re, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
got = {}
for line in open(sys.argv[2]):
    m = re.match(r"(ok  |FAIL) (\S+)\s+(\S+)\s+expected .* error\s+([-+][0-9.]+)%", line)
    if m:
        got[m.group(2)] = float(m.group(4))
cases = {c["id"]: c for c in json.load(open(sys.argv[3]))["cases"] if c["file"] == "training_published.csv"}
bad = []
for r in rows:
    c = cases.get(r["id"])
    if c is None:
        bad.append(f"{r['id']}: not in validate's JSON")
    elif (c["error_pct"] is None) != (r["id"] not in got):
        bad.append(f"{r['id']}: one path gives a result, the other none ({c.get('note', '')[:120]})")
    elif c["error_pct"] is not None and abs(c["error_pct"] - got[r["id"]]) > 0.051:
        bad.append(f"{r['id']}: replay {got[r['id']]:+.1f}% vs validate {c['error_pct']:+.2f}%")
for b in bad:
    print(b)
print(f"{len(rows)} rows, {len(got)} with a result, {len(bad)} disagreeing")
sys.exit(1 if bad or not rows or not got else 0)
PY
fi

# Single collectives predicted through <microbenchmarks> (model backend),
# against the measured 8x H100 all-reduce curve: 15% from 1 MB, 35% below
# (latency-dominated sizes), as tests/test_collective.c holds the model.
"$bin" run scenarios/nccl-8xh100.xml --json "$tmp/mb.json" --no-db >/dev/null 2>&1
python3 - "$tmp/mb.json" tests/validation/nccl_allreduce_8xH100.csv <<'PY' && ok "all-reduce predictions through the CLI match the measured curve" || no "all-reduce predictions through the CLI"
import csv, json, sys
d = json.load(open(sys.argv[1]))
ref = {int(r["size_bytes"]): float(r["busbw_GBps"]) for r in csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith("#"))}
got = {int(m["size_bytes"]): m["predicted_busbw_GBps"] for m in d["microbenchmarks"] if m["op"] == "allreduce"}
assert set(ref) <= set(got), "sizes follow nccl-tests (1KB = 1024)"
for size, want in ref.items():
    tol = 0.15 if size >= 1 << 20 else 0.35
    assert abs(got[size] - want) / want <= tol, (size, got[size], want)
m = [m for m in d["microbenchmarks"] if m["op"] == "allreduce"][0]
for k in ("op", "ranks", "size_bytes", "predicted_s", "predicted_busbw_GBps", "measured_s", "measured_busbw_GBps", "error_pct"):
    assert k in m, k
assert any(m["op"] == "gemm" and m["predicted_tflops"] > 0 for m in d["microbenchmarks"])
PY

# The other command-line suites: reports and the results database,
# inference serving validation, prefix caching (cli_prefix), the live dashboard (in tmux), rack-scale
# NVLink domains (cli_rack), sweeps and plans,
# accounting (utilisation, serving power, lost work by cause),
# hardware mode, what check and run say about a training plan, what a
# checkpoint holds (cli_ckpt), the progress
# line and the answers to a mistyped command, what run prints, speculative
# decoding (cli_spec), disaggregated prefill and decode (cli_disagg),
# calibrating the GPU from cuda measurements (cli_gpucal), grouped (MoE
# expert) GEMMs predicted and measured (cli_grouped), a scenario that
# starts from a live cluster's state (cli_snapstate), request classes and
# per-class and per-model SLOs (cli_slo), forecasting a snapshot's queue
# (cli_forecast), failure profiles fitted from a cluster's history (cli_fitfail),
# the public job traces (cli_jobtraces), a live Slurm cluster snapshotted (cli_snapshot),
# the flow-level fabric shared between jobs (cli_flow), a real Slurm run,
# captured and forecast (cli_slurm; it skips when not root).
for suite in cli_fitfail cli_report cli_serving cli_engines cli_prefix cli_spec cli_disagg cli_slo cli_dash cli_rack cli_sweep cli_hw cli_nccl cli_account cli_train cli_ckpt cli_progress cli_summary cli_published cli_moe cli_gpucal cli_grouped cli_snapstate cli_forecast cli_jobtraces cli_snapshot cli_flow cli_slurm; do
  [ -f "tests/$suite.sh" ] || continue
  sh "tests/$suite.sh" "$bin" >"$tmp/$suite" 2>&1 && ok "$suite ($(tail -n 1 "$tmp/$suite"))" \
    || { no "$suite"; grep -i "fail" "$tmp/$suite" | head -20; }
done
expect_status 0 "topo --help" "$bin" topo --help
expect_status 0 "topo writes SVG" "$bin" topo scenarios/llama3-405b-16k.xml --out "$tmp/t.svg"
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$tmp/t.svg" 2>/dev/null \
  && ok "topo SVG is well-formed" || no "topo SVG is well-formed"
expect_status 2 "topo to an unknown format" "$bin" topo scenarios/default.xml --out "$tmp/t.png"

# Bad input: exit 2, one precise line, nothing written.
if [ -f tests/cli_bad.sh ]; then
  sh tests/cli_bad.sh "$bin" >"$tmp/bad" 2>&1 && ok "malformed scenarios ($(tail -n 1 "$tmp/bad"))" \
    || { no "malformed scenarios"; grep FAIL "$tmp/bad" | head -20; }
fi
if [ -f tests/cli_crash.sh ]; then
  KILLS=8 sh tests/cli_crash.sh "$bin" >"$tmp/crash" 2>&1 && ok "crash safety ($(tail -n 1 "$tmp/crash"))" \
    || { no "crash safety"; grep -A3 FAIL "$tmp/crash" | head -20; }
fi
if [ -f tests/cli_oom.sh ]; then   # skips itself for the ASan binary
  OOM_RANGE=tail OOM_STEP=4 sh tests/cli_oom.sh "$bin" >"$tmp/oom" 2>&1 && ok "allocation failures ($(tail -n 1 "$tmp/oom"))" \
    || { no "allocation failures"; grep FAIL "$tmp/oom" | head -20; }
fi
if [ -f tests/cli_badtrace.sh ]; then
  sh tests/cli_badtrace.sh "$bin" >"$tmp/badtrace" 2>&1 && ok "malformed traces ($(tail -n 1 "$tmp/badtrace"))" \
    || { no "malformed traces"; grep -A3 FAIL "$tmp/badtrace" | head -20; }
fi
sh tests/cli_files.sh "$bin" >"$tmp/files" 2>&1 && ok "output files ($(tail -n 1 "$tmp/files"))" || { no "output files"; grep -a FAIL "$tmp/files" | head -20; }

# A failed write leaves no file behind and exits 1.
mkdir "$tmp/ro" && chmod 555 "$tmp/ro"
if [ "$(id -u)" != 0 ]; then
  expect_status 1 "unwritable --json path" "$bin" run scenarios/default.xml --json "$tmp/ro/x.json" --no-db
fi
expect_status 1 "--json into a missing directory" "$bin" run scenarios/default.xml --json "$tmp/none/x.json" --no-db

[ $fails = 0 ] && echo "cli: all passed" || echo "cli: $fails failed"
[ $fails = 0 ]
