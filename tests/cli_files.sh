#!/bin/sh
# cli_files.sh BINARY: outputs never replace what is not ours, and every
# string that reaches an output is valid (issue 16).
#
#   every writer (--json, --db, report --out (html, md, json), topo --out, sweep --db,
#   --emit-slurm, plan --json, calibrate --out, merge OUT): a symlink is
#   followed and stays a link; a FIFO without a reader exits 1 at once and
#   stays a FIFO; as root, a character device made here with mknod (1,3 =
#   null, 1,7 = full) stays a device: null works, full exits 1 with a
#   message and leaves no temporary file; --db and merge refuse a device
#   (exit 2, "not a regular file")
#   --json to a FIFO with a reader delivers the JSON through it
#   stdout: the run summary, check and report to a full device exit 1
#   names that are not UTF-8 give valid JSON and well-formed XHTML; <script>
#   and =formulas are escaped in Markdown and CSV
#   --emit-slurm into a directory named $(touch ...) runs nothing
#   a corrupt database is refused (exit 2) and left byte for byte as it was
# No test touches the real /dev: links, FIFOs and devices are made in $tmp.
# No check depends on timing: a FIFO's reader is held open by this shell
# before the writer starts; a writer with no reader must fail, not wait
# (a 60 s `timeout`, when there is one, only stops a hang from blocking
# the suite; it is never a threshold).
# Prints ok/FAIL/skip per check and a summary; exits 1 on any failure.
suite=files
. "$(dirname "$0")/clilib.sh"
[ -x "$bin" ] || { echo "$0: $bin is not an executable" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "$0: needs python3" >&2; exit 2; }
limit=
if command -v timeout >/dev/null 2>&1; then limit="timeout 60"; fi
small=scenarios/finetune-7b-8gpu.xml
toy=tests/sweep/toy-batch.xml
root=$(pwd)
root_user=0
[ "$(id -u)" = 0 ] && root_user=1

# kind PATH: what is there (link, fifo, char, file, none)
kind() {
  if [ -L "$1" ]; then echo link
  elif [ -p "$1" ]; then echo fifo
  elif [ -c "$1" ]; then echo char
  elif [ -f "$1" ]; then echo file
  else echo none; fi
}
# no_tmp DIR: no temporary file (*.tmp.*) left in DIR
no_tmp() { ! ls "$1" | grep -q '\.tmp\.'; }
# drain FD FILE: what is waiting in the FIFO open on FD, without blocking
drain() {
  python3 -c '
import os, sys
fd = int(sys.argv[1]); os.set_blocking(fd, False); d = b""
while True:
    try:
        c = os.read(fd, 65536)
    except BlockingIOError:
        break
    if not c:
        break
    d += c
open(sys.argv[2], "wb").write(d)' "$@"
}

# ---- every writer, by the rule --------------------------------------------
# writer NAME EXT CMD...: CMD with @OUT@ replaced by the output path.
writer() {
  name=$1; ext=$2; shift 2
  d=$tmp/w-$name
  mkdir -p "$d"
  # a symlink is followed; the link survives
  echo old >"$d/real$ext"
  ln -s "real$ext" "$d/link$ext"
  run_with "$d/link$ext" "$@"; st=$?
  [ $st = 0 ] && [ "$(kind "$d/link$ext")" = link ] && ! grep -qx old "$d/real$ext" && [ -s "$d/real$ext" ] \
    && ok "$name: a symlink is followed and stays a link" \
    || no "$name: symlink (exit $st, link is $(kind "$d/link$ext")): $(head -c 300 "$tmp/err")"
  # a dangling symlink creates its target
  ln -s "new$ext" "$d/dangling$ext"
  run_with "$d/dangling$ext" "$@"; st=$?
  [ $st = 0 ] && [ "$(kind "$d/dangling$ext")" = link ] && [ -s "$d/new$ext" ] \
    && ok "$name: a dangling symlink creates its target" || no "$name: dangling symlink (exit $st): $(head -c 300 "$tmp/err")"
  # a FIFO without a reader: exit 1, no hang, still a FIFO
  mkfifo "$d/fifo$ext"
  run_with "$d/fifo$ext" "$@"; st=$?
  [ $st = 1 ] && [ "$(kind "$d/fifo$ext")" = fifo ] && grep -q 'no reader' "$tmp/err" && no_tmp "$d" \
    && ok "$name: a FIFO without a reader: exit 1, still a FIFO" \
    || no "$name: FIFO without a reader (exit $st, now $(kind "$d/fifo$ext")): $(head -c 300 "$tmp/err")"
  if [ $root_user = 1 ]; then
    mknod "$d/null$ext" c 1 3 && mknod "$d/full$ext" c 1 7 || { no "$name: mknod"; return; }
    run_with "$d/null$ext" "$@"; st=$?
    [ $st = 0 ] && [ "$(kind "$d/null$ext")" = char ] && no_tmp "$d" \
      && ok "$name: a null device is written in place and stays a device" \
      || no "$name: null device (exit $st, now $(kind "$d/null$ext")): $(head -c 300 "$tmp/err")"
    run_with "$d/full$ext" "$@"; st=$?
    [ $st = 1 ] && [ "$(kind "$d/full$ext")" = char ] && no_tmp "$d" && grep -q "full$ext" "$tmp/err" \
      && ok "$name: a full device: exit 1, a message naming it, no temporary file" \
      || no "$name: full device (exit $st, now $(kind "$d/full$ext")): $(head -c 300 "$tmp/err")"
  fi
}
run_with() {   # OUT CMD...: run CMD with @OUT@ replaced
  out=$1; shift
  set -- "$@" _end_
  while [ "$1" != _end_ ]; do
    a=$1; shift
    case $a in *@OUT@*) a=$(printf '%s' "$a" | sed "s|@OUT@|$out|") ;; esac
    set -- "$@" "$a"
  done
  shift
  $limit "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
}

