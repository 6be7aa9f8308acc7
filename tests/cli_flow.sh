#!/bin/sh
# cli_flow.sh BINARY: the flow-level fabric (<network model="flow">;
# docs/flow-fabric.md) end to end, by the direction of its effects, never a
# timing or a figure:
# - two training jobs spread over every leaf of a 4:1 fat-tree finish later
#   than the same two packed (each on its own leaves);
# - spread, each job finishes later beside the other than alone;
# - the closed form (model="closed-form") never lets the jobs see each
#   other: a job ends at the same time alone and beside the other;
# - the same scenario and seed give the same bytes twice;
# - mixture-of-experts jobs put their expert all-to-all on the fabric: packed
#   on leaves of 2 nodes at 4:1, a job whose 32-GPU EP groups span two
#   leaves has a slower all-to-all than at 1:1 while its DP exchange (one
#   flow per node boundary) is not slowed; spread over the leaves, two
#   such jobs finish later together than one alone;
# - a <collective> microbenchmark spanning leaves of an oversubscribed
#   fabric: the closed form divides the group's NIC bandwidth by the
#   oversubscription, the flows of one packed ring (NCCL's choice, made
#   without seeing the spine) barely cross it: the flow model's bus
#   bandwidth is the higher; on a non-blocking fabric the two agree
#   within 3%.
suite=flow
. "$(dirname "$0")/clilib.sh"

sc=scenarios/fabric-two-jobs.xml
variant() {   # variant OUT PLACEMENT MODEL [one]: the scenario with these, one job with "one"
  sed -e "s/placement=\"spread\"/placement=\"$2\"/" -e "s/model=\"flow\"/model=\"$3\"/" "$sc" >"$1"
  if [ "${4:-}" = one ]; then
    awk '/<training name="job-b"/ { skip = 1 } !skip { print } skip && /<\/training>/ { skip = 0 }' "$1" >"$1.t" && mv "$1.t" "$1"
  fi
}
end_of() {   # end_of JSON JOB: the job's end_s
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([j for j in d["jobs"] if j["name"]==sys.argv[2]][0]["end_s"])' "$1" "$2"
}
later() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }
same() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a == b) }'; }

for v in "spread flow" "pack flow" "spread closed-form"; do
  set -- $v
  variant "$tmp/$1-$2.xml" "$1" "$2"
  variant "$tmp/$1-$2-one.xml" "$1" "$2" one
  expect_status 0 "run $1 $2, two jobs" "$bin" run "$tmp/$1-$2.xml" --no-db --json "$tmp/$1-$2.json"
  expect_status 0 "run $1 $2, one job" "$bin" run "$tmp/$1-$2-one.xml" --no-db --json "$tmp/$1-$2-one.json"
done
expect_status 0 "run the shipped scenario" "$bin" run "$sc" --no-db --json "$tmp/shipped.json"

sp=$(end_of "$tmp/spread-flow.json" job-a); pk=$(end_of "$tmp/pack-flow.json" job-a)
later "$sp" "$pk" && ok "spread over the leaves, the jobs finish later than packed ($sp s > $pk s)" \
  || no "spread $sp s is not later than packed $pk s"
alone=$(end_of "$tmp/spread-flow-one.json" job-a)   # job-b alone is job-a alone: the two are alike
for j in job-a job-b; do
  both=$(end_of "$tmp/spread-flow.json" $j)
  later "$both" "$alone" && ok "$j finishes later beside the other job than alone ($both s > $alone s)" \
    || no "$j beside the other: $both s, alone: $alone s"
done
cb=$(end_of "$tmp/spread-closed-form.json" job-a); ca=$(end_of "$tmp/spread-closed-form-one.json" job-a)
same "$cb" "$ca" && ok "the closed form: a job ends at the same time with or without the other" \
  || no "closed form: $cb s with the other, $ca s alone"
pb=$(end_of "$tmp/pack-flow.json" job-a); pa=$(end_of "$tmp/pack-flow-one.json" job-a)
same "$pb" "$pa" && ok "packed on its own leaves, a job is not slowed by the other" \
  || no "packed: $pb s with the other, $pa s alone"

expect_status 0 "run the shipped scenario again" "$bin" run "$sc" --no-db --json "$tmp/again.json"
python3 - "$tmp/shipped.json" "$tmp/again.json" <<'PY' && ok "same scenario and seed, same results twice" || no "two runs differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for d in (a, b):
    d.pop("wall_s", None)
sys.exit(a != b)
PY

