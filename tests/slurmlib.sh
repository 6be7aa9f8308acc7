# slurmlib.sh: a private, single-machine Slurm for the tests (Debian 12's
# slurm-wlm 22.05, munge, slurmdbd with mariadb). A test script sources it
# first, then clilib.sh:
#     suite=slurm
#     . "$(dirname "$0")/slurmlib.sh"
#     slurm_isolate "$0" "$@"          # re-run in a network namespace of its own
#     . "$(dirname "$0")/clilib.sh"
#     slurm_start || { [ $fails = 0 ]; exit; }   # it printed skip or FAIL
#     sb --gres=gpu:2 --wrap 'sleep 60'           # sl CMD: any Slurm command
# Everything lives in $tmp/slurm ($sd): munged with its own key and socket,
# mariadbd on its own socket and a free loopback port, slurmdbd, slurmctld
# and SLURM_NODES slurmd (-N node01 ...), each node claiming 8 GPUs whose
# device files are character devices made with mknod in $sd/dev. The
# daemons use 127.0.0.1 and ports that were free when they started; where
# unshare works (root), in a network namespace with only a loopback
# interface, so even slurmdbd, which binds every address, is unreachable
# from outside and no port can clash with another test. Daemons run in the
# foreground as children of the test; their PIDs are in $sd/pids.
# slurm_stop (run by the EXIT trap, also after a failure or a signal)
# cancels the jobs, stops each daemon by its PID and waits for it, then ends
# the processes the daemons left (slurmstepd, job scripts), found by a
# marker in their environment or by their files under $sd. A watchdog does
# the same when the test itself is killed (SIGKILL). Nothing is written
# outside $tmp but the packages (tools/deps.sh install-test).
SLURM_NODES=${SLURM_NODES:-4}
SLURM_GPUS=8

# slurm_isolate SCRIPT ARGS...: as root, where unshare(1) can, run SCRIPT
# again (exec: the same PID) in a new network namespace whose loopback is
# up. Elsewhere it returns and the test runs as it is. The namespace's lo
# gets a second address, 127.0.0.2: Slurm resolves the address it listens
# on with getaddrinfo(AI_ADDRCONFIG), which finds none where 127.0.0.1 is
# the only IPv4 address ("the loopback address is not considered ... as
# valid as a configured address", getaddrinfo(3)); slurmdbd then exits
# with "attempting to set port without address family".
slurm_isolate() {
  [ -z "${CLUSTERTWIN_SLURM_NETNS:-}" ] && [ "$(id -u)" = 0 ] || return 0
  command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1 || return 0
  unshare --net true 2>/dev/null || return 0
  export CLUSTERTWIN_SLURM_NETNS=1
  exec unshare --net sh -c 'ip link set lo up && ip addr add 127.0.0.2/8 dev lo && exec sh "$0" "$@"' "$@"
}

# sl CMD...: run a Slurm client command against the private cluster. The
# marker travels into jobs (sbatch copies the environment) so slurm_stop
# can find what outlived the daemons.
sl() { env SLURM_CONF="$sd/etc/slurm.conf" CLUSTERTWIN_SLURM_RUN="$sd" "$@"; }

# slurm_missing: print why this machine cannot run a private Slurm
# (nothing when it can).
slurm_missing() {
  [ "$(id -u)" = 0 ] || { echo "not root (slurmd, mknod and mariadbd as root need it)"; return; }
  _m=""
  for _c in munged mungekey mariadbd mariadb-install-db mariadb slurmdbd slurmctld slurmd \
            sbatch squeue sinfo sacct sacctmgr scontrol python3; do
    command -v $_c >/dev/null 2>&1 || _m="$_m $_c"
  done
  [ -z "$_m" ] || echo "missing$_m (as root: tools/deps.sh install-test, or apt-get install slurm-wlm slurmdbd munge mariadb-server)"
}

