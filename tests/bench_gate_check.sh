#!/usr/bin/env bash
# The CI gate's comparison (scripts/bench-gate.sh --check) against the committed references:
# each passes against itself under the class its folder names; a copy with one doctored flops count fails, naming the row; on a
# machine class without a reference only the exact counts are checked.
# Usage: bench_gate_check.sh <kvbench> <output directory>
set -u
kvbench=$1
dir=$2/bench_gate
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fail() { echo "FAIL: $*"; cat "$dir/out.txt"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir"
reference=$(find "$root/results/gate" -name sweep.json | sort | head -n 1)
[[ -f "$reference" ]] || fail "no results/gate/*/sweep.json"
gate() { KVBENCH="$kvbench" bash "$root/scripts/bench-gate.sh" --check "$1" >"$dir/out.txt" 2>&1; }

for each in "$root"/results/gate/*/sweep.json; do
  class=$(basename "$(dirname "$each")")
  gate "$each" || fail "$class: the reference against itself should pass"
  grep -q "bench-gate: PASS (class $class)" "$dir/out.txt" || fail "$class: not the class its folder names"
done

# The first cached row's flops, plus one.
flops=$(grep -m1 '"flops":' "$reference" | sed 's/[^0-9]//g')
sed "0,/\"flops\": $flops,/s//\"flops\": $((flops + 1)),/" "$reference" >"$dir/doctored.json"
cmp -s "$reference" "$dir/doctored.json" && fail "the doctoring changed nothing"
gate "$dir/doctored.json" && fail "a changed flops count should fail the gate"
grep -q "COUNTS DIFFER (flops $flops -> $((flops + 1)))" "$dir/out.txt" || fail "the row's verdict does not name flops"
grep -q "bench-gate: FAIL" "$dir/out.txt" || fail "no FAIL line"

# A machine class without a reference: only the exact counts are checked, against another class's.
mkdir -p "$dir/gate/other-1c"
cp "$reference" "$dir/gate/other-1c/sweep.json"
KVBENCH_GATE_DIR="$dir/gate" KVBENCH="$kvbench" bash "$root/scripts/bench-gate.sh" --check "$reference" \
  >"$dir/out.txt" 2>&1 || fail "an unknown machine class should pass on exact counts"
grep -q "no reference for machine class .*; checking exact counts against other-1c only" "$dir/out.txt" ||
  fail "the fallback is not announced"
echo "ok: each reference passes as its own class, a doctored flops count fails, an unknown class checks counts only"
