#!/bin/bash
# cli_completion.sh BINARY: tools/clustertwin.bash, sourced in bash, completes
# what the program accepts: the commands of `clustertwin --help`, each
# command's options (every option line of `clustertwin CMD --help`), the
# words an option takes, scenario files (.xml) for the commands that read a
# scenario and results databases (.db) for those that read one and for --db.
# Drives the completion function with COMP_WORDS/COMP_CWORD as bash does.
# Prints ok/FAIL per check; exits 1 on failure.
set -u
[ $# -ge 1 ] || { echo "usage: $0 BINARY" >&2; exit 2; }
bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
src=$(cd "$(dirname "$0")/.." && pwd)/tools/clustertwin.bash
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   completion: $1"; }
no() { echo "FAIL completion: $1"; fails=$((fails + 1)); }

# shellcheck source=../tools/clustertwin.bash
source "$src" || { echo "FAIL completion: cannot source $src"; exit 1; }
complete -p clustertwin 2>/dev/null | grep -q -- "-F _clustertwin" && ok "registered for clustertwin" \
  || no "not registered: $(complete -p clustertwin 2>&1)"

# comp WORD...: what completing the last word offers, sorted, one line.
comp() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE="$*"
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  _clustertwin
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
# expect WHAT WANT WORD...: the completion of WORD... is exactly WANT.
expect() {
  local what=$1 want=$2 got
  shift 2
  got=$(comp "$@")
  [ "$got" = "$want" ] && ok "$what" || no "$what: got '$got', want '$want'"
}

cmds=$("$bin" --help | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' | sort | tr '\n' ' ' | sed 's/ $//')
[ "$(echo "$cmds" | wc -w)" -ge 8 ] || no "clustertwin --help lists too few commands: $cmds"
expect "every command of --help, and --help, --version" \
  "$(printf '%s\n' $cmds --help --version | sort | tr '\n' ' ' | sed 's/ $//')" "$bin" ""
expect "'r' completes to run and report" "report run" "$bin" r
expect "'cal' completes to calibrate" "calibrate" "$bin" cal
expect "run --s: --seed, --statistic" "--seed --statistic" "$bin" run --s
expect "sweep --e: --emit-slurm" "--emit-slurm" "$bin" sweep --e
expect "plan --max: --max-replicas, --maximize" "--max-replicas --maximize" "$bin" plan --max
expect "run --backend: the backends" "cpu cuda mpi nccl" "$bin" run FILE --backend ""
expect "report --format m: md" "md" "$bin" report x.db --format m
expect "report --format j: json" "json" "$bin" report x.db --format j
expect "plan --search: auto, bisect, grid" "auto bisect grid" "$bin" plan x.xml --search ""
expect "measure --statistic: min, median" "median min" "$bin" measure --statistic ""
expect "run --seed takes a number: nothing offered" "" "$bin" run x.xml --seed ""

# Every option line of every command's help is offered after '--'.
for c in $cmds; do
  got=" $(comp "$bin" "$c" --) "
  miss=""
  for o in $("$bin" "$c" --help | sed -n 's/^  \(--[a-z][a-z-]*\).*/\1/p'); do
    case $got in *" $o "*) ;; *) miss="$miss $o" ;; esac
  done
  case $got in *" --help "*) ;; *) miss="$miss --help" ;; esac
  [ -z "$miss" ] && ok "$c: every option of '$c --help' is offered" || no "$c: not offered:$miss"
done

# Files: scenarios for the commands that read one, databases for the rest.
mkdir -p "$tmp/w/sub"
: >"$tmp/w/a.xml"; : >"$tmp/w/b.db"; : >"$tmp/w/c.txt"; : >"$tmp/w/d.svg"
cd "$tmp/w" || exit 1
for c in run check topo dash sweep plan validate forecast; do
  expect "$c FILE: .xml files and folders" "a.xml sub" "$bin" "$c" ""
done
for c in report merge; do
  expect "$c DB: .db files and folders" "b.db sub" "$bin" "$c" ""
done
expect "merge OUT.db IN.db: .db files" "b.db sub" "$bin" merge out.db ""
expect "calibrate --db: .db files" "b.db sub" "$bin" calibrate --db ""
expect "validate FILE --db: .db files" "b.db sub" "$bin" validate a.xml --backend cpu --db ""
expect "run --profile: .xml files" "a.xml sub" "$bin" run a.xml --profile ""
expect "topo --out: .svg/.dot files and folders" "d.svg sub" "$bin" topo a.xml --out ""
expect "report --out: folders" "sub" "$bin" report b.db --out ""
expect "a prefix: 'a' in run" "a.xml" "$bin" run a

[ $fails = 0 ] && echo "completion: all passed" || echo "completion: $fails failed"
[ $fails = 0 ]