# slurm_free_ports N: print N TCP ports free on 127.0.0.1 now (the kernel
# picks them: bind to port 0, all N held at once so they differ).
slurm_free_ports() {
  python3 -c '
import socket, sys
s = [socket.socket() for _ in range(int(sys.argv[1]))]
for x in s:
    x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))' "$1"
}

# sb SBATCH-OPTIONS...: sbatch into the private cluster, the job's working
# directory and output in $sd/jobs; prints the job id alone.
sb() { sl sbatch --parsable --chdir="$sd/jobs" "$@"; }

# slurm_daemon NAME COMMAND...: start COMMAND in the background in $sd/run
# with the marker, its output in $sd/log/NAME.out, and record "PID NAME".
slurm_daemon() {
  _name=$1; shift
  (cd "$sd/run" && exec env SLURM_CONF="$sd/etc/slurm.conf" CLUSTERTWIN_SLURM_RUN="$sd" "$@") \
    >"$sd/log/$_name.out" 2>&1 </dev/null &
  echo "$! $_name" >>"$sd/pids"
}

# slurm_alive NAME: the daemon NAME started by slurm_daemon still runs.
slurm_alive() {
  _p=$(awk -v n="$1" '$2 == n { p = $1 } END { print p }' "$sd/pids")
  [ -n "$_p" ] && kill -0 "$_p" 2>/dev/null
}

# slurm_wait WHAT NAME COND: poll COND while daemon NAME lives; on failure
# report WHAT with the end of NAME's log and fail.
slurm_wait() {
  poll "$3" "slurm_alive $2" && return 0
  no "$1 ($(tail -n 3 "$sd/log/$2.out" "$sd/log/$2.log" 2>/dev/null | tr '\n' ' ' | tail -c 600))"
  return 1
}

