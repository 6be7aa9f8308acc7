#!/bin/sh
# cli_hw.sh BINARY: hardware mode end to end. run --backend, measure,
# calibrate and validate with the cpu backend; the mpi backend under
# `mpirun -np 2` (skipped, visibly, without mpirun); the cuda and nccl
# backends saying what is missing on this machine, and working against the
# stand-in libraries (build/tests/libstandin-*.so, `make test` builds them).
# Sizes and repetitions are small (CT_HW_REPS=3, CT_HW_BUDGET_S=0.05): these
# check the plumbing and the numbers' consistency, not this machine's speed.
suite=hw
. "$(dirname "$0")/clilib.sh"
export CT_HW_REPS=3 CT_HW_BUDGET_S=0.05 CT_HW_WARMUP=1 CT_HW_ROUNDS=2

for c in measure calibrate validate; do
  expect_status 0 "$c --help" "$bin" $c --help
  grep -q "usage: clustertwin $c" "$tmp/out" || no "$c --help prints usage"
done
# run --profile needs no --backend (its <gpu-profile> prices the GPU, docs/gpu-calibration.md);
# a profile that cannot be read is an error naming it.
expect_status 2 "run --profile of a missing file" "$bin" run scenarios/twin-host.xml --profile "$tmp/x.xml" --no-db
grep -q "x.xml:0: cannot open" "$tmp/err" && ok "names the missing profile" || no "missing profile: $(cat "$tmp/err")"
expect_status 2 "measure without --backend" "$bin" measure
expect_status 2 "measure --backend tpu" "$bin" measure --backend tpu
expect_status 2 "calibrate without --db" "$bin" calibrate --out "$tmp/p.xml"
expect_status 2 "calibrate a missing database" "$bin" calibrate --db "$tmp/none.db" --out "$tmp/p.xml"
[ -e "$tmp/p.xml" ] && no "a failed calibrate writes no profile"

# A small host scenario: copies, GEMM, storage and collectives of 2 ranks.
cat >"$tmp/host.xml" <<EOF
<?xml version="1.0"?>
<scenario name="hw-small" seed="1">
  <cluster><nodes type="dgx-h100" count="1"/></cluster>
  <microbenchmarks>
    <host-profile name="test-host">
      <param name="copy.dram_bw" value="8e9"/>
    </host-profile>
    <copy kind="host" min-size="64KiB" max-size="1MiB" factor="4"/>
    <copy kind="d2d" min-size="1MiB" max-size="1MiB"/>
    <gemm m="48" n="48" k="48" precision="fp32"/>
    <gemm m="48" n="48" k="48" precision="fp64"/>
    <gemm m="48" n="48" k="48" precision="bf16"/>
    <storage-write size="2MiB" files="2" path="$tmp/ckpt"/>
    <collective op="allreduce" ranks="2" min-size="4KiB" max-size="64KiB" factor="4"/>
    <collective op="sendrecv" ranks="2" min-size="4KiB" max-size="4KiB"/>
  </microbenchmarks>
</scenario>
EOF

# run --backend cpu: measured_* filled for what the CPU runs, a note for the rest.
expect_status 0 "run --backend cpu" "$bin" run "$tmp/host.xml" --backend cpu --json "$tmp/run.json" --db "$tmp/run.db" --quiet
python3 - "$tmp/run.json" <<'PY' && ok "run --backend cpu JSON: measured, predicted, error_pct, notes" || no "run --backend cpu JSON"
import json, sys
d = json.load(open(sys.argv[1]))
hw = d["hardware"]
assert hw["backend"] == "cpu" and hw["host"] and hw["cpu"] and "CBLAS" in hw["libraries"], hw
assert hw["profile"] == "test-host"
assert hw["statistic"] == "min"
# the core's peak is measured: positive and finite, never judged for speed
import math
assert all(math.isfinite(hw[k]) and hw[k] > 0 for k in ("peak_fp64_flops", "peak_fp32_flops")), hw
assert "its peak, measured" in hw["devices"], hw
mb = d["microbenchmarks"]
for c in mb:
    measurable = (c["op"] == "copy" and c["kind"] == "host") or (c["op"] == "gemm" and c["precision"] in ("fp32", "fp64")) or c["op"] == "storage-write"
    if measurable:
        assert c["measured_s"] > 0 and c["reps"] >= 3 and c["measured_min_s"] <= c["measured_s"] <= c["measured_max_s"], c
        # the default statistic: the fastest repetition; the median beside it
        assert c["measured_s"] == c["measured_min_s"] <= c["measured_median_s"] <= c["measured_max_s"], c
        assert c["predicted_s"] > 0, c
        err = 100 * (c["predicted_s"] - c["measured_s"]) / c["measured_s"]
        assert abs(c["error_pct"] - err) < 1e-6 * max(1, abs(err)), c
        rate = c.get("measured_GBps", c.get("measured_tflops"))
        assert rate and rate > 0, c
    else:
        assert c["measured_s"] is None and c["error_pct"] is None and c["note"].startswith("not measured"), c
