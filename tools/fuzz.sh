#!/bin/sh
# tools/fuzz.sh SECONDS FUZZER...: run each libFuzzer harness for an equal
# share of SECONDS (`make fuzz FUZZ_SECONDS=60`), seeded from
# tests/fuzz/<name>/ (<name> = the harness without "fuzz_"), growing a work
# corpus in build/fuzz/corpus/<name>/. Crashes, leaks, timeouts (10 s) and
# out-of-memory (2 GB) land in build/fuzz/crashes/; copy each into
# tests/fuzz/<name>/ once fixed so tests/test_fuzz.c replays it in
# `make test`. Prints executions per harness and in total; exits 1 when a
# harness found anything.
set -u
[ $# -ge 2 ] || { echo "usage: $0 SECONDS FUZZER..." >&2; exit 2; }
total_s=$1; shift
n=$#
per=$((total_s / n)); [ $per -ge 1 ] || per=1
mkdir -p build/fuzz/crashes
all=0; bad=0
printf '%-16s %8s %12s %10s %8s\n' harness seconds executions exec/s findings
for f in "$@"; do
    name=$(basename "$f"); name=${name#fuzz_}
    work=build/fuzz/corpus/$name
    mkdir -p "$work"
    dict=; [ -f "tests/fuzz/$name.dict" ] && dict="-dict=tests/fuzz/$name.dict"
    log=build/fuzz/$name.log
    "$f" $dict -max_total_time=$per -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="build/fuzz/crashes/$name-" "$work" "tests/fuzz/$name" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    found=0
    if [ $rc -ne 0 ]; then found=1; bad=1; fi
    printf '%-16s %8d %12s %10s %8d\n' "$name" $per "${execs:-?}" "${rate:-?}" $found
    if [ $found -ne 0 ]; then
        grep -E "ERROR|SUMMARY|fuzz property|Test unit written" "$log" | head -n 8 | sed 's/^/    /'
    fi
    all=$((all + ${execs:-0}))
done
echo "fuzz: $all executions in total, $( [ $bad -eq 0 ] && echo "no crash" || echo "FINDINGS in build/fuzz/crashes/" )"
exit $bad
