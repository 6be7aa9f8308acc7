#!/bin/sh
# cli_moe.sh BINARY: mixture-of-experts training through the CLI.
# - scenarios/deepseek-v3-2048-h800.xml (the DeepSeek-V3 report's stated
#   configuration, phase by phase: the batch ramp, pre-training, the two
#   context-extension phases, each a <training after=> the one before)
#   predicts GPU-hours within 10% of the report's Table 1: 2,664K H800
#   GPU-hours for pre-training (the ramp and main jobs) and 2,788K in all
#   (the scenario does not run the 5K of post-training); each phase starts
#   when the one before it ends; jobs[] carry ep, active_params and
#   total_params.
# - Bad expert-parallel plans fail with exit 2 naming the file, line and
#   what was expected.
# - moe-comm: Qwen3-235B-A22B under attention DP over one HGX H200 (auto is
#   the all-to-all) and two (auto all-gathers); explicit values override it;
#   an unknown value fails with exit 2 naming the file and line.
# - attn-dp-limits: under attention DP (ep > tp) per-rank max-batch bounds
#   each attention-DP rank, so the replica's mean batch passes it (and stays
#   within attn_dp times it); replica (the default) holds the whole replica
#   to it; the trtllm engine is per-rank unless the scenario says replica;
#   without attention DP (tp = ep) per-rank changes nothing; the KV cache is
#   not multiplied; an unknown value fails with exit 2 naming file and line.
# - cuda-graph-sizes: a decode step under attention DP replays the largest
#   rank's batch padded to the next captured size on every rank, so a run
#   with graphs takes longer per output token than one without; padding
#   that would pass a rank's max-batch is not done (the run equals the one
#   without graphs); "none" drops an engine's list; sizes that do not
#   ascend fail with exit 2 naming the file and line.
# - A published training row may name a catalog preset (model column) and
#   an ep (tests/moe-published, a made-up row): `validate --published` and
#   tests/replay-training predict it, the same figure both ways.
suite=moe
. "$(dirname "$0")/clilib.sh"

expect_status 0 "deepseek-v3-2048-h800 runs" "$bin" run scenarios/deepseek-v3-2048-h800.xml --no-db --json "$tmp/ds.json"
# GPU-hours, tokens/s/GPU, MFU, ep, active and total parameters of the job.
read -r hours tps mfu ep act tot <<EOF2
$(tr -d ' \n' <"$tmp/ds.json" | sed 's/.*"jobs":\[{//' |
  awk -F, '{ for (i = 1; i <= NF; i++) { split($i, kv, ":"); gsub(/"/, "", kv[1]); v[kv[1]] = kv[2] }
             print v["gpu_hours"], v["tokens_per_s_per_gpu"], v["mfu"], v["ep"], v["active_params"], v["total_params"] }')
EOF2
# Per job (name, start, end, GPU-hours): the pre-training jobs' sum, every
# job's sum, and whether each job starts when the one before it ended.
awk '/"jobs": \[/ { in_jobs = 1 } in_jobs && /"name":/ { gsub(/[",]/, "", $2); name = $2 }
     in_jobs && /"start_s":/ { gsub(/,/, "", $2); st = $2 } in_jobs && /"end_s":/ { gsub(/,/, "", $2); en = $2 }
     in_jobs && /"gpu_hours":/ { gsub(/,/, "", $2); print name, st, en, $2 }' "$tmp/ds.json" >"$tmp/ds-jobs"
