#!/bin/sh
# cli_oom.sh BINARY: allocation failures. With build/tests/libfailmalloc.so
# preloaded, the Nth allocation of `BINARY run scenarios/default.xml --json
# OUT --no-db` (with OOM_DB=1: --db DB, which allocates 8 times more) fails,
# for N over the whole run: every N up to 400 (start-up, XML, catalog), then
# every OOM_STEP-th (default 25) up to the run's total. OOM_RANGE=tail:
# every N up to 150, then every OOM_STEP-th over the last 800 (catalog,
# world, run, results), skipping the middle. `make check-oom` sweeps
# everything.
# Each must end cleanly: exit 0 (the failure was absorbed, e.g. by a
# library with a fallback), or exit 1 or 2 with a message that mentions
# memory ("out of memory", libxml2's "Memory allocation failed"), within
# 30 s (a hang guard: a run takes well under a second), never a signal; and
# no JSON file half-written (it is either absent or valid JSON). Skips
# visibly when the shim is missing or the binary is an ASan build (ASan
# owns malloc). Prints a summary; exits 1 on failure.
# A known library bug is skipped, not failed, and said once at the end:
# libxml2 (2.9.14 here) crashes after a failed allocation inside its RELAX
# NG code (compiling the scenario grammar: xmlRelaxNGParse ->
# xmlSchemaGetPredefinedType, heap corruption or a NULL dereference). Its
# signature: the run dies of a signal AND the shim marked the failed
# allocation as inside xmlRelaxNGParse or xmlRelaxNGValidateDoc
# (tests/failmalloc.c). A crash without that marker, a hang, or a bad
# message is still a failure, inside RELAX NG too.
set -u
[ $# -eq 1 ] || { echo "usage: $0 BINARY" >&2; exit 2; }
bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
cd "$(dirname "$0")/.." || exit 2
shim=$(pwd)/build/tests/libfailmalloc.so
[ -f "$shim" ] || { echo "skip cli_oom: $shim not built (make build/tests/libfailmalloc.so)"; exit 0; }
if nm -D "$bin" 2>/dev/null | grep -q __asan_init || ldd "$bin" 2>/dev/null | grep -q libasan; then
    echo "skip cli_oom: $bin is an ASan build"; exit 0; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cli_oom.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT HUP INT PIPE TERM
limit=; command -v timeout >/dev/null 2>&1 && limit="timeout 30"
run() {   # N: run with allocation N failing (0: count only)
    rm -f "$tmp/r.json" "$tmp/r.db"
    if [ "${OOM_DB:-0}" = 1 ]; then db="--db $tmp/r.db"; else db=--no-db; fi
    CT_FAIL_MALLOC=$1 LD_PRELOAD=$shim $limit "$bin" run scenarios/default.xml --json "$tmp/r.json" \
        $db --quiet >/dev/null 2>"$tmp/err"
}
run 0
total=$(sed -n 's/^failmalloc: \([0-9]*\) calls$/\1/p' "$tmp/err")
[ -n "$total" ] || { echo "FAIL cli_oom: the shim did not count ($(head -c 200 "$tmp/err"))"; exit 1; }
rng=$(sed -n 's/^failmalloc: RELAX NG allocations \(.*\)$/\1/p' "$tmp/err")
step=${OOM_STEP:-25}
n=0; bad=0; absorbed=0; i=1; known=0; known_at=
first=400
if [ "${OOM_RANGE:-all}" = tail ]; then first=150; fi
while [ $i -le "$total" ]; do
    run $i; rc=$?
    n=$((n + 1))
    why=
    grep -v '^failmalloc: ' "$tmp/err" >"$tmp/msg"          # the program's own lines
    case $rc in
        0) absorbed=$((absorbed + 1)) ;;
        1|2) grep -qi "memory" "$tmp/msg" || why="exit $rc without a memory message: $(head -c 200 "$tmp/msg")"
             [ "$(wc -l <"$tmp/msg")" -le 2 ] || why="$why; more than two lines of errors" ;;
        124) why="hang (no exit within 30 s): $(head -c 200 "$tmp/msg")" ;;
        *) if [ $rc -gt 128 ] && grep -q "^failmalloc: allocation $i failed inside libxml2 RELAX NG" "$tmp/err"; then
               known=$((known + 1)); known_at="$known_at $i"      # the library's bug: see the top
           else why="exit $rc (signal): $(head -c 200 "$tmp/msg")"; fi ;;
    esac
    if [ -e "$tmp/r.json" ] && ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/r.json" 2>/dev/null; then
        why="$why; a broken JSON file was left"; fi
    if [ -n "$why" ]; then bad=$((bad + 1)); echo "FAIL allocation $i of $total: $why"; fi
    if [ $i -lt $first ]; then i=$((i + 1))
    elif [ "${OOM_RANGE:-all}" = tail ] && [ $i -lt $((total - 800)) ]; then i=$((total - 800))
    else i=$((i + step)); fi
done
if [ $known -gt 0 ]; then
    lib=$(ldd "$bin" 2>/dev/null | sed -n 's/.*libxml2\.so[^ ]* => \([^ ]*\).*/\1/p' | head -n 1)
    ver=$( [ -n "$lib" ] && readlink -f "$lib" | sed -n 's/.*libxml2\.so\.\([0-9.]*\)$/\1/p')
    [ -n "$ver" ] || ver=$(pkg-config --modversion libxml-2.0 2>/dev/null || echo "version unknown")
    echo "skip cli_oom: $known allocation(s) ($(echo $known_at | cut -c1-80)) failed inside libxml2 $ver's RELAX NG code (allocations ${rng:-?} of this run), which then crashed: a known libxml2 bug (after a failed allocation, xmlRelaxNGParse -> xmlSchemaGetPredefinedType corrupts the heap or dereferences NULL), not ours; skipped"
fi
echo "cli_oom: $n of $total allocations failed one at a time ($( [ "${OOM_DB:-0}" = 1 ] && echo "with" || echo "without") database), $absorbed absorbed, $known skipped (libxml2 RELAX NG bug), $bad failed"
[ $bad -eq 0 ]
