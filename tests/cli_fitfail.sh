#!/bin/sh
# cli_fitfail.sh BINARY: `clustertwin fit-failures` (docs/fit-failures.md) on the
# history samples of tests/failhist/ (16 DGX H100 nodes, November 2026):
# - Slurm's node events, NODE_FAIL job ends (-P text, and sacct --json of data
#   parsers v0.0.38 and v0.0.40 giving the same fit), sinfo and a DCGM
#   query_range answer: 19 events are 11 failures (an XID 79 seen as telemetry,
#   a drain and a NODE_FAIL is one; a NODE_FAIL during maintenance is planned;
#   an XID 13 is the application's), counted by hand from the files;
# - the profile is a <failures> a scenario takes, by <failures href> or copied
#   in place (the same run): 16 nodes run for the window with it fail 11 times
#   on average (20 seeds; Poisson noise 0.74 per mean); a bad profile is said
#   at its own file and line, a missing one at the scenario's;
# - a DCGM scrape in the text format adds its XID 95;
# - bad inputs: exit 2 with file:line, and no profile written.
suite=fitfail
. "$(dirname "$0")/clilib.sh"
h=tests/failhist

expect_status 0 "fit-failures on events, sacct -P, sinfo and DCGM" "$bin" fit-failures --events $h/events.txt \
  --sacct-text $h/sacct.txt --sinfo $h/sinfo-v0038.json --dcgm $h/dcgm-range.json --out "$tmp/p.xml" --json "$tmp/p.json"
cp "$tmp/out" "$tmp/table"
grep -q "19 events -> 11 failures (6 merged as one, 1 planned, 1 application faults" "$tmp/table" &&
  ok "19 events are 11 failures" || no "counts: $(head -n 1 "$tmp/table")"
python3 - "$tmp/p.json" <<'PY' && ok "per component: gpu 1, hbm 3, node 4, nic 2, software 1; 16 nodes of 8 GPUs; 30 days" || no "JSON: $(head -c 600 "$tmp/p.json")"
import json, sys
d = json.load(open(sys.argv[1]))
c = {x["component"]: x for x in d["components"]}
got = {k: c[k]["failures"] for k in c}
assert got == {"gpu": 1, "hbm": 3, "node": 4, "nic": 2, "switch": 0, "storage": 0, "software": 1}, got
assert d["nodes"] == 16 and d["gpus_per_node"] == 8 and abs(d["window_s"] / 86400 - 30) < 1e-3, d
g = c["gpu"]
# one failure in 30 days x 128 GPUs; Garwood 95%: T/5.571643 .. T/0.025318
T = d["window_s"] * 128
assert abs(g["mtbf_s"] / T - 1) < 1e-9 and abs(g["mtbf_lo_s"] * 5.571643 / T - 1) < 1e-5
assert abs(g["mtbf_hi_s"] * 0.0253178 / T - 1) < 1e-4
assert c["switch"]["mtbf_hi_s"] is None and abs(c["switch"]["mtbf_lo_s"] * 3.688879 / (d["window_s"] * 16) - 1) < 1e-5
assert [x["cause"] for x in c["hbm"]["causes"]] == ["HBM double-bit ECC (XID 48)", "HBM row remap failed (XID 64)"]
assert c["gpu"]["causes"][0]["mttr_s"] == 3 * 86400 - 30      # down from 18:00:30 to 18:00:00 three days later
PY
grep -c '<failure component=' "$tmp/p.xml" | grep -qx 9 && ok "9 causes written" || no "profile: $(cat "$tmp/p.xml")"

# The nodes as `scontrol show nodes --json` of Slurm 23.11 (v0.0.40: state
# an array, reason_changed_at a {set, number}) through Slurm's one sinfo
# reader: the same profile as 22.05's sinfo --json.
expect_status 0 "the nodes from scontrol show nodes --json (v0.0.40)" "$bin" fit-failures --events $h/events.txt \
  --sacct-text $h/sacct.txt --sinfo $h/scontrol-nodes-v0040.json --dcgm $h/dcgm-range.json --out "$tmp/p-scontrol.xml" --quiet
