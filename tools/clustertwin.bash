# clustertwin(1) completion for bash: commands, each command's options,
# the values of options that take words (--backend cpu|mpi|..., --format),
# scenario files (.xml) and results databases (.db).
#
# The commands and options are read from the program itself, from
# `clustertwin --help` and `clustertwin CMD --help`, the first time they are
# needed in a shell (then kept), so they never drift from what the program
# accepts. `make install` puts this file where bash-completion finds it
# (share/bash-completion/completions/clustertwin); to try it from the
# source tree: `source tools/clustertwin.bash`.

declare -gA _clustertwin_cache

# The program to ask: the word being completed when it runs (build/clustertwin),
# else clustertwin on the PATH.
_clustertwin_bin() {
    local b=$1
    b=${b/#\~/$HOME}
    if [[ $b == */* && -x $b ]] || type -P "$b" >/dev/null 2>&1; then
        printf '%s\n' "$b"
    else
        printf 'clustertwin\n'
    fi
}

# The commands `clustertwin --help` lists (lines "  name   what it does").
_clustertwin_commands() {
    local key="$1 --help"
    if [[ -z ${_clustertwin_cache[$key]+x} ]]; then
        _clustertwin_cache[$key]=$("$1" --help 2>/dev/null |
            sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' | tr '\n' ' ')
    fi
    printf '%s\n' "${_clustertwin_cache[$key]}"
}

# The options of command $2, one per line: NAME<tab>V<tab>WORDS, V 1 when the
# option takes a value, WORDS the values the help spells out (a|b|c). Read
# from the usage lines (up to the first blank line) and from the lines that
# start with an option (up to the description, after two spaces).
_clustertwin_options() {
    local key="$1 $2"
    if [[ -z ${_clustertwin_cache[$key]+x} ]]; then
        _clustertwin_cache[$key]=$("$1" "$2" --help 2>/dev/null | awk '
            /^$/ { usage_done = 1; next }
            {
                line = $0
                if (usage_done) {
                    if (line !~ /^ +--/) next
                    # the options before the description: "--jobs N, --db DB   as for sweep"
                    sub(/^ +/, "", line)
                    sub(/  .*/, "", line)
                }
                while (match(line, /--[a-z][a-z-]*/)) {
                    name = substr(line, RSTART, RLENGTH)
                    rest = substr(line, RSTART + RLENGTH)
                    line = rest
                    v = 0; words = ""
                    if (rest ~ /^=/ || rest ~ /^ ["A-Z]/) v = 1
                    if (match(rest, /^ [a-z]+(\|[a-z]+)+/)) {
                        v = 1; words = substr(rest, 2, RLENGTH - 1); gsub(/\|/, " ", words)
                    } else if (match(rest, /^ [A-Z]+\|[a-z]+/)) {
                        words = substr(rest, 2, RLENGTH - 1); sub(/^[A-Z]+\|/, "", words)
                    }
                    if (!(name in seen)) { order[++n] = name; seen[name] = 1 }
                    if (v) val[name] = 1
                    # an option in two usage lines (report --format): every word of both
                    nw = split(words, ws, " ")
                    for (k = 1; k <= nw; k++)
                        if (index(" " w[name] " ", " " ws[k] " ") == 0) w[name] = w[name] (w[name] == "" ? "" : " ") ws[k]
                }
            }
            END { for (i = 1; i <= n; i++) printf "%s\t%d\t%s\n", order[i], val[order[i]] + 0, w[order[i]] }')
    fi
    printf '%s\n' "${_clustertwin_cache[$key]}"
}

# Files ending in .$1 (one extension or a|b|c) and folders, for the word $2.
_clustertwin_files() {
    compopt -o filenames 2>/dev/null
    local IFS=$'\n' extglob
    extglob=$(shopt -p extglob)
    shopt -s extglob
    COMPREPLY=($(compgen -d -- "$2") $(compgen -f -X "!*.@($1)" -- "$2"))
    eval "$extglob"
}

_clustertwin() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local bin cmd="" i line name v words
    bin=$(_clustertwin_bin "${COMP_WORDS[0]}")
    COMPREPLY=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        -*) ;;
        *) cmd=${COMP_WORDS[i]}; break ;;
        esac
    done
    if [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "$(_clustertwin_commands "$bin") --help --version" -- "$cur"))
        return 0
    fi

    # The value of an option that takes one.
    if [[ $prev == --* ]]; then
        while IFS=$'\t' read -r name v words; do
            [[ $name == "$prev" && $v == 1 ]] || continue
            case $name in   # spelled out in one command's help only
            --backend) words=${words:-cpu mpi cuda nccl} ;;
            --statistic) words=${words:-min median} ;;
            esac
            if [[ -n $words ]]; then
                COMPREPLY=($(compgen -W "$words" -- "$cur"))
                return 0
            fi
            case $cmd:$name in
            *:--db) _clustertwin_files db "$cur" ;;
            topo:--out) _clustertwin_files 'svg|dot|gv' "$cur" ;;
            calibrate:--out | fit-failures:--out | *:--profile | *:--from | *:--cases) _clustertwin_files xml "$cur" ;;
            *:--out | *:--dir | *:--emit-slurm | validate:--published)
                compopt -o filenames 2>/dev/null
                COMPREPLY=($(compgen -d -- "$cur")) ;;
            *:--json | *:--html)
                compopt -o filenames 2>/dev/null
                COMPREPLY=($(compgen -f -- "$cur")) ;;
            esac
            return 0
        done <<<"$(_clustertwin_options "$bin" "$cmd")"
    fi

    if [[ $cur == -* ]]; then
        local opts=""
        while IFS=$'\t' read -r name v words; do opts+=" $name"; done <<<"$(_clustertwin_options "$bin" "$cmd")"
        COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
        return 0
    fi
    case $cmd in
    run | check | topo | dash | sweep | plan | validate | forecast) _clustertwin_files xml "$cur" ;;
    report | merge) _clustertwin_files db "$cur" ;;
    esac
    return 0
}

complete -F _clustertwin clustertwin
