#!/bin/sh
# Accounting through the command line: what a run says it used, did and
# lost (docs/accounting.md). Usage: tests/cli_account.sh BINARY
#
# - Utilisation by allocation and by work kept: a checkpoint sweep of
#   scenarios/pretrain-70b-1024gpu.xml moves ETTR; GPUs held stay the same,
#   so gpu_utilization (= gpu_utilization_allocated) stays, while
#   gpu_utilization_productive moves with ETTR: for one 1024-GPU job alone on
#   132 x 8 GPUs it is ETTR x 1024 x elapsed / (1056 x simulated), to 1e-6
#   (the JSON's 10 digits).
# - Serving power follows what the replicas do: the chat service of
#   scenarios/serving-chat-70b.xml at 1 request/s and at 20 requests/s on
#   the same 8 GPUs draws less per GPU at low load (replicas decoding small
#   batches or idle) than at high load, and spends more energy per output
#   token; before, every serving GPU drew 0.55 of idle-to-TDP whatever it did.
# - Work lost to preemption is not work lost to failures: a training job
#   without checkpoints evicted once by a more important job, with no failure
#   in the run, has its lost work under preemption, none under failures.
suite=account
. "$(dirname "$0")/clilib.sh"

# ---- utilisation: allocated and productive ----
for iv in 20min 4h; do
  sed "s/interval=\"auto\"/interval=\"$iv\"/" scenarios/pretrain-70b-1024gpu.xml >"$tmp/p-$iv.xml"
  expect_status 0 "run pretrain-70b with checkpoints every $iv" "$bin" run "$tmp/p-$iv.xml" --json "$tmp/p-$iv.json" \
    --db "$tmp/acc.db" --quiet
done
python3 - "$tmp/p-20min.json" "$tmp/p-4h.json" <<'PY' && ok "productive utilisation moves with ETTR, allocated does not" \
  || no "productive utilisation moves with ETTR, allocated does not"
import json, sys
runs = [json.load(open(p)) for p in sys.argv[1:]]
for d in runs:
    c, j = d["cluster"], d["jobs"][0]
    assert c["gpu_utilization"] == c["gpu_utilization_allocated"], c
    # One 1024-GPU job on 132 x 8 GPUs: productive = ETTR x 1024 x elapsed / (1056 x simulated).
    share = 1024 * j["time"]["elapsed_s"] / (c["gpus"] * d["simulated_s"])
    assert abs(c["gpu_utilization_productive"] - j["ettr"] * share) < 1e-6, (c["gpu_utilization_productive"], j["ettr"] * share)
    assert c["gpu_utilization_productive"] < c["gpu_utilization_allocated"]
    assert abs(c["gpu_productive_hours"] - c["gpu_utilization_productive"] * c["gpu_hours"]) < 1e-6 * c["gpu_hours"]
a, b = runs
ea, eb = a["jobs"][0]["ettr"], b["jobs"][0]["ettr"]
assert ea - eb > 0.02, (ea, eb)                      # the sweep moves ETTR
ua, ub = a["cluster"]["gpu_utilization_allocated"], b["cluster"]["gpu_utilization_allocated"]
assert abs(ua - ub) < 1e-3, (ua, ub)                 # ... not allocation
pa, pb = a["cluster"]["gpu_utilization_productive"], b["cluster"]["gpu_utilization_productive"]
assert pa - pb > 0.02, (pa, pb)                      # ... but the work kept
PY
python3 - "$tmp/acc.db" "$tmp/p-20min.json" <<'PY' && ok "the runs table has both utilisations" || no "the runs table has both utilisations"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1]); d = json.load(open(sys.argv[2]))
row = db.execute("SELECT gpu_utilization, gpu_utilization_allocated, gpu_utilization_productive, gpu_productive_hours "
                 "FROM runs ORDER BY id LIMIT 1").fetchone()
c = d["cluster"]
assert row == (c["gpu_utilization"], c["gpu_utilization_allocated"], c["gpu_utilization_productive"],
               c["gpu_productive_hours"]), row
PY
expect_status 0 "run pretrain-70b prints the summary" "$bin" run "$tmp/p-4h.xml" --no-db
grep -Eq '^cluster: GPU utilisation [0-9.]+% allocated, [0-9.]+% productive' "$tmp/out" \
  && ok "the summary names both utilisations" || no "the summary names both utilisations: $(grep '^cluster' "$tmp/out")"

# ---- serving power follows the load ----
for r in 1 20; do
  sed "s|rate=\"20/s\" count=\"20000\"|rate=\"$r/s\" count=\"2000\"|" scenarios/serving-chat-70b.xml >"$tmp/s-$r.xml"
  grep -q "rate=\"$r/s\"" "$tmp/s-$r.xml" || no "serving-chat-70b.xml no longer has rate=\"20/s\" count=\"20000\""
  expect_status 0 "run the chat service at $r request(s)/s" "$bin" run "$tmp/s-$r.xml" --json "$tmp/s-$r.json" --no-db --quiet
done
python3 - "$tmp/s-1.json" "$tmp/s-20.json" <<'PY' && ok "serving power per GPU and energy per token follow the load" \
  || no "serving power per GPU and energy per token follow the load"
