#!/bin/sh
# cli_published.sh BINARY: `clustertwin validate --published DIR`, the
# published-case report (docs/validation.md). On tests/validation: every
# case row of every CSV the command recognises is in the JSON, each case's
# error is 100 (predicted - expected) / expected, the summaries recompute
# from the cases, the original training tables (training.csv) stay at
# median |error| <= 5% and max <= 12% (the issue-19 target), the HTML is
# well-formed XHTML. On made-up folders: the filters, a file of no known
# kind skipped with a note, an unknown failure profile a case with no
# result (not a crash), --fail-over, and malformed rows refused with
# file:line and exit 2. The figures are the models' (deterministic).
suite=published
. "$(dirname "$0")/clilib.sh"
command -v python3 >/dev/null 2>&1 || { skip "needs python3"; echo "published: skipped"; exit 0; }

# ---- tests/validation ----
expect_status 0 "validate --published tests/validation" "$bin" validate --published tests/validation \
  --json "$tmp/all.json" --html "$tmp/all.html"
grep -q '^summary' "$tmp/out" && grep -q '^training.csv (training)' "$tmp/out" && ok "terminal table and summary" \
  || no "terminal output: $(head -c 300 "$tmp/out")"
python3 - "$tmp/all.json" tests/validation <<'PY' && ok "JSON: every CSV row, errors and summaries recompute" \
  || no "JSON: every CSV row, errors and summaries recompute"
import csv, glob, json, os, statistics, sys
d = json.load(open(sys.argv[1]))
cases = d["cases"]
# every data row of each case file is a case (hardware_peaks.csv is no case file)
for path in sorted(glob.glob(os.path.join(sys.argv[2], "*.csv"))):
    name = os.path.basename(path)
    rows = list(csv.reader(l for l in open(path) if l.strip() and not l.lstrip().startswith("#")))[1:]
    got = [c for c in cases if c["file"] == name]
    if name == "hardware_peaks.csv":
        assert not got and any(name in n for n in d["notes"]), name
        continue
    assert len(got) == len(rows) and rows, (name, len(got), len(rows))
for c in cases:
    for k in ("file", "id", "kind", "set", "mechanism", "source", "metric", "expected", "predicted",
              "error_pct", "tolerance_pct", "within"):
        assert k in c, k
    assert c["set"] in ("calibration", "heldout")
    if c["predicted"] is not None:
        e = 100 * (c["predicted"] - c["expected"]) / c["expected"]
        assert abs(e - c["error_pct"]) < 1e-6, c
        if c["tolerance_pct"] is not None:
            assert c["within"] == (abs(e) <= c["tolerance_pct"]), c
    else:
        assert c["error_pct"] is None and c["within"] is None and c.get("note"), c
def members(g):
    kind, _, v = g.partition(":")
    if g == "all": return cases
    if kind == "file": return [c for c in cases if c["file"] == v]
    if kind == "set": return [c for c in cases if c["set"] == v]
    if kind in ("training", "collectives", "failures", "inference"):
        return [c for c in cases if c["kind"] == kind and c["set"] == v]
    return [c for c in cases if v in (c["mechanism"].split("+") if c["mechanism"] else ["none"])]
groups = {s["group"]: s for s in d["summary"]}
assert "all" in groups and "set:calibration" in groups and "file:training.csv" in groups
for s in d["summary"]:
    e = [c["error_pct"] for c in members(s["group"]) if c["error_pct"] is not None]
    assert s["n"] == len(e), s
    if e:
        assert abs(s["median_abs_error_pct"] - statistics.median(abs(x) for x in e)) < 1e-6, s
        assert abs(s["max_abs_error_pct"] - max(abs(x) for x in e)) < 1e-6, s
        assert abs(s["median_signed_error_pct"] - statistics.median(e)) < 1e-6, s
PY
python3 - "$tmp/all.json" <<'PY' && ok "training.csv: median |error| <= 5%, max <= 12%" \
  || no "training.csv: median |error| <= 5%, max <= 12%"
