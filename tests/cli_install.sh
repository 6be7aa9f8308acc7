#!/bin/sh
# `make install` into a temporary root: the man page and the bash completion
# are where man and bash-completion look; then every installed example scenario
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
man="$tmp/root/usr/share/man/man1/clustertwin.1"
compl="$tmp/root/usr/share/bash-completion/completions/clustertwin"
# The manual page and the bash completion, where man and bash-completion
# look for them; the page renders and the completion completes.
if [ -f "$man" ] && cmp -s "$man" docs/clustertwin.1; then
  if command -v man >/dev/null 2>&1; then
    MANPATH="$tmp/root/usr/share/man" MANWIDTH=80 man clustertwin 2>"$tmp/err" | grep -q "clustertwin run" \
      && ok "man page installed: MANPATH=PREFIX/share/man man clustertwin shows it" \
      || no "installed man page does not display: $(head -c 300 "$tmp/err")"
  else
    ok "man page installed in PREFIX/share/man/man1 (no man to display it)"
  fi
else
  no "man page not installed at $man"
fi
if [ -f "$compl" ] && cmp -s "$compl" tools/clustertwin.bash; then
  got=$(bash -c 'source "$1"; COMP_WORDS=("$2" ch); COMP_CWORD=1; _clustertwin; echo "${COMPREPLY[*]}"' sh "$compl" "$bin")
  [ "$got" = check ] && ok "bash completion installed in PREFIX/share/bash-completion/completions and completes" \
    || no "installed completion: 'clustertwin ch' gives '$got'"
else
  no "bash completion not installed at $compl"
fi
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
if make -s --no-print-directory uninstall DESTDIR="$tmp/root" PREFIX=/usr >"$tmp/log" 2>&1 &&
   [ -z "$(find "$tmp/root" -type f)" ]; then ok "make uninstall removes every file"
else no "make uninstall left: $(find "$tmp/root" -type f | head -n 5)"; fi
[ "$fails" -eq 0 ] || { echo "$fails install check(s) failed"; exit 1; }
