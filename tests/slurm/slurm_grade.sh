#!/usr/bin/env bash
# The Slurm round trip of kpg grade: starts a real single-node Slurm (munged,
# slurmctld -D, slurmd -D with a slurm.conf for this host, all in a temporary
# folder), grades the test class through `kpg grade --slurm`, and checks the
# merged table; then makes every task fail and checks that their students
# show "not graded" with the reason. Everything started here is stopped on
# exit, also on failure. Exit 77 (a skip) when Slurm or munge is missing.
#
# usage: slurm_grade.sh KPG LAB SUBMISSIONS
set -u
KPG=$1
LAB=$2
SUBS=$3
PATH=$PATH:/usr/sbin:/sbin

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

out=$work/out
mkdir -p "$out"
set -x
"$KPG" grade "$LAB" --submissions "$SUBS" --slurm --gpus-per-task 0 --tasks 3 --poll 1 \
  --csv "$out/grades.csv" --json "$out/grades.json" >"$out/table.txt" 2>"$out/stderr.txt"
rc=$?
set +x
cat "$out/table.txt" "$out/stderr.txt"
[ $rc -eq 0 ] || fail "kpg grade --slurm exited $rc"
grep -q "submitted Slurm job" "$out/stderr.txt" || fail "no job was submitted"
[ "$(ls "$out"/grades.json.journal.jsonl.slurm/parts/task-*.jsonl | wc -l)" -eq 3 ] || fail "expected 3 task journals"
rows=$(($(wc -l <"$out/grades.csv") - 1))
[ $rows -eq 12 ] || fail "expected 12 rows (4 students x 3 exercises), got $rows"
grep -q '^bob,saxpy,compile-error,.*saxpy.cu:5:' "$out/grades.csv" || fail "bob/saxpy: no compile error at line 5"
grep -q '^bob,scale,not-submitted,' "$out/grades.csv" || fail "bob/scale is not 'not submitted'"
[ "$(grep -c ',no-gpu,' "$out/grades.csv")" -eq 10 ] || fail "expected 10 'no GPU' rows"
grep -q 'saxpy       0 of 4 passed (1 compile error, 3 no GPU)' "$out/table.txt" || fail "the summary is not the expected one"

# --resume once the job has ended: every chunk finished cleanly, so nothing is submitted and the merge is the same.
cp "$out/grades.csv" "$out/first.csv"
"$KPG" grade "$LAB" --submissions "$SUBS" --slurm --gpus-per-task 0 --tasks 3 --poll 1 --resume \
  --csv "$out/grades.csv" --json "$out/grades.json" >"$out/resumed.txt" 2>"$out/resumed.err"
rc=$?
[ $rc -eq 0 ] || fail "kpg grade --slurm --resume exited $rc: $(cat "$out/resumed.err")"
! grep -q "submitted Slurm job" "$out/resumed.err" || fail "--resume submitted finished chunks again"
cmp -s "$out/first.csv" "$out/grades.csv" || fail "--resume merged another table: $(diff "$out/first.csv" "$out/grades.csv")"

# Every task fails (no compile cache, and the compiler cannot start): their students are "not graded", with the reason; exit 75.
set -x
"$KPG" grade "$LAB" --submissions "$SUBS" --slurm --gpus-per-task 0 --tasks 2 --poll 1 \
  --sbatch-arg=--export=ALL,KPG_NO_CACHE=1,KPG_COMPILER=/nonexistent/kpg-compiler \
  --csv "$out/broken.csv" >"$out/broken.txt" 2>"$out/broken.err"
rc=$?
set +x
cat "$out/broken.txt" "$out/broken.err"
[ $rc -eq 75 ] || fail "a grading whose tasks failed exited $rc, not 75"
[ "$(grep -c ',not-graded,' "$out/broken.csv")" -eq 12 ] || fail "expected 12 'not graded' rows"
grep -q 'Slurm task 0 failed: exit code 69' "$out/broken.csv" || fail "the reason of the failed task is missing"
echo "PASS"