import json, sys
g = {s["group"]: s for s in json.load(open(sys.argv[1]))["summary"]}["file:training.csv"]
print("  training.csv: n %d, median |error| %.1f%%, max %.1f%%" % (g["n"], g["median_abs_error_pct"], g["max_abs_error_pct"]))
assert g["n"] >= 6 and g["median_abs_error_pct"] <= 5 and g["max_abs_error_pct"] <= 12
PY
# heldout_floor FILE MIN_ROWS BOUND LABEL: the held-out rows of FILE (at
# least MIN_ROWS) all give a result and their median |error| is at most BOUND%.
heldout_floor() {
    python3 - "$tmp/all.json" "$1" "$2" "$3" "$4" <<'PY' && ok "$4: every row a result, median |error| <= $3%" \
      || no "$4: every row a result, median |error| <= $3%"
import json, statistics, sys
f, n, bound, label = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
c = [c for c in json.load(open(sys.argv[1]))["cases"] if c["file"] == f and c["set"] == "heldout"]
e = [abs(x["error_pct"]) for x in c if x.get("error_pct") is not None]
print("  %s: n %d (%d without a result), median |error| %.1f%%, max %.1f%%"
      % (label, len(c), len(c) - len(e), statistics.median(e), max(e)))
assert len(c) >= n and len(e) == len(c) and statistics.median(e) <= bound
PY
}
# Issue 19's target for training on the held-out rows of its dense set
# (training_published.csv; never fitted to): median |error| <= 8%. Its other
# target, no case over 25%, is not met yet (docs/validation.md lists the
# cases over it); the largest is printed. The MoE and Blackwell rows of issue
# 20 (training_moe.csv) are checked below on their own.
heldout_floor training_published.csv 25 8 "training held out"
# Issue 20's MoE and Blackwell training rows (training_moe.csv): a floor
# against regressions at what the model reaches today, not the issue's
# target (median <= 10%, not met: docs/moe-training.md, "Validation").
# Every row with a result (gpt-oss-120b BF16 on B200 fits since the
# recompute-modules its recipe sets, layernorm and moe_act, are priced; it
# comes out +57%, which raised the median from 20.4% to 21.2%) and median
# |error| <= 20.2% (20.3% since the routed experts' FP8/FP4 casts are
# priced, 20.17% since the alltoall dispatcher's host sync is, on the rows
# whose recipe runs it; 16.74% since the seventh round: TFLOP/s rows compared
# as tokens/s in their source's FLOP convention, and the a2a overlap two
# 26.06 recipes set; 16.82% since the eighth round: the flex dispatcher
# crosses the NICs once per node a token's experts fall in, which moves
# three H100 rows with EP across nodes: docs/moe-training.md).
python3 - "$tmp/all.json" <<'PY' && ok "training_moe.csv: every row with a result, median |error| <= 16.9%" \
  || no "training_moe.csv: every row with a result, median |error| <= 16.9%"
import json, statistics, sys
c = [c for c in json.load(open(sys.argv[1]))["cases"] if c["file"] == "training_moe.csv"]
e = [abs(x["error_pct"]) for x in c if x.get("error_pct") is not None]
print("  training_moe.csv: n %d (%d without a result), median |error| %.1f%%"
      % (len(c), len(c) - len(e), statistics.median(e)))
assert len(c) >= 30 and len(c) == len(e) and statistics.median(e) <= 16.9
PY
# Issue 21's serving latency rows (inference_latency.csv), held out: every
# row gives a result and the median |error| stays at or under 12%, a floor at
# today's 11.8%, not the issue's target (10%, not met: the time to first token
# of several users, docs/validation.md "Serving latency by engine and concurrency").
heldout_floor inference_latency.csv 18 12 "inference_latency.csv held out"
# Issue 19's target for collectives: on the held-out half, sizes from 1 MB,
# median |error| <= 10% (tests/validation/collectives.csv; nothing was fitted
# to those rows).
python3 - "$tmp/all.json" tests/validation/collectives.csv <<'PY' && ok "collectives held out, >= 1 MB: median |error| <= 10%" \
  || no "collectives held out, >= 1 MB: median |error| <= 10%"
import csv, json, statistics, sys
d = json.load(open(sys.argv[1]))
size = {r["id"]: int(r["size_bytes"]) for r in csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith("#"))}
e = [abs(c["error_pct"]) for c in d["cases"] if c["kind"] == "collectives" and c["set"] == "heldout"
     and c["error_pct"] is not None and size.get(c["id"], 0) >= 1 << 20]
print("  collectives held out: n %d, median |error| %.1f%%" % (len(e), statistics.median(e)))
assert len(e) >= 10 and statistics.median(e) <= 10
PY
if command -v xmllint >/dev/null 2>&1; then
  xmllint --noout --nonet "$tmp/all.html" 2>"$tmp/xml" && xmllint --html --noout --nonet "$tmp/all.html" 2>>"$tmp/xml" \
    && ok "HTML is well-formed (xmllint, XML and HTML)" || no "HTML: $(head -c 300 "$tmp/xml")"
