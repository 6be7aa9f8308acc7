#!/bin/sh
# cli_report.sh BINARY: the results database and the report command, end to end.
#
#   run --db / --no-db / the default out/<scenario>.db; bad --db paths
#   report: the HTML parses (xmllint or Python's XML parser, when either is
#   here) and every image it shows exists; md and csv; --compare; --list;
#   no gnuplot; a serving run's services table and latency CDF chart; bad
#   arguments exit 2, a directory that cannot be made exits 1.
#   --compare: one overlaid chart per quantity with both runs' lines.
#   The sweep report: metric names, the best point in a sentence, a heatmap
#   for a two-parameter grid and none for one parameter.
#   No report writer calls SQLite: only the store and the reader do.
# Prints ok/FAIL per check and a summary; exits 1 on any failure.
# Runs from the project root whatever the current directory.
suite=report
. "$(dirname "$0")/clilib.sh"
[ -x "$bin" ] || { echo "$0: $bin is not an executable" >&2; exit 2; }
root=$(pwd)
# well_formed FILE: parsed by an XML parser when one is here.
well_formed() {
  if command -v xmllint >/dev/null 2>&1; then xmllint --noout --nonet "$1" 2>"$tmp/xml"
  elif command -v python3 >/dev/null 2>&1; then
    python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$1" 2>"$tmp/xml"
  else return 0; fi
}
# images_exist DIR: every <img src> of DIR/index.html is a file in DIR.
images_exist() {
  missing=0
  for src in $(grep -o '<img src="[^"]*"' "$1/index.html" | sed 's/<img src="//; s/"$//'); do
    [ -s "$1/$src" ] || { echo "  missing image $1/$src"; missing=1; }
  done
  return $missing
}

db=$tmp/r.db
small=scenarios/finetune-7b-8gpu.xml
expect_status 0 "run --db creates the database" "$bin" run $small --db "$db" -q
expect_status 0 "run --db adds a second run" "$bin" run scenarios/default.xml --db "$db" --seed 2 -q
expect_status 0 "run prints where it stored the run" "$bin" run $small --db "$db"
grep -q "stored as run 3 in $db" "$tmp/out" && ok "the summary names run 3" || no "the summary names run 3: $(tail -n 1 "$tmp/out")"

# The default database and --no-db, from a scratch working directory.
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && "$bin" run "$root/$small" -q) && [ -s "$tmp/cwd/out/finetune-7b-8gpu.db" ] \
  && ok "default database out/<scenario>.db" || no "default database out/<scenario>.db"
mkdir "$tmp/cwd2"
(cd "$tmp/cwd2" && "$bin" run "$root/$small" --no-db -q) && [ ! -e "$tmp/cwd2/out" ] \
  && ok "--no-db writes no database" || no "--no-db writes no database"
mkdir "$tmp/cwd3" && : >"$tmp/cwd3/out"
(cd "$tmp/cwd3" && "$bin" run "$root/$small" --json - >"$tmp/cwd3.json" 2>"$tmp/cwd3.err"); st=$?
[ $st = 0 ] && grep -q "warning: results not stored" "$tmp/cwd3.err" && grep -q '"scenario"' "$tmp/cwd3.json" \
  && ok "an unwritable default database is a warning; the JSON is still written" \
  || no "an unwritable default database is a warning (exit $st)"

# Bad --db paths: nothing written, a clear message naming the path.
echo "not a database" >"$tmp/notes.txt"
expect_status 2 "run --db DIRECTORY" "$bin" run $small --db "$tmp"
grep -q "$tmp: is a directory" "$tmp/err" || no "the directory message names the path"
expect_status 2 "run --db a file that is not a database" "$bin" run $small --db "$tmp/notes.txt"
grep -q "notes.txt: not an SQLite database" "$tmp/err" || no "the not-a-database message names the path"
[ "$(cat "$tmp/notes.txt")" = "not a database" ] && ok "the file is left as it was" || no "the file is left as it was"
expect_status 1 "run --db in a missing directory" "$bin" run $small --db "$tmp/none/r.db"
[ ! -e "$tmp/none" ] && ok "nothing created for it" || no "nothing created for it"
expect_status 2 "run --db ''" "$bin" run $small --db ''
expect_status 2 "run --db with --no-db" "$bin" run $small --db "$tmp/x.db" --no-db
expect_status 2 "run --db without a value" "$bin" run $small --db
[ ! -e "$tmp/x.db" ] && ok "usage errors write no database" || no "usage errors write no database"

