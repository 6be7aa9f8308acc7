#!/bin/sh
# cli_rack.sh BINARY: rack-scale NVLink domains end to end. The same dense
# 405B job on DGX H100 nodes and on GB200 NVL72 racks, stored in one
# database and compared in one Markdown report that names both scenarios
# with cost and energy; `topo` names the racks and the 72-GPU NVLink
# domain; the dashboard's detail panel names a node's rack (tmux, waiting
# for the layout, never for a time; skipped without tmux).
suite=rack
. "$(dirname "$0")/clilib.sh"

db=$tmp/d.db
expect_status 0 "run the 405B job on H100 nodes" "$bin" run scenarios/dense-405b-h100.xml --db "$db" --json "$tmp/h.json"
expect_status 0 "run the 405B job on GB200 NVL72 racks" "$bin" run scenarios/dense-405b-gb200-nvl72.xml --db "$db" --json "$tmp/g.json"
expect_status 0 "one report compares both runs" "$bin" report "$db" --run 1 --compare 2 --format md --out "$tmp/cmp"
md=$tmp/cmp/report.md
if grep -q "^A: dense-405b-h100 (seed 1); B: dense-405b-gb200-nvl72 (seed 1)" "$md" &&
   grep -q "^| Cost | \\$" "$md" && grep -q "^| Energy | " "$md"; then
  ok "the comparison names both scenarios with cost and energy"
else
  no "comparison: $(head -c 600 "$md")"
fi
# The rack finishes first: B's time to finish is below A's (the sign of
# the difference, not a figure).
grep -q "^| Time to finish | .* | -" "$md" && ok "GB200 NVL72 finishes sooner than H100" || no "time to finish: $(grep 'Time to finish' "$md")"

expect_status 0 "topo of the NVL72 cluster" "$bin" topo scenarios/dense-405b-gb200-nvl72.xml --out "$tmp/t.dot"
grep -q "29 racks of 18 × gb200-nvl72: NVLink domain of 72 GPUs per rack" "$tmp/t.dot" \
  && ok "topo draws the racks with their 72-GPU NVLink domain" || no "topo racks: $(grep -m2 rack "$tmp/t.dot")"
expect_status 0 "topo of the H100 cluster" "$bin" topo scenarios/dense-405b-h100.xml --out "$tmp/h.dot"
grep -q "racks of up to 4 × dgx-h100: NVLink domain = the node (8 GPUs)" "$tmp/h.dot" \
  && ok "topo draws HGX racks, the domain being the node" || no "topo HGX racks: $(grep -m2 rack "$tmp/h.dot")"

if ! command -v tmux >/dev/null 2>&1; then
  skip "tmux is not installed: the dashboard check did not run"
elif ! tmux_server; then
  skip "tmux server did not start: the dashboard check did not run"
else
  # The dashboard runs until q; its shell writes dash.status when it exits.
  T new-session -d -s dash -x 120 -y 40 \
    "sh -c '\"$bin\" dash scenarios/dense-405b-gb200-nvl72.xml --db \"$tmp/dash.db\" --paused 2>\"$tmp/dash.err\"; echo \$? >\"$tmp/dash.status\"'"
  poll 'T capture-pane -p -t dash >"$tmp/screen" 2>/dev/null && grep -q "node 0, rack 0" "$tmp/screen"' \
       '[ ! -s "$tmp/dash.status" ]'
  grep -q "nodes: 512 .*racks of 18" "$tmp/screen" && grep -q "node 0, rack 0" "$tmp/screen" \
    && ok "the dashboard map names racks of 18 and the node's rack" || { no "dashboard racks"; cat "$tmp/screen"; }
  T send-keys -t dash q
  poll '[ -s "$tmp/dash.status" ]' 'T has-session -t dash 2>/dev/null'
fi
tmux_server_stop

[ $fails = 0 ] && echo "rack: all $n passed" || echo "rack: $fails of $n failed"
[ $fails = 0 ]