else
  python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$tmp/all.html" 2>"$tmp/xml" \
    && ok "HTML is well-formed (Python's XML parser)" || no "HTML: $(head -c 300 "$tmp/xml")"
fi
grep -q 'id="set-0"' "$tmp/all.html" && grep -q 'style="background:#' "$tmp/all.html" \
  && ok "HTML: a table per set, rows coloured by error" || no "HTML: sets and colours"
"$bin" validate --published tests/validation --json "$tmp/again.json" -q >/dev/null 2>&1
cmp -s "$tmp/all.json" "$tmp/again.json" && ok "the JSON repeats byte for byte" || no "the JSON differs between runs"

# ---- Filters, kinds, notes, --fail-over on made-up cases ----
d=$tmp/cases
mkdir -p "$d"
cat >"$d/coll.csv" <<'EOF'
# made-up collective cases (the figures are not published: this folder tests the command)
id,source,node_type,gpu,nodes,gpus_per_node,op,size_bytes,metric,expected,tolerance_pct,set,mechanism
c-one-node,test,dgx-h100,H100-SXM5-80GB,1,8,allreduce,1073741824,busbw_GBps,470,10,heldout,nccl-algo
c-two-node,test,dgx-h100,,2,8,allreduce,1073741824,busbw_GBps,300,10,heldout,nccl-algo+multinode
EOF
cat >"$d/fail.csv" <<'EOF'
id,source,profile,gpus,node_type,metric,expected,tolerance_pct,set,mechanism
f-llama3,Llama 3 Herd section 3.3.4,llama3,16384,dgx-h100,mtti_h,3.09,5,calibration,failure-profile
f-unknown,test,no-such-profile,1024,dgx-a100-80gb,mtti_h,10,30,heldout,failure-profile
EOF
printf 'a,b,c\n1,2,3\n' >"$d/other.csv"
expect_status 0 "made-up cases" "$bin" validate --published "$d" --json "$tmp/m.json" -q
python3 - "$tmp/m.json" <<'PY' && ok "collectives priced, llama3 MTTI 3.09 h, unknown profile: no result, other file: a note" \
  || no "made-up cases: $(head -c 300 "$tmp/m.json")"
import json, sys
d = json.load(open(sys.argv[1]))
c = {x["id"]: x for x in d["cases"]}
assert set(c) == {"c-one-node", "c-two-node", "f-llama3", "f-unknown"}, set(c)
assert c["c-one-node"]["predicted"] > 0 and c["c-two-node"]["predicted"] > 0
assert c["c-one-node"]["kind"] == "collectives" and c["f-llama3"]["kind"] == "failures"
assert abs(c["f-llama3"]["predicted"] - 3.09) < 0.05, c["f-llama3"]     # the profile's own window
assert c["f-unknown"]["predicted"] is None and "no-such-profile" in c["f-unknown"]["note"]
assert any("other.csv" in n for n in d["notes"])
g = {s["group"]: s for s in d["summary"]}
assert g["mechanism:multinode"]["n"] == 1 and g["set:heldout"]["no_result"] == 1
PY
expect_status 0 "--only failures --set heldout" "$bin" validate --published "$d" --only failures --set heldout --json -
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [c["id"] for c in d["cases"]] == ["f-unknown"], d["cases"]' \
  "$tmp/out" && ok "the filters keep one kind and one set" || no "filters: $(head -c 300 "$tmp/out")"
expect_status 1 "--fail-over 0.001: a case over it exits 1" "$bin" validate --published "$d" --fail-over 0.001 -q
expect_status 0 "--fail-over 1000: none over it" "$bin" validate --published "$d" --only failures --fail-over 1000 -q
expect_status 2 "--only with an unknown kind" "$bin" validate --published "$d" --only gpus
expect_status 2 "--set with an unknown set" "$bin" validate --published "$d" --set test
expect_status 2 "--fail-over not a number" "$bin" validate --published "$d" --fail-over lots
expect_status 2 "--html without --published" "$bin" validate scenarios/twin-host.xml --backend cpu --html "$tmp/x.html"
expect_status 2 "--published with --backend" "$bin" validate --published "$d" --backend cpu
expect_status 2 "a folder that is not there" "$bin" validate --published "$tmp/nope"

# ---- Inference rows: the per-GPU metric and attrs (issue 20, twelfth serving pass) ----
# One DEP2 replica (tp 1, ep 2: attention data parallel over two GPUs)
# priced per replica and per GPU: the per-GPU figure is the replica's over
# its two GPUs. attrs reach <inference> verbatim: gpt-oss-20b with a bf16 KV
# cache holds half the tokens of the default fp8 one, so it serves fewer
# sequences at once and fewer tokens/s at 1024/8192.
inf=$tmp/inf
mkdir -p "$inf"
cat >"$inf/i.csv" <<'EOF'
id,model,precision,gpu,node_type,tp,ep,input_tokens,output_tokens,metric,expected,tolerance_pct,set,mechanism,count,attrs
i-total,qwen3-30b-a3b,fp4,B200-SXM-180GB,dgx-b200,1,2,1024,1024,output_tokens_per_s,50000,20,heldout,moe,400,
i-per-gpu,qwen3-30b-a3b,fp4,B200-SXM-180GB,dgx-b200,1,2,1024,1024,output_tokens_per_s_per_gpu,25000,20,heldout,moe,400,
i-kv-fp8,gpt-oss-20b,fp4,H100-SXM5-80GB,dgx-h100,1,1,1024,8192,output_tokens_per_s,8617,20,heldout,moe,300,fp4-recipe='mxfp4'
i-kv-bf16,gpt-oss-20b,fp4,H100-SXM5-80GB,dgx-h100,1,1,1024,8192,output_tokens_per_s,8617,20,heldout,moe,300,fp4-recipe='mxfp4' kv-precision='bf16'
i-bad-attr,gpt-oss-20b,fp4,H100-SXM5-80GB,dgx-h100,1,1,1024,8192,output_tokens_per_s,8617,20,heldout,moe,300,kv-precision='fp2'
EOF
expect_status 0 "inference rows with ep, attrs and the per-GPU metric" "$bin" validate --published "$inf" --json "$tmp/i.json" -q
python3 - "$tmp/i.json" <<'PY' && ok "per-GPU metric = replica's over its 2 GPUs; attrs kv-precision bf16 serves less; a bad attrs value: no result" \
  || no "inference attrs/per-GPU: $(head -c 400 "$tmp/i.json")"
import json, sys
c = {x["id"]: x for x in json.load(open(sys.argv[1]))["cases"]}
t, g = c["i-total"]["predicted"], c["i-per-gpu"]["predicted"]
assert t > 0 and abs(g - t / 2) < 1e-6 * t, (t, g)
assert 0 < c["i-kv-bf16"]["predicted"] < 0.9 * c["i-kv-fp8"]["predicted"], (c["i-kv-bf16"], c["i-kv-fp8"])
assert c["i-bad-attr"]["predicted"] is None and "kv-precision" in c["i-bad-attr"]["note"], c["i-bad-attr"]
PY

# ---- Malformed rows: file and line, exit 2 ----
bad=$tmp/bad
mkdir -p "$bad"
bad_case() {   # description expected-message header row
  what=$1; msg=$2   # (expect_status sets $want)
  printf '# comment\n%s\n%s\n' "$3" "$4" >"$bad/x.csv"
  expect_status 2 "$what" "$bin" validate --published "$bad" -q
  grep -qF "$bad/x.csv:3: $msg" "$tmp/err" && ok "$what: names file:line" || no "$what: message $(head -c 300 "$tmp/err")"
}
fh=id,source,profile,gpus,node_type,metric,expected,tolerance_pct,set,mechanism
bad_case "expected not a number" "column expected: expected a number > 0, got 'many'" "$fh" "a,s,llama3,8,dgx-h100,mtti_h,many,5,,"
bad_case "gpus not a whole number" "column gpus: expected a whole number" "$fh" "a,s,llama3,8.5,dgx-h100,mtti_h,3,5,,"
bad_case "an unknown metric" "column metric: expected mtti_h or failures_per_1000_node_days, got 'mtbf'" "$fh" \
  "a,s,llama3,8,dgx-h100,mtbf,3,5,,"
bad_case "an unknown set" "column set: expected calibration or heldout, got 'test'" "$fh" "a,s,llama3,8,dgx-h100,mtti_h,3,5,test,"
bad_case "a negative tolerance" "column tolerance_pct: expected a number >= 0, got '-5'" "$fh" "a,s,llama3,8,dgx-h100,mtti_h,3,-5,,"
bad_case "an unterminated quote" "column 2: a quoted field is not closed" "$fh" 'a,"s,llama3,8,dgx-h100,mtti_h,3,5,,'
th=$(head -n 1 tests/validation/training.csv)
bad_case "a training row with tp not a number" "column tp: expected a whole number" "$th" \
  "m,s,dgx-a100-80gb,A100-SXM4-80GB,32,one,1,32,1,none,24,2304,9216,24,24,51200,2048,512,,full,hardware_tflops_per_gpu,137,10"
ih=id,model,precision,gpu,node_type,tp,input_tokens,output_tokens,metric,expected,tolerance_pct,count
bad_case "an inference row with an unknown metric" \
  "column metric: expected output_tokens_per_s or output_tokens_per_s_per_gpu, got 'tokens'" \
  "$ih" "i,llama3.1-8b,fp8,H100-SXM5-80GB,dgx-h100,1,128,128,tokens,28312,20,10"
bad_case "an inference row with a count of 0" "column count: expected a whole number from 1 to 100000000, got '0'" \
  "$ih" "i,llama3.1-8b,fp8,H100-SXM5-80GB,dgx-h100,1,128,128,output_tokens_per_s,28312,20,0"

[ $fails = 0 ] && echo "published: all passed" || echo "published: $fails failed"
[ $fails = 0 ]
