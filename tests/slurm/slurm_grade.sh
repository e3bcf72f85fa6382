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

# The cluster (and skip, fail, $work, the cleanup on exit).
. "$(dirname "$0")/slurm_cluster.sh"

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

# A task's journal is not trusted at the merge: a line that is not JSON and a
# result of a student of another task (copied in) are one warning each, and
# the merged table stays the same.
parts="$out/grades.json.journal.jsonl.slurm/parts"
tail -n 1 "$parts/task-0.jsonl" >>"$parts/task-1.jsonl"
echo 'not json at all' >>"$parts/task-1.jsonl"
"$KPG" grade "$LAB" --submissions "$SUBS" --slurm --gpus-per-task 0 --tasks 3 --poll 1 --resume \
  --csv "$out/grades.csv" --json "$out/grades.json" >"$out/damaged.txt" 2>"$out/damaged.err"
rc=$?
[ $rc -eq 0 ] || fail "kpg grade --slurm --resume with a damaged task journal exited $rc: $(cat "$out/damaged.err")"
grep -q "kpg: warning: the journal .*/task-1.jsonl, line [0-9]*: '[a-z]*/[a-z_]*' is not a submission of Slurm task 1; ignored" \
  "$out/damaged.err" || fail "no warning for another task's result: $(cat "$out/damaged.err")"
grep -q "kpg: warning: the journal .*/task-1.jsonl, line [0-9]*: " "$out/damaged.err" || fail "no warning for the damaged line"
[ "$(grep -c 'kpg: warning: the journal' "$out/damaged.err")" -eq 2 ] || fail "expected 2 warnings: $(cat "$out/damaged.err")"
cmp -s "$out/first.csv" "$out/grades.csv" || fail "a damaged task journal changed the table: $(diff "$out/first.csv" "$out/grades.csv")"

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
