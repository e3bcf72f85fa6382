#!/usr/bin/env bash
# The Slurm target (docs/remote.md): kpg devices through srun on the test
# cluster (tests/slurm/slurm_cluster.sh) answers with the node's worker, and
# each Slurm failure costs one message naming the target: an allocation
# refused (no such partition), one that does not start in time (the node
# held by another job), and a worker path the node lacks. Exit 77 (a skip)
# when Slurm or munge is missing.
#
# usage: slurm_remote.sh KPG KPG-WORKER
set -u
KPG=$1
WORKER=$2
PATH=$PATH:/usr/sbin:/sbin

# The cluster (and skip, fail, $work, the cleanup on exit).
. "$(dirname "$0")/slurm_cluster.sh"

# One line on stderr that starts with "kpg: TARGET: " and holds WORDS; exit code RC.
expect() { # RC TARGET WORDS...
  local rc=$1 target=$2
  shift 2
  "$KPG" devices --target "$target" >"$work/out.txt" 2>"$work/err.txt"
  local got=$?
  echo "--- kpg devices --target $target: exit $got"
  cat "$work/err.txt"
  [ $got -eq "$rc" ] || fail "$target: exit $got, expected $rc"
  [ "$(wc -l <"$work/err.txt")" -eq 1 ] || fail "$target: more than one message"
  grep -qF "kpg: $target: " "$work/err.txt" || fail "$target: the message does not start with the target"
  for w in "$@"; do grep -qF -- "$w" "$work/err.txt" || fail "$target: '$w' not in the message"; done
}

# The test node has no GPUs configured (gres), so the target asks for none.
target="slurm:partition=grade,gpus=0,wait=30,worker=$WORKER"
"$KPG" devices >"$work/local.txt" 2>&1
local_rc=$?
if [ $local_rc -eq 69 ]; then
  expect 69 "$target" "No NVIDIA driver"
else
  "$KPG" devices --target "$target" >"$work/remote.txt" 2>&1 || fail "kpg devices on $target failed: $(cat "$work/remote.txt")"
  cmp -s "$work/local.txt" "$work/remote.txt" || fail "the node's devices differ from this machine's"
fi
# KPG_TARGET is the same choice.
KPG_TARGET=$target "$KPG" devices >/dev/null 2>"$work/env.txt"
[ $? -eq $local_rc ] || fail "KPG_TARGET: another exit code than --target"

expect 69 "slurm:partition=nosuch,gpus=0,worker=$WORKER" "Slurm refused the allocation" "Invalid partition"
expect 69 "slurm:partition=grade,gpus=0,worker=/nonexistent/kpg-worker" "kpg-worker was not found on the allocated node" "execve()"

# Another job holds every CPU of the node: the allocation cannot start within wait=2.
job=$(sbatch --parsable --partition=grade --exclusive --output=/dev/null --wrap 'sleep 600') || fail "sbatch failed"
state=
for _ in $(seq 100); do
  state=$(squeue -h -j "$job" -o %T 2>/dev/null)
  [ "$state" = RUNNING ] && break
  sleep 0.2
done
[ "$state" = RUNNING ] || fail "the blocking job did not start (state '$state')"
expect 69 "slurm:partition=grade,gpus=0,wait=2,worker=$WORKER" "did not start within 2 s"
scancel "$job"
echo "PASS"
