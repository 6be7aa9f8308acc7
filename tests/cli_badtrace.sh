#!/bin/sh
# cli_badtrace.sh BINARY: the CLI on every malformed trace in tests/bad-jobs/
# (job traces, <trace href>) and tests/bad-requests/ (request traces,
# <arrivals process="trace" href>).
#
# For each case "FILE|LINE|SUBSTRING" of tests/<corpus>/expected.txt, a
# scenario written here names the trace by its absolute path, and
#   BINARY check SCENARIO          (job traces: read by the loader)
#   BINARY run SCENARIO --json OUT
# must exit 2 within 30 s, print nothing on stdout, print exactly one line
# on stderr starting "ROOT/tests/<corpus>/FILE:LINE: " and containing
# SUBSTRING, and not create OUT. Request traces are read when the world is
# built, so `check` (which does not build one) is not asked about them.
# Then the good ones: each made-up sample of a public request-trace format in
# tests/traces/ (told by the file's own shape: format="auto") must run with
# every request submitted and the prompts' token sum of the file, and the
# shipped scenarios/serving-trace-mooncake.xml must run to the same bytes of
# JSON twice (but the wall_* fields), all 48 of its requests served and some
# prompt blocks found in the prefix cache by the trace's hash ids.
# Prints ok/FAIL per case and a summary; exits 1 on any failure.
set -u

[ $# -eq 1 ] || { echo "usage: $0 BINARY" >&2; exit 2; }
bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
[ -x "$bin" ] || { echo "$0: $bin is not an executable" >&2; exit 2; }
cd "$(dirname "$0")/.." || exit 2
root=$(pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cli_badtrace.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT HUP INT PIPE TERM
limit=
if command -v timeout >/dev/null 2>&1; then limit="timeout 30"; fi

check_one() {   # NAME CMD...; uses $prefix and $want
    name=$1; shift
    $limit "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    if [ $rc -ne 2 ]; then echo "$name: exit status $rc, want 2"; fi
    if [ -s "$tmp/out" ]; then echo "$name: wrote to stdout: $(head -c 200 "$tmp/out")"; fi
    lines=$(wc -l <"$tmp/err" | tr -d ' ')
    first=$(head -n 1 "$tmp/err")
    [ "$lines" = 1 ] || echo "$name: stderr is not exactly one line: $(head -c 300 "$tmp/err")"
    case $first in "$prefix"*) ;; *) echo "$name: stderr '$first' does not start with '$prefix'" ;; esac
    printf '%s\n' "$first" | grep -F -q -e "$want" || echo "$name: stderr '$first' lacks '$want'"
}

# $tmp/s.xml: one replica of MODEL replaying the request trace at HREF.
req_scenario() {
    cat >"$tmp/s.xml" <<XML
<?xml version="1.0"?>
<scenario name="req" seed="1">
  <cluster><nodes type="dgx-h100" count="1"/></cluster>
  <workload>
    <inference name="c" model="$1" precision="bf16" tp="1" replicas="1">
      <arrivals process="trace" href="$2"/>
      <requests input-tokens="500" output-tokens="100"/>
    </inference>
  </workload>
</scenario>
XML
}

n=0
failed=0
for corpus in bad-jobs bad-requests; do
    list=tests/$corpus/expected.txt
    [ -r "$list" ] || { echo "FAIL cannot read $list"; failed=$((failed + 1)); continue; }
    while IFS='|' read -r file line want; do
        case $file in ''|'#'*) continue ;; esac
        n=$((n + 1))
        csv=$root/tests/$corpus/$file
        prefix="$csv:$line: "
        if [ $corpus = bad-jobs ]; then
            cat >"$tmp/s.xml" <<XML
<?xml version="1.0"?>
<scenario name="trace" seed="1" duration="1d">
  <cluster><nodes type="dgx-h100" count="4" names="n[1-4]"/></cluster>
  <scheduler><queue name="research" quota-gpus="32"/></scheduler>
  <workload><trace href="$csv"/></workload>
</scenario>
XML
        else
            req_scenario llama3-8b "$csv"
        fi
        out="$tmp/results.json"
        why=$(if [ $corpus = bad-jobs ]; then check_one check "$bin" check "$tmp/s.xml"; fi
              check_one run "$bin" run "$tmp/s.xml" --json "$out" --no-db
              if [ -e "$out" ]; then echo "run: created $out"; rm -f "$out"; fi)
        if [ -z "$why" ]; then echo "ok   $corpus/$file"; else
            failed=$((failed + 1)); echo "FAIL $corpus/$file"; printf '%s\n' "$why" | sed 's/^/       /'; fi
    done <"$list"
done
# The value of "key": N in the JSON file (the first service's).
json_int() { grep -o "\"$1\": *[0-9]*" "$2" | head -n 1 | sed 's/.*: *//'; }

# FILE:REQUESTS:INPUT_TOKENS, counted from each sample by hand (BurstGPT: the
# two failed rows, 0 response tokens, are not requests).
for row in azure-2023.csv:30:111762 azure-2024.csv:30:111762 burstgpt.csv:34:36009 \
           mooncake.jsonl:40:194580 requests-sessions.csv:24:35126; do
    file=${row%%:*}; rest=${row#*:}; want_n=${rest%%:*}; want_in=${rest#*:}
    n=$((n + 1))
    req_scenario llama3.1-8b "$root/tests/traces/$file"
    rm -f "$tmp/good.json"
    $limit "$bin" run "$tmp/s.xml" --json "$tmp/good.json" --no-db >/dev/null 2>"$tmp/err"
    rc=$?
    got_n=$(json_int submitted "$tmp/good.json" 2>/dev/null)
    got_in=$(json_int input_tokens "$tmp/good.json" 2>/dev/null)
    if [ $rc -eq 0 ] && [ "$got_n" = "$want_n" ] && [ "$got_in" = "$want_in" ]; then echo "ok   traces/$file"; else
        failed=$((failed + 1))
        echo "FAIL traces/$file: exit $rc, $got_n requests of $want_n, $got_in input tokens of $want_in: $(head -c 300 "$tmp/err")"
    fi
done

n=$((n + 1))
sc=scenarios/serving-trace-mooncake.xml
$limit "$bin" run $sc --json "$tmp/a.json" --no-db >/dev/null 2>&1
rc_a=$?
$limit "$bin" run $sc --json "$tmp/b.json" --no-db >/dev/null 2>&1
rc_b=$?
grep -v '"wall' "$tmp/a.json" >"$tmp/a.cut" 2>/dev/null     # wall_*: the machine's time, not the model's
grep -v '"wall' "$tmp/b.json" >"$tmp/b.cut" 2>/dev/null
hit=$(grep -o '"prefix_hit_rate": *[0-9.e-]*' "$tmp/a.json" 2>/dev/null | head -n 1 | sed 's/.*: *//')
if [ $rc_a -eq 0 ] && [ $rc_b -eq 0 ] && cmp -s "$tmp/a.cut" "$tmp/b.cut" && [ "$(json_int requests "$tmp/a.json")" = 48 ] &&
   awk -v h="${hit:-0}" 'BEGIN { exit !(h > 0) }'; then
    echo "ok   $sc (48 requests, same bytes twice, prefix hits $hit)"
else
    failed=$((failed + 1)); echo "FAIL $sc: exit $rc_a/$rc_b, requests $(json_int requests "$tmp/a.json" 2>/dev/null), or the two runs differ"
fi

[ $n -gt 0 ] || { echo "cli_badtrace: no cases"; exit 1; }
echo "cli_badtrace: $n cases, $((n - failed)) passed, $failed failed"
[ $failed -eq 0 ]
