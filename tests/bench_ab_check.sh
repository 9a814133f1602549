#!/usr/bin/env bash
# scripts/bench-ab.py on two fake benchmark binaries with known times: the per-round ratios, their
# median and range, the merged JSON that kvbench compare reads, the arguments passed through, and
# the one-line errors of bad input.
# Usage: bench_ab_check.sh <kvbench> <output directory>
set -u
kvbench=$1
dir=$2/bench_ab
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fail() { echo "FAIL: $*"; cat "$dir/out.txt" "$dir/err.txt" 2>/dev/null; exit 1; }
rm -rf "$dir" && mkdir -p "$dir"

# A fake kvbench_bench: call k (from 1) reports BM_x at the k-th of its x times and BM_y at its y.
fake() {  # name, x times, y time
  cat >"$dir/$1" <<FAKE
#!/usr/bin/env bash
k=\$(( \$(cat "\$0.count" 2>/dev/null || echo 0) + 1 )); echo \$k >"\$0.count"; echo "\$*" >>"\$0.args"
x=($2)
printf '{"context": {"host_name": "fake"}, "benchmarks": [
 {"name": "BM_x", "run_type": "iteration", "real_time": %s, "time_unit": "us"},
 {"name": "BM_y", "run_type": "iteration", "real_time": $3, "time_unit": "us"}]}\n' "\${x[\$((k - 1))]}"
FAKE
  chmod +x "$dir/$1"
}
fake base "100 110 300" 10
fake new "90 99 150" 20
ab() { /usr/bin/python3 "$root/scripts/bench-ab.py" "$@" >"$dir/out.txt" 2>"$dir/err.txt"; }

ab --rounds 3 --filter 'BM_' --out "$dir/json" --kvbench "$kvbench" base="$dir/base" new="$dir/new" -- --extra=1 \
  || fail "the comparison exited with $?"
# Rounds: 100/90, 110/99, 300/150 -> ratios 0.9, 0.9, 0.5.
grep -q "^BM_x  base 110  new 99 (0.90, 0.50-0.90)" "$dir/out.txt" || fail "BM_x's medians or ratios"
grep -q "^BM_y  base 10  new 20 (2.00, 2.00-2.00)" "$dir/out.txt" || fail "BM_y's medians or ratios"
grep -q -- "--benchmark_filter=BM_ --benchmark_format=json --extra=1" "$dir/base.args" || fail "the arguments passed"
[[ $(wc -l <"$dir/new.args") -eq 3 ]] || fail "each binary should run once per round"
[[ $(grep -c '"run_type": "iteration"' "$dir/json/new.json") -eq 6 ]] || fail "new.json should hold 3 rounds of 2"
grep -q "BM_x" <(sed -n '/kvbench compare/,$p' "$dir/out.txt") || fail "kvbench compare did not list BM_x"

# A binary that repeats each benchmark in a run (--benchmark_repetitions) counts the run's median.
cat >"$dir/repeats" <<'FAKE'
#!/usr/bin/env bash
printf '{"context": {}, "benchmarks": [
 {"name": "BM_x", "run_type": "iteration", "real_time": 50, "time_unit": "us"},
 {"name": "BM_x", "run_type": "iteration", "real_time": 70, "time_unit": "us"},
 {"name": "BM_x", "run_type": "iteration", "real_time": 1000, "time_unit": "us"},
 {"name": "BM_x_mean", "run_type": "aggregate", "real_time": 373, "time_unit": "us"}]}\n'
FAKE
chmod +x "$dir/repeats"
rm -f "$dir/new.count"
ab --rounds 2 --out "$dir/json2" --kvbench "$dir/no-kvbench" new="$dir/new" repeats="$dir/repeats" \
  || fail "the comparison with repetitions exited with $?"
# new's BM_x: 90 and 99; repeats' round medians 70 and 70 -> ratios 0.78 and 0.71.
grep -q "^BM_x  new 94.5  repeats 70 (0.74, 0.71-0.78)" "$dir/out.txt" || fail "a round's median of repetitions"
grep -q "BM_x_mean" "$dir/json2/repeats.json" && fail "aggregates should not be kept as samples"

# Bad input: a one-line error naming the argument, exit 2; a failing binary, exit 1.
expect() {  # status, message, arguments...
  local status=$1 message=$2; shift 2
  ab "$@"; local got=$?
  [[ $got -eq $status ]] || fail "'$*' exited with $got, not $status"
  [[ $(wc -l <"$dir/err.txt") -eq 1 ]] || fail "'$*' should print one line"
  grep -q -- "$message" "$dir/err.txt" || fail "'$*' should say: $message"
}
expect 2 "must be NAME=BINARY" "$dir/base" new="$dir/new"
expect 2 "at least two binaries" base="$dir/base"
expect 2 "each name must be different" a="$dir/base" a="$dir/new"
expect 2 "--rounds: 0 must be from 1 to 1000" --rounds 0 base="$dir/base" new="$dir/new"
expect 2 "no executable file there" base="$dir/base" new="$dir/missing"
printf '#!/usr/bin/env bash\necho "no such benchmark" >&2\nexit 3\n' >"$dir/broken" && chmod +x "$dir/broken"
expect 1 "exited with 3: no such benchmark" base="$dir/base" broken="$dir/broken"
printf '#!/usr/bin/env bash\necho "Failed to match any benchmarks" >&2\n' >"$dir/empty" && chmod +x "$dir/empty"
expect 1 "printed no Google Benchmark JSON: Failed to match any benchmarks" base="$dir/base" empty="$dir/empty"
echo "bench-ab: all checks passed"
