#!/bin/sh
# `make install` into a temporary root, then every installed example scenario
# checks from another working directory: whatever an example references (a
# job trace, a request trace) is installed, and relative paths resolve
# against the scenario's folder, not the caller's.
# Usage: tests/cli_install.sh   (from the project root; exits 1 on failure)
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   install: $1"; }
no() { echo "FAIL install: $1"; fails=$((fails + 1)); }

if make -s --no-print-directory install DESTDIR="$tmp/root" PREFIX=/usr >"$tmp/log" 2>&1; then
  ok "make install DESTDIR=... PREFIX=/usr"
else
  no "make install: $(tail -n 5 "$tmp/log")"
  exit 1
fi
bin="$tmp/root/usr/bin/clustertwin"
share="$tmp/root/usr/share/clustertwin/scenarios"
n=0
for f in "$share"/*.xml; do
  n=$((n + 1))
  if (cd "$tmp" && "$bin" check "$f" >"$tmp/out" 2>"$tmp/err"); then ok "installed $(basename "$f") checks"
  else no "installed $(basename "$f"): $(head -c 300 "$tmp/err")"; fi
done
[ "$n" -eq "$(ls scenarios/*.xml | wc -l)" ] && ok "every example is installed" || no "$n of $(ls scenarios/*.xml | wc -l) examples installed"
# A relative href is resolved against the scenario's folder whatever the
# working directory, here a scenario two folders away.
mkdir -p "$tmp/a/b" "$tmp/a/b/traces" "$tmp/cwd"
printf 'submit,queue,gpus,duration\n0,research,8,1h\n' >"$tmp/a/b/traces/t.csv"
cat >"$tmp/a/b/s.xml" <<'XML'
<scenario name="rel" seed="1">
  <cluster><nodes type="dgx-h100" count="2"/></cluster>
  <scheduler><queue name="research"/></scheduler>
  <workload><trace href="traces/t.csv"/></workload>
</scenario>
XML
if (cd "$tmp/cwd" && "$bin" run ../a/b/s.xml --no-db >"$tmp/out" 2>"$tmp/err"); then ok "a relative href resolves against the scenario's folder"
else no "relative href from another folder: $(head -c 300 "$tmp/err")"; fi
[ "$fails" -eq 0 ] || { echo "$fails install check(s) failed"; exit 1; }
