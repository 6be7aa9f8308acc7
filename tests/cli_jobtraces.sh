#!/bin/sh
# cli_jobtraces.sh BINARY: the public job traces through the command line
# (docs/job-traces-public.md): <trace href format=...>.
#
#   - each made-up sample in tests/jobtraces/ runs with format="auto": the
#     JSON trace object names the format told, its rows, jobs and skipped
#     rows (as the sample's rows say); every replayed job ends; the run's
#     database holds the trace_read event that says which format was chosen;
#     `check` says the same
#   - users, accounts, real starts (the replay object) and SWF's preceding
#     job reach the JSON
#   - the same run twice gives the same JSON but for the wall_* fields
#   - a job trace in the project's CSV with no format has no trace object
#     (today's output) and no trace_read event
#   - each malformed file of tests/bad-jobtraces/ (its format is its name up
#     to the first '-'): check and run exit 2 with one line on stderr,
#     starting with the file and line of expected.txt and holding its words,
#     nothing on stdout and no JSON written
# Prints ok/FAIL per check; exits 1 on any failure (tests/clilib.sh).
suite=jobtraces
. "$(dirname "$0")/clilib.sh"
command -v python3 >/dev/null 2>&1 || { echo "$0: needs python3" >&2; exit 2; }
root=$(pwd)

# scenario NAME HREF ATTRS: $tmp/NAME.xml, 4 DGX H100 nodes, queues ee9e8c LS vcJkd.
scenario() {
    cat >"$tmp/$1.xml" <<XML
<?xml version="1.0"?>
<scenario name="$1" seed="7">
  <cluster><nodes type="dgx-h100" count="4"/></cluster>
  <scheduler><queue name="ee9e8c"/><queue name="LS"/><queue name="vcJkd"/></scheduler>
  <workload><trace href="$2" $3/></workload>
</scenario>
XML
}

# FILE FORMAT ROWS JOBS SKIPPED
while read -r file fmt rows jobs skipped; do
    scenario "$fmt" "$root/tests/jobtraces/$file" 'format="auto"'
    if ! "$bin" run "$tmp/$fmt.xml" --json "$tmp/$fmt.json" --db "$tmp/$fmt.db" >/dev/null 2>"$tmp/err"; then
        no "$file: run failed: $(head -c 300 "$tmp/err")"
        continue
    fi
    python3 - "$tmp/$fmt.json" "$tmp/$fmt.db" "$fmt" "$rows" "$jobs" "$skipped" <<'PY' >"$tmp/why" 2>&1 \
        && ok "$file: read as $fmt, $rows rows, $jobs jobs done, $skipped skipped, said in an event" \
        || no "$file: $(cat "$tmp/why")"
import json, sqlite3, sys
path, db, fmt, rows, jobs, skipped = sys.argv[1], sys.argv[2], sys.argv[3], *map(int, sys.argv[4:])
d = json.load(open(path))
t = d.get("trace")
assert t, "no trace object"
got = (t["format"], t["rows"], t["jobs"], t["skipped"])
assert got == (fmt, rows, jobs, skipped), f"trace object {got}, want {(fmt, rows, jobs, skipped)}"
assert t["skipped"] == t["skipped_not_run"] + t["skipped_no_gpus"] + t["skipped_too_big"] + t["skipped_status"]
done = [j for j in d["jobs"] if j["state"] == "done"]
assert len(d["jobs"]) == jobs and len(done) == jobs, f"{len(done)} of {len(d['jobs'])} jobs done, want {jobs}"
said = sqlite3.connect(db).execute("select detail from events where kind = 'trace_read'").fetchall()
assert len(said) == 1 and f"read as {fmt} (told by its shape)" in said[0][0], f"events: {said}"
PY
done <<'LIST'
sample.swf swf 8 4 4
helios_cluster_log.csv helios 7 4 3
acme_trace_seren.csv acme 5 3 2
pai_task_table.csv pai 7 4 3
openb_pod_list.csv openb 7 5 2
philly_cluster_job_log.json philly 5 3 2
LIST

# check says how the trace was read, without running it.
if "$bin" check "$tmp/pai.xml" >"$tmp/out" 2>"$tmp/err" &&
   grep -F -q "pai_task_table.csv read as pai (told by its shape): 7 rows, 4 jobs, 3 skipped" "$tmp/out"; then
    ok "check: says the format told and the rows read and skipped"
else no "check: $(head -c 300 "$tmp/out") $(head -c 300 "$tmp/err")"; fi

