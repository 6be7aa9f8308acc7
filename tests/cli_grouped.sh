#!/bin/sh
# cli_grouped.sh BINARY: grouped GEMMs, a mixture-of-experts layer's experts
# in one batched call (<gemm groups="G">, docs/hardware-mode.md "Grouped
# GEMMs"), with no GPU here:
# - the model prices G GEMMs at their own shape's efficiency, one launch: a
#   memory-bound grouped case is G times the single GEMM's traffic time;
# - --backend cuda (the stand-in libraries) measures bf16, fp32, fp64
#   (cublasGemmStridedBatchedEx) and fp8 (cuBLASLt with batched layouts)
#   grouped cases, the JSON and the database carry `groups`, and the result
#   check looks past the first group: a batch stride bug (every group
#   computing with group 0's weights) fails the case;
# - --backend cpu says a grouped GEMM needs cuda (the host model prices it as
#   one CBLAS call per group); groups="0" is exit 2;
# - calibrate does not fit grouped cases: the H200 fixture of 2026-11-25 with
#   the grouped measurements of 2026-11-26 beside it gives the same GEMM fit;
# - the twin's uncalibrated H200 predicts the 59 grouped and single expert
#   GEMMs measured on a real H200 (tests/validation/measured/
#   h200-cuda-2026-11-26-grouped.json) with a median |error| within 10%.
suite=grouped
. "$(dirname "$0")/clilib.sh"

cat >"$tmp/g.xml" <<'XML'
<?xml version="1.0"?>
<scenario name="gpu-grouped" seed="1">
  <cluster><nodes type="dgx-h100" count="1"/></cluster>
  <microbenchmarks>
    <gemm m="32" n="48" k="64" groups="5" precision="bf16"/>
    <gemm m="32" n="48" k="64" groups="4" precision="fp8"/>
    <gemm m="16" n="16" k="32" groups="3" precision="fp32"/>
    <gemm m="16" n="16" k="32" groups="3" precision="fp64"/>
    <gemm m="32" n="48" k="64" precision="bf16"/>
    <gemm m="16" n="4096" k="7168" groups="32" precision="bf16"/>
    <gemm m="16" n="4096" k="7168" precision="bf16"/>
  </microbenchmarks>
</scenario>
XML

# The model: the last two cases are memory-bound (16 tokens per expert), so
# the grouped one streams 32 times the single one's bytes after one launch.
expect_status 0 "run predicts grouped GEMMs" "$bin" run "$tmp/g.xml" --json "$tmp/p.json" --no-db --quiet
python3 - "$tmp/p.json" <<'PY' && ok "a grouped GEMM: G GEMMs at their own shape's rate, one launch" || no "grouped prediction"
import json, sys
g = json.load(open(sys.argv[1]))["microbenchmarks"]
one, grp = g[6], g[5]
assert grp["groups"] == 32 and "groups" not in one, (grp, one)
assert grp["model"] == one["model"] == "memory-bound", (grp, one)
launch = 5e-6
assert abs((grp["predicted_s"] - launch) / (one["predicted_s"] - launch) - 32) < 1e-6, (grp, one)
assert abs(grp["predicted_tflops"] / (2 * 16 * 4096 * 7168 * 32 / grp["predicted_s"] / 1e12) - 1) < 1e-9, grp
PY

if [ -f build/tests/libstandin-cublaslt.so ] && [ -f build/tests/libstandin-cudart.so ]; then
  s=$(pwd)/build/tests
  gpuenv() {
    env CT_CUDA_DRIVER_LIB="$s/libstandin-cuda.so" CT_CUDART_LIB="$s/libstandin-cudart.so" \
        CT_CUBLAS_LIB="$s/libstandin-cublas.so" CT_CUBLASLT_LIB="$s/libstandin-cublaslt.so" "$@"
  }
  sed -e '/n="4096"/d' "$tmp/g.xml" >"$tmp/small.xml"
  expect_status 0 "run --backend cuda with grouped GEMMs (stand-in)" gpuenv "$bin" run "$tmp/small.xml" --backend cuda --json "$tmp/m.json" --db "$tmp/m.db" --quiet
  python3 - "$tmp/m.json" "$tmp/m.db" <<'PY' && ok "grouped bf16, fp8, fp32, fp64 measured; groups in the JSON and the database" || no "grouped measurements: $(head -c 300 "$tmp/err")"
import json, sqlite3, sys
g = json.load(open(sys.argv[1]))["microbenchmarks"]
assert len(g) == 5, g
for c in g:
    assert c["measured_s"] > 0, c
    want = 2 * c["m"] * c["n"] * c["k"] * c.get("groups", 1) / c["measured_s"] / 1e12
    assert abs(c["measured_tflops"] / want - 1) < 1e-6, c
