#!/bin/bash
# One kvbench grid over a Slurm job array (docs/sharding.md): array task K of
# N runs shard K/N on a node of its own, and the first task submits a job that
# merges the shards once every task has succeeded. From a kvbench checkout on
# the cluster's shared file system, built once (bash scripts/setup.sh):
#   sbatch docs/recipes/slurm-shards.sh
# Every node runs that one build, as `kvbench merge` requires; nodes of another
# kind (another CPU, cache or core count) are said by the merge.
#SBATCH --job-name=kvbench-grid
#SBATCH --array=1-4
#SBATCH --nodes=1
#SBATCH --exclusive
#SBATCH --output=kvbench-shard-%a.log
set -euo pipefail

grid=(-n '128-4096*2' -d 1024 --heads 16 -g '16,4,1')
out="results/grid-${SLURM_ARRAY_JOB_ID}"
mkdir -p "$out"

# A file per task: shards on a shared file system never write one file
# together (SQLite's locks are not to be trusted over NFS).
build/kvbench sweep "${grid[@]}" \
  --shard "${SLURM_ARRAY_TASK_ID}/${SLURM_ARRAY_TASK_COUNT}" \
  -o "$out/shard-${SLURM_ARRAY_TASK_ID}.json"

if [[ "$SLURM_ARRAY_TASK_ID" == 1 ]]; then
  # afterok on the array's id waits for all of its tasks.
  sbatch --dependency="afterok:${SLURM_ARRAY_JOB_ID}" --job-name=kvbench-merge \
    --output="$out/merge.log" \
    --wrap="build/kvbench merge $out/shard-*.json -o $out/grid.json --export csv:$out/grid.csv"
fi
