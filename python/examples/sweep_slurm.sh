#!/bin/bash
# A dmlsched sweep as a Slurm job array: each array task runs one shard
# (a quarter of the grid's cells) into the shared sweep folder; a merge job,
# once they all end, writes the tables. docs/python.md, "Sweeps".
#
# Submit from the folder that holds grid.json (on a file system every node
# sees, as the trace the grid names):
#
#   jobid=$(sbatch --parsable sweep_slurm.sh)
#   sbatch --dependency=afterok:$jobid --wrap "bash sweep_slurm.sh merge"
#
# A task that fails or is killed loses only its cells under way: submit the
# array again (or just that task, --array=2) and it runs only the missing
# cells. The merge writes summary.csv, jobs.csv and timings.csv, bit for
# bit those of a one-process `dmlsched sweep grid.json --out sweep-out`. The
# last shard to finish writes them too, so the merge job is a check that
# every cell is finished (it fails, naming a missing cell, otherwise).
#
# With a folder per shard instead (node-local disks), give each task
# --out "$OUT-$SLURM_ARRAY_TASK_ID" and merge with
# `dmlsched sweep "$GRID" --out "$OUT" --merge --from "$OUT-0" --from "$OUT-1" ...`.
#
# Settings (environment): GRID (grid.json), OUT (sweep-out), DMLSCHED (the
# command, dmlsched). The shard count is the array's size: keep SHARDS and
# --array in step.
#
#SBATCH --job-name=dmlsched-sweep
#SBATCH --array=0-3
#SBATCH --cpus-per-task=8
#SBATCH --time=04:00:00
#SBATCH --output=dmlsched-sweep-%A_%a.out

set -euo pipefail

SHARDS=4
GRID=${GRID:-grid.json}
OUT=${OUT:-sweep-out}
DMLSCHED=${DMLSCHED:-dmlsched}

if [ "${1:-}" = "merge" ]; then
    # Copies nothing (every shard wrote into $OUT) and writes the tables;
    # exits with code 1, naming a cell, when a cell is not finished.
    exec "$DMLSCHED" sweep "$GRID" --out "$OUT" --merge
fi

: "${SLURM_ARRAY_TASK_ID:?run as a Slurm array task (sbatch sweep_slurm.sh), or set it}"
# One worker per CPU Slurm gave the task (default: one per core it sees).
exec "$DMLSCHED" sweep "$GRID" --out "$OUT" --shard "$SLURM_ARRAY_TASK_ID/$SHARDS" \
    ${SLURM_CPUS_PER_TASK:+--workers "$SLURM_CPUS_PER_TASK"}
