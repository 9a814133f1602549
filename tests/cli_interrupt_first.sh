#!/usr/bin/env bash
# A long sweep says how long it will take before it starts; stopped before its first point
# finishes, it prints no tables (stdout stays empty), says that nothing was measured, and exits 130.
# No sleeping: the signal follows the first "point_started" event of --progress jsonl.
# Usage: cli_interrupt_first.sh <kvbench> <output directory>
set -u
kvbench=$1
dir=$2
out="$dir/first-point.out"
err="$dir/first-point.err"
fifo="$dir/first-point.fifo"
csv="$dir/first-point.csv"
rm -f "$out" "$err" "$fifo" "$csv" "$csv".tmp-*
fail() { echo "FAIL: $*"; cat "$err" 2>/dev/null; exit 1; }

source "$(dirname "$0")/interrupt_on_event.sh"

# One uncached layer at D=2048, N=8192: over a minute at the assumed peaks (--no-roofline), and its
# forward honours Ctrl-C within a layer.
interrupt_on_event point_started "$fifo" "$err" "$out" -- \
  "$kvbench" sweep -n 8192 -d 2048 --heads 16 -g 16 --paths uncached -t 1 --no-roofline --progress jsonl -o "$csv"

[ "$code" -eq 130 ] || fail "exit $code, expected 130"
grep -q "^kvbench: this sweep will take about [0-9.]* min (1 point, assuming 100 GFLOP/s and 20 GB/s; .*): --dry-run lists them; .*first-point.csv keeps every finished point, and the same command with --resume measures the rest after a stop$" "$err" \
  || fail "no estimate before the long run"
grep -q "^kvbench: interrupted (SIGINT) before the first point finished; nothing was measured$" "$err" \
  || fail "the interruption does not say that nothing was measured"
[ ! -s "$out" ] || fail "tables printed with no point finished: $(head -5 "$out")"
echo "stopped before the first point: no tables, exit $code"
