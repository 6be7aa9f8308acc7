#!/bin/sh
# cli_nccl.sh BINARY: the nccl backend across processes, end to end, against
# the stand-in libraries (build/tests/libstandin-*.so; `make test` builds
# them) under `mpirun -np 2` (skipped, visibly, without mpirun or the
# stand-ins). Each process drives the stand-in's 2 "GPUs", so the one NCCL
# communicator MPI bootstraps has 2 x 2 = 4 ranks. The stand-in NCCL only
# lets ranks meet when they hold the id rank 0 made (a broken broadcast
# times out) and really sums the ranks' data, which the backend checks
# before timing each case: these runs pass only when the bootstrap works.
suite=nccl
. "$(dirname "$0")/clilib.sh"
export CT_HW_REPS=3 CT_HW_BUDGET_S=0.05 CT_HW_WARMUP=1 CT_HW_ROUNDS=2

if ! command -v mpirun >/dev/null 2>&1; then
  skip "mpirun not found: nccl across processes not tested"
elif [ ! -f build/tests/libstandin-nccl.so ]; then
  skip "stand-in libraries not built (make test builds them): nccl across processes not tested"
elif ! "$bin" measure --help | grep -q "MPI bootstrapping"; then
  no "measure --help describes nccl across processes"
else
  ok "measure --help describes nccl across processes"
  s=$(pwd)/build/tests
  export CT_CUDA_DRIVER_LIB=$s/libstandin-cuda.so CT_CUDART_LIB=$s/libstandin-cudart.so \
         CT_CUBLAS_LIB=$s/libstandin-cublas.so CT_NCCL_LIB=$s/libstandin-nccl.so CT_STANDIN_GPUS=2 \
         CT_STANDIN_NCCL_DIR=$tmp/shm CT_STANDIN_NCCL_TIMEOUT_S=120
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
  # The stand-in's rendezvous time-out is a hang guard (120 s, under
  # mpirun's 300 s), never a deadline a busy machine could miss.
  mkdir "$tmp/shm"
  mpi="env ASAN_OPTIONS=detect_leaks=0 timeout 300 mpirun --oversubscribe"

  # measure: the default sweep picks N x G = 4 ranks.
  expect_status 0 "mpirun -np 2 measure --backend nccl --quick" $mpi -np 2 "$bin" measure --backend nccl --quick \
    --db "$tmp/m.db" --json "$tmp/m.json"
  [ "$(grep -c 'cases predicted and measured' "$tmp/out")" = 1 ] && ok "measure: only rank 0 prints the table" \
    || no "measure: $(grep -c 'cases predicted and measured' "$tmp/out") tables"
  python3 - "$tmp/m.json" "$tmp/m.db" <<'PY' && ok "measure: 4 NCCL ranks over 2 processes, nccl-tests bus bandwidth, one run stored" || no "measure JSON/db"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
