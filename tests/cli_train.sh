#!/bin/sh
# cli_train.sh BINARY: what `check` and `run` say about a <training> plan.
# - A seq-len beyond the model's context is a warning on stderr naming the
#   file and line (exit 0: context extension is a real practice), and none
#   is printed within the context.
# - README's <training> table and the code agree on the defaults: for each
#   attribute the table gives a literal default (tp, pp, cp 1; sharding
#   none), a scenario that leaves it out shows that value in `check`; where
#   the table says "chosen" (micro-batch, pipeline-schedule with pp > 1),
#   `check` says the model chose, and where it names a value it does not.
suite=train
. "$(dirname "$0")/clilib.sh"

scen() {   # FILE TRAINING-ATTRIBUTES
  cat >"$1" <<XML
<scenario name="t"><cluster><nodes type="dgx-h100" count="4"/></cluster>
<workload>
  <training name="job" gpus="32" $2 steps="10"><model preset="llama3-8b"/></training>
</workload></scenario>
XML
}

# ---- context ------------------------------------------------------------
scen "$tmp/long.xml" 'sharding="fsdp" recompute="full" seq-len="16384" global-batch="32"'
expect_status 0 "seq-len beyond the context is accepted" "$bin" check "$tmp/long.xml"
if grep -q "long.xml:3: warning: .*seq-len=\"16384\".*context of llama3-8b (8192" "$tmp/err"; then
  ok "seq-len beyond the context: warning naming file:line and the context"
else no "seq-len beyond the context: no file:line warning: $(cat "$tmp/err")"; fi
expect_status 0 "run warns too" "$bin" run "$tmp/long.xml" --no-db --quiet
grep -q "warning: .*context" "$tmp/err" && ok "run prints the context warning" || no "run: no warning"
scen "$tmp/short.xml" 'sharding="fsdp" seq-len="8192" global-batch="32"'
expect_status 0 "seq-len at the context" "$bin" check "$tmp/short.xml"
[ ! -s "$tmp/err" ] && ok "no warning within the context" || no "warning within the context: $(cat "$tmp/err")"

# ---- README's documented defaults ----------------------------------------
row() {   # the default column of README's <training> table row for attribute $1
  awk -v a="| $1 |" 'index($0, a) == 1 { n = split($0, c, "|"); print c[3]; exit }' docs/scenarios.md |
    sed 's/^ *//; s/ *$//'
}
check_default() {   # ATTRIBUTE EXPECTED-README PATTERN-IN-CHECK ATTRS
  got=$(row "$1")
  case $got in
    "$2"*) ok "README: $1 default is '$got'" ;;
    *) no "README: $1 default is '$got', the code's is '$2'" ;;
  esac
  scen "$tmp/d.xml" "$4"
  "$bin" check "$tmp/d.xml" >"$tmp/out" 2>&1
  if grep -q "$3" "$tmp/out"; then ok "check shows the $1 default ($3)"
  else no "check does not show '$3' for $1: $(cat "$tmp/out")"; fi
}
check_default '`tp`, `pp`, `dp`, `cp`' '1, 1, from gpus, 1' '(tp 1, pp 1, dp 32, cp 1,' 'sharding="fsdp"'
check_default '`sharding`' '`none`' 'cp 1, none)' 'tp="8" global-batch="32"'
check_default '`micro-batch`' 'chosen' 'micro-batch [0-9]* (chosen' 'sharding="fsdp"'
check_default '`pipeline-schedule`, `virtual-stages`' '`1f1b` with pp = 1, else chosen' \
  'pipeline schedule 1f1b$' 'sharding="fsdp"'
scen "$tmp/pp.xml" 'pp="4" sharding="zero1" global-batch="64"'
"$bin" check "$tmp/pp.xml" >"$tmp/out" 2>&1
grep -q "pipeline schedule .* (chosen)" "$tmp/out" && ok "with pp > 1 the schedule is chosen, and check says so" \
  || no "pp=4: check does not say the schedule was chosen: $(cat "$tmp/out")"
