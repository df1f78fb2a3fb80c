#!/usr/bin/env bash
# One Slurm user submitting back to back from a shell, as they would: `sbatch` per job, one GPU,
# one CPU, 1 GiB, the job's command `date +%s%3N`: one process like `true`, which writes when it
# started, in ms, to <jobs dir>/<id>.out and ends at once (Slurm's `true` with a clock).
#   submit.sh <n> <jobs dir> <log> [wait]
# Appends "<send time, s.us> <job id>" per job to <log> (bash's $EPOCHREALTIME: no process per
# reading). With `wait` (the idle phase), each job is submitted once the previous one's output is
# there and then a random 0-999 ms more: slurmctld allocates on a one-second cycle, and a loop that
# submits right after each start would meet that cycle at the same phase every time (~1 s each,
# its worst case) instead of at random, as users do. The waits sleep on a FIFO nobody writes
# (`read -t`), not in a `sleep` process.
set -euo pipefail
n=$1 jobs=$2 log=$3 mode=${4:-}
exec 3>>"$log"
if [ "$mode" = wait ]; then
  never=$(mktemp -u "$jobs/.never.XXXXXX")
  mkfifo "$never"
  exec 4<>"$never"
fi
for ((i = 0; i < n; i++)); do
  t=$EPOCHREALTIME
  id=$(sbatch --parsable --gres=gpu:1 --cpus-per-task=1 --mem=1024 -o "$jobs/%j.out" --wrap='date +%s%3N')
  id=${id%%;*}
  echo "$t $id" >&3
  if [ "$mode" = wait ]; then
    until [ -s "$jobs/$id.out" ]; do read -r -t 0.005 -u 4 _ || true; done
    printf -v pause '0.%03d' $((RANDOM % 1000))
    read -r -t "$pause" -u 4 _ || true
  fi
done