writer json .json "$bin" run $small --no-db -q --json @OUT@
writer topo .svg "$bin" topo $small --out @OUT@
writer plan-json .json "$bin" plan $toy --goal "simulated_s <= 2.1h @ p90" --vary 'cluster/nodes/@count=1..40' \
  --replicas 2 --db "$tmp/plan.db" --json @OUT@
expect_status 0 "measure --backend cpu --quick (for calibrate)" "$bin" measure --backend cpu --quick --db "$tmp/m.db" \
  --dir "$tmp/mck" --quiet
writer calibrate .xml "$bin" calibrate --db "$tmp/m.db" --out @OUT@ --quiet

# Databases: a symlink is followed; a device or FIFO is refused, untouched.
dbwriter() {   # NAME CMD... (@OUT@ = the database)
  name=$1; shift
  d=$tmp/d-$name
  mkdir -p "$d"
  ln -s real.db "$d/link.db"
  run_with "$d/link.db" "$@"; st=$?
  [ $st = 0 ] && [ "$(kind "$d/link.db")" = link ] && [ -s "$d/real.db" ] \
    && ok "$name: a symlinked database is followed and stays a link" \
    || no "$name: symlinked database (exit $st, link is $(kind "$d/link.db")): $(head -c 300 "$tmp/err")"
  mkfifo "$d/fifo.db"
  run_with "$d/fifo.db" "$@"; st=$?
  [ $st = 2 ] && [ "$(kind "$d/fifo.db")" = fifo ] && grep -q 'not a regular file' "$tmp/err" \
    && ok "$name: a FIFO as the database: exit 2, untouched" \
    || no "$name: FIFO database (exit $st, now $(kind "$d/fifo.db")): $(head -c 300 "$tmp/err")"
  if [ $root_user = 1 ]; then
    mknod "$d/null.db" c 1 3
    run_with "$d/null.db" "$@"; st=$?
    [ $st = 2 ] && [ "$(kind "$d/null.db")" = char ] && grep -q 'not a regular file' "$tmp/err" \
      && ok "$name: a device as the database: exit 2, still a device" \
      || no "$name: device database (exit $st, now $(kind "$d/null.db")): $(head -c 300 "$tmp/err")"
  fi
}
dbwriter run-db "$bin" run $small -q --db @OUT@
dbwriter sweep-db "$bin" sweep $toy --vary 'cluster/nodes/@count=4,5' --replicas 1 --quiet --db @OUT@
"$bin" run $small -q --db "$tmp/one.db" >/dev/null 2>&1
dbwriter merge "$bin" merge @OUT@ "$tmp/one.db"

# report --out DIR where DIR/index.html (and report.md) are symlinks
mkdir "$tmp/rep"
echo old >"$tmp/index-real.html"
ln -s "$tmp/index-real.html" "$tmp/rep/index.html"
expect_status 0 "report into a directory whose index.html is a symlink" "$bin" report "$tmp/one.db" --out "$tmp/rep"
[ "$(kind "$tmp/rep/index.html")" = link ] && grep -q '<html' "$tmp/index-real.html" \
  && ok "report: index.html written through the link, which stays a link" || no "report: symlinked index.html is $(kind "$tmp/rep/index.html")"
