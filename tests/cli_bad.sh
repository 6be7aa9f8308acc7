#!/bin/sh
# cli_bad.sh BINARY: the CLI on every malformed scenario in tests/bad/.
#
# For each case "FILE|LINE|SUBSTRING[|world]" of tests/bad/expected.txt, both
#   BINARY check tests/bad/FILE
#   BINARY run tests/bad/FILE --json OUT
# must exit 2, print nothing on stdout, print exactly one line on stderr that
# starts with "tests/bad/FILE:LINE: " and contains SUBSTRING, and (run) not
# create OUT, within 30 s. Prints ok/FAIL per case and a summary; exits 1 on any failure.
# Runs from the project root whatever the current directory.
set -u

[ $# -eq 1 ] || { echo "usage: $0 BINARY" >&2; exit 2; }
bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
[ -x "$bin" ] || { echo "$0: $bin is not an executable" >&2; exit 2; }
cd "$(dirname "$0")/.." || exit 2
list=tests/bad/expected.txt
[ -r "$list" ] || { echo "$0: cannot read $list" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cli_bad.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT HUP INT PIPE TERM

# check_one NAME CMD...: run CMD, check the status, stdout and stderr;
# prints why it failed (nothing when it passed). Uses $prefix and $want.
check_one() {
    name=$1; shift
    $limit "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    if [ $rc -eq 124 ] && [ -n "$limit" ]; then echo "$name: hung (killed after 30 s)"; fi
    if [ $rc -ne 2 ]; then echo "$name: exit status $rc, want 2"; fi
    if [ -s "$tmp/out" ]; then echo "$name: wrote to stdout: $(head -c 200 "$tmp/out")"; fi
    lines=$(wc -l <"$tmp/err" | tr -d ' ')
    first=$(head -n 1 "$tmp/err")
    if [ "$lines" != 1 ] || [ -n "$(tail -n +2 "$tmp/err")" ]; then
        echo "$name: stderr is not exactly one line: $(head -c 300 "$tmp/err")"
    fi
    case $first in
        "$prefix"*) ;;
        *) echo "$name: stderr '$first' does not start with '$prefix'" ;;
    esac
    if ! printf '%s\n' "$first" | grep -F -q -e "$want"; then
        echo "$name: stderr '$first' lacks '$want'"
    fi
}

# Every command runs under a time limit: a hang is a failure, not a stall.
limit=
if command -v timeout >/dev/null 2>&1; then limit="timeout 30"; fi

n=0
failed=0
while IFS='|' read -r file line want extra; do
    case $file in ''|'#'*) continue ;; esac
    n=$((n + 1))
    case $extra in
        ''|world) ;;   # world: refused by world_new(); the CLI exits 2 all the same
        *) failed=$((failed + 1)); echo "FAIL $file: fourth field '$extra' is not 'world'"; continue ;;
    esac
    prefix="tests/bad/$file:$line: "
    out="$tmp/results.json"
    why=$(check_one check "$bin" check "tests/bad/$file"
          check_one run "$bin" run "tests/bad/$file" --json "$out"
          if [ -e "$out" ]; then echo "run: created $out"; rm -f "$out"; fi)
    if [ -z "$why" ]; then
        echo "ok   $file"
    else
        failed=$((failed + 1))
        echo "FAIL $file"
        printf '%s\n' "$why" | sed 's/^/       /'
    fi
done <"$list"

# Files that cannot live in the corpus: made here, in a directory anyone may
# search. An unreadable file (as root, read through setpriv as uid 65534,
# or skipped visibly when that is not possible) and a 1 TiB sparse file.
extra() {   # NAME PREFIX WANT CMD...
    name=$1; prefix=$2; want=$3; shift 3
    n=$((n + 1))
    why=$(check_one "$name" "$@")
    if [ -z "$why" ]; then echo "ok   $name"; else
        failed=$((failed + 1)); echo "FAIL $name"; printf '%s\n' "$why" | sed 's/^/       /'; fi
}
chmod 755 "$tmp"
printf '<?xml version="1.0"?>\n<scenario name="x"/>\n' >"$tmp/unreadable.xml"
chmod 0 "$tmp/unreadable.xml"
if [ "$(id -u)" != 0 ]; then
    extra unreadable "$tmp/unreadable.xml:0: " "cannot open: Permission denied" "$bin" check "$tmp/unreadable.xml"
