# A real single-node Slurm for the tests, sourced by slurm_grade.sh and
# slurm_remote.sh: munged, slurmctld -D and slurmd -D with a slurm.conf for
# this host (partition "grade"), all in a temporary folder $work, stopped by
# the EXIT trap. Skips (exit 77) when Slurm or munge is missing or slurmd
# cannot run here. Defines skip, fail, $work, $node, $user and SLURM_CONF.
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; for f in "$work"/*.log; do echo "--- $f"; tail -n 20 "$f"; done; exit 1; }

for t in munged mungekey slurmctld slurmd sbatch squeue sinfo; do
  command -v "$t" >/dev/null || skip "$t not found; install Debian's slurm-wlm and munge (packaging/install-deps.sh)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/kpg-slurm.XXXXXX") || exit 1
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# A free TCP port (slurmctld's and slurmd's), so runs side by side do not meet.
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
  || echo $((20000 + RANDOM % 20000)); }

# munge: a fresh key and a private socket.
mungekey --create --keyfile="$work/munge.key" >/dev/null 2>&1 || fail "mungekey could not make a key"
chmod 600 "$work/munge.key"
chmod 711 "$work"
munged --foreground --force --key-file="$work/munge.key" --socket="$work/munge.socket" \
  --pid-file="$work/munged.pid" --log-file="$work/munged.log" --seed-file="$work/munge.seed" >"$work/munged.out.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$work/munge.socket" ] && break; sleep 0.1; done
[ -S "$work/munge.socket" ] || skip "munged did not start here (see its log): $(tail -n 3 "$work/munged.log" "$work/munged.out.log" 2>/dev/null | tr '\n' ' ')"

node=$(hostname -s)
user=$(id -un)
mkdir -p "$work/state" "$work/spool"
cat >"$work/slurm.conf" <<CONF
ClusterName=kpgtest
SlurmctldHost=$node(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge.socket
SlurmctldPort=$(freeport)
SlurmdPort=$(freeport)
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
MinJobAge=300
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=grade Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf

slurmctld -D -f "$SLURM_CONF" >"$work/slurmctld.out.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/slurmd.out.log" 2>&1 &
pids+=($!)
state=
for _ in $(seq 100); do
  state=$(sinfo -h -n "$node" -o %t 2>/dev/null)
  case "$state" in idle*|mix*|alloc*) break ;; esac
  sleep 0.2
done
case "$state" in
  idle*|mix*|alloc*) ;;
  *) if [ "$(id -u)" -ne 0 ]; then
       skip "slurmd did not come up as user $user (state '$state'); it may need root here"
     fi
     fail "the node did not become idle (state '$state')" ;;
esac