cmp -s "$tmp/p.xml" "$tmp/p-scontrol.xml" && ok "scontrol show nodes --json gives the same profile" || no "profile differs (scontrol)"

# Slurm 24.05's grouped sinfo (v0.0.41, the snapshot's sample): read too, GPUs from its GRES.
expect_status 0 "the nodes from 24.05's grouped sinfo --json" "$bin" fit-failures --events $h/events.txt \
  --sinfo tests/slurm/24.05/sinfo.json --out "$tmp/p-2405.xml" --json "$tmp/p-2405.json" --quiet
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["gpus_per_node"] != 8)' "$tmp/p-2405.json" \
  && ok "24.05 sinfo: 8 GPUs per node from its GRES" || no "24.05 sinfo: $(head -c 300 "$tmp/p-2405.json")"

# sacct --json of Slurm 22.05 (v0.0.38) and 23.11 (v0.0.40): the same fit as the -P text.
for v in v0038 v0040; do
  expect_status 0 "the same history with sacct --json ($v)" "$bin" fit-failures --events $h/events.txt \
    --sacct $h/sacct-$v.json --sinfo $h/sinfo-v0038.json --dcgm $h/dcgm-range.json --out "$tmp/p-$v.xml" --quiet
  cmp -s "$tmp/p.xml" "$tmp/p-$v.xml" && ok "sacct --json $v gives the same profile" || no "profile differs ($v)"
done

# The profile in a scenario, by reference (<failures href>, relative to the scenario)
# and copied in place: the same run byte for byte. The fitted fleet, run over the
# window, fails as often as it did.
scen() {   # scen FAILURES-ELEMENT...: the fitted fleet's scenario
  echo '<scenario name="fitted" seed="1" duration="30d">'
  echo '  <cluster><nodes type="dgx-h100" count="16"/></cluster>'
  "$@"
  echo '  <workload><training name="job" gpus="128" tp="8" pp="1" dp="16" tokens="100T"><model preset="llama3-8b"/></training></workload>'
  echo '</scenario>'
}
mkdir -p "$tmp/profiles" && cp "$tmp/p.xml" "$tmp/profiles/fitted.xml"
scen echo '  <failures href="profiles/fitted.xml"/>' >"$tmp/s.xml"
scen sed -n '/<failures>/,/<\/failures>/p' "$tmp/p.xml" >"$tmp/s-copy.xml"
expect_status 0 "a scenario with <failures href> to the fitted profile checks" "$bin" check "$tmp/s.xml"
grep -c "^failures: " "$tmp/out" | grep -qx 9 && ok "it has the profile's 9 failure processes" || no "check: $(cat "$tmp/out")"
"$bin" run "$tmp/s.xml" --no-db --seed 3 --json "$tmp/href.json" >/dev/null 2>&1
"$bin" run "$tmp/s-copy.xml" --no-db --seed 3 --json "$tmp/copy.json" >/dev/null 2>&1
python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); [d.pop("scenario",None) for d in (a,b)]; assert a["failures"]==b["failures"] and a["failures"]["total"]>0, a["failures"]' "$tmp/href.json" "$tmp/copy.json" &&
  ok "href and the copied lines fail the same way (seed 3)" || no "href vs copy: $(head -c 300 "$tmp/href.json")"
: >"$tmp/totals"
for seed in $(seq 1 20); do
  "$bin" run "$tmp/s.xml" --no-db --seed "$seed" --json - 2>>"$tmp/err" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["failures"]["total"])' >>"$tmp/totals"
