#!/bin/sh
# cli_gpucal.sh BINARY: calibrating the GPU from cuda-backend measurements
# (docs/gpu-calibration.md), on the H200 fixture
# tests/validation/measured/h200-cuda-2026-11-25-random.json, with no GPU here:
# - calibrate --from-json imports the fixture into a results database and
#   fits the GPU groups (gpu.*) against the catalog's H200-SXM-141GB; no host
#   group is fitted from a cuda row; the profile carries a <gpu-profile>;
#   calibrating again from the database alone gives the same <gpu-profile>;
# - run --profile prices the scenario's GPU with it: the twin's d2d copy
#   predictions follow the fitted latency and HBM efficiency, and a training
#   step on H200s moves;
# - validate --backend cuda --profile (the stand-in libraries) prices the
#   measured cases with it;
# - a profile for a GPU the scenario lacks, a bad --from-json, an unknown
#   --gpu: exit 2 with the reason.
suite=gpucal
. "$(dirname "$0")/clilib.sh"
fixture=tests/validation/measured/h200-cuda-2026-11-25-random.json

expect_status 0 "calibrate --from-json the H200 fixture" "$bin" calibrate --from-json "$fixture" --db "$tmp/h.db" --out "$tmp/p.xml"
cp "$tmp/out" "$tmp/report"
grep -q "GPU groups (gpu.\*) against the catalog's H200-SXM-141GB" "$tmp/report" && ok "the report names the catalog GPU" || no "no catalog GPU line: $(head -c 400 "$tmp/report")"
grep -Eq '^(copy|gemm\.fp32|gemm\.fp64|storage|coll\.)' "$tmp/report" && no "a host group was fitted from cuda rows" || ok "no host group from cuda rows"
grep -q '^gpu.gemm.bf16 ' "$tmp/report" && grep -q '^gpu.copy ' "$tmp/report" && grep -q '^gpu.pcie ' "$tmp/report" &&
  ok "GEMM, copy and PCIe groups fitted" || no "GPU groups: $(cat "$tmp/report")"
grep -q '<gpu-profile gpu="H200-SXM-141GB">' "$tmp/p.xml" && grep -q 'name="gpu.hbm.eff"' "$tmp/p.xml" &&
  ok "the profile carries the <gpu-profile>" || no "profile: $(tail -n 12 "$tmp/p.xml")"

expect_status 0 "calibrate again from the database alone" "$bin" calibrate --db "$tmp/h.db" --out "$tmp/p2.xml" --quiet
sed -n '/<gpu-profile/,/<\/gpu-profile>/p' "$tmp/p.xml" >"$tmp/g1"
sed -n '/<gpu-profile/,/<\/gpu-profile>/p' "$tmp/p2.xml" >"$tmp/g2"
[ -s "$tmp/g1" ] && cmp -s "$tmp/g1" "$tmp/g2" && ok "the same <gpu-profile> from the database" || no "gpu-profile differs"

# run --profile: the twin's predictions of a d2d copy are latency + 2 S / (hbm_bw x eff).
expect_status 0 "run twin-h200 with the profile" "$bin" run scenarios/twin-h200.xml --profile "$tmp/p.xml" --no-db --json "$tmp/after.json" --quiet
expect_status 0 "run twin-h200 without it" "$bin" run scenarios/twin-h200.xml --no-db --json "$tmp/before.json" --quiet
python3 - "$tmp/p.xml" "$tmp/after.json" "$tmp/before.json" <<'PY' && ok "d2d copies priced with the fitted latency and HBM efficiency" || no "d2d predictions"
import json, re, sys
p = dict(re.findall(r'name="(gpu\.[a-z0-9_.]+)" value="([^"]+)"', open(sys.argv[1]).read()))
lat, eff = float(p["gpu.copy.latency_s"]), float(p["gpu.hbm.eff"])
after, before = (json.load(open(f))["microbenchmarks"] for f in sys.argv[2:4])
d2d = [(a, b) for a, b in zip(after, before) if a["op"] == "copy" and a["kind"] == "d2d"]
assert d2d
for a, b in d2d:
    want = lat + 2 * a["size_bytes"] / (4.8e12 * eff)          # H200-SXM-141GB: 4.8 TB/s HBM3e
    assert abs(a["predicted_s"] / want - 1) < 1e-6, (a, want)
    assert a["predicted_s"] != b["predicted_s"]
PY

