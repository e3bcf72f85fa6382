#!/usr/bin/env bash
# The Slurm target (docs/remote.md): kpg devices through srun on the test
# cluster (tests/slurm/slurm_cluster.sh) answers with the node's worker, and
# through srun on a login node reached by ssh (an sshd of the test's own),
# and each Slurm failure costs one message naming the target: an allocation
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

# srun on a "login node" reached by ssh: an sshd of the test's own on
# 127.0.0.1 (own host key, user key, sshd_config and ssh_config; the user's
# ~/.ssh is not read), stopped on exit with the cluster.
sshd=$(command -v sshd || true)
if [ -n "$sshd" ] && command -v ssh >/dev/null && command -v ssh-keygen >/dev/null; then
  ssh-keygen -q -t ed25519 -N '' -f "$work/host_key" && ssh-keygen -q -t ed25519 -N '' -f "$work/user_key" \
    || fail "ssh-keygen failed"
  cp "$work/user_key.pub" "$work/authorized_keys"
  port=$(freeport)
  cat >"$work/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $work/host_key
PidFile $work/sshd.pid
AuthorizedKeysFile $work/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UseDNS no
SetEnv SLURM_CONF=$SLURM_CONF
CONF
  echo "[127.0.0.1]:$port $(cat "$work/host_key.pub")" >"$work/known_hosts"
  cat >"$work/ssh_config" <<CONF
Host *
  IdentityFile $work/user_key
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile $work/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
CONF
  [ "$(id -u)" -ne 0 ] || mkdir -p /run/sshd
  "$sshd" -t -f "$work/sshd_config" || fail "sshd -t refused the test's config"
  "$sshd" -D -e -f "$work/sshd_config" 2>"$work/sshd.log" &
  pids+=($!)
  for _ in $(seq 100); do grep -q "Server listening" "$work/sshd.log" && break; sleep 0.1; done
  grep -q "Server listening" "$work/sshd.log" || fail "sshd did not start"
  # The login node's PATH must find srun; the worker's path goes through the remote shell quoted.
  export KPG_SSH_CONFIG=$work/ssh_config
  via="slurm:partition=grade,gpus=0,wait=30,worker=$WORKER,via=ssh://127.0.0.1:$port"
  if [ $local_rc -eq 69 ]; then
    expect 69 "$via" "No NVIDIA driver"
  else
    "$KPG" devices --target "$via" >"$work/via.txt" 2>&1 || fail "kpg devices on $via failed: $(cat "$work/via.txt")"
    cmp -s "$work/local.txt" "$work/via.txt" || fail "the node's devices (via ssh) differ from this machine's"
  fi
  expect 69 "slurm:partition=nosuch,gpus=0,worker=$WORKER,via=ssh://127.0.0.1:$port" "Slurm refused the allocation"
  unset KPG_SSH_CONFIG
else
  echo "SKIP (part): the login-node variant needs Debian's openssh-server"
fi

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
# Let slurmd end the job's step before the cluster is stopped, so no slurmstepd outlives the test.
for _ in $(seq 100); do [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break; sleep 0.1; done
echo "PASS"