# slurm_write_conf: slurm.conf, gres.conf and slurmdbd.conf in $sd/etc for
# $SLURM_NODES nodes of 16 CPUs, 64 GB and 8 H100 GPUs on the ports in
# $ctld_port $dbd_port $db_port $node_ports. Why each setting:
#  - SlurmdParameters=config_overrides: the nodes claim the CPUs, memory and
#    GPUs written here, not what this small machine has (slurm.conf(5)).
#  - GresTypes=gpu, typed h100 (as a site names its GPUs; a snapshot maps
#    the type to a catalog node), with AutoDetect=off and File= per GPU: 22.05 drops a GPU
#    without File= and refuses a regular file, so each File is a character
#    device (mknod, the major and minor of /dev/null: opening one does
#    nothing). TaskPlugin=task/none never constrains devices.
#  - ProctrackType=proctrack/pgid, TaskPlugin=task/none,
#    JobAcctGatherType=jobacct_gather/none: no cgroups needed.
#  - SelectType=select/cons_tres with CR_Core_Memory and DefMemPerCPU:
#    jobs share a node by cores, memory and GPUs.
#  - CommunicationParameters=NoCtldInAddrAny,NoInAddrAny (outside a
#    namespace of its own): slurmctld and slurmd listen on their address,
#    127.0.0.1, not on every address (slurmdbd has no such setting).
#  - AccountingStoragePass=<munge socket>: slurmctld talks to slurmdbd with
#    the private munged (slurm.conf(5), AccountingStoragePass).
#  - SchedulerParameters=bf_interval=5: backfill every 5 s, not every 30 s
#    (the default, slurm.conf(5)), so that a queue runs in a short test.
#  - SlurmdTimeout: a node whose slurmd was killed goes DOWN (NODE_FAIL its
#    jobs) after this long; MinJobAge keeps ended jobs in squeue.
slurm_write_conf() {
  _last=$(printf 'node%02d' "$SLURM_NODES")
  _i=0
  {
    echo "ClusterName=twin"
    echo "SlurmctldHost=localhost(127.0.0.1)"
    echo "SlurmctldPort=$ctld_port"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "AuthInfo=socket=$sd/munge.sock"
    echo "CredType=cred/munge"
    echo "StateSaveLocation=$sd/state"
    echo "SlurmdSpoolDir=$sd/spool/%n"
    echo "SlurmctldPidFile=$sd/run/slurmctld.pid"
    echo "SlurmdPidFile=$sd/run/slurmd-%n.pid"
    echo "SlurmctldLogFile=$sd/log/slurmctld.log"
    echo "SlurmdLogFile=$sd/log/slurmd-%n.log"
    echo "ProctrackType=proctrack/pgid"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "MpiDefault=none"
    echo "SchedulerType=sched/backfill"
    echo "SchedulerParameters=bf_interval=5"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core_Memory"
    echo "DefMemPerCPU=1000"
    echo "GresTypes=gpu"
    echo "SlurmdParameters=config_overrides"
    [ -n "${CLUSTERTWIN_SLURM_NETNS:-}" ] || echo "CommunicationParameters=NoCtldInAddrAny,NoInAddrAny"
    echo "AccountingStorageType=accounting_storage/slurmdbd"
    echo "AccountingStorageHost=localhost"
    echo "AccountingStoragePort=$dbd_port"
    echo "AccountingStoragePass=$sd/munge.sock"
    echo "AccountingStorageTRES=gres/gpu"
    echo "JobCompType=jobcomp/none"
    echo "SlurmdTimeout=${SLURM_SLURMD_TIMEOUT:-10}"
    echo "MinJobAge=600"
    echo "ReturnToService=2"
    echo "KillWait=5"
    for _p in $node_ports; do
      _i=$((_i + 1)); _n=$(printf 'node%02d' $_i)
      echo "NodeName=$_n NodeHostname=$_n NodeAddr=127.0.0.1 Port=$_p CPUs=16 RealMemory=64000 Gres=gpu:h100:$SLURM_GPUS State=UNKNOWN"
    done
    echo "PartitionName=gpu Nodes=node[01-${_last#node}] Default=YES MaxTime=2-00:00:00 State=UP"
  } >"$sd/etc/slurm.conf"
  {
    echo "AutoDetect=off"
    _i=0
    while [ $_i -lt "$SLURM_NODES" ]; do
      _i=$((_i + 1)); _n=$(printf 'node%02d' $_i)
      echo "NodeName=$_n Name=gpu Type=h100 File=$sd/dev/$_n/nvidia[0-$((SLURM_GPUS - 1))]"
    done
  } >"$sd/etc/gres.conf"
  {
    echo "AuthType=auth/munge"
    echo "AuthInfo=socket=$sd/munge.sock"
    echo "DbdAddr=127.0.0.1"
    echo "DbdHost=localhost"
    echo "DbdPort=$dbd_port"
    echo "SlurmUser=root"
    echo "PidFile=$sd/run/slurmdbd.pid"
    echo "LogFile=$sd/log/slurmdbd.log"
    echo "StorageType=accounting_storage/mysql"
    echo "StorageHost=127.0.0.1"
    echo "StoragePort=$db_port"
    echo "StorageUser=slurm"
    echo "StoragePass=twin"
    echo "StorageLoc=slurm_acct_db"
  } >"$sd/etc/slurmdbd.conf"
  chmod 600 "$sd/etc/slurmdbd.conf"
}

# slurm_make_gpus: SLURM_GPUS character devices per node in $sd/dev/NODE.
slurm_make_gpus() {
  _i=0
  while [ $_i -lt "$SLURM_NODES" ]; do
    _i=$((_i + 1)); _n=$(printf 'node%02d' $_i)
    mkdir -p "$sd/dev/$_n" || return 1
    _g=0
    while [ $_g -lt $SLURM_GPUS ]; do
      mknod "$sd/dev/$_n/nvidia$_g" c 1 3 || return 1
      _g=$((_g + 1))
    done
  done
}

# slurm_start_munge: a munged with its own key, socket, seed and log.
slurm_start_munge() {
  mungekey --create --keyfile="$sd/munge.key" >"$sd/log/mungekey.out" 2>&1 \
    || { no "mungekey: $(head -c 300 "$sd/log/mungekey.out")"; return 1; }
  slurm_daemon munged munged --foreground --force --socket="$sd/munge.sock" \
    --key-file="$sd/munge.key" --pid-file="$sd/run/munged.pid" \
    --log-file="$sd/log/munged.log" --seed-file="$sd/munge.seed"
  slurm_wait "munged starts" munged '[ -S "$sd/munge.sock" ]'
}