read -r pre all chained <<EOF2
$(awk '{ all += $4; if ($1 ~ /ramp|pretrain/) pre += $4; if (NR > 1 && $2 != last) bad = 1; last = $3 }
       END { printf "%.0f %.0f %d\n", pre, all, (NR == 7 && !bad) }' "$tmp/ds-jobs")
EOF2
echo "     deepseek-v3-2048-h800: pre-training ${pre} GPU-hours (report 2664000), all phases ${all} (report 2788000); last phase ${tps} tokens/s/GPU, MFU ${mfu}"
awk -v h="$pre" 'BEGIN { e = (h - 2664000) / 2664000; exit !(e <= 0.10 && e >= -0.10) }' &&
  ok "pre-training GPU-hours within 10% of the report's 2,664K" || no "pre-training GPU-hours $pre vs 2,664K: beyond 10%"
awk -v h="$all" 'BEGIN { e = (h - 2788000) / 2788000; exit !(e <= 0.10 && e >= -0.10) }' &&
  ok "all phases' GPU-hours within 10% of the report's 2,788K" || no "GPU-hours $all vs 2,788K: beyond 10%"
[ "$chained" = 1 ] && ok "7 phases, each starting when the one before it ends (after=)" ||
  no "phases not chained: $(cat "$tmp/ds-jobs")"
# after= holds a job back even with GPUs free for it: b (after a) starts
# when a ends, c (no after) at 0, on a cluster with room for all three.
cat >"$tmp/after.xml" <<XML
<scenario name="after"><cluster><nodes type="dgx-h100" count="3"/></cluster>
<workload>
  <training name="a" gpus="8" sharding="fsdp" steps="20"><model preset="llama3-8b"/></training>
  <training name="b" after="a" gpus="8" sharding="fsdp" steps="20"><model preset="llama3-8b"/></training>
  <training name="c" gpus="8" sharding="fsdp" steps="20"><model preset="llama3-8b"/></training>
</workload></scenario>
XML
expect_status 0 "a scenario with after= runs" "$bin" run "$tmp/after.xml" --no-db --json "$tmp/after.json"
awk '/"jobs": \[/ { in_jobs = 1 } in_jobs && /"name":/ { gsub(/[",]/, "", $2); name = $2 }
     in_jobs && /"start_s":/ { gsub(/,/, "", $2); st[name] = $2 } in_jobs && /"end_s":/ { gsub(/,/, "", $2); en[name] = $2 }
     END { exit !(en["a"] > 0 && st["b"] == en["a"] && st["c"] == 0) }' "$tmp/after.json" &&
  ok "after=: b starts when a ends, c at once" || no "after= not honoured: $(grep -E '"(name|start_s|end_s)"' "$tmp/after.json")"
[ "$ep" = 64 ] && ok "jobs[].ep is 64" || no "jobs[].ep: $ep"
awk -v a="$act" -v t="$tot" 'BEGIN { exit !(a > 36e9 && a < 39e9 && t > 660e9 && t < 690e9) }' &&
  ok "active and total parameters are DeepSeek-V3's 37B and 671B" || no "params: active $act, total $tot"

# refused NAME PATTERN: $tmp/NAME.xml is refused (exit 2) with a message
# matching PATTERN (the file, the line and what was expected).
refused() {
  expect_status 2 "$1 is refused" "$bin" check "$tmp/$1.xml"
  grep -q "$2" "$tmp/err" && ok "$1: the message names the file, the line and the rule" || no "$1: $(cat "$tmp/err")"
}

bad() {   # NAME ATTRIBUTES PATTERN
  cat >"$tmp/$1.xml" <<XML
<scenario name="b"><cluster><nodes type="dgx-h100" count="2"/></cluster>
<workload>
  <training name="job" gpus="16" $2 steps="10"><model preset="mixtral-8x7b"/></training>
</workload></scenario>
XML
  refused "$1" "$3"
}
bad ep3 'tp="2" ep="3"' "ep3.xml:3: .*experts (8) must be a multiple of ep (3)"
bad imbalance 'ep="8" expert-imbalance="0.5"' "imbalance.xml:3: .*expert-imbalance"
bad overlap 'ep="8" moe-overlap="sometimes"' "overlap.xml:3: .*moe-overlap"
bad fp4recipe 'ep="8" fp4-recipe="nvfp4"' "fp4recipe.xml:3: .*needs precision=\"fp4\""
bad dualpipe 'ep="8" pipeline-schedule="dualpipe"' "dualpipe.xml:3: .*even pp"

# q256 NAME ATTRS COUNT IN [NODES]: Qwen3-235B-A22B FP8 on NODES HGX H200
# nodes (1) with the <inference> attributes ATTRS, COUNT requests of IN
# input and 256 output tokens queued at once; runs it into $tmp/NAME.json
# (a failure is a check failed).
q256() {
  cat >"$tmp/$1.xml" <<XML
<?xml version="1.0"?>
<scenario name="q256" seed="1">
  <cluster><nodes type="hgx-h200" count="${5:-1}"/></cluster>
  <workload>
    <inference name="q" model="qwen3-235b-a22b" precision="fp8" gpu="H200-SXM-141GB" $2>
      <arrivals process="offline" count="$3"/>
      <requests input-tokens="$4" output-tokens="256"/>
    </inference>
  </workload>
</scenario>
XML
  "$bin" run "$tmp/$1.xml" --no-db --json "$tmp/$1.json" >/dev/null 2>"$tmp/err" ||
    no "$1 did not run: $(cat "$tmp/err")"
}

# ---- MoE communication under attention DP (moe-comm) -------------------
# Qwen3-235B-A22B, attention DP over the GPUs of one HGX H200 (ep 8) and of
# two (ep 16): auto keeps the all-to-all inside the NVLink domain and
# all-gathers across nodes; an explicit value overrides it
# (docs/moe-serving.md "MoE communication under attention DP").
comm() {
  q256 "comm-$1" "tp=\"1\" ep=\"$3\" $4" 400 1024 "$2"
  tr -d ' \n' <"$tmp/comm-$1.json" | sed 's/.*"output_tokens_per_s"://; s/[,}].*//'
}
a=$(comm auto1 1 8 "") t=$(comm a2a1 1 8 'moe-comm="alltoall"') g=$(comm ag1 1 8 'moe-comm="allgather"')
a2=$(comm auto2 2 16 "") g2=$(comm ag2 2 16 'moe-comm="allgather"') t2=$(comm a2a2 2 16 'moe-comm="alltoall"')
echo "     moe-comm: one node auto $a, alltoall $t, allgather $g tokens/s; two nodes auto $a2, allgather $g2, alltoall $t2"
[ -n "$a" ] && [ "$a" = "$t" ] && [ "$a" != "$g" ] && ok "one NVLink domain: auto is the all-to-all, allgather differs" ||
  no "one node: auto $a, alltoall $t, allgather $g"
[ -n "$a2" ] && [ "$a2" = "$g2" ] && [ "$a2" != "$t2" ] && ok "across nodes: auto all-gathers, alltoall differs" ||
  no "two nodes: auto $a2, allgather $g2, alltoall $t2"
sed 's/ep="8" >/ep="8" moe-comm="ring">/' "$tmp/comm-auto1.xml" >"$tmp/ring.xml"
refused ring 'ring.xml:5: .*moe-comm must be one of: auto,alltoall,allgather'

# ---- per-rank batch limits under attention DP (attn-dp-limits) -----------
# Qwen3-235B-A22B over one HGX H200, max-batch 16, 400 requests queued at
# once: the batch is bounded, not timed (docs/moe-serving.md "Per-rank
# budgets under attention DP").
lim() {
  q256 "lim-$1" "$2 max-batch=\"16\" $3" 400 1024
  tr -d ' \n' <"$tmp/lim-$1.json" | sed 's/.*"kv_capacity_tokens":\([^,}]*\).*"batch_mean":\([^,}]*\).*/\1 \2/'
}
set -- $(lim rep 'tp="1" ep="8"' ''); kr=$1 br=$2
set -- $(lim pr 'tp="1" ep="8"' 'attn-dp-limits="per-rank"'); kp=$1 bp=$2
set -- $(lim trt 'tp="1" ep="8"' 'engine="trtllm"'); kt=$1 bt=$2
set -- $(lim trtrep 'tp="1" ep="8"' 'engine="trtllm" attn-dp-limits="replica"'); ktr=$1 btr=$2
set -- $(lim tp8 'tp="8" ep="8"' 'attn-dp-limits="per-rank"'); kn=$1 bn=$2
echo "     attn-dp-limits, max-batch 16 over 8 attention-DP ranks: mean batch replica $br, per-rank $bp, trtllm $bt, trtllm+replica $btr; tp=ep=8 per-rank $bn; KV tokens replica $kr, per-rank $kp"
awk -v b="$br" 'BEGIN { exit !(b > 0 && b <= 16) }' && ok "replica (default): the replica's batch stays within max-batch" ||
  no "replica: mean batch $br with max-batch 16"
awk -v b="$bp" 'BEGIN { exit !(b > 16 && b <= 128) }' && ok "per-rank: the batch passes max-batch, within 8 ranks of it" ||
  no "per-rank: mean batch $bp with max-batch 16 per rank over 8 ranks"
awk -v b="$bt" -v c="$btr" 'BEGIN { exit !(b > 16 && c > 0 && c <= 16) }' &&
  ok "engine trtllm is per-rank; attn-dp-limits=replica overrides it" || no "trtllm: mean batch $bt, with replica $btr"
awk -v b="$bn" 'BEGIN { exit !(b > 0 && b <= 16) }' && ok "without attention DP (tp = ep) per-rank changes nothing" ||
  no "tp=ep=8 per-rank: mean batch $bn"
awk -v r="$kr" -v p="$kp" 'BEGIN { exit !(p > 0 && p <= r) }' &&
  ok "per-rank does not multiply the KV cache ($kp <= $kr tokens)" || no "KV tokens per-rank $kp, replica $kr"
sed 's/max-batch="16"/max-batch="16" attn-dp-limits="per-gpu"/' "$tmp/lim-rep.xml" >"$tmp/limbad.xml"
refused limbad 'limbad.xml:5: .*attn-dp-limits must be one of: replica,per-rank'

# ---- CUDA-graph padding under attention DP (cuda-graph-sizes) ------------
# 100 requests over 8 attention-DP ranks: 13 on the largest rank, padded to
# 32 when 32 is captured and within the rank's max-batch (docs/serving-
# engines.md "CUDA graphs under attention DP"). Simulated time, not timed.
gr() {
  q256 "gr-$1" "tp=\"1\" ep=\"8\" attn-dp-limits=\"per-rank\" $2" 100 512
  tr -d ' \n' <"$tmp/gr-$1.json" | sed 's/.*"tpot_mean_s":\([^,}]*\).*/\1/'
}
g_none=$(gr none 'max-batch="32"')
g_pad=$(gr pad 'max-batch="32" cuda-graph-sizes="1,2,4,8,32"')
g_lim=$(gr lim 'max-batch="20" cuda-graph-sizes="1,2,4,8,32"')
g_limn=$(gr limn 'max-batch="20"')
g_eng=$(gr eng 'max-batch="32" engine="sglang"')
g_engn=$(gr engn 'max-batch="32" engine="sglang" cuda-graph-sizes="none"')
echo "     TPOT (s): no graphs $g_none, padded to 32 $g_pad; max-batch 20: $g_lim, without graphs $g_limn; sglang $g_eng, none $g_engn"
awk -v a="$g_none" -v b="$g_pad" 'BEGIN { exit !(a > 0 && b > a) }' &&
  ok "13 sequences a rank padded to 32: a longer TPOT than without graphs" || no "padding: $g_pad vs $g_none"
[ -n "$g_lim" ] && [ "$g_lim" = "$g_limn" ] &&
  ok "padding past a rank's max-batch is not done: the same run as without graphs" || no "limit: $g_lim vs $g_limn"
[ -n "$g_engn" ] && [ -n "$g_eng" ] && [ "$g_engn" != "$g_eng" ] &&
  ok "cuda-graph-sizes=\"none\" drops the engine's list" || no "none: $g_engn, the engine's: $g_eng"
sed 's/cuda-graph-sizes="1,2,4,8,32"/cuda-graph-sizes="8,4"/' "$tmp/gr-pad.xml" >"$tmp/grbad.xml"
refused grbad 'grbad.xml:5: .*cuda-graph-sizes.*ascend'

# ---- published rows naming a model preset and an ep ---------------------
expect_status 0 "validate --published reads a row with model and ep columns" \
  "$bin" validate --published tests/moe-published --json "$tmp/pub.json"
pred=$(tr -d ' \n' <"$tmp/pub.json" | sed 's/.*"predicted"://; s/[,}].*//')
case $pred in ''|null) no "the MoE row has no prediction: $(head -c 300 "$tmp/out")" ;;
  *) ok "the MoE row is predicted ($pred tokens/s/GPU)" ;; esac
if command -v python3 >/dev/null 2>&1; then
  python3 tests/replay-training --bin "$bin" tests/moe-published/training_moe_sample.csv >"$tmp/replay" 2>&1
  got=$(sed -n 's/.* got *\([0-9.]*\) .*/\1/p' "$tmp/replay")
  awk -v a="$got" -v b="$pred" 'BEGIN { exit !(a > 0 && (a - b < 0.1 && b - a < 0.1)) }' &&
    ok "replay-training writes the same scenario ($got)" || no "replay-training: $(cat "$tmp/replay")"
else skip "replay-training needs python3"; fi

echo "$n checks, $fails failed"
[ "$fails" = 0 ]
