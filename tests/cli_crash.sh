#!/bin/sh
# cli_crash.sh BINARY: crash safety of `clustertwin run` and its results
# database.
#
#   SIGINT   a long run interrupted mid-run exits 130, writes valid JSON of
#            the results so far and leaves its database run 'incomplete'
#            with those results stored.
#   SIGKILL  a run killed mid-run leaves its row 'incomplete'; runs killed
#            at random points (KILLS times, 12 by default): after each,
#            PRAGMA integrity_check is ok, the earlier complete runs are
#            byte-for-byte unchanged and the killed run, if its row exists,
#            is 'incomplete' (or 'complete' when it had finished).
# "Mid-run" never means "after a sleep": the run is started with the
# test-only pause hook (CT_TEST_PAUSE_FIFO, cli/testpause.h): it stops at
# its first simulated event and writes a byte to a FIFO; the signal is
# sent only once that byte is read, so the outcome does not depend on how
# fast or busy the machine is. The random kills need no timing either:
# what they assert holds wherever a kill lands.
#   full     writes that fail with EFBIG (RLIMIT_FSIZE, SIGXFSZ ignored) and,
#            as root, ENOSPC on a 256 KiB tmpfs: exit 1, a one-line error,
#            no JSON file, the database still intact with its earlier runs.
#   ro       a read-only output directory (a read-only tmpfs as root, mode
#            555 otherwise): exit 1 or 2, an error naming the path, no file.
# Prints ok/FAIL/skip per check; exits 1 on any failure. Needs python3
# (sqlite3 module) to read the database.
set -u
[ $# -eq 1 ] || { echo "usage: $0 BINARY" >&2; exit 2; }
bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
cd "$(dirname "$0")/.." || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cli_crash.XXXXXX") || exit 2
mounts=
cleanup() { for m in $mounts; do umount "$m" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT HUP INT PIPE TERM
fails=0; n=0
ok() { n=$((n + 1)); echo "ok   crash: $1"; }
no() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL crash: $1"; }
skip() { echo "skip crash: $1"; }

# db.py DB: prints "integrity" then one line per run: id status sha1(row).
cat >"$tmp/db.py" <<'PY'
import hashlib, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("PRAGMA integrity_check").fetchone()[0])
for row in c.execute("SELECT * FROM runs ORDER BY id"):
    h = hashlib.sha1(repr(row).encode()).hexdigest()
    jobs = c.execute("SELECT count(*) FROM jobs WHERE run_id = ?", (row[0],)).fetchone()[0]
    print(row[0], row[1], jobs, h)
PY
runs() { python3 "$tmp/db.py" "$1" 2>&1; }
status_col=$(grep -c "status TEXT NOT NULL" reports/store.c)

# ---- SIGINT ---------------------------------------------------------------
# paused NAME CMD...: start CMD in the background (its pid in $pid, its
# stderr in $tmp/err) with the pause hook on, and wait until it has reached
# the pause. Returns 1 (after a FAIL naming NAME) when it never did. CMD
# runs in a runner subshell that, once CMD has exited, writes its status
# to $tmp/rc and opens the FIFO read-write (never blocks): if CMD exited
# before its pause, that ends the wait (head reads end of file). CMD
# writes its own pid before it starts (sh -c 'echo $$; exec'), so $pid is
# known once the pause is reached. $guard is a hang guard against a broken
# program, never a deadline for a slow one.
guard=; command -v timeout >/dev/null 2>&1 && guard="timeout 600"
fifo=$tmp/pause
paused() {
    name=$1; shift
    rm -f "$fifo" "$tmp/pid" "$tmp/rc"
    mkfifo "$fifo" || { no "$name: mkfifo"; return 1; }
    ( CT_TEST_PAUSE_FIFO=$fifo sh -c 'echo $$ >"$0" && exec "$@"' "$tmp/pid" "$@" >/dev/null 2>"$tmp/err"
      echo $? >"$tmp/rc"; : <>"$fifo" ) &
    runner=$!
    got=$($guard head -c 1 "$fifo")
    pid=$(cat "$tmp/pid" 2>/dev/null)
    [ "$got" = P ] && [ -n "$pid" ] && return 0
    no "$name: the run never reached the pause (exit $(cat "$tmp/rc" 2>/dev/null): $(head -c 300 "$tmp/err"))"
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    wait $runner
    return 1
}
finished() { wait $runner; rc=$(cat "$tmp/rc" 2>/dev/null || echo none); }   # rc of the paused CMD
release() { $guard sh -c ': >"$1"' sh "$fifo"; }      # let a paused run go on

# A training run of 50 simulated years, interrupted at its first simulated
# event (the pause), however fast the machine runs the rest of it.
# (5e14 tokens: about 60 years of training, inside the clock's 100-year horizon)
cat >"$tmp/long.xml" <<'XML'
<?xml version="1.0"?>
<scenario name="long" seed="1" duration="50y">
  <cluster>
    <nodes type="dgx-h100" count="16"/>
    <storage name="ckpt" kind="parallel-fs" bandwidth="100GB/s"/>
  </cluster>
  <failures><failure component="gpu" mtbf="50000h"/></failures>
  <workload>
    <training name="long" tp="8" pp="1" dp="16" tokens="5e14" storage="ckpt">
      <model preset="llama3-8b"/>
      <checkpoint interval="1h" mode="async" layout="sharded"/>
    </training>
  </workload>
</scenario>
XML
db=$tmp/int.db
rc=none
if paused "SIGINT" "$bin" run "$tmp/long.xml" --db "$db" --json "$tmp/int.json" --quiet; then
    kill -INT "$pid"        # delivered while it waits in the pause, before its next step
    release
    finished
fi
if [ "$rc" = 130 ]; then ok "SIGINT exits 130"; else no "SIGINT exits 130 (got $rc: $(head -c 300 "$tmp/err"))"; fi
grep -q "interrupted at simulated time" "$tmp/err" && ok "SIGINT says it was interrupted" || no "SIGINT message: $(cat "$tmp/err")"
python3 - "$tmp/int.json" "$db" <<'PY' && ok "SIGINT writes the results so far (JSON and database, run incomplete)" || no "SIGINT results"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert 0 < d["simulated_s"] < 50 * 365 * 86400, d["simulated_s"]   # stopped before the end
c = sqlite3.connect(sys.argv[2])
assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
st, sim, js = c.execute("SELECT status, simulated_s, results_json FROM runs").fetchone()
assert st == "incomplete", st
assert js and abs(sim - d["simulated_s"]) < 1e-6, (sim, d["simulated_s"])
assert c.execute("SELECT count(*) FROM jobs").fetchone()[0] == len(d["jobs"])
PY

# ---- SIGKILL ----------------------------------------------------------------
# Mid-run for certain: at the pause the run's row exists; killed there, it
# stays 'incomplete' and the database is intact.
if paused "SIGKILL" "$bin" run "$tmp/long.xml" --db "$tmp/kill1.db" --quiet; then
    kill -KILL "$pid"
    finished
    if [ "$rc" = 137 ] && [ "$(runs "$tmp/kill1.db" | head -n 1)" = ok ] &&
       runs "$tmp/kill1.db" | sed -n 2p | grep -q "^1 incomplete "; then
        ok "SIGKILL mid-run: the run's row stays incomplete, integrity ok"
    else no "SIGKILL mid-run (exit $rc): $(runs "$tmp/kill1.db" | head -n 3 | tr '\n' ' ')"; fi
fi

# At random points: wherever a kill lands (before the row, mid-write,
# after the end), the database is intact and the earlier runs unchanged.
db=$tmp/kill.db
t0=$(date +%s.%N)
"$bin" run scenarios/shared-512.xml --db "$db" --quiet >/dev/null 2>&1 || no "first run"
t1=$(date +%s.%N)
"$bin" run scenarios/default.xml --db "$db" --quiet >/dev/null 2>&1 || no "second run"
runs "$db" >"$tmp/before"
kills=${KILLS:-12}
seed=$$
# Kill points are drawn over the length of a whole run on this machine (as
# measured by the first one), so the kills land mid-run however fast it is.
span=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
k=0; killed=0; bad=0
while [ $k -lt $kills ]; do
    k=$((k + 1))
    delay=$(awk -v s=$((seed + k)) -v span="$span" 'BEGIN { srand(s); printf "%.3f", rand() * span }')
    "$bin" run scenarios/shared-512.xml --db "$db" --quiet >/dev/null 2>&1 &
    pid=$!
    sleep "$delay"
    kill -KILL $pid 2>/dev/null && killed=$((killed + 1))
    wait $pid 2>/dev/null
    runs "$db" >"$tmp/after"
    if [ "$(head -n 1 "$tmp/after")" != ok ]; then
        bad=1; echo "    after a kill at $delay s: integrity_check: $(head -n 3 "$tmp/after")"; fi
    # The earlier rows are unchanged; the newest row (if any) is incomplete
    # or complete, never anything else.
    head -n "$(wc -l <"$tmp/before")" "$tmp/after" | cmp -s - "$tmp/before" ||
        { bad=1; echo "    after a kill at $delay s: earlier runs changed"; }
    last=$(tail -n 1 "$tmp/after")
    case $last in *" incomplete "*|*" complete "*) ;; *) bad=1; echo "    bad last run: $last" ;; esac
    runs "$db" >"$tmp/before"                   # the killed run is "earlier" from now on