# slurm_start_mariadb: a database in $sd/db for slurmdbd, on its own socket
# and a loopback port, with a user slurm (password twin) from 127.0.0.1.
slurm_start_mariadb() {
  mkdir -p "$sd/dbtmp"
  mariadb-install-db --no-defaults --user=root --datadir="$sd/db" --skip-test-db \
    --skip-name-resolve >"$sd/log/install-db.out" 2>&1 \
    || { no "mariadb-install-db: $(tail -n 3 "$sd/log/install-db.out" | tr '\n' ' ')"; return 1; }
  slurm_daemon mariadbd mariadbd --no-defaults --user=root --datadir="$sd/db" \
    --socket="$sd/mysql.sock" --port="$db_port" --bind-address=127.0.0.1 \
    --skip-name-resolve --pid-file="$sd/run/mariadbd.pid" --tmpdir="$sd/dbtmp" \
    --log-error="$sd/log/mariadbd.log" --innodb-buffer-pool-size=64M
  slurm_wait "mariadbd starts" mariadbd \
    'mariadb --no-defaults --socket="$sd/mysql.sock" -u root -e "select 1" >/dev/null 2>&1' || return 1
  mariadb --no-defaults --socket="$sd/mysql.sock" -u root >"$sd/log/grant.out" 2>&1 <<SQL \
    || { no "mariadb: cannot add the user slurm: $(head -c 300 "$sd/log/grant.out")"; return 1; }
CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'twin';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
SQL
}

# slurm_start_daemons: slurmdbd, the cluster and accounts, slurmctld, slurmds.
slurm_start_daemons() {
  slurm_daemon slurmdbd slurmdbd -D
  slurm_wait "slurmdbd starts" slurmdbd 'sl sacctmgr -n list cluster >/dev/null 2>&1' || return 1
  sl sacctmgr -i add cluster twin >"$sd/log/sacctmgr.out" 2>&1 \
    && sl sacctmgr -i add account ml,vision cluster=twin >>"$sd/log/sacctmgr.out" 2>&1 \
    && sl sacctmgr -i add user root account=ml,vision defaultaccount=ml >>"$sd/log/sacctmgr.out" 2>&1 \
    || { no "sacctmgr registers the cluster: $(tail -n 3 "$sd/log/sacctmgr.out" | tr '\n' ' ')"; return 1; }
  slurm_daemon slurmctld slurmctld -D
  slurm_wait "slurmctld starts" slurmctld 'sl scontrol ping 2>/dev/null | grep -q "is UP"' || return 1
  _i=0
  while [ $_i -lt "$SLURM_NODES" ]; do
    _i=$((_i + 1)); _n=$(printf 'node%02d' $_i)
    slurm_daemon "slurmd-$_n" slurmd -D -N "$_n"
  done
  slurm_wait "$SLURM_NODES nodes idle" slurmctld \
    '[ "$(sl sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" = "$SLURM_NODES" ]'
}

# slurm_start: the whole private cluster; prints skip and fails when this
# machine cannot have one, FAIL (counted) when a daemon does not come up.
slurm_start() {
  _why=$(slurm_missing)
  if [ -n "$_why" ]; then
    skip "SKIP: no private Slurm here: $_why"
    return 1
  fi
  sd=$tmp/slurm
  trap 'slurm_stop; rm -rf "$tmp"' EXIT
  trap 'exit 1' HUP INT PIPE TERM
  mkdir -p "$sd/etc" "$sd/log" "$sd/run" "$sd/state" "$sd/spool" "$sd/jobs" && : >"$sd/pids" || return 1
  set -- $(slurm_free_ports $((SLURM_NODES + 3)))
  ctld_port=$1 dbd_port=$2 db_port=$3; shift 3
  node_ports=$*
  slurm_write_conf && slurm_make_gpus || { no "private Slurm: cannot write $sd"; return 1; }
  slurm_watchdog
  slurm_start_munge && slurm_start_mariadb && slurm_start_daemons
}