hw = d["hardware"]
assert hw["backend"] == "nccl" and hw["ranks"] == 4, hw
assert "2 processes x 2 GPUs" in hw["devices"] and "bootstrapped over MPI" in hw["libraries"], hw
mb = d["microbenchmarks"]
assert len(mb) >= 6 * 9 and {c["op"] for c in mb} == {"allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "sendrecv"}
f = {"allreduce": 2 * 3 / 4, "allgather": 3 / 4, "reducescatter": 3 / 4, "alltoall": 3 / 4, "broadcast": 1, "sendrecv": 1}
for c in mb:
    assert c["ranks"] == 4 and c["measured_s"] > 0 and c["reps"] >= 3, c
    assert abs(c["measured_busbw_GBps"] - c["size_bytes"] / c["measured_s"] * f[c["op"]] / 1e9) < 1e-6 * c["measured_busbw_GBps"], c
db = sqlite3.connect(sys.argv[2])
assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 1          # rank 1 wrote nothing
assert db.execute("SELECT ranks FROM hardware").fetchone()[0] == 4
PY
  [ -z "$(ls "$tmp/shm")" ] && ok "the stand-in's rendezvous files are removed" || no "stand-in files left: $(ls "$tmp/shm")"

  # validate: a case of N x G ranks is measured, one of 2 ranks is not (with the reason).
  cat >"$tmp/n.xml" <<EOF
<?xml version="1.0"?>
<scenario name="nccl-2x2" seed="1">
  <cluster><nodes type="dgx-h100" count="1"/></cluster>
  <microbenchmarks>
    <collective op="allreduce" ranks="4" min-size="4KiB" max-size="64KiB" factor="4"/>
    <collective op="alltoall" ranks="4" min-size="16KiB" max-size="16KiB"/>
    <collective op="allreduce" ranks="2" min-size="4KiB" max-size="4KiB"/>
  </microbenchmarks>
</scenario>
EOF
  expect_status 0 "mpirun -np 2 validate --backend nccl" $mpi -np 2 "$bin" validate "$tmp/n.xml" --backend nccl \
    --json "$tmp/v.json" --db "$tmp/v.db"
  [ "$(grep -c 'cases predicted and measured' "$tmp/out")" = 1 ] && ok "validate: only rank 0 prints the table" \
    || no "validate: $(grep -c 'cases predicted and measured' "$tmp/out") tables"
  python3 - "$tmp/v.json" "$tmp/v.db" <<'PY' && ok "validate: ranks=4 measured and predicted, ranks=2 unsupported with the reason" || no "validate JSON/db"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert d["hardware"]["ranks"] == 4
mb = d["microbenchmarks"]
four = [c for c in mb if c["ranks"] == 4]
two = [c for c in mb if c["ranks"] == 2]
assert len(four) == 4 and len(two) == 1
for c in four:
    assert c["measured_s"] > 0 and c["predicted_s"] > 0 and c["error_pct"] is not None, c
assert two[0]["measured_s"] is None, two
assert "ranks=2 but this launch has 2 processes x 2 GPUs = 4 NCCL ranks" in two[0]["note"], two[0]["note"]
db = sqlite3.connect(sys.argv[2])
assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
PY

  # Processes that see different GPU counts: refused, the hosts and counts named, nothing written.
  expect_status 2 "mpirun: processes with 2 and 3 GPUs" $mpi -np 1 env CT_STANDIN_GPUS=2 "$bin" measure --backend nccl \
    --quick --db "$tmp/bad.db" : -np 1 env CT_STANDIN_GPUS=3 "$bin" measure --backend nccl --quick --db "$tmp/bad.db"
  grep -q "same GPU count in every process; GPUs per process: rank 0 on [^:]*: 2, rank 1 on [^:]*: 3" "$tmp/err" \
    && ok "mismatched GPU counts: hosts and counts named" || no "mismatch message: $(head -c 400 "$tmp/err")"
  [ -e "$tmp/bad.db" ] && no "nothing written when the processes disagree"
  # One process without libnccl: every process says which one.
  expect_status 2 "mpirun: one process without libnccl" $mpi -np 1 "$bin" measure --backend nccl --quick \
    --db "$tmp/bad.db" : -np 1 env CT_NCCL_LIB="$tmp/none.so" "$bin" measure --backend nccl --quick --db "$tmp/bad.db"
  grep -q "process 1 of 2 ([^)]*): no libnccl" "$tmp/err" && ok "the process without libnccl is named" \
    || no "missing libnccl message: $(head -c 400 "$tmp/err")"
  [ -e "$tmp/bad.db" ] && no "nothing written when a process lacks libnccl"
  # One process under mpirun keeps the single-process path (ncclCommInitAll).
  expect_status 0 "mpirun -np 1 measure --backend nccl" $mpi -np 1 "$bin" measure --backend nccl --quick \
    --db "$tmp/one.db" --json "$tmp/one.json" --quiet
  python3 - "$tmp/one.json" <<'PY' && ok "one process: the node's 2 GPUs" || no "one process JSON"
import json, sys
d = json.load(open(sys.argv[1]))
hw = d["hardware"]
assert hw["ranks"] == 2 and "processes" not in hw["devices"] and "MPI" not in hw["libraries"], hw
assert all(c["ranks"] == 2 and c["measured_s"] > 0 for c in d["microbenchmarks"])
PY
fi

# ---- NCCL algorithm forcing (no MPI needed): <network nccl-algo nccl-proto
# sharp> for every collective of the cluster, <collective algo protocol> for
# one microbenchmark; impossible choices are errors at load naming file, line
# and attribute; an op a forced algorithm does not serve falls back, named.
bench() {   # file network-attributes collective-attributes [node-type]
  cat >"$1" <<EOF
<?xml version="1.0"?>
<scenario name="forcing" seed="1">
  <cluster><nodes type="${4:-dgx-h100}" count="2"/><network $2/></cluster>
  <microbenchmarks>
    <collective ranks="16" min-size="1GB" max-size="1GB" $3/>
  </microbenchmarks>
</scenario>
EOF
}
mb() {   # json-file: "algorithm protocol fallback busbw" of the first case
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["microbenchmarks"][0]; print(c["algorithm"], c["protocol"], c["algorithm_fallback"], round(c["predicted_busbw_GBps"]))' "$1"
}
bench "$tmp/f1.xml" 'topology="fat-tree"' 'op="allreduce"'
expect_status 0 "forcing: auto on 2 H100 nodes runs" "$bin" run "$tmp/f1.xml" --json "$tmp/f1.json" --no-db
set -- $(mb "$tmp/f1.json"); auto_bw=$4
[ "$1 $2 $3" = "nvls-tree Simple False" ] && ok "forcing: 2-node H100 all-reduce picks NVLS-tree" || no "forcing: auto picked $*"
bench "$tmp/f2.xml" 'nccl-algo="ring" nccl-proto="simple"' 'op="allreduce"'
expect_status 0 "forcing: nccl-algo=ring runs" "$bin" run "$tmp/f2.xml" --json "$tmp/f2.json" --no-db
set -- $(mb "$tmp/f2.json")
[ "$1 $2 $3" = "ring Simple False" ] && [ "$4" -lt "$auto_bw" ] && ok "forcing: <network nccl-algo=ring> gives a slower ring" \
  || no "forcing: nccl-algo=ring gave $* (auto $auto_bw)"
bench "$tmp/f3.xml" 'nccl-algo="ring"' 'op="allreduce" algo="tree" protocol="ll128"'
expect_status 0 "forcing: <collective algo protocol> runs" "$bin" run "$tmp/f3.xml" --json "$tmp/f3.json" --no-db
set -- $(mb "$tmp/f3.json")
[ "$1 $2" = "tree LL128" ] && ok "forcing: the case's algo and protocol replace the network's" || no "forcing: case gave $*"
bench "$tmp/f4.xml" 'nccl-algo="tree"' 'op="allgather"'
expect_status 0 "forcing: network tree with an all-gather runs" "$bin" run "$tmp/f4.xml" --json "$tmp/f4.json" --no-db
set -- $(mb "$tmp/f4.json")
[ "$1 $3" = "ring True" ] && ok "forcing: tree cannot all-gather, falls back to ring, named" || no "forcing: fallback gave $*"
grep -q "fallback" "$tmp/out" && ok "forcing: the terminal table names the fallback" || no "forcing: no fallback in the table"
bench "$tmp/f5.xml" 'sharp="true" nccl-algo="collnet"' 'op="allreduce"'
expect_status 0 "forcing: collnet with sharp runs" "$bin" run "$tmp/f5.xml" --json "$tmp/f5.json" --no-db
set -- $(mb "$tmp/f5.json")
case $1 in collnet-*) ok "forcing: CollNet with SHARP switches ($1)" ;; *) no "forcing: collnet gave $*" ;; esac
bad() {   # description expected-message network collective [node]
  bench "$tmp/b.xml" "$3" "$4" "${5:-}"
  expect_status 2 "forcing error: $1" "$bin" check "$tmp/b.xml"
  grep -q "b.xml:[0-9]*:.*$2" "$tmp/err" && ok "forcing error names file, line and why: $1" \
    || no "forcing error message for $1: $(head -c 300 "$tmp/err")"
}
bad "nvls on A100" "NVLS\|nvls" 'topology="fat-tree"' 'op="allreduce" algo="nvls"' dgx-a100-80gb
bad "network nvls on A100" "NVLS" 'nccl-algo="nvls"' 'op="allreduce"' dgx-a100-80gb
bad "tree all-gather" "tree runs all-reduce only" 'topology="fat-tree"' 'op="allgather" algo="tree"'
bad "pat all-reduce" "pat runs all-gather and reduce-scatter only" 'topology="fat-tree"' 'op="allreduce" algo="pat"'
bad "collnet without sharp" "sharp" 'nccl-algo="collnet"' 'op="allreduce"'
bad "unknown algorithm" "nccl-algo.*must be one of" 'nccl-algo="bogus"' 'op="allreduce"'
bad "unknown protocol" "protocol.*must be one of" 'topology="fat-tree"' 'op="allreduce" protocol="ll129"'
# Training on 2 nodes (TP 4 inside the node, DP 4 across, 2 of each DP group
# per node): forcing the ring slows its data-parallel all-reduce.
train() {   # file network-attributes
  cat >"$1" <<EOF
<?xml version="1.0"?>
<scenario name="forcing-train" seed="1">
  <cluster><nodes type="dgx-h100" count="2"/><network $2/></cluster>
  <workload>
    <training name="t" gpus="16" tp="4" pp="1" dp="4" global-batch="64" micro-batch="1" seq-len="4096"
              precision="bf16" recompute="selective" tokens="50M"><model preset="llama2-7b"/></training>
  </workload>
</scenario>
EOF
}
step() { python3 -c 'import json,sys; print([j for j in json.load(open(sys.argv[1]))["jobs"] if j["kind"]=="training"][0]["step_time_s"])' "$1"; }
train "$tmp/t1.xml" 'topology="fat-tree"'
train "$tmp/t2.xml" 'nccl-algo="ring"'
if "$bin" run "$tmp/t1.xml" --json "$tmp/t1.json" --no-db >/dev/null 2>&1 &&
   "$bin" run "$tmp/t2.xml" --json "$tmp/t2.json" --no-db >/dev/null 2>&1; then
  python3 -c 'import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); sys.exit(0 if b > a else 1)' "$(step "$tmp/t1.json")" "$(step "$tmp/t2.json")" \
    && ok "forcing: training's collectives follow nccl-algo (ring slower than NVLS-tree on 2 nodes)" \
    || no "forcing: training step $(step "$tmp/t1.json") auto vs $(step "$tmp/t2.json") ring"
else no "forcing: training scenarios run"; fi

[ $fails = 0 ] && echo "nccl: all passed" || echo "nccl: $fails failed"
[ $fails = 0 ]
