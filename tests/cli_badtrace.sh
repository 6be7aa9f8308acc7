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
  <cluster><nodes type="dgx-h100" count="4"/></cluster>
  <scheduler><queue name="research" quota-gpus="32"/></scheduler>
  <workload><trace href="$csv"/></workload>
</scenario>
XML
        else
            cat >"$tmp/s.xml" <<XML
<?xml version="1.0"?>
<scenario name="req" seed="1">
  <cluster><nodes type="dgx-h100" count="1"/></cluster>
  <workload>
    <inference name="c" model="llama3-8b" precision="bf16" tp="1" replicas="1">
      <arrivals process="trace" href="$csv"/>
      <requests input-tokens="500" output-tokens="100"/>
    </inference>
  </workload>
</scenario>
XML
        fi
        out="$tmp/results.json"
        why=$(if [ $corpus = bad-jobs ]; then check_one check "$bin" check "$tmp/s.xml"; fi
              check_one run "$bin" run "$tmp/s.xml" --json "$out" --no-db
              if [ -e "$out" ]; then echo "run: created $out"; rm -f "$out"; fi)
        if [ -z "$why" ]; then echo "ok   $corpus/$file"; else
            failed=$((failed + 1)); echo "FAIL $corpus/$file"; printf '%s\n' "$why" | sed 's/^/       /'; fi
    done <"$list"
done
[ $n -gt 0 ] || { echo "cli_badtrace: no cases"; exit 1; }
echo "cli_badtrace: $n cases, $((n - failed)) passed, $failed failed"
[ $failed -eq 0 ]