# slurm_running PID: PID exists and is not a zombie.
slurm_running() {
  [ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" != Z ]
}

# slurm_pids: the processes of this private Slurm but the shell itself:
# those that carry the marker in their environment, or whose working
# directory or an open file is under $sd (slurmstepd keeps its log and
# spool files open). Others never match: $sd is this run's own mktemp
# directory.
slurm_pids() {
  { grep -l -s -F -x -z "CLUSTERTWIN_SLURM_RUN=$sd" /proc/[0-9]*/environ
    find /proc/[0-9]*/cwd /proc/[0-9]*/fd -maxdepth 1 \( -lname "$sd_real" -o -lname "$sd_real/*" \) 2>/dev/null
  } | cut -d/ -f3 | sort -u | while read -r _p; do
    [ "$_p" != $$ ] && slurm_running "$_p" && echo "$_p"
  done
}

# slurm_reap: end every process slurm_pids names: SIGTERM, then SIGKILL
# from the 10th round (2 s) on (slurmstepd blocks SIGTERM); bounded.
slurm_reap() {
  _round=0
  while [ $_round -lt 50 ]; do
    _left=$(slurm_pids)
    [ -n "$_left" ] || return 0
    if [ $_round -lt 10 ]; then kill -TERM $_left 2>/dev/null; else kill -KILL $_left 2>/dev/null; fi
    _round=$((_round + 1))
    sleep 0.2
  done
  echo "slurmlib: processes left running:" $_left >&2
  return 1
}

# slurm_watchdog: a background shell that, should the test die without its
# EXIT trap (SIGKILL), reaps the private Slurm and removes $tmp.
slurm_watchdog() {
  sd_real=$(cd "$sd" && pwd -P)
  _parent=$$
  ( exec </dev/null >/dev/null 2>&1
    trap '' HUP INT TERM PIPE
    while slurm_running $_parent; do sleep 1; done
    slurm_stop_daemons; slurm_reap; rm -rf "$tmp" ) &
  slurm_watch_pid=$!
}

# slurm_kill PID: SIGTERM, wait up to 30 s for it to end, then SIGKILL; reap.
slurm_kill() {
  kill -TERM "$1" 2>/dev/null
  _k=300
  while slurm_running "$1" && [ $_k -gt 0 ]; do sleep 0.1; _k=$((_k - 1)); done
  kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}

# slurm_stop_daemons: slurm_kill each daemon of $sd/pids that still runs,
# in the reverse order of their start: the slurmds first (no job starts
# after; a slurmd stops in seconds while slurmctld lives, but waits half a
# minute for a slurmctld already gone), then slurmctld, slurmdbd, mariadbd,
# munged. Only PIDs slurm_pids names: a PID the system gave to another
# process since is left alone.
slurm_stop_daemons() {
  [ -f "$sd/pids" ] || return 0
  _ours=" $(slurm_pids | tr '\n' ' ') "
  for _p in $(awk '{ p[NR] = $1 } END { for (i = NR; i > 0; i--) print p[i] }' "$sd/pids"); do
    case $_ours in *" $_p "*) slurm_kill "$_p" ;; esac
  done
}

# slurm_stop: cancel the jobs, stop the daemons, then reap what they left
# (slurmstepd, job scripts). Safe to call twice.
slurm_stop() {
  [ -n "${sd:-}" ] && [ -f "$sd/pids" ] || return 0
  if [ -n "${slurm_watch_pid:-}" ]; then
    kill -KILL "$slurm_watch_pid" 2>/dev/null; wait "$slurm_watch_pid" 2>/dev/null
  fi
  slurm_alive slurmctld && sl scancel --quiet --user=root >/dev/null 2>&1
  slurm_stop_daemons
  slurm_reap
  rm -f "$sd/pids"
}