s = [c for c in mb if c["op"] == "storage-write"][0]
assert s["measured_read_s"] > 0
g = [c for c in mb if c["op"] == "gemm" and c["precision"] == "bf16"][0]
assert g["predicted_s"] is None and "fp32 and fp64" in g["note"], g
# the inline profile's parameter is used: a 1 MiB copy at 8 GB/s DRAM and the default caches
PY
python3 - "$tmp/run.db" "$tmp/run.json" <<'PY' && ok "the database holds the cases as the JSON has them" || no "database microbenchmarks"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1]); d = json.load(open(sys.argv[2]))
rows = db.execute("SELECT op, measured_s, error_pct, note FROM microbenchmarks ORDER BY idx").fetchall()
assert len(rows) == len(d["microbenchmarks"])
for r, c in zip(rows, d["microbenchmarks"]):
    assert r[0] == c["op"] and r[1] == c["measured_s"] and r[2] == c["error_pct"], (r, c)
assert db.execute("SELECT backend FROM hardware").fetchone()[0] == "cpu"
assert db.execute("PRAGMA user_version").fetchone()[0] >= 3   # 3 added the statistic; later versions keep it
assert db.execute("SELECT statistic FROM hardware").fetchone()[0] == "min"
med = [r[0] for r in db.execute("SELECT measured_median_s FROM microbenchmarks ORDER BY idx")]
assert med == [c.get("measured_median_s") for c in d["microbenchmarks"]], med
PY
# --statistic median: measured_s (and error_pct) from the median of the rounds' medians.
expect_status 0 "run --backend cpu --statistic median" "$bin" run "$tmp/host.xml" --backend cpu --statistic median --json "$tmp/med.json" --no-db --quiet
python3 - "$tmp/med.json" <<'PY' && ok "--statistic median: measured_s is the median" || no "--statistic median"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["hardware"]["statistic"] == "median"
got = [c for c in d["microbenchmarks"] if c["measured_s"] is not None]
assert got and all(c["measured_s"] == c["measured_median_s"] >= c["measured_min_s"] for c in got)
assert all(abs(c["error_pct"] - 100 * (c["predicted_s"] / c["measured_s"] - 1)) < 1e-6 * max(1, abs(c["error_pct"])) for c in got)
PY
expect_status 2 "--statistic mean is refused" "$bin" run "$tmp/host.xml" --backend cpu --statistic mean --no-db --quiet
grep -q "expected min (the fastest repetition) or median" "$tmp/err" || no "--statistic mean: the message says what is expected"
expect_status 2 "--statistic without --backend" "$bin" run "$tmp/host.xml" --statistic median --no-db --quiet
expect_status 2 "measure --statistic mean" "$bin" measure --backend cpu --statistic mean --quick
[ -d "$tmp/ckpt" ] && [ -z "$(ls "$tmp/ckpt")" ] && ok "storage files removed after measuring" || no "storage files removed"