scen "$tmp/pp1.xml" 'pp="4" sharding="zero1" global-batch="64" micro-batch="2" pipeline-schedule="1f1b"'
"$bin" check "$tmp/pp1.xml" >"$tmp/out" 2>&1
if grep -q "micro-batch 2 (" "$tmp/out" && grep -q "pipeline schedule 1f1b$" "$tmp/out" && ! grep -q chosen "$tmp/out"; then
  ok "given values are kept and not called chosen"
else no "given micro-batch/schedule: $(cat "$tmp/out")"; fi
"$bin" run "$tmp/pp.xml" --no-db --json "$tmp/r.json" >/dev/null 2>&1
grep -q '"micro_batch":' "$tmp/r.json" && grep -q '"pipeline_schedule":' "$tmp/r.json" && \
  grep -q '"virtual_stages":' "$tmp/r.json" && ok "JSON jobs[] carry micro_batch, pipeline_schedule, virtual_stages" \
  || no "JSON lacks the chosen micro_batch / pipeline_schedule / virtual_stages"

# ---- power caps and GPU variants (<nodes gpu= power-cap=>) ------------------
# A cap below the default limit lowers the SM clock (models/power.h): the job's
# TFLOP/s and the GPUs' energy both fall; gpu= names a variant node type.
nodes_scen() {   # FILE NODES-ATTRIBUTES
  cat >"$1" <<XML
<scenario name="t"><cluster><nodes type="dgx-h100" count="4" $2/></cluster>
<workload>
  <training name="job" gpus="32" sharding="fsdp" global-batch="32" steps="20"><model preset="llama3-8b"/></training>
</workload></scenario>
XML
}
num() {   # KEY FILE: the first number of "KEY": in a JSON file
  sed -n "s/.*\"$1\": *\([0-9.eE+-]*\).*/\1/p" "$2" | head -1
}
nodes_scen "$tmp/full.xml" ''
nodes_scen "$tmp/cap.xml" 'power-cap="500W"'
"$bin" run "$tmp/full.xml" --no-db --quiet --json "$tmp/full.json" >/dev/null 2>&1
"$bin" run "$tmp/cap.xml" --no-db --quiet --json "$tmp/cap.json" >/dev/null 2>&1
tf_full=$(num model_tflops_per_gpu "$tmp/full.json"); tf_cap=$(num model_tflops_per_gpu "$tmp/cap.json")
kwh_full=$(num gpu_kwh "$tmp/full.json"); kwh_cap=$(num gpu_kwh "$tmp/cap.json")
if [ -n "$tf_cap" ] && awk -v a="$tf_cap" -v b="$tf_full" 'BEGIN { exit !(a > 0 && a < b) }'; then
  ok "power-cap=\"500W\" lowers TFLOP/s per GPU ($tf_full -> $tf_cap)"
else no "capped TFLOP/s '$tf_cap' not below uncapped '$tf_full'"; fi
if [ -n "$kwh_cap" ] && awk -v a="$kwh_cap" -v b="$kwh_full" 'BEGIN { exit !(a > 0 && a < b) }'; then
  ok "power-cap=\"500W\" lowers the GPUs' energy ($kwh_full -> $kwh_cap kWh)"
else no "capped GPU energy '$kwh_cap' not below uncapped '$kwh_full'"; fi
nodes_scen "$tmp/var.xml" 'gpu="H100-SXM5-96GB" power-cap="600"'
"$bin" check "$tmp/var.xml" >"$tmp/out" 2>&1
grep -q "4 x dgx-h100+H100-SXM5-96GB@600W: 8 x H100-SXM5-96GB@600W each" "$tmp/out" && \
  ok "gpu= and power-cap= make the node type dgx-h100+H100-SXM5-96GB@600W" || \
  no "variant node type not shown: $(cat "$tmp/out")"
nodes_scen "$tmp/over.xml" 'power-cap="701W"'
expect_status 2 "a cap above the board's maximum is refused" "$bin" check "$tmp/over.xml"
grep -q "over.xml:1: <nodes power-cap=\"701W\">: a power cap of 701 W is above H100-SXM5-80GB's maximum power limit of 700 W" \
  "$tmp/err" && ok "the refusal names file, line, attribute and the limit" || no "cap refusal: $(cat "$tmp/err")"

echo "$n checks, $fails failed"
[ "$fails" = 0 ]
