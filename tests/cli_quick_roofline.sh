#!/usr/bin/env bash
# A quick roofline, saved by a first run, that this run's rows beat (doctored here to 0.001 GB/s and
# GFLOP/s, as a busy machine would have measured it low): the rows are marked ^ in the table and
# above_roofline in the file, one warning says so, and the roofline is measured again fully and saved.
# Usage: cli_quick_roofline.sh <kvbench> <roofline directory>
set -u
kvbench=$1
dir=$2
rm -rf "$dir" && mkdir -p "$dir"
export KVBENCH_ROOFLINE_DIR="$dir"
fail() { echo "FAIL: $*"; cat "$dir/err" 2>/dev/null; exit 1; }
point=(sweep -n 64 -d 256 --heads 4 -g 4 -r 3 -w 1 -t 1 --paths cached --cache-state cold)
saved="$dir/roofline-t1.json"

"$kvbench" "${point[@]}" >/dev/null 2>"$dir/err" || fail "first run: exit $?"
grep -q '"quick": true' "$saved" || fail "the first run saved no quick roofline"
sed -E -i 's/"peak_gflops": [0-9.e+-]+/"peak_gflops": 0.001/; s/"peak_gbps": [0-9.e+-]+/"peak_gbps": 0.001/' "$saved"

"$kvbench" "${point[@]}" -o "$dir/beaten.csv" >"$dir/out" 2>"$dir/err" || fail "second run: exit $?"
grep -q '[0-9]^' "$dir/out" || fail "no ^ in the table: $(cat "$dir/out")"
grep -q '\^ above 100 %' "$dir/out" || fail "no footnote for ^"
grep -Eq ',([a-z]+ )*above_roofline,' "$dir/beaten.csv" || fail "no above_roofline flag in the file"
grep -q "1 of 1 row above 100 % of the roofline, marked ^ .*: it was a quick one, measured low; measured it fully now" \
  "$dir/err" || fail "no warning saying the quick roofline was measured again"
grep -q '"quick": false' "$saved" || fail "the quick roofline was not replaced by a full one"
grep -q '"peak_gbps": 0.001' "$saved" && fail "the doctored peak is still saved"
echo "a beaten quick roofline was marked, said and measured again"