# The HTML report.
expect_status 0 "report --help" "$bin" report --help
grep -q "usage: clustertwin report" "$tmp/out" || no "report --help prints usage"
out=$tmp/html
expect_status 0 "report html" "$bin" report "$db" --run 2 --out "$out"
[ -s "$out/index.html" ] && ok "index.html written" || no "index.html written"
well_formed "$out/index.html" && ok "index.html is well-formed" || no "index.html is well-formed: $(head -c 300 "$tmp/xml")"
images_exist "$out" && ok "every image it shows exists" || no "every image it shows exists"
grep -q '<p class="answer">pretrain-70b finishes in' "$out/index.html" && ok "it opens with the answer" \
  || no "it opens with the answer"
if command -v gnuplot >/dev/null 2>&1; then
  [ "$(grep -c '<img src="[a-z]*\.svg"' "$out/index.html")" -ge 5 ] && ok "charts drawn with gnuplot" || no "charts drawn with gnuplot"
fi
for f in "$out"/*.svg; do well_formed "$f" || { no "$f is well-formed"; break; }; done

# Without gnuplot: a note, no chart.
out=$tmp/nognuplot
CLUSTERTWIN_GNUPLOT=/nonexistent/gnuplot "$bin" report "$db" --run 2 --out "$out" >"$tmp/out" 2>"$tmp/err"; st=$?
[ $st = 0 ] && grep -q "note: Charts are not drawn" "$tmp/err" && grep -q "Charts are not drawn" "$out/index.html" \
  && ! grep -q '<img src="util.svg"' "$out/index.html" && images_exist "$out" \
  && ok "without gnuplot: a note instead of charts" || no "without gnuplot: a note instead of charts (exit $st)"
well_formed "$out/index.html" && ok "... and the page is still well-formed" || no "... and the page is still well-formed"

# --compare, md, csv, --list, the default run and directory.
out=$tmp/cmp
expect_status 0 "report --compare" "$bin" report "$db" --run 1 --compare 2 --out "$out"
grep -q "Run 1 vs run 2" "$out/index.html" && grep -q "B - A" "$out/index.html" && ok "both runs side by side" \
  || no "both runs side by side"
grep -q "set output 'cmp-cost.svg'" "$out/cmp-charts.gp" && grep -q "'cmp-cost.dat' index 1" "$out/cmp-charts.gp" \
  && grep -q '^# A: run 1' "$out/cmp-cost.dat" && grep -q '^# B: run 2' "$out/cmp-cost.dat" \
  && ! grep -q 'src="a-cost.svg"' "$out/index.html" \
  && ok "compare: the cost of both runs in one overlaid chart" || no "compare: the cost of both runs in one overlaid chart"
if command -v gnuplot >/dev/null 2>&1; then
  [ "$(grep -o '<img src="cmp-cost.svg"' "$out/index.html" | wc -l)" -eq 1 ] && grep -q 'A: run 1' "$out/cmp-cost.svg" \
    && grep -q 'B: run 2' "$out/cmp-cost.svg" && ok "compare: the overlaid chart has a legend of both runs" \
    || no "compare: the overlaid chart has a legend of both runs"
fi
well_formed "$out/index.html" && images_exist "$out" && ok "the comparison is well-formed with its images" \
  || no "the comparison is well-formed with its images"
expect_status 0 "report --format md" "$bin" report "$db" --run 2 --format md --out "$tmp/md"
[ -s "$tmp/md/report.md" ] && [ ! -e "$tmp/md/index.html" ] && grep -q '^| Goodput (ETTR) |' "$tmp/md/report.md" \
  && ok "report.md written instead" || no "report.md written instead"
expect_status 0 "report --format csv --compare" "$bin" report "$db" --run 1 --compare 2 --format csv --out "$tmp/csv"
for f in summary runs jobs queues failures events series compare; do
  [ -s "$tmp/csv/$f.csv" ] || no "$f.csv written"
done
[ "$(wc -l <"$tmp/csv/runs.csv")" -eq 3 ] && ok "runs.csv has both runs" || no "runs.csv has both runs"
expect_status 0 "report --list" "$bin" report "$db" --list
[ "$(grep -c complete "$tmp/out")" -eq 3 ] && ok "three runs listed" || no "three runs listed"
cp "$db" "$tmp/default.db"
(cd "$tmp" && "$bin" report default.db >/dev/null 2>&1) && [ -s "$tmp/default/index.html" ] \
  && grep -q "finetune-7b-8gpu" "$tmp/default/index.html" \
  && ok "default: the latest run, into DB without .db" || no "default: the latest run, into DB without .db"

# Inference services: the services table and the latency CDF chart.
sdb=$tmp/serving.db
expect_status 0 "run a serving scenario --db" "$bin" run scenarios/serving-chat-70b.xml --db "$sdb" -q
out=$tmp/serving
expect_status 0 "report a serving run" "$bin" report "$sdb" --out "$out"
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import sys, xml.dom.minidom as M; M.parse(sys.argv[1])' "$out/index.html" 2>"$tmp/xml" \
    && ok "the serving report parses (minidom)" || no "the serving report parses (minidom): $(head -c 300 "$tmp/xml")"
fi
grep -q '<h2 id="services">Inference services</h2>' "$out/index.html" \
  && grep -q '<table class="services">' "$out/index.html" && grep -q '<td>chat</td>' "$out/index.html" \
  && grep -q '<th class="n">TTFT p99</th>' "$out/index.html" && grep -q '<th class="n">SLO attainment</th>' "$out/index.html" \
  && ok "the services table" || no "the services table"
images_exist "$out" && ok "every image of the serving report exists" || no "every image of the serving report exists"
if command -v gnuplot >/dev/null 2>&1; then
  grep -q '<img src="latency.svg"' "$out/index.html" && [ -s "$out/latency.svg" ] && well_formed "$out/latency.svg" \
    && grep -q '^# service chat:' "$out/latency.dat" \
    && ok "the latency CDF chart, drawn" || no "the latency CDF chart, drawn"
fi
# The replicas that exist at time 0 are taken while the world is built,
# before the store subscribes: the series and events must still have them.
expect_status 0 "report a serving run --format csv" "$bin" report "$sdb" --format csv --out "$tmp/scsv"
awk -F, '$3 == "gpus_serving" { n++; if ($7 != 8 || $8 != 8 || $9 != 8) bad++; if ($4 == 0) first = 1 }
         END { exit !(n > 0 && first && !bad) }' "$tmp/scsv/series.csv" \
  && ok "serving-chat-70b: gpus_serving is 8 from t=0 to the end" \
  || no "serving-chat-70b: gpus_serving is 8 from t=0 to the end: $(grep -m 3 gpus_serving "$tmp/scsv/series.csv")"
awk -F, '$3 == "gpus_idle" { n++; if ($9 != 0) bad++ } END { exit !(n > 0 && !bad) }' "$tmp/scsv/series.csv" \
  && ok "... and no GPU is idle" || no "... and no GPU is idle: $(grep -m 3 gpus_idle "$tmp/scsv/series.csv")"
awk -F, '$3 == "gpus_training" && $9 != 0 { bad++ } END { exit bad }' "$tmp/scsv/series.csv" \
  && ok "... and none is training" || no "... and none is training: $(grep -m 3 gpus_training "$tmp/scsv/series.csv")"
grep -q "^1,0,0.0,chat,service_start," "$tmp/scsv/events.csv" \
  && ok "... and the service_start event of t=0 is stored" || no "... and the service_start event of t=0 is stored"
adb=$tmp/autoscale.db
expect_status 0 "run the autoscaled service --db" "$bin" run scenarios/serving-chat-70b-autoscale.xml --db "$adb" -q
expect_status 0 "report it --format csv" "$bin" report "$adb" --format csv --out "$tmp/acsv"
# 2 replicas of 2 GPUs until the first scale-down at 630 s (cooldown 10 min).
awk -F, '$3 == "gpus_serving" && $4 == 0 { found = 1; if ($7 != 4 || $8 != 4) bad = 1 } END { exit !(found && !bad) }' \
  "$tmp/acsv/series.csv" && ok "autoscale: 4 GPUs serve from t=0" \
  || no "autoscale: 4 GPUs serve from t=0: $(grep -m 2 gpus_serving "$tmp/acsv/series.csv")"
awk -F, '$2 == "chat" && $3 == "replicas" && $4 == 0 { found = 1; if ($8 != 2) bad = 1 } END { exit !(found && !bad) }' \
  "$tmp/acsv/series.csv" && ok "autoscale: 2 replicas from t=0" \
  || no "autoscale: 2 replicas from t=0: $(grep -m 2 ',chat,replicas,' "$tmp/acsv/series.csv")"
grep -q '<p class="answer">chat serves 20,000 requests' "$out/index.html" \
  && grep -q 'per million output tokens' "$out/index.html" && ! grep -q 'runs no workload' "$out/index.html" \
  && ok "the serving report's headline is about the service" || no "the serving report's headline is about the service"
grep -q '^# service chat: percentile, TTFT (s), end-to-end latency (s), TPOT (s)' "$out/latency.dat" \
  && ok "the latency data has the TPOT CDF" || no "the latency data has the TPOT CDF"
grep -q '<div class="label">SLO goodput</div>' "$out/index.html" && ok "the SLO goodput card" || no "the SLO goodput card"
# A job's cost is its own; the cluster's is the cluster's (was: the 64-GPU
# job charged the 512-GPU cluster's $536k). Since the H100's memory is the
# driver's 81,559 MiB (docs/serving.md "GPU memory") its micro-batch is 8, not 4:
# 4.2 days and $19.3k, where it was 4.6 days and $21.1k.
expect_status 0 "run the shared cluster --db" "$bin" run scenarios/shared-512.xml --db "$tmp/shared.db" -q
expect_status 0 "report it" "$bin" report "$tmp/shared.db" --out "$tmp/shared"
grep -q '<p class="answer">urgent-finetune finishes in 4.2[0-9]* d at \$19[0-9.]*k on 64 GPUs' "$tmp/shared/index.html" \
  && grep -q "The cluster.s 512 GPUs cost \$5[0-9.]*k from the start of the run to then" "$tmp/shared/index.html" \
  && ok "shared-512: the job's own cost, the cluster's apart" \
  || no "shared-512: the job's own cost, the cluster's apart: $(grep -o '<p class="answer">[^<]*' "$tmp/shared/index.html")"
expect_status 0 "report a serving run --format md" "$bin" report "$sdb" --format md --out "$tmp/smd"
grep -q '^| service | requests | replicas |' "$tmp/smd/report.md" && grep -q '^| chat | ' "$tmp/smd/report.md" \
  && ok "the services table in report.md" || no "the services table in report.md"

# The sweep report: by metric names, with the best point, a heatmap for a
# grid of two parameters and none for one (tests/sweep/toy-batch.xml: more
# nodes finish the 80 jobs sooner; longer jobs cost more).
toy=tests/sweep/toy-batch.xml
expect_status 0 "a sweep of two parameters" "$bin" sweep $toy --vary 'cluster/nodes/@count=2,5' \
  --vary 'workload/jobs/@duration=1h,2h' --replicas 1 --db "$tmp/sw2.db" --quiet
expect_status 0 "its report" "$bin" report "$tmp/sw2.db" --out "$tmp/sw2"
well_formed "$tmp/sw2/index.html" && images_exist "$tmp/sw2" && ok "the sweep report is well-formed with its images" \
  || no "the sweep report is well-formed with its images"
grep -q '<h2 id="m[0-9]*">Cost <code class="path">cluster.cost_usd</code></h2>' "$tmp/sw2/index.html" \
  && grep -q '>GPU utilisation <code class="path">cluster.gpu_utilization</code>' "$tmp/sw2/index.html" \
  && ok "the sweep report is titled by metric names" || no "the sweep report is titled by metric names"
grep -q '<li>Cost is best at nodes/@count=[0-9], jobs/@duration=1h: \$[0-9.,k]* (lower is better), [a-z0-9. %]* the next best point .* and 50.0% below the worst (nodes/@count=5, jobs/@duration=2h' \
  "$tmp/sw2/index.html" && grep -q 'GPU utilisation is best at .* (higher is better)' "$tmp/sw2/index.html" \
  && ok "the best point stated, with its direction" || no "the best point stated, with its direction"
for f in "$tmp"/sw2/hm*.svg; do well_formed "$f" || no "$f is well-formed"; done
grep -q '<img src="hm[0-9]*.svg"' "$tmp/sw2/index.html" && grep -q 'nodes/@count' "$tmp/sw2"/hm1.svg \
  && grep -q '>1h</text>' "$tmp/sw2"/hm1.svg && grep -q '>\$' "$tmp/sw2"/hm1.svg \
  && ok "a heatmap of the two-parameter grid, the values in its cells" || no "a heatmap of the two-parameter grid"
expect_status 0 "its Markdown" "$bin" report "$tmp/sw2.db" --out "$tmp/sw2md" --format md
grep -q '^## Cost (cluster.cost_usd)' "$tmp/sw2md/report.md" && grep -q '^- Cost is best at' "$tmp/sw2md/report.md" \
  && ok "the Markdown sweep report: names and best points" || no "the Markdown sweep report: $(grep -m2 '^## ' "$tmp/sw2md/report.md")"
expect_status 0 "a sweep of one parameter" "$bin" sweep $toy --vary 'cluster/nodes/@count=2,5' --replicas 1 \
  --db "$tmp/sw1.db" --quiet
expect_status 0 "its report" "$bin" report "$tmp/sw1.db" --out "$tmp/sw1"
! ls "$tmp"/sw1/hm*.svg >/dev/null 2>&1 && ! grep -q 'hm[0-9]*.svg' "$tmp/sw1/index.html" \
  && grep -q 'Mean queue wait, queue default is best at nodes/@count=5: 30 min (lower is better), 75.0% below' "$tmp/sw1/index.html" \
  && ok "one parameter: no heatmap, still the best point" || no "one parameter: no heatmap, still the best point"

# --format json: the run's document back from the database, byte for byte
# what run --json wrote. The 10K-GPU year's 100,000 jobs are stored only as
# rows ("jobs": [] in runs.results_json) and rebuilt; ckpt-tier-70b's
# document is kept whole (a job holds a figure the rows would not give back
# as written: reports/store_doc.c).
# stored_jobs DB: what runs.results_json of the latest run holds in jobs[]
# ("empty" or "kept"), read with Python's sqlite3 when it is here.
stored_jobs() {
  python3 -c 'import sys, sqlite3, json
d = json.loads(sqlite3.connect(sys.argv[1]).execute("SELECT results_json FROM runs ORDER BY id DESC").fetchone()[0])
print("kept" if d["jobs"] else "empty")' "$1" 2>/dev/null
}
for sc in trace-10k-year:empty ckpt-tier-70b:kept; do
  name=${sc%%:*} how=${sc#*:}
  expect_status 0 "run $name --db --json" "$bin" run scenarios/$name.xml --db "$tmp/$name.db" --json "$tmp/$name.json" -q
  expect_status 0 "report $name --format json" "$bin" report "$tmp/$name.db" --format json --out "$tmp/${name}-json"
  [ "$(cat "$tmp/out")" = "$tmp/${name}-json/results.json" ] && ok "$name: it names DIR/results.json" \
    || no "$name: it names DIR/results.json: $(cat "$tmp/out")"
  cmp "$tmp/$name.json" "$tmp/${name}-json/results.json" >"$tmp/cmp.txt" 2>&1 \
    && ok "$name: results.json is byte for byte what run --json wrote" || no "$name: results.json differs: $(cat "$tmp/cmp.txt")"
  if command -v python3 >/dev/null 2>&1 && python3 -c 'import sqlite3' 2>/dev/null; then
    got=$(stored_jobs "$tmp/$name.db")
    [ "$got" = "$how" ] && ok "$name: runs.results_json holds jobs[] $how" || no "$name: jobs[] stored $got, want $how"
  else skip "$name: no python3 sqlite3 to read runs.results_json"; fi
done
expect_status 0 "report --format json --run 2 of a database of three runs" "$bin" report "$db" --run 2 --format json --out "$tmp/j2"
"$bin" run scenarios/default.xml --seed 2 --no-db --json "$tmp/default-2.json" -q 2>/dev/null
# wall_s is the wall-clock time of the run: compare everything else
sed 's/"wall_s": [0-9.e+-]*/"wall_s": W/' "$tmp/j2/results.json" >"$tmp/j2.a"
sed 's/"wall_s": [0-9.e+-]*/"wall_s": W/' "$tmp/default-2.json" >"$tmp/j2.b"
grep -q '"wall_s": W' "$tmp/j2.a" && cmp -s "$tmp/j2.a" "$tmp/j2.b" && ok "--run 2 gives run 2's document (default.xml, seed 2)" \
  || no "--run 2 gives run 2's document: $(cmp "$tmp/j2.a" "$tmp/j2.b" 2>&1)"
