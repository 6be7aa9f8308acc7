#!/bin/sh
# cli_slo.sh BINARY: request classes, per-class and per-model SLOs and SLO
# goodput through the command line (docs/serving-slo.md), on
# scenarios/serving-slo-classes.xml and serving-multiplex-3models.xml.
#
#   - services[].classes lists each class with the service's request-level
#     keys; the classes' requests and SLO goodputs add up to the service's;
#     slo_met is every class meeting its own percentile
#   - priorities reorder admission: without them (arrival order) chat waits
#     longer and batch less, and the same seed gives the same bytes
#   - a multiplexed service reports by_model; a plain one neither list
#   - run's summary prints a line per class and the service's SLO goodput;
#     the report puts the classes under their service
# Prints ok/FAIL per check; exits 1 on any failure (tests/clilib.sh).
suite=slo
. "$(dirname "$0")/clilib.sh"
command -v python3 >/dev/null 2>&1 || { echo "$0: needs python3" >&2; exit 2; }
src=scenarios/serving-slo-classes.xml

# runs NAME FILE [ARGS...]: run FILE to NAME.json and NAME.out
runs() {
    name=$1 file=$2
    shift 2
    if ! "$bin" run "$file" --json "$tmp/$name.json" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"; then
        no "$name: run failed: $(head -c 300 "$tmp/$name.err")"
    fi
}

expect_status 0 "check $src" "$bin" check "$src"
runs prio "$src" --db "$tmp/s.db"
runs prio2 "$src" --no-db
sed 's/ priority="[0-9]*"//' "$src" >"$tmp/fifo.xml"
runs fifo "$tmp/fifo.xml" --no-db
runs mux scenarios/serving-multiplex-3models.xml --no-db
runs plain scenarios/serving-chat-70b.xml --no-db

python3 - "$tmp" <<'PY' && ok "classes, models and goodput in the JSON (lines above)" || no "classes, models and goodput in the JSON (lines above)"
import sys
sys.path.insert(0, "tests")
from ctrun import Checks, service
d = sys.argv[1]
def svc(name):
    return service(f"{d}/{name}.json")
check = Checks()
p, p2, f, mux, plain = svc("prio"), svc("prio2"), svc("fifo"), svc("mux"), svc("plain")
cls = {c["name"]: c for c in p["classes"]}
check(sorted(cls) == ["agent", "batch", "chat"], f"three classes: {sorted(cls)}")
own = {"share", "priority", "slo"}
missing = [k for c in p["classes"] for k in c if k not in own and k not in p]
check(not missing, f"a class's figures carry the service's names (not: {missing})")
check(sum(c["requests"] for c in p["classes"]) == p["requests"], "the classes' requests add up to the service's")
g = sum(c["goodput_requests_per_s"] for c in p["classes"])
check(abs(g - p["goodput_requests_per_s"]) <= 1e-6 * p["goodput_requests_per_s"],
      f"the classes' SLO goodputs add up to the service's ({g:.4f} vs {p['goodput_requests_per_s']:.4f})")
check(p["slo_met"] == all(c["slo_met"] for c in p["classes"]), "the service meets its SLO when every class meets its own")
check(cls["chat"]["slo"] == {"ttft_s": 1, "tpot_s": 0.05, "e2e_s": None, "percentile": 99}, f"chat's SLO {cls['chat']['slo']}")
check(cls["chat"]["priority"] == 2 and cls["batch"]["priority"] == 0, "priorities reported")
fc = {c["name"]: c for c in f["classes"]}
print(f"  queue p99: chat {cls['chat']['queue_p99_s']:.3f} s with priorities, {fc['chat']['queue_p99_s']:.3f} s "
      f"in arrival order; batch {cls['batch']['queue_p99_s']:.3f} s, {fc['batch']['queue_p99_s']:.3f} s")
check(cls["chat"]["queue_p99_s"] < fc["chat"]["queue_p99_s"], "priority shortens chat's queue tail")
check(cls["batch"]["queue_p99_s"] > fc["batch"]["queue_p99_s"], "priority lengthens batch's queue tail")
check(p == p2, "the same seed gives the same service results")
models = [m["name"] for m in mux.get("by_model", [])]
check(models == ["llama3-70b", "llama2-70b", "llama3-8b"], f"by_model of the multiplexed service: {models}")
check(sum(m["requests"] for m in mux["by_model"]) == mux["requests"], "the models' requests add up to the service's")
check("classes" not in mux and "classes" not in plain and "by_model" not in plain,
      "no classes or by_model where the service has none")
sys.exit(1 if check.bad else 0)
PY

grep -Eq '^  class chat \(priority 2\): [0-9,]+/[0-9,]+ requests; TTFT p99 .*; SLO [0-9.]+% \((met|missed) at p99\), goodput [0-9.,]+ requests/s$' \
  "$tmp/prio.out" && ok "a summary line per class" || no "class line: $(grep 'class chat' "$tmp/prio.out")"
grep -Eq '^  SLO attainment [0-9.]+% \((met|missed)\), goodput [0-9.,]+ requests/s;' "$tmp/plain.out" \
  && ok "the service's SLO goodput in the summary" || no "goodput: $(grep 'SLO attainment' "$tmp/plain.out")"
grep -q '^  model llama2-70b: ' "$tmp/mux.out" && ok "a summary line per multiplexed model" \
  || no "model line: $(grep -c '^  model' "$tmp/mux.out") lines"
if "$bin" report "$tmp/s.db" --out "$tmp/rep" >/dev/null 2>"$tmp/rep.err"; then
  grep -q '<tr class="part"><td>class chat</td>' "$tmp/rep/index.html" && ok "the report lists the classes under the service" \
    || no "no class rows in the report"
else
  no "report failed: $(head -c 300 "$tmp/rep.err")"
fi
echo "$n checks, $fails failed"
[ "$fails" -eq 0 ]