# CT_CBLAS_LIB: GEMMs through a CBLAS loaded at run time (GSL's own, by
# path, here), its name in hardware.libraries; a library that is missing or
# not a CBLAS is refused; one that computes wrongly fails the case.
gemm_only="$tmp/gemm.xml"
sed -e '/<copy/d' -e '/<storage-write/d' -e '/<collective/d' "$tmp/host.xml" >"$gemm_only"
gslcblas=$(ls /usr/lib/*/libgslcblas.so.0 /usr/lib/libgslcblas.so.0 2>/dev/null | head -n 1)
if [ -n "$gslcblas" ]; then
  CT_CBLAS_LIB=$gslcblas expect_status 0 "CT_CBLAS_LIB=libgslcblas: GEMM through a loaded CBLAS" \
    "$bin" run "$gemm_only" --backend cpu --json "$tmp/cblas.json" --no-db --quiet
  python3 - "$tmp/cblas.json" <<'PY' && ok "CT_CBLAS_LIB: the library is named, GEMMs measured" || no "CT_CBLAS_LIB JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert "CT_CBLAS_LIB=" in d["hardware"]["libraries"] and "1 thread" in d["hardware"]["libraries"], d["hardware"]
g = [c for c in d["microbenchmarks"] if c["op"] == "gemm" and c["precision"] in ("fp32", "fp64")]
assert len(g) == 2 and all(c["measured_s"] > 0 for c in g), g
PY
else
  skip "CT_CBLAS_LIB: no libgslcblas.so.0 found"
fi
CT_CBLAS_LIB=$tmp/no-such-cblas.so expect_status 2 "CT_CBLAS_LIB missing: exit 2" "$bin" run "$gemm_only" --backend cpu --no-db --quiet
grep -q "CT_CBLAS_LIB=.*cannot be loaded" "$tmp/err" && ok "CT_CBLAS_LIB missing: says so" || no "CT_CBLAS_LIB missing message"
if [ -f build/tests/libstandin-badcblas.so ]; then
  CT_CBLAS_LIB=build/tests/libstandin-cuda.so expect_status 2 "CT_CBLAS_LIB not a CBLAS: exit 2" "$bin" run "$gemm_only" --backend cpu --no-db --quiet
  grep -q "not a CBLAS library" "$tmp/err" && ok "CT_CBLAS_LIB not a CBLAS: says so" || no "not-a-CBLAS message"
  CT_CBLAS_LIB=build/tests/libstandin-badcblas.so expect_status 1 "a CBLAS that computes wrongly fails the GEMM cases" \
    "$bin" run "$gemm_only" --backend cpu --json "$tmp/bad.json" --no-db --quiet
  python3 - "$tmp/bad.json" <<'PY' && ok "the wrong result is named in the note" || no "wrong-result note"
import json, sys
d = json.load(open(sys.argv[1]))
g = [c for c in d["microbenchmarks"] if c["op"] == "gemm" and c["precision"] in ("fp32", "fp64")]
assert all(c["measured_s"] is None and "wrong result: C[" in c["note"] for c in g), g
PY
else
  skip "CT_CBLAS_LIB stand-ins: build/tests/libstandin-badcblas.so not built (make test builds it)"
fi

# measure -> calibrate -> validate.
expect_status 0 "measure --backend cpu --quick" "$bin" measure --backend cpu --quick --db "$tmp/m.db" --dir "$tmp/ck2" --quiet
expect_status 0 "calibrate" "$bin" calibrate --db "$tmp/m.db" --out "$tmp/profile.xml"
grep -q "held median" "$tmp/out" && grep -q "gemm.fp32.eff=" "$tmp/out" && grep -q "copy.dram_bw=" "$tmp/out" \
  && ok "calibrate prints fitted values and held-out errors" || no "calibrate output: $(head -c 300 "$tmp/out")"
grep -q "GEMM efficiency (gemm.P.eff) against the measured core peak" "$tmp/out" \
  && ok "calibrate takes the GEMM peak from the measured core" || no "calibrate: measured peak: $(head -c 300 "$tmp/out")"
python3 - "$tmp/m.db" "$tmp/profile.xml" <<'PY' && ok "the profile's GEMM peak is the measured one" || no "profile peak"
import sqlite3, sys, xml.dom.minidom as m
peak = sqlite3.connect(sys.argv[1]).execute("SELECT peak_fp64_flops FROM hardware").fetchone()[0]
p = {e.getAttribute("name"): float(e.getAttribute("value")) for e in m.parse(sys.argv[2]).getElementsByTagName("param")}
assert peak > 0 and abs(p["gemm.fp64.peak_flops"] / peak - 1) < 1e-5, (peak, p["gemm.fp64.peak_flops"])
PY
# A second session of the same sweep: each case fitted at the faster session's figure.
expect_status 0 "measure --backend cpu --quick, again" "$bin" measure --backend cpu --quick --db "$tmp/m2.db" --dir "$tmp/ck3" --quiet
expect_status 0 "measure --backend cpu --quick, a second session" "$bin" measure --backend cpu --quick --db "$tmp/m2.db" --dir "$tmp/ck3" --quiet
expect_status 0 "calibrate two sessions" "$bin" calibrate --db "$tmp/m2.db" --out "$tmp/profile-2s.xml"
grep -qE "^[0-9]+ cases measured in several sessions: the fastest session's figure fitted" "$tmp/out" \
  && ok "calibrate fits the fastest session of each case" || no "calibrate best of sessions: $(head -c 300 "$tmp/out")"
expect_status 0 "calibrate --residuals" "$bin" calibrate --db "$tmp/m.db" --out "$tmp/profile-r.xml" --residuals
[ "$(grep -cE '^copy +copy host .* (fit|held) .*%$' "$tmp/out")" -ge 4 ] && grep -qE '^gemm.fp64 +gemm fp64 .* held ' "$tmp/out" \
  && ok "calibrate --residuals prints every point, fit and held out" || no "calibrate --residuals: $(head -c 300 "$tmp/out")"
python3 - "$tmp/profile.xml" <<'PY' && ok "profile XML: fitted parameters with stderr" || no "profile XML"
import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1]).documentElement
assert d.tagName == "host-profile"
p = {e.getAttribute("name"): e for e in d.getElementsByTagName("param")}
for k in ("copy.dram_bw", "gemm.fp32.eff", "gemm.fp64.eff", "storage.write_bw", "storage.read_bw"):
    assert float(p[k].getAttribute("value")) > 0 and p[k].getAttribute("stderr"), k
assert not p["coll.allreduce.bw"].getAttribute("stderr")      # not fitted: no collectives measured
PY
expect_status 0 "validate --backend cpu --profile" "$bin" validate "$tmp/host.xml" --backend cpu --profile "$tmp/profile.xml" --db "$tmp/v.db" --json "$tmp/v.json" --quiet
grep -q "cases predicted and measured: median |error|" "$tmp/out" && ok "validate prints the summary" || no "validate summary"
python3 - "$tmp/v.json" <<'PY' && ok "validate JSON: the calibrated profile priced the cases" || no "validate JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["hardware"]["profile"].startswith("twin-") and "calibrated" in d["hardware"]["profile_source"]
assert sum(1 for c in d["microbenchmarks"] if c["error_pct"] is not None) >= 6
PY
expect_status 0 "report with predicted vs measured" "$bin" report "$tmp/v.db" --out "$tmp/rep"
grep -q "Predicted vs measured" "$tmp/rep/index.html" 2>/dev/null && ok "HTML report has the predicted-vs-measured section" \
  || no "HTML report predicted vs measured"
# A scenario can include the profile by reference.
sed "s|<host-profile name=\"test-host\">|<host-profile href=\"$tmp/profile.xml\"/><!--|; s|</host-profile>|-->|" "$tmp/host.xml" >"$tmp/href.xml"
expect_status 0 "a scenario includes the profile (href)" "$bin" run "$tmp/href.xml" --json "$tmp/h.json" --no-db
grep -q '"profile": "twin-' "$tmp/h.json" && ok "href profile used" || no "href profile used"
sed "s|<host-profile name=\"test-host\">|<host-profile href=\"$tmp/missing.xml\"/><!--|; s|</host-profile>|-->|" "$tmp/host.xml" >"$tmp/bad1.xml"
expect_status 2 "a missing profile file" "$bin" check "$tmp/bad1.xml"
grep -q "bad1.xml:5: <host-profile href=" "$tmp/err" && ok "missing profile: file:line and element" || no "missing profile message: $(cat "$tmp/err")"
sed 's|name="copy.dram_bw"|name="copy.warp_bw"|' "$tmp/host.xml" >"$tmp/bad2.xml"
expect_status 2 "an unknown profile parameter" "$bin" check "$tmp/bad2.xml"
grep -q 'bad2.xml:6: <param name="copy.warp_bw">: unknown parameter' "$tmp/err" && ok "unknown parameter message" || no "unknown parameter message: $(cat "$tmp/err")"

# mpi: refused outside mpirun; measured under mpirun -np 2.
expect_status 2 "run --backend mpi without mpirun" env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMIX_RANK "$bin" run "$tmp/host.xml" --backend mpi --no-db
grep -q "mpirun -np 2" "$tmp/err" && ok "mpi backend says how to launch it" || no "mpi launch message: $(cat "$tmp/err")"
if command -v mpirun >/dev/null 2>&1 && "$bin" --version >/dev/null 2>&1; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
  mpi_env="env ASAN_OPTIONS=detect_leaks=0"
  expect_status 0 "mpirun -np 2 measure --backend mpi" $mpi_env mpirun -np 2 "$bin" measure --backend mpi --quick --db "$tmp/m.db" --quiet
  expect_status 0 "calibrate cpu + mpi measurements" "$bin" calibrate --db "$tmp/m.db" --out "$tmp/profile2.xml"
  # Two quick launches on a loaded machine may measure the all-reduce as
  # pure noise: then the fit is rejected with its reason and the group keeps
  # the starting profile's values (models/calibrate.c); either way the
  # profile holds the collective's parameters (rejection rules: test_calibrate).
  if grep -q "coll.allreduce.bw=" "$tmp/out" && ! grep -q "the fit failed" "$tmp/out"; then ok "calibrate fits the collectives"
  elif grep -q "coll.allreduce.*no model passed the checks: kept the starting profile's values; rejected " "$tmp/out"; then ok "calibrate rejects a collectives fit the noise makes absurd, and says why"
  # On a loaded machine the bandwidth term alone may be too noisy to keep
  # while the latency term passes: a partial fit that says what it rejected.
  elif grep -q "coll.allreduce.*fitted [0-9] of [0-9] parameters.*rejected coll.allreduce.bw = .* has a standard error" "$tmp/out"; then ok "calibrate keeps the collective terms the noise allows, and says which it rejected"
  else no "calibrate collectives: $(grep coll "$tmp/out" | head -c 300)"; fi
  grep -q 'name="coll.allreduce.bw"' "$tmp/profile2.xml" && ok "the profile holds the collective's bandwidth" || no "profile2 lacks coll.allreduce.bw"
  expect_status 0 "mpirun -np 2 validate --backend mpi" $mpi_env mpirun -np 2 "$bin" validate "$tmp/host.xml" --backend mpi --profile "$tmp/profile2.xml" --json "$tmp/mv.json" --db "$tmp/mv.db" --quiet
  [ "$(grep -c 'cases predicted and measured' "$tmp/out")" = 1 ] && ok "only rank 0 prints the table" || no "rank 0 only: $(grep -c 'cases predicted' "$tmp/out") tables"
  python3 - "$tmp/mv.json" "$tmp/mv.db" <<'PY' && ok "mpi validate: collectives measured with nccl-tests bus bandwidth" || no "mpi validate JSON"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert d["hardware"]["backend"] == "mpi" and d["hardware"]["ranks"] == 2
colls = [c for c in d["microbenchmarks"] if c["op"] in ("allreduce", "sendrecv")]
assert len(colls) == 4
for c in colls:
    assert c["measured_s"] > 0 and c["error_pct"] is not None, c
    f = 1.0 if c["op"] == "sendrecv" else 2 * (2 - 1) / 2
    assert abs(c["measured_busbw_GBps"] - c["size_bytes"] / c["measured_s"] * f / 1e9) < 1e-6 * c["measured_busbw_GBps"]
others = [c for c in d["microbenchmarks"] if c["op"] not in ("allreduce", "sendrecv")]
assert all(c["measured_s"] is None for c in others)
db = sqlite3.connect(sys.argv[2])
assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 1          # rank 1 wrote nothing
PY
else
  skip "mpirun not found: mpi backend not tested"
fi

# cuda and nccl: what is missing here, and the stand-ins.
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
  skip "an NVIDIA driver is installed: 'no driver' not tested"
else
  expect_status 2 "measure --backend cuda without a driver" env -u CT_CUDA_DRIVER_LIB "$bin" measure --backend cuda --quick --db "$tmp/c.db"
  grep -q "no NVIDIA driver: libcuda.so.1" "$tmp/err" && ok "cuda names the missing driver" || no "cuda missing driver: $(cat "$tmp/err")"
  [ -e "$tmp/c.db" ] && no "nothing written when the backend is unavailable"
  expect_status 2 "validate --backend nccl without a driver" env -u CT_CUDA_DRIVER_LIB "$bin" validate "$tmp/host.xml" --backend nccl --no-db
fi
# The cuda runs use the cuBLASLt stand-in, never a CUDA toolkit's real libcublasLt.
[ -f build/tests/libstandin-cublaslt.so ] && export CT_CUBLASLT_LIB="$(pwd)/build/tests/libstandin-cublaslt.so"
if [ -f build/tests/libstandin-cudart.so ]; then
  s=$(pwd)/build/tests
  export CT_CUDA_DRIVER_LIB=$s/libstandin-cuda.so CT_CUDART_LIB=$s/libstandin-cudart.so \
         CT_CUBLAS_LIB=$s/libstandin-cublas.so CT_NCCL_LIB=$s/libstandin-nccl.so
  cat >"$tmp/gpu.xml" <<EOF
<?xml version="1.0"?>
<scenario name="gpu-small" seed="1">
  <cluster><nodes type="dgx-h100" count="1"/></cluster>
  <microbenchmarks>
    <gemm m="32" n="32" k="32" precision="fp32"/>
    <copy kind="h2d" min-size="64KiB" max-size="256KiB" factor="4"/>
    <collective op="allreduce" ranks="2" min-size="4KiB" max-size="16KiB" factor="4"/>
  </microbenchmarks>
</scenario>
EOF
  expect_status 0 "validate --backend cuda (stand-in)" "$bin" validate "$tmp/gpu.xml" --backend cuda --json "$tmp/cu.json" --no-db --quiet
  grep -q "Stand-in GPU" "$tmp/out" && ok "cuda records the stand-in device" || no "cuda device name"
  expect_status 0 "validate --backend nccl (stand-in)" "$bin" validate "$tmp/gpu.xml" --backend nccl --json "$tmp/nc.json" --no-db --quiet
  python3 - "$tmp/cu.json" "$tmp/nc.json" <<'PY' && ok "cuda measures GEMM and copies, nccl the collectives" || no "stand-in JSON"
import json, sys
cu = json.load(open(sys.argv[1]))["microbenchmarks"]; nc = json.load(open(sys.argv[2]))["microbenchmarks"]
assert all((c["measured_s"] is not None) == (c["op"] != "allreduce") for c in cu), cu
assert all((c["measured_s"] is not None) == (c["op"] == "allreduce") for c in nc), nc
assert all(c["predicted_s"] > 0 for c in cu)     # GPU models price them (dgx-h100)
assert json.load(open(sys.argv[1]))["hardware"]["gemm_operands"] == "random"
assert "gemm_operands" not in json.load(open(sys.argv[2]))["hardware"]
PY
  expect_status 2 "nccl stand-in with no GPU" env CT_STANDIN_GPUS=0 "$bin" measure --backend nccl --quick --db "$tmp/n0.db"
  grep -q "no CUDA device" "$tmp/err" && ok "nccl names the missing device" || no "nccl no device: $(cat "$tmp/err")"
else
  skip "stand-in libraries not built (make test builds them)"
fi

# cuda fp8 GEMM through the cuBLASLt stand-in (E4M3 in, bf16 out, TN):
# measured with measured_tflops, and a note for what cannot be measured.
if [ -f build/tests/libstandin-cublaslt.so ] && [ -f build/tests/libstandin-cudart.so ]; then
  fp8s=$(pwd)/build/tests
  fp8env() {
    env CT_CUDA_DRIVER_LIB="$fp8s/libstandin-cuda.so" CT_CUDART_LIB="$fp8s/libstandin-cudart.so" \
        CT_CUBLAS_LIB="$fp8s/libstandin-cublas.so" CT_CUBLASLT_LIB="$fp8s/libstandin-cublaslt.so" "$@"
  }
  cat >"$tmp/fp8.xml" <<EOF
<?xml version="1.0"?>
<scenario name="gpu-fp8" seed="1">
  <cluster><nodes type="dgx-h100" count="1"/></cluster>
  <microbenchmarks>
    <gemm m="64" n="48" k="32" precision="fp8"/>
    <gemm m="128" n="128" k="128" precision="fp8"/>
    <gemm m="64" n="40" k="32" precision="fp8"/>
    <gemm m="32" n="32" k="32" precision="fp32"/>
  </microbenchmarks>
</scenario>
EOF
  expect_status 0 "run --backend cuda with fp8 GEMMs (stand-in)" fp8env "$bin" run "$tmp/fp8.xml" --backend cuda --json "$tmp/fp8.json" --db "$tmp/fp8.db" --quiet
  python3 - "$tmp/fp8.json" "$tmp/fp8.db" <<'PY' && ok "cuda fp8: measured_tflops, a note for 64x40x32, stored" || no "cuda fp8 JSON: $(head -c 300 "$tmp/err")"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert "cuBLASLt 130000" in d["hardware"]["libraries"], d["hardware"]
g = [c for c in d["microbenchmarks"] if c["op"] == "gemm"]
assert len(g) == 4, g
for c in g:
    if c["n"] == 40:
        assert c["measured_s"] is None and "multiples of 16; this case is 64x40x32" in c["note"], c
    else:
        assert c["measured_s"] > 0 and c["measured_tflops"] > 0 and c["predicted_s"] > 0, c
        want = 2 * c["m"] * c["n"] * c["k"] / c["measured_s"] / 1e12
        assert abs(c["measured_tflops"] - want) < 1e-6 * want, c
db = sqlite3.connect(sys.argv[2])
cols = [r[1] for r in db.execute("PRAGMA table_info(microbenchmarks)")]
assert "precision" in cols and "measured_s" in cols, cols
assert db.execute("SELECT count(*) FROM microbenchmarks WHERE precision = 'fp8' AND measured_s > 0").fetchone()[0] == 2
PY
  expect_status 0 "run --backend cuda, fp8 on compute capability 8.0" fp8env CT_STANDIN_CC=8.0 "$bin" run "$tmp/fp8.xml" --backend cuda --json "$tmp/fp8a.json" --no-db --quiet
  python3 - "$tmp/fp8a.json" <<'PY' && ok "cuda fp8 on an 8.0 GPU: not measured, with the reason" || no "cuda fp8 cc 8.0"
import json, sys
g = [c for c in json.load(open(sys.argv[1]))["microbenchmarks"] if c["precision"] == "fp8"]
assert len(g) == 3, g
assert all(c["measured_s"] is None and c["note"] == "not measured: fp8 GEMM needs compute capability 8.9+ (Ada/Hopper); this GPU is 8.0" for c in g), g
PY
  expect_status 0 "run --backend cuda, fp8 without cuBLASLt" fp8env CT_CUBLASLT_LIB="$fp8s/no-such-libcublasLt.so" "$bin" run "$tmp/fp8.xml" --backend cuda --json "$tmp/fp8n.json" --no-db --quiet
  python3 - "$tmp/fp8n.json" <<'PY' && ok "cuda fp8 without cuBLASLt names the library" || no "cuda fp8 without cuBLASLt"
import json, sys
g = json.load(open(sys.argv[1]))["microbenchmarks"]
assert all(("no cuBLASLt" in c["note"] and "no-such-libcublasLt.so" in c["note"]) == (c["precision"] == "fp8") for c in g if c["measured_s"] is None), g
assert [c["precision"] for c in g if c["measured_s"] is not None] == ["fp32"], g
PY
  # The standard sweep: bf16, fp32 and fp8, each result checked.
  expect_status 0 "measure --backend cuda --quick (stand-in)" fp8env "$bin" measure --backend cuda --quick --db "$tmp/fp8m.db" --json "$tmp/fp8m.json" --quiet
  python3 - "$tmp/fp8m.json" <<'PY' && ok "cuda sweep measures bf16, fp32 and fp8 128^3" || no "cuda sweep GEMMs"
import json, sys
g = [c for c in json.load(open(sys.argv[1]))["microbenchmarks"] if c["op"] == "gemm"]
assert [c["precision"] for c in g] == ["bf16", "fp32", "fp8"], g
assert all(c["m"] == 128 and c["measured_tflops"] > 0 for c in g), g
PY
  # A cuBLAS that reads B transposed: its GEMMs fail the result check (exit 1), fp8 (cuBLASLt) stands.
  expect_status 1 "run --backend cuda, cuBLAS misreading B (stand-in)" fp8env CT_STANDIN_BLAS_MISREAD=1 "$bin" run "$tmp/fp8.xml" --backend cuda --json "$tmp/fp8b.json" --no-db --quiet
  python3 - "$tmp/fp8b.json" <<'PY' && ok "cuda GEMM result check fails a misread operand, with the entry" || no "cuda misread B: $(head -c 300 "$tmp/err")"
import json, sys
g = json.load(open(sys.argv[1]))["microbenchmarks"]
bad = [c for c in g if c["precision"] == "fp32"]
assert len(bad) == 1 and bad[0]["measured_s"] is None, bad
assert bad[0]["note"].startswith("measurement failed: fp32 GEMM 32x32x32 gave C(0,0) = "), bad
assert bad[0]["note"].endswith("(layout or transpose wrong?)"), bad
assert sum(c["measured_s"] is not None for c in g if c["precision"] == "fp8") == 2, g
PY
fi

[ $fails = 0 ] && echo "hw: all passed" || echo "hw: $fails failed"
[ $fails = 0 ]
