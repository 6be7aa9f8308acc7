#!/bin/sh
# cli_dash.sh BINARY: the live dashboard driven in tmux (send-keys,
# capture-pane). It starts at 80x24 and shows the header and the jobs,
# pauses (the simulated clock stops) and resumes, injects a failure that
# then appears in the event log, lays out again at 120x40 and says when the
# terminal is too small, shows its help, and quits with exit 0 and the
# results database and JSON written. A run watched to the end and quit
# gives the same JSON as `run` (but wall_* fields). A tall terminal gives
# the event log the rows the other panels do not need. Without a terminal it
# exits 2 and points to `run`.
# Every wait polls for a state while the process that would bring it lives
# (clilib.sh's poll): no deadline a slow machine could miss, and a dashboard
# that exits early ends the wait at once.
suite=dash
. "$(dirname "$0")/clilib.sh"
trap 'tmux_server_stop; rm -rf "$tmp"' EXIT HUP INT PIPE TERM

# Without a terminal: exit 2, a message naming `run`, nothing written.
"$bin" dash scenarios/default.xml --db "$tmp/none.db" >"$tmp/out" 2>"$tmp/err" </dev/null
st=$?
if [ $st = 2 ] && grep -q "clustertwin run" "$tmp/err" && [ ! -e "$tmp/none.db" ]; then
  ok "no terminal: exit 2, suggests 'run', writes nothing"
else
  no "no terminal (exit $st): $(head -c 300 "$tmp/err")"
fi
"$bin" dash --help >"$tmp/out" 2>&1 && grep -q "usage: clustertwin dash" "$tmp/out" && ok "dash --help" || no "dash --help"
"$bin" dash scenarios/default.xml --speed 3GB >"$tmp/out" 2>&1
[ $? = 2 ] && ok "bad --speed is exit 2" || no "bad --speed is exit 2"

if ! command -v tmux >/dev/null 2>&1; then
  skip "tmux is not installed: the terminal tests did not run"
  [ $fails = 0 ]
  exit
fi
if ! tmux_server; then
  skip "tmux server did not start ($(head -c 200 "$tmp/tmux.log")): the terminal tests did not run"
  [ $fails = 0 ]
  exit
fi

screen() { T capture-pane -p -t dash 2>/dev/null; }
# wait_for PATTERN [SESSION]: poll the screen until grep -E matches, while
# the session (default dash) lives.
wait_for() {
  _pat=$1
  poll 'screen >"$tmp/screen" && grep -Eq "$_pat" "$tmp/screen"' "T has-session -t ${2:-dash} 2>/dev/null"
}
# wait_file FILE [SESSION]: until FILE has been written, while the session lives.
wait_file() { _file=$1; poll '[ -s "$_file" ]' "T has-session -t ${2:-dash} 2>/dev/null"; }
start() {   # start ARGS...: the dashboard in session "dash" at 80x24
  rm -f "$tmp/status"
  T new-session -d -s dash -x 80 -y 24 \
    "sh -c '\"$bin\" dash $* 2>\"$tmp/stderr\"; echo \$? >\"$tmp/status\"'"
}

# A terminal nobody knows: exit 2, nothing written.
T new-session -d -s bad -x 80 -y 24 \
  "sh -c 'TERM=xyz-unknown \"$bin\" dash scenarios/default.xml --db \"$tmp/bad.db\" 2>\"$tmp/bad.err\"; echo \$? >\"$tmp/bad.status\"'"
if wait_file "$tmp/bad.status" bad && [ "$(cat "$tmp/bad.status")" = 2 ] && [ ! -e "$tmp/bad.db" ] &&
   grep -q "TERM=xyz-unknown.*clustertwin run" "$tmp/bad.err"; then
  ok "unknown TERM: exit 2, nothing written"
else
  no "unknown TERM ($(cat "$tmp/bad.status" 2>/dev/null)): $(head -c 300 "$tmp/bad.err" 2>/dev/null)"
fi

start "scenarios/default.xml --db \"$tmp/d.db\" --json \"$tmp/d.json\" --speed 30min"
wait_for "^ default .*running" && ok "starts: header names the scenario, running" || { no "header"; cat "$tmp/screen"; }
wait_for "NAME +QUEUE +GPUS +STAT" && grep -q "pretrain-70b .* running" "$tmp/screen" \
  && ok "jobs table shows the training job running" || { no "jobs table"; cat "$tmp/screen"; }

clock() { screen | sed -n 's/^ default | \(d[0-9]* [0-9:]*\).*/\1/p'; }
poll '[ "$(clock)" != "d0 00:00:00" ]' 'T has-session -t dash 2>/dev/null'
T send-keys -t dash ' '
wait_for "\| paused \|" && ok "space pauses" || { no "space pauses"; cat "$tmp/screen"; }
c1=$(clock); sleep 0.5; c2=$(clock)
[ -n "$c1" ] && [ "$c1" = "$c2" ] && ok "the clock stands still while paused ($c1)" || no "clock moved while paused ($c1, $c2)"
T send-keys -t dash '.'
wait_for "one event: now" && ok "'.' steps one event when paused" || { no "'.' steps"; cat "$tmp/screen"; }
T send-keys -t dash ' '
wait_for "\| running \|" && ok "space resumes" || { no "space resumes"; cat "$tmp/screen"; }
c3=$(clock)
poll '[ "$(clock)" != "$c3" ]' 'T has-session -t dash 2>/dev/null'
[ "$(clock)" != "$c3" ] && ok "the clock moves again" || no "clock stuck after resume ($c3)"

