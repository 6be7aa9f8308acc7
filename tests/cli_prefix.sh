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
echo "$n checks, $fails failed"
[ "$fails" -eq 0 ]
