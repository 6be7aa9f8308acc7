#!/bin/sh
# cli_ckpt.sh BINARY: what a checkpoint holds is a scenario choice
# (<checkpoint weights= master-weights= optimizer=>, docs/scenarios.md and
# docs/checkpoint-and-calibration.md), seen in `run`'s checkpoint_size_bytes.
# An 11B-class model (40 layers, hidden 4608: about 10.4B parameters) with
# fp32 Adam (master weights and two moments, 12 B/param) and nothing else
# must save 12 x its parameters (the validation README's "11B -> about
# 130 GB"); adding the bf16 weights, 14 x; fp32 SGD with no master, 8 x
# (4 B weights + 4 B momentum); the default for bf16 equals the bf16 case.
# A choice that leaves no copy of the weights is refused at its file:line.
suite=ckpt
. "$(dirname "$0")/clilib.sh"

scen() {   # FILE CHECKPOINT-ATTRIBUTES
  cat >"$1" <<XML
<?xml version="1.0"?>
<scenario name="ckpt" seed="1">
  <cluster>
    <nodes type="dgx-a100-80gb" count="4"/>
    <storage name="ckpt" kind="parallel-fs" bandwidth="100GB/s"/>
  </cluster>
  <workload>
    <training name="job" gpus="32" tp="8" pp="2" steps="20" storage="ckpt">
      <model layers="40" hidden="4608" ffn-hidden="18432" heads="32" vocab="50304"/>
      <checkpoint interval="1h" $2/>
    </training>
  </workload>
</scenario>
XML
}

# bytes per parameter of the model state: (size - the per-rank loader
# state, 64 KiB x 32 ranks, models/checkpoint.h) / params
per_param() {   # JSON
  python3 - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
loader = 65536.0 * 32
print("%.6f %.1f %.4g" % ((j["checkpoint_size_bytes"] - loader) / j["params"], j["checkpoint_size_bytes"] / 1e9, j["params"]))
PY
}

check_size() {   # NAME ATTRIBUTES WANT-BYTES-PER-PARAM
  scen "$tmp/$1.xml" "$2"
  if ! "$bin" run "$tmp/$1.xml" --no-db --quiet --json "$tmp/$1.json" >"$tmp/out" 2>&1; then
    no "$1: run failed: $(head -c 400 "$tmp/out")"; return
  fi
  set -- "$1" "$2" "$3" $(per_param "$tmp/$1.json")
  if python3 -c "import sys; sys.exit(abs(float('$4') - $3) > 1e-6)"; then
    ok "$1 ($2): $4 B/param, $5 GB for $6 parameters"
  else no "$1 ($2): $4 B/param, want $3"; fi
}

check_size adam12 'weights="none" master-weights="true" optimizer="adam"' 12
check_size adam14 'weights="bf16" master-weights="true" optimizer="adam"' 14
check_size default '' 14
check_size sgd32 'weights="fp32" master-weights="false" optimizer="sgd"' 8
check_size inference 'weights="bf16" master-weights="false" optimizer="none"' 2

# The 11B-class case lands where the README says: about 130 GB.
gb=$(per_param "$tmp/adam12.json" | awk '{print $2}')
python3 -c "import sys; sys.exit(not 115 <= float('$gb') <= 145)" \
  && ok "fp32 Adam state of the 11B-class model is about 130 GB ($gb GB)" || no "fp32 Adam state: $gb GB"

scen "$tmp/bad.xml" 'weights="none" master-weights="false"'
expect_status 2 "no copy of the weights is refused" "$bin" check "$tmp/bad.xml"
grep -q 'bad.xml:10:.*weights.*no weights' "$tmp/err" && ok "the refusal names file:line and why" \
  || no "refusal: $(cat "$tmp/err")"
scen "$tmp/bad2.xml" 'optimizer="lion"'
expect_status 2 "an unknown optimizer is refused" "$bin" check "$tmp/bad2.xml"
grep -q 'bad2.xml:10:.*optimizer' "$tmp/err" && ok "unknown optimizer: file:line names the attribute" \
  || no "unknown optimizer: $(cat "$tmp/err")"

echo "$n checks, $fails failed"
[ "$fails" = 0 ]