# The same run twice: the same bytes but for the wall_* fields.
"$bin" run "$tmp/helios.xml" --json "$tmp/again.json" --no-db >/dev/null 2>&1
python3 - "$tmp/helios.json" "$tmp/again.json" <<'PY' && ok "helios: two runs give the same JSON" || no "helios: two runs differ"
import json, sys
def strip(v):
    if isinstance(v, dict): return {k: strip(x) for k, x in v.items() if not k.startswith("wall")}
    if isinstance(v, list): return [strip(x) for x in v]
    return v
a, b = (strip(json.load(open(p))) for p in sys.argv[1:])
sys.exit(a != b)
PY

# What the traces say beyond the run reaches the JSON: users and accounts,
# the real starts and the replay object comparing the waits, and SWF's
# preceding job (job 8 waits for job 2, which ends at 60 + 1800 s).
python3 - "$tmp/swf.json" "$tmp/helios.json" "$tmp/pai.json" <<'PY' >"$tmp/why" 2>&1 && ok "swf, helios: users, accounts, real starts, replay, dependency" || no "trace facts: $(cat "$tmp/why")"
import json, sys
swf, helios, pai = (json.load(open(p)) for p in sys.argv[1:])
jobs = {j["name"]: j for j in swf["jobs"]}
assert (jobs["8"]["user"], jobs["8"]["account"], jobs["8"]["actual_start_s"]) == ("5", "2", 450), jobs["8"]
assert jobs["8"]["start_s"] == 60 + 1800, jobs["8"]
assert swf["replay"]["jobs"] == 4, swf["replay"]
h = {j["name"]: j for j in helios["jobs"]}
assert (h["1425514"]["user"], h["1425514"]["account"], h["1425514"]["actual_start_s"]) == ("uXBbc", "vcJkd", 539)
assert helios["replay"]["jobs"] == 4, helios["replay"]
assert "replay" not in pai and "user" not in pai["jobs"][0], "pai has no users or real starts"
PY

# The project's CSV with no format: today's output, no trace object or event.
printf 'submit,gpus,duration\n0,8,1h\n60,4,30min\n' >"$tmp/jobs.csv"
scenario plain "$tmp/jobs.csv" ''
if "$bin" run "$tmp/plain.xml" --json "$tmp/plain.json" --db "$tmp/plain.db" >/dev/null 2>"$tmp/err"; then
    python3 - "$tmp/plain.json" "$tmp/plain.db" <<'PY' && ok "project CSV: no trace object, no trace_read event" || no "project CSV: trace reported"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
n = sqlite3.connect(sys.argv[2]).execute("select count(*) from events where kind = 'trace_read'").fetchone()[0]
sys.exit("trace" in d or n != 0 or len(d["jobs"]) != 2)
PY
else no "project CSV: run failed: $(head -c 300 "$tmp/err")"; fi

# The malformed corpus: check and run refuse each file at its line.
while IFS='|' read -r file line want; do
    case $file in ''|'#'*) continue ;; esac
    fmt=${file%%-*}
    scenario bad "$root/tests/bad-jobtraces/$file" "format=\"$fmt\""
    prefix="$root/tests/bad-jobtraces/$file:$line: "
    why=
    for cmd in check run; do
        if [ $cmd = run ]; then "$bin" run "$tmp/bad.xml" --json "$tmp/bad.json" --no-db >"$tmp/out" 2>"$tmp/err"
        else "$bin" check "$tmp/bad.xml" >"$tmp/out" 2>"$tmp/err"; fi
        rc=$?
        first=$(head -n 1 "$tmp/err")
        [ $rc -eq 2 ] || why="$why $cmd: exit $rc;"
        [ -s "$tmp/out" ] && why="$why $cmd: wrote to stdout;"
        [ "$(wc -l <"$tmp/err" | tr -d ' ')" = 1 ] || why="$why $cmd: stderr is not one line;"
        case $first in "$prefix"*) ;; *) why="$why $cmd: '$first' does not start with the file and line;" ;; esac
        printf '%s\n' "$first" | grep -F -q -e "$want" || why="$why $cmd: '$first' lacks '$want';"
    done
    [ -e "$tmp/bad.json" ] && why="$why run: wrote $tmp/bad.json;" && rm -f "$tmp/bad.json"
    if [ -z "$why" ]; then ok "refuses $file"; else no "$file:$why"; fi
done <tests/bad-jobtraces/expected.txt

echo "$n checks, $fails failed"
[ "$fails" -eq 0 ]
