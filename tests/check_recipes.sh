#!/usr/bin/env bash
# The sharding recipes users copy (docs/recipes/): valid YAML under yamllint's strict default
# rules, shell that bash parses and shellcheck passes, and each still about sharding: a sweep
# with --shard and a merge.
# Usage: check_recipes.sh <docs/recipes> <yamllint or ""> <shellcheck or "">
set -u
dir=$1
yamllint=${2:-}
shellcheck=${3:-}
fail() { echo "FAIL: $*"; exit 1; }
n=0
for recipe in "$dir"/*.yml "$dir"/*.yaml; do
  [ -e "$recipe" ] || continue
  n=$((n + 1))
  if [ -n "$yamllint" ]; then "$yamllint" --strict "$recipe" || fail "$recipe: yamllint"; fi
done
for recipe in "$dir"/*.sh; do
  [ -e "$recipe" ] || continue
  n=$((n + 1))
  bash -n "$recipe" || fail "$recipe: bash -n"
  if [ -n "$shellcheck" ]; then "$shellcheck" "$recipe" || fail "$recipe: shellcheck"; fi
done
[ "$n" -ge 4 ] || fail "$n recipes in $dir, expected the GitHub Actions, Slurm and two Kubernetes files"
grep -l -- "--shard" "$dir"/* | wc -l | grep -qx 3 || fail "a sweep recipe lost its --shard"
for recipe in "$dir"/*; do
  grep -q "kvbench merge\|build/kvbench merge\|kvbench-merge.yaml\|kubernetes-merge.yaml" "$recipe" ||
    fail "$recipe does not say how its shards are merged"
done
echo "$n recipes: ${yamllint:+yamllint, }bash -n${shellcheck:+, shellcheck}"
