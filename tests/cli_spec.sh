#!/bin/sh
# cli_spec.sh BINARY: speculative decoding through the command line
# (docs/speculative-decoding.md).
#
# 1. Each row of tests/validation/replays/inference_spec.csv (published speed-ups of
#    tokens per second per user) becomes two scenarios, the row's deployment
#    without and with <speculative>; `BINARY run FILE --json -` gives each
#    service's mean TPOT, and their ratio must be within the row's
#    tolerance. The row's acceptance list must give its published
#    acceptance length (1 + sum of prod a_j). The median |error| must stay at
#    or under what the model reached when it was written (4.7% over 5 rows,
#    rounded up to 5%; 5.2% since NVFP4 activations pay their conversion
#    pass on Blackwell, docs/fp4-serving-path.md: rounded up to 6%), so a
#    regression fails.
# 2. scenarios/serving-speculative.xml: the MTP service reports its
#    speculative figures and beats the plain one on TPOT.
# Prints one line per check and 'N passed, N failed'; exits 1 on a failure.
suite=spec
. "$(dirname "$0")/clilib.sh"
csv=${2:-tests/validation/replays/inference_spec.csv}
[ -r "$csv" ] || { echo "$0: cannot read $csv" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "$0: needs python3" >&2; exit 2; }

python3 - "$bin" "$csv" <<'PY'
import csv, json, math, os, statistics, subprocess, sys, tempfile
sys.dont_write_bytecode = True   # no tests/__pycache__ in the checkout
sys.path.insert(0, "tests")
from ctrun import run_text

binp, path = sys.argv[1], sys.argv[2]
REQUESTS = 10            # the source's ten requests, one at a time (batch 1)
MEDIAN_CEILING = 6.0

def scenario(r, spec):
    nodes = max(1, math.ceil(max(int(r["tp"]), int(r["ep"])) / 8))
    sp = ""
    if spec:
        draft = f' draft-model="{r["draft_model"]}"' if r["draft_model"] else ""
        sp = f'<speculative method="{r["method"]}"{draft} tokens="{r["tokens"]}" acceptance="{r["acceptance"]}"/>'
    return f"""<?xml version="1.0"?>
<scenario name="{r['id']}" seed="1">
  <cluster><nodes type="{r['node_type']}" count="{nodes}"/></cluster>
  <workload>
    <inference name="{r['id']}" model="{r['model']}" precision="{r['precision']}" gpu="{r['gpu']}"
               tp="{r['tp']}" ep="{r['ep']}" replicas="1" max-batch="{r['max_batch']}">
      <arrivals process="offline" count="{REQUESTS}"/>
      <requests input-tokens="{r['input_tokens']}" output-tokens="{r['output_tokens']}"/>
      {sp}
    </inference>
  </workload>
</scenario>
"""

def service(xml):
    p = run_text(binp, xml)
    if p.returncode != 0:
        raise RuntimeError((p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1])
    return json.loads(p.stdout)["services"][0]

rows = list(csv.DictReader(l for l in open(path) if not l.startswith("#")))
ok = bad = 0
errs = []
for r in rows:
    try:
        a = [float(x) for x in r["acceptance"].split(",")]
        length, run = 1.0, 1.0
        for x in a:
            run *= x
            length += run
        if abs(length - float(r["acceptance_length"])) > 2e-3 or len(a) != int(r["tokens"]):
            raise RuntimeError(f"acceptance {r['acceptance']} gives {length:.4f} tokens per step, "
                               f"not the published {r['acceptance_length']}")
        base, spec = service(scenario(r, False)), service(scenario(r, True))
        if abs(spec["spec_tokens_per_step"] - length) > 1e-9:
            raise RuntimeError(f"spec_tokens_per_step {spec['spec_tokens_per_step']} is not {length}")
        got = base["tpot_mean_s"] / spec["tpot_mean_s"]
        want = float(r["expected"])
        err = (got - want) / want * 100
        errs.append(abs(err))
        good = abs(err) <= float(r["tolerance_pct"])
        print(f"{'ok  ' if good else 'FAIL'} {r['id']:<22} {r['metric']} expected {want:.2f} got {got:.3f}"
              f"  error {err:+5.1f}% (tolerance {r['tolerance_pct']}%, {r['set']})")
    except Exception as e:
        good = False
        print(f"FAIL {r['id']:<22} no result: {str(e)[:200]}")
    ok += good
    bad += not good
if errs:
    med = statistics.median(errs)
    good = len(errs) == len(rows) and med <= MEDIAN_CEILING
    print(f"{'ok  ' if good else 'FAIL'} speculative validation: {len(errs)} rows, median |error| {med:.1f}% "
          f"(at most {MEDIAN_CEILING:.0f}%), max {max(errs):.1f}%")
    ok += good
    bad += not good

# The shipped scenario: the MTP service speculates, the plain one does not.
p = subprocess.run([binp, "run", "scenarios/serving-speculative.xml", "--json", "-", "--no-db"],
                   capture_output=True, text=True, timeout=300)
try:
    s = {x["name"]: x for x in json.loads(p.stdout)["services"]}
    m, plain = s["r1-mtp"], s["r1-plain"]
    assert m["spec_method"] == "mtp" and m["spec_draft_tokens"] == 3, m
    want = 1 + 0.92 + 0.92 * 0.7174 + 0.92 * 0.7174 * 0.3636      # the scenario's acceptance
    assert abs(m["spec_tokens_per_step"] - want) < 1e-9, m["spec_tokens_per_step"]
    assert "spec_method" not in plain, plain
    assert m["requests"] == plain["requests"] == 120, (m["requests"], plain["requests"])
    assert m["tpot_p50_s"] < plain["tpot_p50_s"] / 2, (m["tpot_p50_s"], plain["tpot_p50_s"])
    print(f"ok   serving-speculative: TPOT p50 {plain['tpot_p50_s'] * 1e3:.2f} ms plain, "
          f"{m['tpot_p50_s'] * 1e3:.2f} ms with MTP ({m['spec_tokens_per_step']:.2f} tokens per step)")
    ok += 1
except Exception as e:
    print(f"FAIL serving-speculative: {e!r} {p.stderr.strip()[:200]}")
    bad += 1
print(f"{ok} passed, {bad} failed")
sys.exit(0 if bad == 0 and ok > 0 else 1)
PY