done
python3 - "$tmp/totals" <<'PY' && ok "20 runs of 30 days fail 11 times on average (3 sd of Poisson noise)" || no "totals: $(tr '\n' ' ' <"$tmp/totals")"
import sys
x = [int(v) for v in open(sys.argv[1]).read().split()]
assert len(x) == 20
m = sum(x) / 20
assert abs(m - 11) < 3 * (11 / 20) ** 0.5, m
PY

# A scrape in the text format: its XID 95 on gpu04 is one more HBM failure.
expect_status 0 "with a DCGM text scrape" "$bin" fit-failures --events $h/events.txt --sacct-text $h/sacct.txt \
  --sinfo $h/sinfo-v0038.json --dcgm $h/dcgm-range.json --dcgm-text $h/dcgm-scrape.txt --out "$tmp/p2.xml" --json -
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c={x["component"]:x for x in d["components"]}; assert c["hbm"]["failures"] == 4 and d["failures"] == 12' "$tmp/out" &&
  ok "the scrape's XID 95 is a fourth HBM failure" || no "with scrape: $(head -c 300 "$tmp/out")"
expect_status 0 "telemetry alone, the fleet from --nodes" "$bin" fit-failures --dcgm $h/dcgm-range.json --nodes 2 --out "$tmp/p3.xml" --quiet

# Bad input: file:line, exit 2, nothing written.
expect_status 2 "a bad time in the events" "$bin" fit-failures --events $h/events-bad-time.txt --out "$tmp/bad.xml"
grep -q "events-bad-time.txt:3: TimeStart \"yesterday\": expected a time" "$tmp/err" && ok "names the file, line and column" || no "message: $(cat "$tmp/err")"
expect_status 2 "sacct text without NodeList" "$bin" fit-failures --sacct-text $h/sacct-bad-header.txt --out "$tmp/bad.xml"
grep -q "sacct-bad-header.txt:1: expected a header naming NodeList" "$tmp/err" && ok "names the missing column (the sacct reader of snapshot)" || no "message: $(cat "$tmp/err")"
expect_status 2 "sacct text with a bad End" "$bin" fit-failures --sacct-text $h/sacct-bad-time.txt --out "$tmp/bad.xml"
grep -q "sacct-bad-time.txt:3: End \"yesterday\": expected a time" "$tmp/err" && ok "names the file, line and column of the row" || no "message: $(cat "$tmp/err")"
expect_status 2 "a failed Prometheus query" "$bin" fit-failures --dcgm $h/dcgm-bad-status.json --nodes 2 --out "$tmp/bad.xml"
grep -q "dcgm-bad-status.json:1: status: expected \"success\"" "$tmp/err" && ok "says the query failed" || no "message: $(cat "$tmp/err")"
expect_status 2 "no history" "$bin" fit-failures --out "$tmp/bad.xml"
expect_status 2 "no GPUs per node known" "$bin" fit-failures --events $h/events.txt --out "$tmp/bad.xml"
grep -q "give --gpus-per-node" "$tmp/err" && ok "asks for --gpus-per-node" || no "message: $(cat "$tmp/err")"
[ ! -e "$tmp/bad.xml" ] && ok "nothing written on bad input" || no "a profile was written on bad input"

# Time between failures: tests/failhist/events-weibull.txt is 8 nodes each failing
# as a renewal process for 60 days, lifetimes drawn from a Weibull of shape 0.5 and
# scale 100 h (Python's random.weibullvariate(100, 0.5), seed 20261101), an hour
# down each. The fit's interval holds 0.5, the exponential is rejected and the
# profile says distribution="weibull"; a scenario takes it by href and runs.
expect_status 0 "fit-failures on a Weibull history" "$bin" fit-failures --events $h/events-weibull.txt \
  --gpus-per-node 8 --out "$tmp/profiles/weibull.xml" --json "$tmp/w.json"