mkfifo "$tmp/rep/report.md"
expect_status 1 "report --format md into a FIFO without a reader: exit 1" $limit "$bin" report "$tmp/one.db" --out "$tmp/rep" --format md
[ "$(kind "$tmp/rep/report.md")" = fifo ] && ok "report: the FIFO stays a FIFO" || no "report: report.md is $(kind "$tmp/rep/report.md")"

# report --format json: results.json through a symlink, which stays a link; a FIFO in its place
echo old >"$tmp/results-real.json"
ln -s "$tmp/results-real.json" "$tmp/rep/results.json"
expect_status 0 "report --format json into a directory whose results.json is a symlink" "$bin" report "$tmp/one.db" --out "$tmp/rep" --format json
[ "$(kind "$tmp/rep/results.json")" = link ] && grep -q '"scenario": "finetune-7b-8gpu"' "$tmp/results-real.json" \
  && ok "report: results.json written through the link, which stays a link" || no "report: symlinked results.json is $(kind "$tmp/rep/results.json")"
mkdir "$tmp/repj"
mkfifo "$tmp/repj/results.json"
expect_status 1 "report --format json into a FIFO without a reader: exit 1" $limit "$bin" report "$tmp/one.db" --out "$tmp/repj" --format json
[ "$(kind "$tmp/repj/results.json")" = fifo ] && ok "report: the FIFO results.json stays a FIFO" || no "report: results.json is $(kind "$tmp/repj/results.json")"

# a FIFO in place of a chart gnuplot would draw: the report is written
# without charts, no wait (gnuplot would block opening it)
mkdir "$tmp/rep3"
mkfifo "$tmp/rep3/steps.svg" "$tmp/rep3/charts.log"
expect_status 0 "report into a directory where a chart's file is a FIFO" $limit "$bin" report "$tmp/one.db" --out "$tmp/rep3"
grep -q 'steps.svg is not a regular file' "$tmp/rep3/index.html" && [ "$(kind "$tmp/rep3/steps.svg")" = fifo ] \
  && ok "report: the charts are left out and say why; the FIFO stays" || no "report with a FIFO chart: $(grep -o 'charts not drawn[^<]*' "$tmp/rep3/index.html")"

# --emit-slurm: its three files through a symlink
mkdir "$tmp/sl"
ln -s "$tmp/sbatch-real" "$tmp/sl/sweep.sbatch"
expect_status 0 "--emit-slurm into a directory with a symlinked sweep.sbatch" "$bin" sweep $toy \
  --vary 'cluster/nodes/@count=4,5' --replicas 1 --emit-slurm "$tmp/sl" --tasks 2 --db "$tmp/sl.db"
[ "$(kind "$tmp/sl/sweep.sbatch")" = link ] && grep -q '^#SBATCH --array=0-1$' "$tmp/sbatch-real" \
  && ok "--emit-slurm: sweep.sbatch written through the link" || no "--emit-slurm: sweep.sbatch is $(kind "$tmp/sl/sweep.sbatch")"

# --json to a FIFO with a reader: this shell holds the read end open first
# (read-write, so the open does not wait), the run writes, then we drain it.
mkfifo "$tmp/pipe"
exec 3<>"$tmp/pipe"
expect_status 0 "--json into a FIFO with a reader" $limit "$bin" run $small --no-db -q --json "$tmp/pipe"
drain 3 "$tmp/pipe.out"
exec 3<&-
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/pipe.out" 2>/dev/null && [ "$(kind "$tmp/pipe")" = fifo ] \
  && ok "the JSON came through the FIFO, which is still a FIFO" || no "JSON through a FIFO: $(head -c 200 "$tmp/pipe.out")"

# --json to the process's own descriptors, as /proc/self/fd/N names them
# (what /dev/stdout leads to; the real /dev is not used): a pipe, a file
# opened for appending, another descriptor that is a pipe.
"$bin" run $small --no-db -q --json /proc/self/fd/1 2>"$tmp/err" | python3 -c 'import json, sys; json.load(sys.stdin)' 2>/dev/null \
  && ok "--json /proc/self/fd/1 into a pipe" || no "--json /proc/self/fd/1 into a pipe: $(head -c 300 "$tmp/err")"
