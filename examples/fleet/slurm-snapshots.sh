#!/usr/bin/env bash
#SBATCH --job-name=wheeldoctor-snapshot
#SBATCH --ntasks-per-node=1
#SBATCH --time=00:20:00
# One wheeldoctor snapshot per node of a Slurm allocation, then `wheeldoctor diff`.
#
#   sbatch --nodes=16 examples/fleet/slurm-snapshots.sh [OUT_DIR]     (a job of its own)
#   srun --jobid=JOBID --overlap ... as below                          (the nodes of a running job)
#   REFERENCE=golden.json sbatch ...     compare every node with a reference snapshot, not by majority
#
# One step, one task per node. --overlap lets the step share its nodes with steps already
# running there (inside a training job's allocation, or with --jobid); the snapshot reads
# files, it needs no GPU. $SLURMD_NODENAME is Slurm's name for the node the task runs on:
# the single quotes keep it for the task's own shell to expand. Each snapshot goes to its
# file atomically (-o; %N is the --host name made safe); stdout is then empty, and stderr,
# the errors of a node that could not snapshot, stays apart in the job's error stream.
set -euo pipefail
out=${1:-snapshots}
mkdir -p "$out"
rm -f "$out"/snap-*.json  # a node that gives none this run must not pass with the last run's

# shellcheck disable=SC2016 # $SLURMD_NODENAME and $0 are for the task's shell, on its node
srun --ntasks-per-node=1 --overlap --kill-on-bad-exit=0 \
  bash -c 'exec wheeldoctor snapshot -q --host "$SLURMD_NODENAME" -o "$0/snap-%N.json"' "$out" \
  || echo "some nodes gave no snapshot" >&2

lost=0
for node in $(scontrol show hostnames "${SLURM_JOB_NODELIST:-}"); do
  if [ ! -s "$out/snap-$node.json" ]; then
    echo "lost: $node: no snapshot" >&2
    lost=$((lost + 1))
  fi
done

status=0
snaps=("$out"/snap-*.json)
[ -e "${snaps[0]}" ] || snaps=()
if [ -n "${REFERENCE:-}" ]; then
  wheeldoctor diff --reference "$REFERENCE" "${snaps[@]}" || status=$?
elif [ "${#snaps[@]}" -ge 2 ]; then
  wheeldoctor diff "${snaps[@]}" || status=$?
else
  echo "${#snaps[@]} snapshot(s): nothing to compare them with (REFERENCE=golden.json compares with one)" >&2
fi
if [ "$status" -eq 0 ] && [ "$lost" -gt 0 ]; then
  status=1
fi
exit "$status"