python3 - "$tmp/w.json" <<'PY' && ok "node: Weibull shape interval holds 0.5, exponential rejected, written" || no "JSON: $(head -c 900 "$tmp/w.json")"
import json, sys
d = json.load(open(sys.argv[1]))
c = {x["component"]: x for x in d["components"]}
w = c["node"]["weibull"]
assert w["gaps"] >= 10 and w["shape_lo"] < 0.5 < w["shape_hi"] and w["p_exponential"] < 0.05 and w["written"], w
assert all(c[k]["weibull"] is None for k in c if k != "node")
cause = c["node"]["causes"][0]
assert cause["distribution"] == "weibull" and cause["shape"] == w["shape"], cause
PY
grep -q 'distribution="weibull" shape="0\.' "$tmp/profiles/weibull.xml" && ok "the profile writes the Weibull shape" || no "profile: $(cat "$tmp/profiles/weibull.xml")"
scen echo '  <failures href="profiles/weibull.xml"/>' >"$tmp/sw.xml"
expect_status 0 "a scenario with the Weibull profile runs" "$bin" run "$tmp/sw.xml" --no-db --json "$tmp/sw.json"
"$bin" check "$tmp/sw.xml" | grep -q "^failures: node mtbf .*(weibull" && ok "its process is Weibull" || no "check: $("$bin" check "$tmp/sw.xml")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c={x["component"]:x for x in d["components"]}; assert all(x["weibull"] is None for x in c.values()), c' "$tmp/p.json" &&
  ok "the sample month has too few gaps for a Weibull fit: exponential" || no "sample: $(head -c 300 "$tmp/p.json")"
grep -q "no component has 5 gaps between failures of one node" "$tmp/table" && ok "and says so" || no "table: $(tail -n 3 "$tmp/table")"

# A bad referenced profile: exit 2, the message names the profile file and its line.
badprof() {   # badprof WHAT EXPECTED PROFILE-LINES...
  bwhat=$1 bwant=$2; shift 2
  printf '%s\n' '<?xml version="1.0"?>' "$@" >"$tmp/profiles/bad.xml"
  scen echo '  <failures href="profiles/bad.xml"/>' >"$tmp/sb.xml"
  expect_status 2 "<failures href> to a profile with $bwhat" "$bin" check "$tmp/sb.xml"
  grep -qF "$tmp/profiles/bad.xml:$bwant" "$tmp/err" && ok "names the profile and line ($bwhat)" || no "message: $(cat "$tmp/err")"
}
badprof "a negative mtbf" '3: <failure mtbf="-3h">: mtbf must be a duration' '<failures>' '  <failure component="gpu" mtbf="-3h"/>' '</failures>'
badprof "an unknown attribute" "3: <failure>: unknown attribute 'colour'" '<failures>' '  <failure component="gpu" mtbf="3h" colour="red"/>' '</failures>'
badprof "a Weibull shape too small" '3: <failure>: a Weibull shape of 0.01' '<failures>' '  <failure component="gpu" mtbf="300h" distribution="weibull" shape="0.01"/>' '</failures>'
badprof "recovery times" '2: <failures watchdog="5min">: a failure profile holds <failure> elements only' '<failures watchdog="5min"/>'
badprof "another root" '2: <scenario>: expected <failures> as the root element' '<scenario name="x"/>'
badprof "broken XML" '4: malformed XML' '<failures>' '  <failure component="gpu" mtbf="3h">' '</failures>'
scen echo '  <failures href="profiles/none.xml"/>' >"$tmp/sb.xml"
expect_status 2 "<failures href> to a missing file" "$bin" run "$tmp/sb.xml" --no-db --json "$tmp/none.json"
grep -qF "$tmp/sb.xml:3: <failures href=\"profiles/none.xml\">: $tmp/profiles/none.xml: cannot open" "$tmp/err" &&
  ok "a missing profile is said at the scenario's line" || no "message: $(cat "$tmp/err")"
[ ! -e "$tmp/none.json" ] && ok "no results written" || no "results written for a missing profile"

echo "$n checks, $fails failed"
[ "$fails" -eq 0 ]
