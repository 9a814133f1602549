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

mkfifo "$fifo"
# One uncached layer at D=2048, N=8192: over a minute at the assumed peaks (--no-roofline), and its
# forward honours Ctrl-C within a layer.
"$kvbench" sweep -n 8192 -d 2048 --heads 16 -g 16 --paths uncached -t 1 --no-roofline --progress jsonl \
  -o "$csv" >"$out" 2>"$fifo" &
pid=$!
exec 3<"$fifo"
sent=0
while IFS= read -r -t 120 line <&3; do
  printf '%s\n' "$line" >>"$err"
  case $line in *'"event":"point_started"'*) kill -INT "$pid"; sent=1; break ;; esac
done
[ "$sent" -eq 1 ] || { kill -KILL "$pid" 2>/dev/null; fail "no point started within 120 s"; }
timeout 120 cat <&3 >>"$err"
exec 3<&-
wait "$pid"
code=$?
rm -f "$fifo"

[ "$code" -eq 130 ] || fail "exit $code, expected 130"
grep -q "^kvbench: this sweep will take about [0-9.]* min (1 point, assuming 100 GFLOP/s and 20 GB/s; .*): --dry-run lists them; .*first-point.csv keeps every finished point, and the same command with --resume measures the rest after a stop$" "$err" \
  || fail "no estimate before the long run"
grep -q "^kvbench: interrupted (SIGINT) before the first point finished; nothing was measured$" "$err" \
  || fail "the interruption does not say that nothing was measured"
[ ! -s "$out" ] || fail "tables printed with no point finished: $(head -5 "$out")"
echo "stopped before the first point: no tables, exit $code"
