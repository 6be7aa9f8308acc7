#!/bin/sh
# Check (and, as root with `install`, install) the Debian packages clustertwin
# needs. Prints what is missing and the command to install it.
#   tools/deps.sh check     exit 1 when something is missing
#   tools/deps.sh install   install what is missing when root, else as check
#   tools/deps.sh install-test   as install, and the packages only the tests
#                           use: a real Slurm for tests/cli_slurm.sh (slurm-wlm,
#                           slurmdbd, munge, mariadb-server), installed
#                           without starting their system services
set -u
mode=${1:-check}
# pkg-config module -> Debian package
pairs="gsl:libgsl-dev sqlite3:libsqlite3-dev libxml-2.0:libxml2-dev ncursesw:libncurses-dev libcgraph:libgraphviz-dev cmocka:libcmocka-dev"
missing=""
command -v pkg-config >/dev/null 2>&1 || missing="pkg-config"
command -v cc >/dev/null 2>&1 || missing="$missing gcc"
command -v make >/dev/null 2>&1 || missing="$missing make"
# groff renders the man page; tests/docs.sh checks it renders without warnings.
command -v groff >/dev/null 2>&1 || command -v mandoc >/dev/null 2>&1 || missing="$missing groff-base"
for p in $pairs; do
  mod=${p%%:*}; pkg=${p#*:}
  if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists "$mod" 2>/dev/null; then
    missing="$missing $pkg"
  fi
done
# gnuplot draws the report charts; not needed to build, only for reports.
command -v gnuplot >/dev/null 2>&1 || optional="gnuplot-nox"
# OpenMPI: the mpi measurement backend and MPI sweeps; optional at build.
command -v mpicc >/dev/null 2>&1 || optional="${optional:-} openmpi-bin libopenmpi-dev"
# A real Slurm for tests/cli_slurm.sh (tests/slurmlib.sh); it skips without.
if [ "$mode" = install-test ]; then
  for c in slurmctld:slurm-wlm slurmd:slurm-wlm sbatch:slurm-wlm slurmdbd:slurmdbd munged:munge \
           mariadbd:mariadb-server; do
    command -v "${c%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${c%%:*}" ] || testpkgs="${testpkgs:-} ${c#*:}"
  done
  optional=$(echo ${optional:-} $(echo ${testpkgs:-} | tr ' ' '\n' | sort -u))
  mode=install
fi
missing=$(echo $missing)
[ -z "$missing" ] && [ -z "${optional:-}" ] && exit 0
apt() {   # apt() PKG...: install, refreshing the package lists once if needed
  apt-get install -y --no-install-recommends "$@" >/dev/null 2>&1 || {
    apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends "$@" >/dev/null 2>&1; }
}
if [ "$mode" = install ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  if [ -n "$missing" ]; then
    echo "installing missing Debian packages: $missing"
    apt $missing || { echo "error: apt-get could not install: $missing" >&2; exit 1; }
  fi
  if [ -n "${optional:-}" ]; then
    echo "installing optional Debian packages:${optional}"
    # The Slurm, munge and MariaDB packages would start their system daemons
    # (on the standard ports) from their postinst; a policy-rc.d that says
    # 101 (action forbidden: Debian Policy, invoke-rc.d(8)) stops that. One
    # already there is left as it is.
    norc=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      norc=/usr/sbin/policy-rc.d
      trap 'rm -f "$norc"' EXIT
      trap 'rm -f "$norc"; exit 1' HUP INT TERM
      printf '#!/bin/sh\n# tools/deps.sh: no daemon starts while it installs\nexit 101\n' >"$norc" && chmod 755 "$norc"
    fi
    apt $optional || echo "warning: could not install${optional}; charts, MPI features or the real-Slurm tests will say they are missing" >&2
    [ -z "$norc" ] || rm -f "$norc"
  fi
  exit 0
fi
if [ -n "$missing" ]; then
  echo "error: missing Debian packages: $missing" >&2
  echo "install them with: sudo apt-get install $missing ${optional:-}" >&2
  exit 1
fi
exit 0
