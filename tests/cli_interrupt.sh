#!/usr/bin/env bash
# Ctrl-C in the middle of a sweep: exit 130 within a second, and a valid CSV of the finished points.
# Usage: cli_interrupt.sh <kvbench> <output directory>
set -u
kvbench=$1
out="$2/interrupted.csv"
rm -f "$out"
# Many quick points, so some finish before the signal and many are left after it.
"$kvbench" sweep -n 16-4096+16 -d 64 --heads 4 -g 4 -r 50 -t 1 --format csv -o "$out" >/dev/null 2>"$2/interrupted.err" &
pid=$!
sleep 1.5
kill -INT "$pid"
start=$(date +%s%N)
wait "$pid"
code=$?
waited_ms=$(( ($(date +%s%N) - start) / 1000000 ))
fail() { echo "FAIL: $*"; cat "$2/interrupted.err" 2>/dev/null; exit 1; }
[ "$code" -eq 130 ] || fail "exit code $code, expected 130"
[ "$waited_ms" -lt 1000 ] || fail "took ${waited_ms} ms to stop after SIGINT"
grep -q "interrupted after" "$2/interrupted.err" || fail "no message saying the sweep was interrupted"
[ -f "$out" ] || fail "no file written"
head -1 "$out" | grep -q '^path,batch,seq,' || fail "file has no CSV header"
rows=$(($(wc -l < "$out") - 1))
[ "$rows" -ge 2 ] || fail "only $rows finished rows written"
[ "$rows" -lt 512 ] || fail "all $rows rows written: the signal came too late to test anything"
# Every row is whole: as many fields as the header (no quotes appear in these rows' first fields).
awk -F, 'NR==1{n=NF} NR>1 && $1!="cached" && $1!="uncached"{bad=1} END{exit bad}' "$out" || fail "a row is cut"
ls "$2" | grep -q 'interrupted.csv.tmp' && fail "temporary file left behind"
echo "interrupted after $rows rows, stopped in ${waited_ms} ms"
