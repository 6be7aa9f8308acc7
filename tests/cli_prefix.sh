#!/bin/sh
# cli_prefix.sh BINARY: prefix caching and the routers through the command
# line (docs/prefix-caching.md), on scenarios/serving-prefix-cache.xml.
#
#   - with caching, services[0] reports prefix_hit_rate (in (0, 1)),
#     prefill_tokens_saved and prefix_evictions; without it, none of them
#   - caching lowers the median time to first token and does not lower the SLO
#     attainment of the same requests (same submitted and input tokens)
#   - every router serves every request, and two runs of the seeded
#     random ones give the same results
#   - each row of tests/validation/replays/inference_prefix.csv (a published
#     router gain) replayed: both routers serve every request, the row's
#     router hits its cache more than the baseline and gains throughput; the
#     error against the published gain is printed (a row over its tolerance
#     is reported, as `validate --published` reports one, not failed)
# Prints ok/FAIL per check; exits 1 on any failure (tests/clilib.sh).
suite=prefix
. "$(dirname "$0")/clilib.sh"
command -v python3 >/dev/null 2>&1 || { echo "$0: needs python3" >&2; exit 2; }
src=scenarios/serving-prefix-cache.xml

# variant NAME CACHING ROUTER COUNT: the scenario with those settings, run to NAME.json
variant() {
    sed -e "s/prefix-caching=\"true\"/prefix-caching=\"$2\"/" -e "s/router=\"prefix-aware\"/router=\"$3\"/" \
        -e "s/count=\"20000\"/count=\"$4\"/" "$src" >"$tmp/$1.xml"
    if ! "$bin" run "$tmp/$1.xml" --json "$tmp/$1.json" >/dev/null 2>"$tmp/$1.err"; then
        no "$1: run failed: $(head -c 300 "$tmp/$1.err")"
    fi
}

variant on true prefix-aware 5000
variant off false prefix-aware 5000
for r in random power-of-two kv-aware round-robin least-tokens; do variant "$r" true "$r" 2000; done
variant random2 true random 2000
variant p2c2 true power-of-two 2000

python3 - "$tmp" <<'PY' && ok "caching, results and routers (lines above)" || no "caching, results and routers (lines above)"
import sys
sys.path.insert(0, "tests")
from ctrun import Checks, service
d = sys.argv[1]
def svc(name):
    return service(f"{d}/{name}.json")
check = Checks()
on, off = svc("on"), svc("off")
keys = ("prefix_hit_rate", "prefill_tokens_saved", "prefix_evictions")
check(all(k in on for k in keys) and 0 < on["prefix_hit_rate"] < 1,
      f"caching on: hit rate {on.get('prefix_hit_rate')}, {on.get('prefill_tokens_saved')} prompt tokens saved")
check(not any(k in off for k in keys), "caching off: no prefix figures in services[0]")
check(on["submitted"] == off["submitted"] and on["input_tokens"] == off["input_tokens"], "the same requests either way")
check(on["ttft_p50_s"] < 0.5 * off["ttft_p50_s"],
      f"median TTFT {off['ttft_p50_s'] * 1e3:.1f} ms without the cache, {on['ttft_p50_s'] * 1e3:.1f} ms with it")
check(on["slo_attainment"] >= off["slo_attainment"],
      f"SLO attainment {off['slo_attainment']:.3f} without, {on['slo_attainment']:.3f} with")
for r in ("random", "power-of-two", "kv-aware", "round-robin", "least-tokens"):
    s = svc(r)
    check(s["requests"] == 2000 and s["prefix_hit_rate"] > 0, f"router {r}: {s['requests']} requests, hit rate {s['prefix_hit_rate']:.3f}")
for a, b in (("random", "random2"), ("power-of-two", "p2c2")):
    check(svc(a) == svc(b), f"router {a}: the same service results twice")
sys.exit(1 if check.bad else 0)
PY
# The published router gains: each row's two scenarios, run to ID-router.json.
csv=tests/validation/replays/inference_prefix.csv
python3 - "$csv" "$tmp" <<'PY' || no "the rows of $csv could not be turned into scenarios"
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))]
for r in rows:
    for router in (r["router"], r["baseline_router"]):
        open(f"{sys.argv[2]}/{r['id']}-{router}.xml", "w").write(f'''<?xml version="1.0"?>
<scenario name="{r['id']}" seed="1">
  <cluster><nodes type="{r['node_type']}" count="1"/></cluster>
  <workload>
    <inference name="s" model="{r['model']}" precision="{r['precision']}" gpu="{r['gpu']}" tp="1"
               replicas="{r['replicas']}" engine="{r['engine']}" prefix-caching="true" router="{router}">
      <arrivals process="closed" users="{r['users']}" count="{r['count']}"/>
      <requests input-tokens="{r['input_tokens']}" output-tokens="{r['output_tokens']}"
                prefix-tokens="{r['prefix_tokens']}" prefixes="{r['prefixes']}"
                prefix-order="{r.get('prefix_order') or 'drawn'}"/>
    </inference>
  </workload>
</scenario>
''')
PY
for x in "$tmp"/sglang-*.xml; do
    [ -e "$x" ] || continue
    "$bin" run "$x" --json "${x%.xml}.json" >/dev/null 2>"${x%.xml}.err" || no "$x: run failed: $(head -c 300 "${x%.xml}.err")"
done
python3 - "$csv" "$tmp" <<'PY' && ok "published router gains (lines above)" || no "published router gains (lines above)"
import csv, sys
sys.path.insert(0, "tests")
from ctrun import Checks, service
check = Checks()
for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")):
    a = service(f"{sys.argv[2]}/{r['id']}-{r['router']}.json")
    b = service(f"{sys.argv[2]}/{r['id']}-{r['baseline_router']}.json")
    n = int(r["count"])
    check(a["requests"] == n and b["requests"] == n, f"{r['id']}: {n} requests under each router")
    check(a["prefix_hit_rate"] > b["prefix_hit_rate"],
          f"{r['id']}: hit rate {a['prefix_hit_rate']:.3f} {r['router']}, {b['prefix_hit_rate']:.3f} {r['baseline_router']}")
    got = a["output_tokens_per_s"] / b["output_tokens_per_s"]
    check(got > 1, f"{r['id']}: {r['router']} gains throughput")
    want = float(r["expected"])
    err = 100 * (got - want) / want
    within = abs(err) <= float(r["tolerance_pct"])
    print(f"{'ok  ' if within else 'over'} {r['id']} {r['metric']} expected {want:.3f} got {got:.3f}"
          f"  error {err:+5.1f}% (tolerance {r['tolerance_pct']}%, {r['set']})")
sys.exit(1 if check.bad else 0)
PY
echo "$n checks, $fails failed"
[ "$fails" -eq 0 ]