echo first >"$tmp/app"
"$bin" run $small --no-db -q --json /proc/self/fd/1 >>"$tmp/app" 2>"$tmp/err"
[ "$(head -n 1 "$tmp/app")" = first ] && [ "$(sed -n 2p "$tmp/app")" = "{" ] \
  && ok "--json /proc/self/fd/1 appends where stdout appends" || no "--json /proc/self/fd/1 >>: $(head -c 300 "$tmp/err")"
( "$bin" run $small --no-db -q --json /proc/self/fd/5 5>&1 2>"$tmp/err" | python3 -c 'import json, sys; json.load(sys.stdin)' ) 2>/dev/null \
  && ok "--json /proc/self/fd/5 that is a pipe" || no "--json /proc/self/fd/5 pipe: $(head -c 300 "$tmp/err")"

# ---- stdout that cannot be written ----------------------------------------
if [ $root_user = 1 ]; then
  mknod "$tmp/full" c 1 7
  "$bin" run $small --no-db >"$tmp/full" 2>"$tmp/err"; st=$?
  [ $st = 1 ] && grep -q 'stdout' "$tmp/err" && ok "the run summary to a full device: exit 1, a message" || no "run summary to full (exit $st)"
  "$bin" check $small >"$tmp/full" 2>"$tmp/err"; st=$?
  [ $st = 1 ] && grep -q 'stdout' "$tmp/err" && ok "check to a full device: exit 1" || no "check to full (exit $st)"
  "$bin" report "$tmp/one.db" --out "$tmp/rep2" >"$tmp/full" 2>"$tmp/err"; st=$?
  [ $st = 1 ] && grep -q 'stdout' "$tmp/err" && ok "report to a full device: exit 1" || no "report to full (exit $st)"
  "$bin" report "$tmp/one.db" --list >"$tmp/full" 2>"$tmp/err"; st=$?
  [ $st = 1 ] && ok "report --list to a full device: exit 1" || no "report --list to full (exit $st)"
  "$bin" run $small --no-db -q --json - >"$tmp/full" 2>"$tmp/err"; st=$?
  [ $st = 1 ] && ok "--json - to a full device: exit 1" || no "--json - to full (exit $st)"
  [ "$(kind "$tmp/full")" = char ] && ok "the full device is still a device" || no "the full device became $(kind "$tmp/full")"
else
  skip "devices (mknod null, full): not root"
fi

# A pipe whose reader has gone (closed before the program starts: no race):
# exit 1 with a message, not death by SIGPIPE, for stdout and for --json.
closed_pipe() {   # CMD...: prints the exit status (negative: killed by that signal)
  python3 -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)
sys.stderr.buffer.write(p.stderr)
print(p.returncode)' "$@"
}
st=$(closed_pipe "$bin" run $small --no-db 2>"$tmp/err")
[ "$st" = 1 ] && grep -q 'stdout: write error' "$tmp/err" && ok "the summary into a pipe with no reader: exit 1, a message" \
  || no "summary into a closed pipe: status $st: $(head -c 200 "$tmp/err")"
st=$(closed_pipe "$bin" check $small 2>"$tmp/err")
[ "$st" = 1 ] && ok "check into a pipe with no reader: exit 1" || no "check into a closed pipe: status $st"
st=$(closed_pipe "$bin" run $small --no-db -q --json - 2>"$tmp/err")
[ "$st" = 1 ] && ok "--json - into a pipe with no reader: exit 1" || no "--json - into a closed pipe: status $st"

# ---- names that are not UTF-8, HTML and formulas ---------------------------
# A job trace with four training jobs named: bytes FF FE, an overlong '/',
# <script>, a spreadsheet formula (training jobs are listed by name in every
# report format).
printf 'submit,queue,priority,gpus,duration,tokens,model,name\n' >"$tmp/jobs.csv"
printf '0,research,0,2,,100M,llama3-8b,bad\377\376name\n' >>"$tmp/jobs.csv"
printf '0,research,0,2,,100M,llama3-8b,over\300\257long\n' >>"$tmp/jobs.csv"
printf '0,research,0,2,,100M,llama3-8b,<script>alert(1)</script>\n' >>"$tmp/jobs.csv"
printf "0,research,0,2,,100M,llama3-8b,=cmd|' /C calc'!A0\n" >>"$tmp/jobs.csv"
cat >"$tmp/names.xml" <<XML
<?xml version="1.0"?>
<scenario name="names" seed="1" duration="1h">
  <cluster><nodes type="dgx-h100" count="1"/></cluster>
  <scheduler><queue name="research" quota-gpus="8"/></scheduler>
  <workload><trace href="$tmp/jobs.csv"/></workload>