done
if [ $bad -eq 0 ]; then ok "SIGKILL at $kills random points ($killed still running when killed): database intact, earlier runs unchanged"
else no "SIGKILL at random points"; fi
# How many kills landed mid-run depends on the machine: measured, not asserted.
echo "     crash: $(grep -c " incomplete " "$tmp/before") of $kills randomly killed runs were left incomplete (the rest were killed before their row or after the end)"

# ---- full disk --------------------------------------------------------------
# expect_full NAME DB JSON CMD...: CMD must exit 1 with a one-line error per
# output that failed, no
# JSON file, and DB (when it existed) intact with the runs it had.
expect_full() {
    name=$1; dbf=$2; js=$3; shift 3
    [ -e "$dbf" ] && runs "$dbf" >"$tmp/full.before" || : >"$tmp/full.before"
    "$@" >/dev/null 2>"$tmp/err"
    rc=$?
    why=
    [ $rc -eq 1 ] || why="exit $rc, want 1;"
    # One line per failed output (the JSON file and the database may both fail).
    lines=$(wc -l <"$tmp/err")
    { [ "$lines" -ge 1 ] && [ "$lines" -le 2 ] && ! grep -v -q '^clustertwin run: ' "$tmp/err"; } ||
        why="$why stderr is not one 'clustertwin run: ' line per output: $(head -c 300 "$tmp/err");"
    [ -e "$js" ] && why="$why $js was created;"
    ls "$(dirname "$js")" | grep -q '\.tmp' && why="$why a temporary file was left;"
    if [ -s "$tmp/full.before" ]; then
        runs "$dbf" >"$tmp/full.after"
        [ "$(head -n 1 "$tmp/full.after")" = ok ] || why="$why integrity: $(head -n 1 "$tmp/full.after");"
        head -n "$(wc -l <"$tmp/full.before")" "$tmp/full.after" | cmp -s - "$tmp/full.before" ||
            why="$why earlier runs changed;"
    fi
    if [ -z "$why" ]; then ok "$name ($(tr '\n' ' ' <"$tmp/err" | cut -c1-220))"; else no "$name: $why"; fi
}
mkdir -p "$tmp/fs"
cp "$db" "$tmp/fs/full.db"
expect_full "file size limit (EFBIG) while storing a run" "$tmp/fs/full.db" "$tmp/fs/r.json" \
    sh -c 'trap "" XFSZ; ulimit -f 2000; exec "$0" run scenarios/shared-512.xml --db "$1" --json "$2" --quiet' \
    "$bin" "$tmp/fs/full.db" "$tmp/fs/r.json"