elif command -v setpriv >/dev/null 2>&1 &&
     setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" --version >/dev/null 2>&1; then
    extra unreadable "$tmp/unreadable.xml:0: " "cannot open: Permission denied" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" check "$tmp/unreadable.xml"
else
    echo "skip unreadable file: running as root and cannot drop privileges (setpriv)"
fi
if truncate -s 1T "$tmp/huge.xml" 2>/dev/null; then
    extra huge "$tmp/huge.xml:1: " "a scenario XML file may be at most 16777216 bytes" "$bin" run "$tmp/huge.xml" --no-db
    rm -f "$tmp/huge.xml"
fi

# Special files as inputs (scenarios/infile.c): a FIFO made here, and as root
# a character device made here with mknod (never the real /dev), named as the
# scenario, as <arrivals href>, <trace href> and as --profile. Each must be
# refused by its type at once (it blocked forever in open before); the time
# limit turns a hang into a failure.
mkfifo "$tmp/in.fifo"
specials="$tmp/in.fifo"
if [ "$(id -u)" = 0 ] && mknod "$tmp/null.dev" c 1 3 2>/dev/null; then specials="$specials $tmp/null.dev"
else echo "skip character device: not root or mknod refused"; fi
for sp in $specials; do
    case $sp in *.fifo) kind="not a regular file (a FIFO)" ;; *) kind="not a regular file (a character device)" ;; esac
    b=$(basename "$sp")
    extra "$b as scenario" "$sp:0: " "$kind" "$bin" check "$sp"
    extra "$b as --profile" "$sp:0: " "$kind" "$bin" validate scenarios/twin-host.xml --backend cpu --profile "$sp" --no-db
    cat >"$tmp/arr.xml" <<XML
<?xml version="1.0"?>
<scenario name="req" seed="1">
  <cluster><nodes type="dgx-h100" count="1"/></cluster>
  <workload>
    <inference name="c" model="llama3-8b" precision="bf16" tp="1" replicas="1">
      <arrivals process="trace" href="$sp"/>
    </inference>
  </workload>
</scenario>
XML
    extra "$b as <arrivals href>" "$tmp/arr.xml:6: " "$sp: $kind" "$bin" run "$tmp/arr.xml" --no-db
    cat >"$tmp/jobs.xml" <<XML
<?xml version="1.0"?>
<scenario name="trace" seed="1" duration="1d">
  <cluster><nodes type="dgx-h100" count="4"/></cluster>
  <workload><trace href="$sp"/></workload>
</scenario>
XML
    extra "$b as <trace href>" "$tmp/jobs.xml:4: " "$sp: $kind" "$bin" check "$tmp/jobs.xml"
done

# A --set expression nested 30,000 deep overflowed the parser's stack (exit 139).
deep=$(awk 'BEGIN { for (i = 0; i < 30000; i++) printf "("; printf "{cluster/nodes/@count}"; for (i = 0; i < 30000; i++) printf ")" }')
extra "--set nested 30000 deep" "clustertwin sweep: cluster/nodes/@count=" "nested more than 64 deep" \
    "$bin" sweep scenarios/default.xml --vary "@seed=1,2" --set "cluster/nodes/@count=$deep" --db "$tmp/deep.db" --quiet
if [ -e "$tmp/deep.db" ]; then failed=$((failed + 1)); echo "FAIL --set nested 30000 deep: created $tmp/deep.db"; fi

if [ $n -eq 0 ]; then
    echo "cli_bad: no cases in $list"
    exit 1
fi
echo "cli_bad: $n cases, $((n - failed)) passed, $failed failed"
[ $failed -eq 0 ]