expect_status 2 "report --format json --run 99 (no such run)" "$bin" report "$db" --run 99 --format json --out "$tmp/j99"
grep -qx "clustertwin report: $db: no run 99 in the database" "$tmp/err" && [ ! -e "$tmp/j99" ] \
  && ok "... names the database and the run, writes nothing" || no "... message: $(cat "$tmp/err")"
expect_status 2 "report --format json --compare" "$bin" report "$db" --run 1 --compare 2 --format json --out "$tmp/jc"
grep -q "not with --compare" "$tmp/err" && ok "... says json is one run" || no "... message: $(cat "$tmp/err")"
expect_status 2 "report --format json --sweep" "$bin" report "$tmp/sw1.db" --sweep 1 --format json --out "$tmp/jc"
grep -q "not with --sweep" "$tmp/err" && ok "... says json is not a sweep's" || no "... message: $(cat "$tmp/err")"
expect_status 2 "report --format json of a database holding a sweep, no --run" "$bin" report "$tmp/sw1.db" --format json --out "$tmp/jc"
grep -q "holds sweep 1, which has no one JSON document: name a run with --run ID" "$tmp/err" && [ ! -e "$tmp/jc" ] \
  && ok "... asks for a run" || no "... message: $(cat "$tmp/err")"
expect_status 0 "report --format json --run 1 of the sweep's database" "$bin" report "$tmp/sw1.db" --run 1 --format json --out "$tmp/jsw"
grep -q '"scenario": "toy-batch"' "$tmp/jsw/results.json" && ok "... a replica's document" \
  || no "... a replica's document: $(head -c 200 "$tmp/jsw/results.json")"