# Mixture of experts: Qwen3-30B-A3B, 256 GPUs, EP 32 over 4 nodes.
cluster_xml() {   # cluster_xml OUT NAME NODES OVERSUB PER_LEAF MODEL: a scenario's opening and cluster
  cat >"$1" <<XML
<?xml version="1.0"?>
<scenario name="$2" seed="1">
  <cluster>
    <nodes type="dgx-h100" count="$3"/>
    <network topology="fat-tree" oversubscription="$4" nodes-per-leaf="$5" model="$6"/>
  </cluster>
XML
}
moe() {   # moe OUT OVERSUB PER_LEAF PLACEMENT [one]
  cluster_xml "$1" flow-moe 64 "$2" "$3" flow
  cat >>"$1" <<XML
  <scheduler placement="$4"/>
  <workload>
XML
  for j in moe-a moe-b; do
    [ "$j" = moe-b ] && [ "${5:-}" = one ] && continue
    cat >>"$1" <<XML
    <training name="$j" gpus="256" tp="1" pp="1" dp="256" ep="32" sharding="zero1" global-batch="512"
              micro-batch="1" seq-len="4096" precision="bf16" recompute="selective" tokens="2B">
      <model preset="qwen3-30b-a3b"/>
    </training>
XML
  done
  printf '  </workload>\n</scenario>\n' >>"$1"
}
part() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["breakdown"][sys.argv[2]])' "$1" "$2"; }
for v in "1 2 pack one" "4 2 pack one" "4 8 spread" "4 8 spread one"; do
  set -- $v
  moe "$tmp/moe-$1-$2-$3${4:+-$4}.xml" "$@"
  expect_status 0 "MoE at $1:1, $2 nodes per leaf, $3 ${4:-two jobs}" "$bin" run "$tmp/moe-$1-$2-$3${4:+-$4}.xml" \
    --no-db --json "$tmp/moe-$1-$2-$3${4:+-$4}.json"
done
e1=$(part "$tmp/moe-1-2-pack-one.json" ep_comm_s); e4=$(part "$tmp/moe-4-2-pack-one.json" ep_comm_s)
later "$e4" "$e1" && ok "EP groups across 4:1 leaves: the all-to-all is slower than at 1:1 ($e4 s > $e1 s)" \
  || no "all-to-all at 4:1 $e4 s, at 1:1 $e1 s"
d1=$(part "$tmp/moe-1-2-pack-one.json" dp_comm_s); d4=$(part "$tmp/moe-4-2-pack-one.json" dp_comm_s)
same "$d4" "$d1" && ok "the same job's DP exchange is not slowed at 4:1 (one flow per node boundary)" \
  || no "DP at 4:1 $d4 s, at 1:1 $d1 s"
mb2=$(end_of "$tmp/moe-4-8-spread.json" moe-b); ma=$(end_of "$tmp/moe-4-8-spread-one.json" moe-a)
later "$mb2" "$ma" && ok "spread, a MoE job finishes later beside the other than alone ($mb2 s > $ma s)" \
  || no "MoE beside the other: $mb2 s, alone: $ma s"

# Microbenchmark: a 256-rank all-reduce of 1 GiB over 32 nodes, 8 per leaf.
mb() {   # mb OUT OVERSUB MODEL
  cluster_xml "$1" flow-mb 32 "$2" 8 "$3"
  cat >>"$1" <<XML
  <microbenchmarks>
    <collective op="allreduce" ranks="256" min-size="1GB" max-size="1GB"/>
  </microbenchmarks>
</scenario>
XML
}
busbw() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["microbenchmarks"][0]["predicted_busbw_GBps"])' "$1"; }
for v in "4 flow" "4 closed-form" "1 flow" "1 closed-form"; do
  set -- $v
  mb "$tmp/mb-$1-$2.xml" "$1" "$2"
  expect_status 0 "microbenchmark at $1:1, $2" "$bin" run "$tmp/mb-$1-$2.xml" --no-db --json "$tmp/mb-$1-$2.json"
done
f4=$(busbw "$tmp/mb-4-flow.json"); c4=$(busbw "$tmp/mb-4-closed-form.json")
later "$f4" "$c4" && ok "4:1 across leaves: the flow model's bus bandwidth is above the closed form's" \
  || no "4:1: flow $f4, closed form $c4"
f1=$(busbw "$tmp/mb-1-flow.json"); c1=$(busbw "$tmp/mb-1-closed-form.json")
awk -v a="$f1" -v b="$c1" 'BEGIN { d = (a - b) / b; if (d < 0) d = -d; exit !(d <= 0.03) }' \
  && ok "non-blocking: flow and closed form agree within 3%" || no "non-blocking: flow $f1, closed form $c1"

echo "$n checks, $fails failed"
[ "$fails" = 0 ]