cat >"$tmp/train.xml" <<'XML'
<scenario name="t"><cluster><nodes type="hgx-h200" count="2"/></cluster>
<workload><training name="job" gpus="16" tp="2" steps="10"><model preset="llama3-8b"/></training></workload></scenario>
XML
expect_status 0 "a training job on H200s with the profile" "$bin" run "$tmp/train.xml" --profile "$tmp/p.xml" --no-db --json "$tmp/t1.json" --quiet
expect_status 0 "and without" "$bin" run "$tmp/train.xml" --no-db --json "$tmp/t0.json" --quiet
python3 - "$tmp/t1.json" "$tmp/t0.json" <<'PY' && ok "the training step is priced with the calibrated GPU" || no "training step did not move"
import json, sys
s1, s0 = (json.load(open(f))["jobs"][0]["step_time_s"] for f in sys.argv[1:3])
assert s1 != s0, (s1, s0)
PY

# validate --backend cuda --profile through the stand-in libraries (the
# cuBLASLt stand-in too: never a CUDA toolkit's real libcublasLt).
if [ -f build/tests/libstandin-cudart.so ] && [ -f build/tests/libstandin-cublaslt.so ]; then
  s=$(pwd)/build/tests
  cat >"$tmp/gpu.xml" <<'XML'
<?xml version="1.0"?>
<scenario name="gpu-h200" seed="1">
  <cluster><nodes type="hgx-h200" count="1"/></cluster>
  <microbenchmarks>
    <gemm m="64" n="64" k="64" precision="fp32"/>
    <copy kind="d2d" min-size="64KiB" max-size="256KiB" factor="4"/>
  </microbenchmarks>
</scenario>
XML
  expect_status 0 "validate --backend cuda --profile (stand-in)" env CT_CUDA_DRIVER_LIB="$s/libstandin-cuda.so" \
    CT_CUDART_LIB="$s/libstandin-cudart.so" CT_CUBLAS_LIB="$s/libstandin-cublas.so" \
    CT_CUBLASLT_LIB="$s/libstandin-cublaslt.so" \
    "$bin" validate "$tmp/gpu.xml" --backend cuda --profile "$tmp/p.xml" --no-db --json "$tmp/v.json"
  grep -q "predicted by the GPU models with the GPU profile of" "$tmp/out" && ok "validate says what priced the cases" || no "validate table: $(head -c 300 "$tmp/out")"
  python3 - "$tmp/p.xml" "$tmp/v.json" <<'PY' && ok "the measured cases are priced with the profile" || no "validate predictions"
import json, re, sys
p = dict(re.findall(r'name="(gpu\.[a-z0-9_.]+)" value="([^"]+)"', open(sys.argv[1]).read()))
lat, eff = float(p["gpu.copy.latency_s"]), float(p["gpu.hbm.eff"])
mb = json.load(open(sys.argv[2]))["microbenchmarks"]
d2d = [m for m in mb if m["op"] == "copy"]
assert d2d and all(m.get("measured_s") for m in mb)
for m in d2d:
    assert abs(m["predicted_s"] / (lat + 2 * m["size_bytes"] / (4.8e12 * eff)) - 1) < 1e-6
PY
else
  skip "validate --backend cuda --profile: the stand-in libraries are not built (make test builds them)"
fi

# Mistakes: exit 2, with the file and line or the reason.
cat >"$tmp/h100.xml" <<'XML'
<scenario name="h"><cluster><nodes type="dgx-h100" count="1"/></cluster>
<microbenchmarks><gemm m="64" n="64" k="64" precision="bf16"/></microbenchmarks></scenario>
XML
line=$(grep -n '<gpu-profile' "$tmp/p.xml" | cut -d: -f1)
expect_status 2 "a profile of another GPU" "$bin" run "$tmp/h100.xml" --profile "$tmp/p.xml" --no-db --quiet
grep -q "p.xml:$line: <gpu-profile gpu=\"H200-SXM-141GB\">: the scenario has no node with this GPU; its nodes have H100-SXM5-80GB" "$tmp/err" &&
  ok "names the profile's line and the scenario's GPU" || no "another GPU: $(cat "$tmp/err")"
echo '{"scenario": "x"}' >"$tmp/bad.json"
expect_status 2 "--from-json of a JSON without measurements" "$bin" calibrate --from-json "$tmp/bad.json" --db "$tmp/b.db" --out "$tmp/b.xml"
grep -q 'bad.json: not a results JSON with measurements' "$tmp/err" && [ ! -e "$tmp/b.xml" ] &&
  ok "says what it expected, writes no profile" || no "bad json: $(cat "$tmp/err")"
expect_status 2 "--gpu of no catalog GPU" "$bin" calibrate --db "$tmp/h.db" --gpu H999 --out "$tmp/c.xml"
grep -q -- "--gpu H999: no such catalog GPU" "$tmp/err" && ok "names the unknown GPU" || no "--gpu: $(cat "$tmp/err")"

echo "$n checks, $fails failed"
[ "$fails" -eq 0 ]
