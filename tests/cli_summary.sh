#!/bin/sh
# cli_summary.sh BINARY: what a person reads after `clustertwin run`. The
# summary's numbers go through base/numfmt (thousands separators, SI
# prefixes, money in k/M, grams to tonnes, the noun in the right number,
# never a %g exponent); microbenchmark collectives print as nccl-tests
# prints them (size, count, type, time in us, algbw, busbw) with busbw as
# nccl-tests defines it (docs/hardware.md). The figures checked are the
# models' (deterministic), never a wall time.
suite=summary
. "$(dirname "$0")/clilib.sh"

# ---- The summary's numbers ----
expect_status 0 "run shared-512" "$bin" run scenarios/shared-512.xml --no-db
cp "$tmp/out" "$tmp/shared"
grep -q '^scenario shared-512 (seed 1): 512 GPUs on 64 nodes$' "$tmp/shared" && ok "GPUs and nodes counted" \
  || no "scenario line: $(head -1 "$tmp/shared")"
grep -q '^cluster: .*, 368,640 GPU-hours, cost \$1\.1M$' "$tmp/shared" \
  && ok "GPU-hours with thousands separators, cost in \$M (before: 3.686e+05 GPU-hours, \$1.102e+06)" \
  || no "cluster line: $(grep '^cluster' "$tmp/shared")"
grep -Eq '^cost and energy: \$1\.1M at cloud prices \(compute \$1\.1M\), [0-9.]+ MWh at PUE 1\.2 \([0-9.]+ kW average\), [0-9.]+ t CO2$' \
  "$tmp/shared" && ok "energy, power and CO2 with their prefixes" || no "cost line: $(grep '^cost and' "$tmp/shared")"
grep -Eq '^  research +900 jobs \([0-9,]+ waiting at the end\), [0-9,]+ GPU-hours = [0-9.]+% of its 192-GPU quota$' \
  "$tmp/shared" && ok "queue lines" || no "queue line: $(grep research "$tmp/shared")"
grep -Eq '^batch jobs: [0-9,]+/6,000 done' "$tmp/shared" && ok "batch jobs counted with separators" \
  || no "batch line: $(grep '^batch' "$tmp/shared")"
grep -Eq '[0-9]e[+-][0-9]' "$tmp/shared" && no "no %g exponent in the summary: $(grep -E '[0-9]e[+-][0-9]' "$tmp/shared" | head -3)" \
  || ok "no %g exponent in the summary"

expect_status 0 "run serving-chat-70b" "$bin" run scenarios/serving-chat-70b.xml --no-db
grep -q '^scenario serving-chat-70b (seed 1): 8 GPUs on 1 node$' "$tmp/out" && ok "1 node, not 1 nodes" \
  || no "one node: $(head -1 "$tmp/out")"
grep -Eq ', [0-9.]+ g CO2$' "$tmp/out" && ok "less than a kilogram of CO2 in grams (before: 0.0007291 t CO2)" \
  || no "CO2 in grams: $(grep '^cost and' "$tmp/out")"
grep -Eq '^  SLO attainment [0-9.]+% \((met|missed)\), goodput [0-9.,]+ requests/s; [0-9.,]+ GPU-hours, \$[0-9.]+[kMB]?, \$[0-9.]+[kMB]? per million output tokens$' \
  "$tmp/out" && ok "service line" || no "service line: $(grep 'SLO attainment' "$tmp/out")"

# ---- Microbenchmarks as nccl-tests prints them ----
expect_status 0 "run nccl-8xh100" "$bin" run scenarios/nccl-8xh100.xml --no-db
grep -q '^# allreduce, 8 ranks: busbw = algbw x 2(n-1)/n = 1.75 x algbw$' "$tmp/out" \
  && ok "a block per collective, busbw's factor named" || no "allreduce block title: $(grep '^# all' "$tmp/out")"
grep -q '^#       size         count      type     time   algbw   busbw  model$' "$tmp/out" \
  && grep -q '^#        (B)    (elements)               (us)  (GB/s)  (GB/s)$' "$tmp/out" \
  && ok "the nccl-tests header: size, count, type, time, algbw, busbw" || no "header: $(grep '^#' "$tmp/out" | head -4)"
