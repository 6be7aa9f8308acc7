#!/bin/sh
# golden.sh BINARY [--update]: results that must not change by accident.
#
# Every shipped scenario (the 10K-GPU year among them) and one sweep give the
# same JSON, byte for byte, as the files in tests/golden/, apart from the
# fields that measure the machine (wall_*). A restructuring must leave them
# as they are; a change of a model that is meant to move a number updates
# them with --update, and the diff shows in review what moved.
set -u
bin=${1:?usage: tests/golden.sh BINARY [--update]}
update=${2:-}
gold=tests/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   golden: $1"; }
no() { echo "FAIL golden: $1"; fails=$((fails + 1)); }

# Each output is held by its SHA-256 in tests/golden/SHA256SUMS; the small
# ones (under 200 kB) are kept whole as well, so that a failure shows the diff.
compare() {   # name file-with-new-output
  grep -v '"wall' "$2" >"$tmp/$1.cut"
  sum=$(sha256sum <"$tmp/$1.cut" | cut -d' ' -f1)
  if [ "$update" = --update ]; then
    grep -v " $1\$" "$gold/SHA256SUMS" 2>/dev/null >"$tmp/sums"; echo "$sum $1" >>"$tmp/sums"
    sort -k2 "$tmp/sums" >"$gold/SHA256SUMS"; rm -f "$gold/$1.json"
    [ "$(wc -c <"$tmp/$1.cut")" -lt 200000 ] && cp "$tmp/$1.cut" "$gold/$1.json"
    ok "$1 updated"; return
  fi
  if grep -qx "$sum $1" "$gold/SHA256SUMS"; then ok "$1 unchanged"
  else
    no "$1 differs from the golden output (tests/golden/SHA256SUMS)"
    [ -f "$gold/$1.json" ] && diff "$gold/$1.json" "$tmp/$1.cut" | head -n 10
  fi
}

for f in scenarios/*.xml; do
  n=$(basename "$f" .xml)
  if "$bin" run "$f" --json "$tmp/$n.out" --no-db >/dev/null 2>"$tmp/err"; then compare "$n" "$tmp/$n.out"
  else no "$n does not run: $(head -c 300 "$tmp/err")"; fi
done

# A sweep: two checkpoint intervals x two replicas, every run's JSON in order.
if "$bin" sweep scenarios/llama3-405b-spares.xml --vary 'workload/training/checkpoint/@interval=1h,2h' \
     --replicas 2 --jobs 1 --db "$tmp/sweep.db" --quiet >/dev/null 2>"$tmp/err"; then
  python3 - "$tmp/sweep.db" >"$tmp/sweep.out" <<'PY'
import json, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
for key, rep, seed, js in con.execute(
        "SELECT r.point_key, r.replica, r.seed, u.results_json FROM sweep_runs r "
        "JOIN runs u ON u.id = r.run_id ORDER BY r.point_key, r.replica"):
    print("== %s replica %d seed %d" % (key, rep, seed))
    def cut(v):   # the wall-clock fields measure the machine, not the model
        if isinstance(v, dict):
            return {k: cut(x) for k, x in v.items() if not k.startswith("wall")}
        return [cut(x) for x in v] if isinstance(v, list) else v
    print(json.dumps(cut(json.loads(js)), indent=1))
PY
  compare sweep "$tmp/sweep.out"
else no "the sweep does not run: $(head -c 300 "$tmp/err")"; fi

[ "$fails" -eq 0 ]
