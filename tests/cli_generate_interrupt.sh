#!/usr/bin/env bash
# A signal in the middle of a generation: it stops, exits with 128 + the signal's number, names
# the signal, and the CSV holds the configurations announced as finished.
# Usage: cli_generate_interrupt.sh <kvbench> <output directory> INT|TERM|HUP
# No sleeping: the signal follows the first configuration's -v line.
set -u
kvbench=$1
dir=$2
signal=$3
name="generate-interrupted-$signal"
out="$dir/$name.csv"
err="$dir/$name.err"
rm -f "$out" "$err" "$dir/$name.fifo"
fail() { echo "FAIL ($signal): $*"; cat "$err" 2>/dev/null; exit 1; }
case $signal in INT) expected=130 ;; TERM) expected=143 ;; HUP) expected=129 ;; *) fail "unknown signal" ;; esac
source "$(dirname "$0")/interrupt_on_event.sh"

# 24 configurations of the cached path, the first the smallest: the rest run for seconds after its
# line, so the signal comes long before the end.
signal_on_line "$signal" "* steps in *" "$dir/$name.fifo" "$err" /dev/null -- \
  "$kvbench" generate -p 64 --new 8192 -d 64 --heads 4 -g 4,2,1 -b 1-8 --paths cached -t 1 --cache-state warm \
  --yes -v --format csv -o "$out"

[ "$code" -eq "$expected" ] || fail "exit code $code, expected $expected"
grep -q "^kvbench: interrupted (SIG$signal) after [0-9]* of [0-9]* steps; .*$name.csv holds the finished ones$" "$err" \
  || fail "no line naming the signal and the file"
[ -f "$out" ] || fail "no file written"
head -1 "$out" | grep -q '^path,batch,seq,' || fail "file has no CSV header"
echo "SIG$signal: exit $code, $(($(wc -l <"$out") - 1)) rows"