python3 - "$tmp/out" <<'PY' && ok "rows: count = size/4 floats, algbw = size/time, busbw = algbw x 2(n-1)/n (all-reduce), x (n-1)/n (all-gather)" \
  || no "microbenchmark rows"
import re, sys
op, rows = None, {}
for line in open(sys.argv[1]):
    m = re.match(r"# (\w+), (\d+) ranks:", line)
    if m:
        op, n = m.group(1), int(m.group(2))
        continue
    m = re.match(r"^ +(\d+) +(\d+) +(\w+) +([0-9.]+) +([0-9.]+) +([0-9.]+)  (\S+)$", line)
    if m and op:
        rows.setdefault(op, []).append((n,) + m.groups())
assert set(rows) == {"allreduce", "allgather"}, rows.keys()
assert len(rows["allreduce"]) == 24 and len(rows["allgather"]) == 6
factor = {"allreduce": lambda n: 2 * (n - 1) / n, "allgather": lambda n: (n - 1) / n}
for op, rs in rows.items():
    for n, size, count, typ, t_us, algbw, busbw, model in rs:
        size, count, t_us, algbw, busbw = int(size), int(count), float(t_us), float(algbw), float(busbw)
        assert typ == "float" and count == size // 4, (size, count, typ)
        if algbw >= 1:      # two decimals: the ratio is exact enough above 1 GB/s
            assert abs(algbw - size / t_us / 1e3) <= 0.01 * algbw + 0.01, (op, size, t_us, algbw)
            assert abs(busbw - algbw * factor[op](n)) <= 0.006 + 0.001 * busbw, (op, size, algbw, busbw)
        assert re.match(r"(ring|tree|nvls)/(LL|LL128|Simple)$", model), model
PY
grep -Eq '^gemm bf16 8192x8192x8192 +[0-9.]+ ms +[0-9.]+ TFLOP/s  compute-bound$' "$tmp/out" \
  && ok "GEMM, copies and storage in a table of their own" || no "other cases: $(grep -A2 '^case' "$tmp/out")"

# With a backend's measurements: the measured block and the error (the
# nccl backend on the stand-in libraries, one process, its 2 "GPUs").
s=$(pwd)/build/tests
if [ ! -f "$s/libstandin-nccl.so" ]; then
  skip "stand-in libraries not built (make test builds them): the measured block not tested"
else
  cat >"$tmp/n.xml" <<XML
<?xml version="1.0"?>
<scenario name="nccl-2" seed="1">
  <cluster><nodes type="dgx-h100" count="1"/></cluster>
  <microbenchmarks>
    <collective op="allreduce" ranks="2" min-size="1MiB" max-size="4MiB" factor="4"/>
  </microbenchmarks>
</scenario>
XML
  expect_status 0 "validate --backend nccl (stand-in)" env CT_HW_REPS=3 CT_HW_BUDGET_S=0.02 CT_HW_WARMUP=1 \
    CT_HW_ROUNDS=1 CT_CUDA_DRIVER_LIB="$s/libstandin-cuda.so" CT_CUDART_LIB="$s/libstandin-cudart.so" \
    CT_CUBLAS_LIB="$s/libstandin-cublas.so" CT_NCCL_LIB="$s/libstandin-nccl.so" CT_STANDIN_GPUS=2 \
    CT_STANDIN_NCCL_DIR="$tmp" "$bin" validate "$tmp/n.xml" --backend nccl --no-db
  grep -q '^#       size         count      type     time   algbw   busbw     time   algbw   busbw   error  model$' "$tmp/out" \
    && grep -q '^#                                            predicted                measured$' "$tmp/out" \
    && ok "measured: the header names the predicted and the measured block" \
    || no "measured header: $(grep '^#' "$tmp/out" | head -4)"
  grep -Eq '^     1048576        262144     float +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[+-][0-9.]+  ring/' "$tmp/out" \
    && ok "measured: a row has both blocks and the error" || no "measured row: $(grep '1048576' "$tmp/out")"
fi

[ $fails = 0 ] && echo "summary: all passed" || echo "summary: $fails failed"
[ $fails = 0 ]