T send-keys -t dash f
wait_for "failure node 0: injected \(node\)" && ok "f: the injected failure appears in the event log" \
  || { no "injected failure in the log"; cat "$tmp/screen"; }
wait_for "job_down pretrain-70b" && ok "the job on the node goes down and rolls back" || { no "job_down after injection"; cat "$tmp/screen"; }

T send-keys -t dash '?'
wait_for "any key closes this help" && ok "? shows the help" || { no "help"; cat "$tmp/screen"; }
# Each line of the help once, two columns into its box (the box was once
# filled with the text and the text written again beside it:
# "clclustertwin", "spspace").
grep -q "  clustertwin dash: keys" "$tmp/screen" && grep -q "  space     pause / resume" "$tmp/screen" \
  && ! grep -q "clclustertwin\|spspace" "$tmp/screen" && ok "the help's text is written once, legibly" \
  || { no "help text garbled"; cat "$tmp/screen"; }
T send-keys -t dash x
wait_for "NAME +QUEUE" && ! grep -q "any key closes" "$tmp/screen" && ok "a key closes the help" || no "help closes"

T resize-window -t dash -x 60 -y 20
wait_for "terminal too small: 60x20" && [ "$(screen | grep -c .)" = 1 ] && ok "too small: one line" \
  || { no "too small message"; cat "$tmp/screen"; }
T resize-window -t dash -x 120 -y 40
# The jobs table beside the map is the wide layout's mark; wait for the
# whole wide frame, not for its first line: on a busy machine a capture can
# fall between SIGWINCH and the redraw (still the narrow layout) or in the
# middle of the redraw (the header row drawn, the rows below not yet).
wide_frame() {
  screen >"$tmp/screen" || return 1
  lines=$(wc -l <"$tmp/screen"); wide=$(awk 'length > 100' "$tmp/screen" | wc -l)
  [ "$lines" -ge 38 ] && [ "$wide" -gt 5 ] && grep -q "nodes: 128 .*NAME" "$tmp/screen"
}
# wide layout: the jobs table sits right of the map on the same rows
if poll wide_frame 'T has-session -t dash 2>/dev/null'; then
  ok "resized to 120x40: wide layout"
else
  no "resize to 120x40 ($lines lines, $wide wide)"; cat "$tmp/screen"
fi

T send-keys -t dash q
if wait_file "$tmp/status"; then
  [ "$(cat "$tmp/status")" = 0 ] && ok "q quits with exit 0" || no "q exit status $(cat "$tmp/status"): $(head -c 300 "$tmp/stderr")"
else
  no "q did not quit"
fi
python3 - "$tmp/d.db" "$tmp/d.json" <<'PY' && ok "q wrote the database and the JSON, failure included" || no "database/JSON after q"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
runs = db.execute("select id, status, scenario from runs").fetchall()
assert len(runs) == 1 and runs[0][1] == "complete" and runs[0][2] == "default", runs
kinds = db.execute("select component, cause, count from failure_kinds").fetchall()
assert ("node", "injected", 1) in kinds, kinds
ev = db.execute("select count(*) from events where kind = 'failure' and detail like '%injected%'").fetchone()[0]
assert ev == 1, ev
d = json.load(open(sys.argv[2]))
assert d["scenario"] == "default" and d["failures"]["total"] == 1, d["failures"]
t = [j for j in d["jobs"] if j["name"] == "pretrain-70b"][0]
assert t["interruptions"] == 1 and t["state"] == "running", t
PY

# Watched to the end, then quit: the same results as `run`.
T kill-session -t dash 2>/dev/null
start "scenarios/default.xml --no-db --json \"$tmp/e.json\" --speed 100d"
wait_for "\| done \|" && ok "a fast run reaches done" || { no "done"; cat "$tmp/screen"; }
T send-keys -t dash q
wait_file "$tmp/status" && [ "$(cat "$tmp/status")" = 0 ] || no "quit after done"
"$bin" run scenarios/default.xml --no-db --json "$tmp/r.json" >/dev/null 2>&1
grep -v '"wall' "$tmp/e.json" >"$tmp/e2" 2>/dev/null; grep -v '"wall' "$tmp/r.json" >"$tmp/r2"
[ -s "$tmp/e2" ] && cmp -s "$tmp/e2" "$tmp/r2" && ok "dash to the end gives the JSON of run" || no "dash JSON differs from run"

# A tall terminal and a run with one job: the rows the jobs table and the
# sparklines do not need go to the event log, which starts high on the
# screen and reaches its bottom row (above the status line).
T kill-session -t dash 2>/dev/null
rm -f "$tmp/status"
T new-session -d -s dash -x 100 -y 60 \
  "sh -c '\"$bin\" dash scenarios/finetune-7b-8gpu.xml --no-db --paused 2>\"$tmp/stderr\"; echo \$? >\"$tmp/status\"'"
if wait_for "events \("; then
  at=$(grep -n "events (" "$tmp/screen" | head -n 1 | cut -d: -f1)
  [ -n "$at" ] && [ "$at" -le 20 ] && ok "60 rows, one job: the event log starts at row $at and takes the rest" \
    || { no "event log title at row $at of 60"; cat "$tmp/screen"; }
else
  no "tall terminal: no event log"; cat "$tmp/screen"
fi
T send-keys -t dash q
wait_file "$tmp/status" && [ "$(cat "$tmp/status")" = 0 ] || no "quit from the tall terminal"

echo "$n checks, $fails failed"
[ $fails = 0 ]