assert [c.get("groups") for c in g] == [5, 4, 3, 3, None], g
db = sqlite3.connect(sys.argv[2])
rows = db.execute("SELECT precision, groups FROM microbenchmarks ORDER BY idx").fetchall()
assert rows == [("bf16", 5), ("fp8", 4), ("fp32", 3), ("fp64", 3), ("bf16", None)], rows
PY
  expect_status 1 "a batch stride bug fails the grouped cases" gpuenv CT_STANDIN_BLAS_SAME_B=1 "$bin" run "$tmp/small.xml" --backend cuda --json "$tmp/bad.json" --no-db --quiet
  python3 - "$tmp/bad.json" <<'PY' && ok "the check reads a later group: 'group 2 of 5', the single GEMM still measured" || no "stride bug not caught"
import json, sys
g = json.load(open(sys.argv[1]))["microbenchmarks"]
assert g[0]["measured_s"] is None and "(group 2 of 5) gave C(" in g[0]["note"], g[0]
assert g[2]["measured_s"] is None and "(group 1 of 3)" in g[2]["note"], g[2]
assert g[1]["measured_s"] > 0 and g[4]["measured_s"] > 0, g   # cuBLASLt's fp8 and the single GEMM
PY
else
  skip "stand-in libraries not built (make test builds them)"
fi

expect_status 0 "run --backend cpu with grouped GEMMs" "$bin" run "$tmp/g.xml" --backend cpu --json "$tmp/c.json" --no-db --quiet
python3 - "$tmp/c.json" <<'PY' && ok "cpu: a grouped GEMM is measured by --backend cuda" || no "cpu note"
import json, sys
g = json.load(open(sys.argv[1]))["microbenchmarks"]
assert g[2]["measured_s"] is None and "grouped GEMM (3 GEMMs in one batched call" in g[2]["note"], g[2]
# the host model still prices it: three CBLAS calls' FLOPs
assert abs(g[2]["predicted_tflops"] / (2 * 16 * 16 * 32 * 3 / g[2]["predicted_s"] / 1e12) - 1) < 1e-9, g[2]
PY

sed -e 's/groups="5"/groups="0"/' "$tmp/g.xml" >"$tmp/zero.xml"
expect_status 2 "groups=\"0\" is refused" "$bin" run "$tmp/zero.xml" --no-db --quiet
grep -q "zero.xml:5" "$tmp/err" && grep -q "groups" "$tmp/err" && ok "the error names the file, line and attribute" || no "groups=0 message: $(cat "$tmp/err")"

# calibrate: grouped cases check the law, they are not fitted.
old=tests/validation/measured/h200-cuda-2026-11-25-random.json
new=tests/validation/measured/h200-cuda-2026-11-26-grouped.json
expect_status 0 "calibrate the 2026-11-25 fixture" "$bin" calibrate --from-json "$old" --db "$tmp/a.db" --out "$tmp/a.xml" --all --quiet
python3 - "$new" "$tmp/only.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["microbenchmarks"] = [c for c in d["microbenchmarks"] if c.get("groups", 1) > 1]   # the single GEMMs would be fitted
json.dump(d, open(sys.argv[2], "w"))
PY
expect_status 0 "import the grouped measurements beside it" "$bin" calibrate --from-json "$tmp/only.json" --db "$tmp/a.db" --out "$tmp/b.xml" --all --quiet
sed -n '/<gpu-profile/,/<\/gpu-profile>/p' "$tmp/a.xml" >"$tmp/ga"
sed -n '/<gpu-profile/,/<\/gpu-profile>/p' "$tmp/b.xml" >"$tmp/gb"
[ -s "$tmp/ga" ] && cmp -s "$tmp/ga" "$tmp/gb" && ok "the grouped cases leave the GEMM fit as it was" || no "grouped cases moved the fit: $(diff "$tmp/ga" "$tmp/gb" | head -5)"

# The real H200's grouped GEMMs against the catalog's law.
expect_status 0 "predict the grouped H200 scenario" "$bin" run scenarios/twin-h200-moe.xml --json "$tmp/h.json" --no-db --quiet
python3 - "$tmp/h.json" "$new" <<'PY' && ok "H200 grouped and single expert GEMMs: median |error| within 10% of the real card's" || no "grouped H200 error"
import json, statistics, sys
pred = json.load(open(sys.argv[1]))["microbenchmarks"]
meas = json.load(open(sys.argv[2]))
assert meas["hardware"]["devices"].startswith("NVIDIA H200"), meas["hardware"]
meas = meas["microbenchmarks"]
assert len(pred) == len(meas) == 59
err = []
for p, m in zip(pred, meas):
    assert (p["m"], p["n"], p["k"], p.get("groups"), p["precision"]) == (m["m"], m["n"], m["k"], m.get("groups"), m["precision"])
    assert m["measured_s"] > 0, m
    err.append(abs(p["predicted_s"] / m["measured_s"] - 1))
assert sum(1 for m in meas if m.get("groups", 1) > 1) == 50
med = statistics.median(err)
print("median |error| %.1f%% over %d cases" % (100 * med, len(err)))
assert med <= 0.10, med
PY
echo "$n checks, $fails failed"
[ "$fails" -eq 0 ]