</scenario>
XML
"$bin" run "$tmp/names.xml" -q --json "$tmp/names.json" --db "$tmp/names.db" >"$tmp/out" 2>"$tmp/err"; st=$?
if [ $st = 2 ]; then
  # the loader refuses names that are not UTF-8 (another part of issue 16):
  # the output side is then tested with the valid-but-hostile names alone
  skip "the loader refuses non-UTF-8 names ($(head -c 120 "$tmp/err")); output tested with the others"
  sed -i '2,3d' "$tmp/jobs.csv"
  "$bin" run "$tmp/names.xml" -q --json "$tmp/names.json" --db "$tmp/names.db" >"$tmp/out" 2>"$tmp/err"; st=$?
fi
[ $st = 0 ] && ok "a run of jobs with hostile names" || no "names run (exit $st): $(head -c 300 "$tmp/err")"
python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$tmp/names.json" 2>"$tmp/py" \
  && ok "the JSON is valid UTF-8 JSON" || no "names JSON: $(tail -1 "$tmp/py")"
expect_status 0 "report of the hostile names" "$bin" report "$tmp/names.db" --out "$tmp/nrep"
if command -v xmllint >/dev/null 2>&1; then xmllint --noout --nonet "$tmp/nrep/index.html" 2>"$tmp/xml"
else python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$tmp/nrep/index.html" 2>"$tmp/xml"; fi \
  && ok "the HTML report is well-formed" || no "names HTML: $(head -c 300 "$tmp/xml")"