# One reader: SQLite only in the store and the run-data reader, never in a writer.
writers=$(grep -l 'sqlite3' reports/*.c | grep -v '^reports/\(store\|sweepdb\|rundata\)[a-z_]*\.c$')
[ -z "$writers" ] && ok "no report writer calls SQLite" || no "report writers calling SQLite: $writers"

# Bad arguments: exit 2 (usage, not a database, no such run); 1 when DIR cannot be made.
expect_status 2 "report without a database" "$bin" report
expect_status 2 "report a missing database" "$bin" report "$tmp/nope.db" --out "$tmp/x"
expect_status 2 "report a file that is not a database" "$bin" report "$tmp/notes.txt" --out "$tmp/x"
grep -q "notes.txt" "$tmp/err" || no "the message names the file"
expect_status 2 "report --run 0" "$bin" report "$db" --run 0
expect_status 2 "report --run abc" "$bin" report "$db" --run abc
expect_status 2 "report --run 99 (no such run)" "$bin" report "$db" --run 99 --out "$tmp/x"
expect_status 2 "report --compare 99" "$bin" report "$db" --compare 99 --out "$tmp/x"
expect_status 2 "report --format pdf" "$bin" report "$db" --format pdf
expect_status 2 "report --bogus" "$bin" report "$db" --bogus
expect_status 2 "report two databases" "$bin" report "$db" "$db"
expect_status 1 "report --out under a file" "$bin" report "$db" --out "$tmp/notes.txt/sub"
[ ! -e "$tmp/x" ] && ok "bad input writes no report" || no "bad input writes no report"

echo "$((n - fails)) passed, $fails failed"
[ $fails = 0 ]