expect_full "file size limit (EFBIG) while writing the JSON" "$tmp/none.db" "$tmp/fs/big.json" \
    sh -c 'trap "" XFSZ; ulimit -f 1; exec "$0" run scenarios/shared-512.xml --no-db --json "$1" --quiet' \
    "$bin" "$tmp/fs/big.json"
if [ "$(id -u)" = 0 ] && mkdir -p "$tmp/small" && mount -t tmpfs -o size=256k tmpfs "$tmp/small" 2>/dev/null; then
    mounts="$mounts $tmp/small"
    "$bin" run scenarios/default.xml --db "$tmp/small/s.db" --quiet >/dev/null 2>&1
    expect_full "a full disk (ENOSPC, 256 KiB tmpfs)" "$tmp/small/s.db" "$tmp/small/r.json" \
        "$bin" run scenarios/shared-512.xml --db "$tmp/small/s.db" --json "$tmp/small/r.json" --quiet
else
    skip "full disk on a small tmpfs (needs root and mount)"
fi

# ---- read-only output directory ----------------------------------------------
mkdir -p "$tmp/ro"
if [ "$(id -u)" = 0 ]; then
    if mount -t tmpfs -o ro,size=64k tmpfs "$tmp/ro" 2>/dev/null; then mounts="$mounts $tmp/ro"; else
        skip "read-only directory (root, and no read-only mount)"; ro=; fi
    ro=$tmp/ro
else
    chmod 555 "$tmp/ro"; ro=$tmp/ro
fi
if [ -n "${ro:-}" ]; then
    "$bin" run scenarios/default.xml --db "$ro/r.db" --quiet >/dev/null 2>"$tmp/err"; rc=$?
    if [ $rc -ne 0 ] && grep -q "$ro/r.db" "$tmp/err" && [ ! -e "$ro/r.db" ]; then ok "read-only directory, --db (exit $rc: $(cut -c1-120 "$tmp/err"))"
    else no "read-only directory, --db: exit $rc, $(head -c 300 "$tmp/err")"; fi
    "$bin" run scenarios/default.xml --no-db --json "$ro/r.json" --quiet >/dev/null 2>"$tmp/err"; rc=$?
    if [ $rc -ne 0 ] && grep -q "$ro/r.json" "$tmp/err" && [ -z "$(ls -A "$ro")" ]; then ok "read-only directory, --json (exit $rc: $(cut -c1-120 "$tmp/err"))"
    else no "read-only directory, --json: exit $rc, $(head -c 300 "$tmp/err")"; fi
fi

echo "cli_crash: $n checks, $((n - fails)) passed, $fails failed"
[ $fails -eq 0 ]