grep -q '<script>' "$tmp/nrep/index.html" && no "HTML carries <script>" || ok "HTML: no raw <script>"
svgbad=
for svg in "$tmp/nrep"/*.svg; do
  [ -f "$svg" ] || continue
  python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$svg" 2>/dev/null || svgbad="$svgbad $(basename "$svg")"
done
if ls "$tmp/nrep"/*.svg >/dev/null 2>&1; then
  [ -z "$svgbad" ] && ok "every chart SVG is well-formed" || no "charts not well-formed:$svgbad"
else
  skip "no charts drawn (no gnuplot here)"
fi
expect_status 0 "report --format md" "$bin" report "$tmp/names.db" --out "$tmp/nmd" --format md
grep -q '<script' "$tmp/nmd/report.md" && no "Markdown carries raw <script>: $(grep -m1 script "$tmp/nmd/report.md")" \
  || ok "Markdown: <script> escaped"
grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$tmp/nmd/report.md" && ok "Markdown: the name is still there, escaped" \
  || no "Markdown: escaped name missing"
grep -q "=cmd\\\\|" "$tmp/nmd/report.md" && ok "Markdown: the | inside a name does not split the cell" \
  || no "Markdown: | in a name: $(grep -m1 cmd "$tmp/nmd/report.md")"
python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$tmp/nmd/report.md" 2>/dev/null \
  && ok "Markdown is valid UTF-8" || no "Markdown is not UTF-8"
expect_status 0 "report --format csv" "$bin" report "$tmp/names.db" --out "$tmp/ncsv" --format csv
python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$tmp/ncsv/jobs.csv" 2>/dev/null \
  && ok "CSV is valid UTF-8" || no "CSV is not UTF-8"
python3 - "$tmp/ncsv/jobs.csv" <<'PY' 2>"$tmp/py" && ok "CSV: a name that is a formula starts with ', numbers stay numbers" || no "CSV: $(tail -1 "$tmp/py")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8", errors="replace", newline="")))
names = [r["name"] for r in rows]
assert "'=cmd|' /C calc'!A0" in names, names
for r in rows:
    for k, v in r.items():
        assert not (v[:1] in "=+@\t\r" and v), (k, v)       # no cell a spreadsheet would run
        if v[:1] == "-":
            float(v)                                       # a leading - only on a number
PY

# ---- --emit-slurm into a directory whose name is a command -----------------
# (no / in a directory's name: the command touches pwned in the directory
# the scripts run from, $tmp)
sdir="$tmp/x\$(touch pwned)y"
cp $toy "$tmp/it's toy.xml"
expect_status 0 "--emit-slurm into a directory named \$(touch ...)" "$bin" sweep "$tmp/it's toy.xml" \
  --vary 'cluster/nodes/@count=4,5' --set 'cluster/nodes/@type=dgx-h100' --replicas 1 --emit-slurm "$sdir" \
  --tasks 2 --db "$tmp/q'uote.db"
[ -d "$sdir" ] && ok "the directory exists under its literal name" || no "--emit-slurm: no directory '$sdir'"
for s in sweep.sbatch merge.sh; do
  if [ "$s" = sweep.sbatch ]; then bash -n "$sdir/$s"; else sh -n "$sdir/$s"; fi \
    && ok "$s parses" || no "$s: syntax"
done
# the merge script's command, its exec replaced by a stub that prints its arguments
sed 's/^exec /printf "%s\\n" /' "$sdir/merge.sh" >"$tmp/merge-stub.sh"
(cd "$tmp" && sh "$tmp/merge-stub.sh") >"$tmp/margs" 2>&1
# the array script with no such task: reaches the "no task" message
(cd "$tmp" && SLURM_ARRAY_TASK_ID=99 bash "$sdir/sweep.sbatch") >/dev/null 2>"$tmp/serr"
[ ! -e "$tmp/pwned" ] && ok "nothing in the generated scripts ran the directory's name" || no "the directory's \$(...) ran"
grep -qxF "$tmp/q'uote.db" "$tmp/margs" && grep -qF "$sdir/task-" "$tmp/margs" \
  && ok "merge.sh names the real database and directory" || no "merge.sh arguments: $(cat "$tmp/margs")"
grep -qF "no task 99 in $sdir/tasks.txt" "$tmp/serr" && ok "sweep.sbatch names the real tasks.txt" \
  || no "sweep.sbatch message: $(cat "$tmp/serr")"
# task 0 for real: its line runs the sweep share into the real directory
(cd "$tmp" && SLURM_ARRAY_TASK_ID=0 bash "$sdir/sweep.sbatch") >/dev/null 2>"$tmp/serr" && [ -s "$sdir/task-0.db" ] && [ ! -e "$tmp/pwned" ] \
  && ok "task 0 of the array runs its line (a scenario path with a quote)" || no "task 0: $(head -c 300 "$tmp/serr")"
nl=$(printf 'a\nb')
expect_status 2 "--emit-slurm into a directory with a line break: exit 2" "$bin" sweep $toy \
  --vary 'cluster/nodes/@count=4,5' --replicas 1 --emit-slurm "$tmp/$nl" --db "$tmp/nl.db"
[ -e "$tmp/$nl" ] && no "a refused --emit-slurm made its directory" || ok "nothing made for a refused --emit-slurm"

# ---- a corrupt database ----------------------------------------------------
"$bin" run $small -q --db "$tmp/c.db" >/dev/null 2>&1
"$bin" run $small -q --db "$tmp/c.db" --seed 2 >/dev/null 2>&1
pages=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA page_count").fetchone()[0])' "$tmp/c.db")
psize=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA page_size").fetchone()[0])' "$tmp/c.db")
# the header (page 1) intact; the middle of the file's pages overwritten
mid=$((pages / 2))
head -c "$psize" /dev/zero | tr '\0' '\252' | dd of="$tmp/c.db" bs="$psize" seek="$mid" conv=notrunc 2>/dev/null
sum=$(cksum <"$tmp/c.db")
expect_status 2 "run --db into a corrupt database: exit 2" "$bin" run $small -q --db "$tmp/c.db"
grep -q 'c.db: the database is corrupt (quick_check' "$tmp/err" && ok "the message names the file and quick_check" \
  || no "corrupt message: $(head -c 300 "$tmp/err")"
[ "$(cksum <"$tmp/c.db")" = "$sum" ] && ok "the corrupt database is left byte for byte" || no "the corrupt database was written"
expect_status 2 "report of a corrupt database: exit 2" "$bin" report "$tmp/c.db" --out "$tmp/crep"
[ "$(cksum <"$tmp/c.db")" = "$sum" ] && ok "report leaves it as it was" || no "report changed the corrupt database"
expect_status 2 "merge of a corrupt database: exit 2" "$bin" merge "$tmp/cm.db" "$tmp/c.db"
[ ! -e "$tmp/cm.db" ] && ok "a refused merge makes no OUT" || no "a refused merge made OUT"

echo "$((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
