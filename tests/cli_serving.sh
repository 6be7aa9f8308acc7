#!/bin/sh
# cli_serving.sh BINARY: published offline serving throughput replayed through
# the command line.
#
# Each row of tests/validation/inference.csv (a copy of the project's shared
# validation set: TensorRT-LLM perf-overview, trtllm-bench, all requests
# submitted at once, fixed input/output lengths) becomes a scenario per
# CONTRACT.md: one <inference> replica of tp GPUs of the row's node type,
# offline arrivals, the row's lengths. The benchmark's own runtime settings
# are given as they were: max_batch_size 2048 and max_num_tokens 8192 (the
# TensorRT-LLM LLM-API defaults trtllm-bench starts from) and its
# guaranteed-no-evict scheduler (kv-allocation="reserve", the default), the
# PyTorch backend's separate FP8 input quantisation (fp8-act-quant="kernel",
# docs/fp4-serving-path.md), the CUDA graphs the page's llm_options capture
# with padding (cuda-graph-sizes, docs/serving-engines.md) and the page's
# request count for the row's lengths (its count column).
# `BINARY run FILE --json -` must give services[0].output_tokens_per_s within
# the row's tolerance. Prints one line per row, the median and largest
# |error|, and 'N passed, N failed'; exits 1 when any row fails.
set -u