import json, sys
lo, hi = (json.load(open(p)) for p in sys.argv[1:])
def gpu_w(d):                       # every GPU of the cluster is held by a replica
    c = d["cluster"]
    assert d["services"][0]["gpu_hours"] == c["gpu_hours"]
    return c["cost"]["gpu_kwh"] * 1e3 / c["gpu_hours"]
wl, wh = gpu_w(lo), gpu_w(hi)
assert wl < wh - 20, (wl, wh)       # fewer tokens to compute, more time decoding small batches or idle
# H100: 70 W idle, 700 W TDP; a serving GPU is never above prefill's 637 W nor below loaded-idle 101.5 W.
assert 101.5 <= wl and wh <= 637, (wl, wh)
for d in (lo, hi):
    s = d["services"][0]
    assert abs(s["avg_gpu_power_w"] - gpu_w(d)) < 1e-6 * gpu_w(d), (s["avg_gpu_power_w"], gpu_w(d))
    a = s["gpu_hours_by_activity"]
    assert abs(a["prefill"] + a["decode"] + a["idle"] + a["loading"] - s["gpu_hours"]) < 1e-9 * s["gpu_hours"], a
    assert abs(s["energy_per_output_token_j"] * s["output_tokens"] / 3.6e6 - s["energy_kwh"]) < 1e-9 * s["energy_kwh"]
    assert abs(s["kwh_per_million_output_tokens"] - s["energy_per_output_token_j"] / 3.6) < 1e-9 * s["kwh_per_million_output_tokens"]
a_lo, a_hi = lo["services"][0]["gpu_hours_by_activity"], hi["services"][0]["gpu_hours_by_activity"]
assert a_lo["idle"] / lo["services"][0]["gpu_hours"] > a_hi["idle"] / hi["services"][0]["gpu_hours"], (a_lo, a_hi)
assert lo["services"][0]["energy_per_output_token_j"] > 2 * hi["services"][0]["energy_per_output_token_j"]
assert lo["cluster"]["co2_kg"] / lo["services"][0]["output_tokens"] > hi["cluster"]["co2_kg"] / hi["services"][0]["output_tokens"]
PY

# ---- lost work: failures and preemption apart ----
cat >"$tmp/preempt.xml" <<'EOF'
<scenario name="preempt-lost-work" seed="1">
  <cluster>
    <nodes type="dgx-h100" count="2"/>
    <storage name="ckpt" kind="parallel-fs" bandwidth="100GB/s"/>
  </cluster>
  <scheduler policy="fifo" preemption="true"/>
  <workload>
    <training name="research" gpus="16" tp="8" pp="1" dp="2" sharding="fsdp" global-batch="64"
              seq-len="4096" tokens="2B" storage="ckpt" priority="0">
      <model preset="llama3-8b"/>
    </training>
    <training name="urgent" gpus="8" tp="8" pp="1" dp="1" sharding="fsdp" global-batch="32"
              seq-len="4096" tokens="0.2B" storage="ckpt" priority="10" submit="2h">
      <model preset="llama3-8b"/>
    </training>
  </workload>
</scenario>
EOF
expect_status 0 "run a preempted training job" "$bin" run "$tmp/preempt.xml" --json "$tmp/pre.json" --db "$tmp/pre.db" --quiet
python3 - "$tmp/pre.json" "$tmp/pre.db" <<'PY' && ok "work lost to preemption is not counted as lost to failures" \
  || no "work lost to preemption is not counted as lost to failures"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
j = [j for j in d["jobs"] if j["name"] == "research"][0]
assert d["failures"]["total"] == 0 and j["interruptions"] == 0 and j["preemptions"] == 1, j
t = j["time"]
# Evicted at 2 h with no checkpoint: the 2 h it had run are lost and redone.
assert abs(t["redone_after_preemption_s"] - 7200) < 1, t
assert t["redone_after_failures_s"] == 0, t
assert t["redone_s"] == t["redone_after_failures_s"] + t["redone_after_preemption_s"], t
assert j["lost_work_after_preemption_s"] == t["redone_after_preemption_s"] and j["lost_work_after_failures_s"] == 0
assert j["lost_work_s"] == t["redone_s"]
db = sqlite3.connect(sys.argv[2])
row = db.execute("SELECT lost_work_after_failures_s, lost_work_after_preemption_s, time_redone_after_failures_s, "
                 "time_redone_after_preemption_s FROM jobs WHERE name = 'research'").fetchone()
assert row == (0, t["redone_after_preemption_s"], 0, t["redone_after_preemption_s"]), row
# Productive utilisation leaves the lost 2 h x 16 GPUs out.
c = d["cluster"]
assert c["gpu_productive_hours"] < c["gpu_busy_hours"] - 31.9, (c["gpu_productive_hours"], c["gpu_busy_hours"])
PY
expect_status 0 "summary of a preempted training job" "$bin" run "$tmp/preempt.xml" --no-db
grep -q "0.0% redone after failures, 2[0-9.]*% redone after preemption" "$tmp/out" \
  && grep -q "work lost and redone: 0 s after failures, 2 h after preemption" "$tmp/out" \
  && ok "the summary shows preemption losses on their own line" \
  || no "the summary shows preemption losses on their own line: $(grep -E 'redone|lost' "$tmp/out")"

echo "$n checks, $fails failed"
[ "$fails" = 0 ]
