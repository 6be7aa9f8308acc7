#!/bin/sh
# cli_progress.sh BINARY: the progress line of a long `run` and the answers
# to a mistyped command or option (docs/cli.md).
#
#   on a terminal (script(1) gives one), past the threshold: one line
#     "simulated T of H (P%), N events, W" rewritten with \r and cleared
#     at the end; CT_PROGRESS_AFTER_S=0 sets the threshold so that no
#     check depends on the machine's speed
#   --quiet: no line; stderr not a terminal: no line, stderr unchanged
#   -V prints the version; `rnu` answers "did you mean 'run'?"; an
#     unknown option answers with the closest option of its command;
#     every option a command's table lists appears in its --help
suite=progress
. "$(dirname "$0")/clilib.sh"

sc=scenarios/shared-512.xml
if command -v script >/dev/null 2>&1 && script -qc true /dev/null >/dev/null 2>&1; then
  CT_PROGRESS_AFTER_S=0 script -qc "'$bin' run $sc --no-db >/dev/null" /dev/null >"$tmp/tty" 2>&1
  if grep -q "$(printf '\r')simulated .* of 30 d (.*%), .* events, " "$tmp/tty"; then ok "a terminal gets the progress line"
  else no "a terminal gets the progress line: $(od -c "$tmp/tty" | head -3)"; fi
  tail -c 4 "$tmp/tty" | od -c | grep -q '\\r 033   \[   K' && ok "the line is cleared at the end" \
    || no "the line is cleared at the end: $(tail -c 16 "$tmp/tty" | od -c | head -2)"
  CT_PROGRESS_AFTER_S=0 script -qc "'$bin' run $sc --no-db --quiet" /dev/null >"$tmp/tty" 2>&1
  grep -q simulated "$tmp/tty" && no "--quiet draws no progress line" || ok "--quiet draws no progress line"
else
  skip "no script(1): the terminal checks"
fi
CT_PROGRESS_AFTER_S=0 "$bin" run $sc --no-db >/dev/null 2>"$tmp/e1"
"$bin" run $sc --no-db >/dev/null 2>"$tmp/e2"
if ! grep -q simulated "$tmp/e1" && cmp -s "$tmp/e1" "$tmp/e2"; then ok "no progress line when stderr is a file"
else no "no progress line when stderr is a file"; fi

expect_status 0 "-V" "$bin" -V
grep -q '^clustertwin [0-9]' "$tmp/out" || no "-V prints the version"
expect_status 2 "a mistyped command" "$bin" rnu
grep -qx "clustertwin: unknown command 'rnu'; did you mean 'run'?" "$tmp/err" || no "rnu: did you mean 'run'? ($(cat "$tmp/err"))"
expect_status 2 "a unique prefix of a command" "$bin" swe
grep -q "did you mean 'sweep'?" "$tmp/err" || no "swe: did you mean 'sweep'?"
expect_status 2 "an unknown command far from any" "$bin" frobnicate
grep -q "did you mean" "$tmp/err" && no "frobnicate: no suggestion" || true
expect_status 2 "a mistyped option" "$bin" run $sc --jsno x
grep -q "^clustertwin run: unknown option '--jsno'; did you mean '--json'?" "$tmp/err" || no "--jsno: did you mean '--json'?"
expect_status 2 "a mistyped option of another command" "$bin" plan $sc --replica 3
grep -q "did you mean '--replicas'?" "$tmp/err" || no "--replica: did you mean '--replicas'?"
expect_status 2 "an unknown option far from any" "$bin" run $sc --bogus
grep -q "did you mean" "$tmp/err" && no "--bogus: no suggestion" || true

bad=""
for c in run check topo dash report sweep plan merge measure calibrate validate; do
  "$bin" $c --help >"$tmp/help" 2>&1
  "$bin" $c --options 2>/dev/null | cut -f1 | sed 's/[, ].*//' >"$tmp/names"
  while read -r o; do grep -q -- "$o\b" "$tmp/help" || bad="$bad $c:$o"; done <"$tmp/names"
done
[ -z "$bad" ] && ok "every option (long name) in a command's table is in its --help" || no "options not in --help:$bad"

echo "$n checks, $fails failed"
[ "$fails" = 0 ]