[ $# -ge 1 ] || { echo "usage: $0 BINARY [CSV]" >&2; exit 2; }
bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
[ -x "$bin" ] || { echo "$0: $bin is not an executable" >&2; exit 2; }
cd "$(dirname "$0")/.." || exit 2
csv=${2:-tests/validation/inference.csv}
[ -r "$csv" ] || { echo "$0: cannot read $csv" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "$0: needs python3" >&2; exit 2; }

python3 - "$bin" "$csv" <<'PY'
import csv, json, math, os, statistics, subprocess, sys, tempfile
sys.dont_write_bytecode = True   # no tests/__pycache__ in the checkout
sys.path.insert(0, "tests")
from ctrun import run_text

binp, path = sys.argv[1], sys.argv[2]
REQUESTS = 3000          # a row without a count: enough that the last, partial batch weighs little
GRAPHS = "1,2,4,8,16,32,64,128,256,384,512,1024,2048,4096,8192"   # the page's cuda_graph_config

def scenario(r):
    tp = int(r["tp"])
    nodes = max(1, math.ceil(tp / 8))
    return f"""<?xml version="1.0"?>
<scenario name="{r['id']}" seed="1">
  <cluster>
    <nodes type="{r['node_type']}" count="{nodes}"/>
  </cluster>
  <workload>
    <inference name="{r['id']}" model="{r['model']}" precision="{r['precision']}" gpu="{r['gpu']}"
               tp="{tp}" replicas="1" max-batch="2048" token-budget="8192" fp8-act-quant="kernel"
               cuda-graph-sizes="{GRAPHS}">
      <arrivals process="offline" count="{r.get('count') or REQUESTS}"/>
      <requests input-tokens="{r['input_tokens']}" output-tokens="{r['output_tokens']}"/>
    </inference>
  </workload>
</scenario>
"""

rows = list(csv.DictReader(l for l in open(path) if not l.startswith("#")))
ok = bad = 0
errs = []
for r in rows:
    p = None
    try:
        p = run_text(binp, scenario(r))
        got = float(json.loads(p.stdout)["services"][0][r["metric"]])
        want = float(r["expected"])
        err = (got - want) / want * 100
        errs.append(abs(err))
        good = abs(err) <= float(r["tolerance_pct"])
        print(f"{'ok  ' if good else 'FAIL'} {r['id']:<24} {r['metric']:<20} expected {want:>8.0f} got {got:10.1f}"
              f"  error {err:+6.1f}% (tolerance {r['tolerance_pct']}%)")
    except Exception as e:
        good = False
        msg = ((p.stderr.strip().splitlines() if p else []) or [str(e)])[-1]
        print(f"FAIL {r['id']:<24} no result: {msg[:200]}")
    ok += good
    bad += not good
if errs:
    print(f"serving validation: median |error| {statistics.median(errs):.1f}%, max {max(errs):.1f}%")
print(f"{ok} passed, {bad} failed")
sys.exit(0 if bad == 0 and ok > 0 else 1)
PY
rc=$?

# The published MoE and Blackwell rows (tests/validation/inference_moe.csv)
# through `validate --published`: every row gives a result and the median
# |error| stays at or under what the model reached when it was last changed
# (42.9% over 18 rows, issue 20's second serving pass, rounded up to 43%;
# 42.0% since the rows run the page's own request counts, third pass;
# 40.4% with the MoE routing traffic, fourth pass, rounded up to 41%;
# 35.5% with the NVFP4 conversion pass and NCCL's own protocol choice for
# the TP4 rows' all-reduces, rounded up to 36%;
# 32.5% with the FP8 input-quantisation passes of the PyTorch backend on the
# Scout FP8 rows, rounded up to 33%, docs/fp4-serving-path.md;
# docs/moe-serving.md), so a regression fails. The dense rows keep theirs
# (1.4%, rounded up to 2%; 2.7% since collectives follow NCCL's own
# protocol choice, the 70B TP all-reduce at decode sizes now ring/LL as
# nccl-tests measures, docs/collectives.md: rounded up to 3%; 3.3% since the
# FP8 rows pay the PyTorch backend's input-quantisation kernels, the 70B TP2
# row moving from -2.7% to -3.3%, docs/fp4-serving-path.md: rounded up to
# 4%). The later, re-measured Qwen3-30B-A3B rows
# (inference_moe_later.csv, held out, sixth pass) gave 23.6% when first run,
# rounded up to 24%. With the CUTLASS fused-MoE law (ninth pass,
# docs/moe-serving.md "The CUTLASS fused MoE") the MoE rows give 17.5% and the
# later ones 5.4%: rounded up to 18% and 6%. With the context-FMHA law
# (docs/serving.md "Prefill attention, measured") they give 17.2% and 5.4%,
# and inference.csv 3.96% (its 8B 128/128 row pays the call's fixed time).
# The later page's other MoE tables (inference_moe_models.csv: DeepSeek R1,
# GPT-OSS, Maverick, Qwen3-235B-A22B, mostly attention DP; twelfth pass)
# gave 22.5% when first run, as they did with each attention-DP rank's host
# working its own share of the sequences: rounded up to 23%. With MXFP4
# experts at the FP8 rate (thirteenth pass) it gives 20.2%, and 17.4% with
# the CUTLASS law on them on Blackwell: rounded up to 18%. With the MLA
# generation law (docs/moe-serving.md "MLA decode, measured") 16.1%: 16.5%.
# With the page's CUDA graphs padded per attention-DP rank (docs/serving-
# engines.md "CUDA graphs under attention DP") the MoE rows give 13.6%, the
# later ones 5.3% and the other MoE tables 15.0%: 14%, 6% and 15.5%. The
# dense rows run the page's request counts and pay the padding too: 8.5%
# (the 70B TP2 row -4.0% -> -8.5%: its KV cache holds ~224 sequences, padded to 256):
# 9%. With each GPU's memory as the driver reports it (models/catalog/gpus.xml
# "hbm", docs/serving.md "GPU memory") the MoE rows give 13.6%, the later
# ones 5.9%, the other MoE tables 14.3% and the dense rows 2.1%: 14%, 6.5%,
# 15% and 3%.
"$bin" validate --published tests/validation --only inference 2>&1 | python3 -c '
import sys
want = {"file:inference_moe.csv": (18, 14.0), "file:inference_moe_later.csv": (10, 6.5),
        "file:inference.csv": (3, 3.0), "file:inference_moe_models.csv": (76, 15.0)}
seen = {}
for line in sys.stdin:
    f = line.split()
    if f and f[0] in want:
        seen[f[0]] = (int(f[1]), int(f[2]), float(f[3].rstrip("%")))
bad = 0
for k, (n, ceil) in want.items():
    if k not in seen:
        print("FAIL %s: no summary line" % k); bad = 1; continue
    got_n, none, med = seen[k]
    good = got_n == n and none == 0 and med <= ceil
    print("%s %s: %d rows, %d without a result, median |error| %.1f%% (at most %g%%)"
          % ("ok  " if good else "FAIL", k, got_n, none, med, ceil))
    bad |= not good
sys.exit(bad)
' || rc=1

# The MoE chat scenario (scenarios/serving-moe-chat.xml): DeepSeek-V3 with
# expert parallelism runs end to end and its service reports ep and the
# total (671B) and active (37B) parameters; ep on a dense model is refused
# at load (exit 2) naming the attribute.
out=$("$bin" run scenarios/serving-moe-chat.xml --json - --no-db) || { echo "FAIL serving-moe-chat did not run"; exit 1; }
printf '%s' "$out" | python3 -c '
import json, sys
s = json.load(sys.stdin)["services"][0]
assert s["ep"] == 8 and s["tp"] == 8, s
assert abs(s["total_params"] / 671e9 - 1) < 0.01 and abs(s["active_params"] / 37e9 - 1) < 0.03, s
assert s["output_tokens_per_s"] > 0 and s["slo_attainment"] > 0.9, s
print("ok   serving-moe-chat: ep %d, %.0fB total, %.1fB active, %.0f output tokens/s"
      % (s["ep"], s["total_params"] / 1e9, s["active_params"] / 1e9, s["output_tokens_per_s"]))
' || rc=1
# law_rises SCENARIO NAME ATTR FIELD FACTOR WHAT: the scenario's service NAME
# run as it is and with ATTR (name="value") written on its <inference>; FIELD
# of the second must exceed FACTOR times the first's.
law_rises() {
    local base=$(mktemp) var=$(mktemp)
    sed "s/<inference name=\"$2\"/<inference name=\"$2\" $3/" "$1" >"$var"
    if "$bin" run "$1" --json "$base.json" --no-db >/dev/null && "$bin" run "$var" --json "$var.json" --no-db >/dev/null
    then
        python3 - "$base.json" "$var.json" "$4" "$5" "$(basename "$1" .xml): $6" <<'PY' || rc=1
import json, sys
r = json.load(open(sys.argv[1]))["services"][0][sys.argv[3]]
c = json.load(open(sys.argv[2]))["services"][0][sys.argv[3]]
assert c > float(sys.argv[4]) * r, (sys.argv[5], r, c)
print("ok   %s: %s %.2f ms without, %.2f ms with" % (sys.argv[5], sys.argv[3], r * 1e3, c * 1e3))
PY
    else echo "FAIL $1 with $3 did not run"; rc=1; fi
    rm -f "$base" "$base.json" "$var" "$var.json"
}
# The MoE chat service with fused-moe="cutlass" (TensorRT-LLM's CUTLASS fused
# MoE, priced by the H200's measured law; docs/moe-serving.md "The CUTLASS
# fused MoE"): its decode steps are slower, so its TPOT is higher.
law_rises scenarios/serving-moe-chat.xml moe-chat 'fused-moe="cutlass"' tpot_p50_s 1.05 "the CUTLASS fused-MoE law"
# The 70B chat service with context-fmha="trtllm" (TensorRT-LLM's context
# attention, priced by the H100's measured law; docs/serving.md "Prefill
# attention, measured"): at 1,000-token prompts the call's fixed and per-tile
# times cost more than the causal FLOPs at half the peak, so TTFT rises.
law_rises scenarios/serving-chat-70b.xml chat 'context-fmha="trtllm"' ttft_p50_s 1.02 "the context-FMHA law"
# The MoE chat service with mla-decode="trtllm" (TensorRT-LLM's MLA generation
# call, priced by the H200's measured law; docs/moe-serving.md "MLA decode,
# measured"): at 16 heads per GPU and a light load the call's fixed and
# per-sequence times cost more than the roofline's latent read, so TPOT rises
# (24.8 -> 26.6 ms when written); a word it does not know is refused.
law_rises scenarios/serving-moe-chat.xml moe-chat 'mla-decode="trtllm"' tpot_p50_s 1.03 "the MLA generation law"
mla=$(mktemp -d)
sed 's/<inference name="moe-chat"/<inference name="moe-chat" mla-decode="flash"/' scenarios/serving-moe-chat.xml >"$mla/bad.xml"
"$bin" run "$mla/bad.xml" --no-db >/dev/null 2>"$mla/err"
st=$?
if [ $st -eq 2 ] && grep -q "bad.xml:[0-9]*: .*mla-decode must be one of: trtllm,roofline" "$mla/err"; then
    echo "ok   mla-decode=\"flash\" refused with file, line and the words it takes (exit 2)"
else echo "FAIL mla-decode=\"flash\": exit $st: $(cat "$mla/err")"; rc=1; fi
rm -rf "$mla"
bad=$(mktemp)
sed 's/model="deepseek-v3"/model="llama3-70b"/' scenarios/serving-moe-chat.xml >"$bad"
"$bin" run "$bad" --no-db >/dev/null 2>"$bad.err"
st=$?
if [ $st -eq 2 ] && grep -q "ep" "$bad.err"; then echo "ok   ep on a dense model refused (exit 2)"
else echo "FAIL ep on a dense model: exit $st: $(cat "$bad.err")"; rc=1; fi
rm -f "$bad" "$bad.err"
# Llama 4's chunked attention (llms.xml attn-chunked; docs/serving.md
# "Windows and chunks"): its local layers read only the keys of their own
# 8,192-token chunk, where a sliding window reads the last 8,192. Prompts
# shorter than a chunk read the same under both (equal throughput, to the
# bit); prompts of 8,192 tokens put each decode step just past a chunk
# boundary, where a chunk reads a few hundred keys and a window 8,192, so
# Scout serves faster than the same model with windows.
chk=$(mktemp -d)
for isl in 1024 8192; do for kind in true false; do
cat >"$chk/s-$isl-$kind.xml" <<EOF
<?xml version="1.0"?>
<scenario name="chunk" seed="1">
  <catalog><llm name="scout-x" base="llama4-scout" attn-chunked="$kind"/></catalog>
  <cluster><nodes type="dgx-b200" count="1"/></cluster>
  <workload>
    <inference name="s" model="scout-x" precision="fp8" gpu="B200-SXM-180GB" tp="1" replicas="1" max-batch="256">
      <arrivals process="offline" count="300"/>
      <requests input-tokens="$isl" output-tokens="512"/>
    </inference>
  </workload>
</scenario>
EOF
"$bin" run "$chk/s-$isl-$kind.xml" --no-db --json "$chk/$isl-$kind.json" >/dev/null || { echo "FAIL chunk scenario $isl $kind did not run"; rc=1; }
done; done
python3 - "$chk" <<'PY' || rc=1
import json, sys
t = {k: json.load(open("%s/%s.json" % (sys.argv[1], k)))["services"][0]["output_tokens_per_s"]
     for k in ("1024-true", "1024-false", "8192-true", "8192-false")}
assert t["1024-true"] == t["1024-false"], ("short prompts differ", t)
assert t["8192-true"] > 1.03 * t["8192-false"], ("chunks not cheaper past a boundary", t)
print("ok   chunked attention: 1,024-token prompts %.0f tok/s either way; 8,192-token prompts %.0f chunked, %.0f windowed"
      % (t["1024-true"], t["8192-true"], t["8192-false"]))
PY
rm -rf "$chk"
exit $rc
