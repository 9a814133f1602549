#!/usr/bin/env bash
# A signal in the middle of a sweep: it stops, exits with 128 + the signal's number, and the CSV
# holds exactly the points announced as finished, each with the median it announced.
# Usage: cli_interrupt.sh <kvbench> <output directory> [INT|TERM|HUP|INT2]
# INT2 is a second Ctrl-C right after the first: the process dies at once, and the file
# still holds every point announced as finished, because it is saved after each one.
# No sleeping: the signal follows the first "point_finished" event of --progress jsonl.
set -u
kvbench=$1
dir=$2
signal=${3:-INT}
name="interrupted-$signal"
out="$dir/$name.csv"
err="$dir/$name.err"
fifo="$dir/$name.fifo"
events="$dir/$name.events"
rm -f "$out" "$err" "$err.watchdog" "$fifo" "$events" "$out".tmp-*
fail() { echo "FAIL ($signal): $*"; cat "$err" 2>/dev/null; exit 1; }
case $signal in INT | INT2) expected=130 ;; TERM) expected=143 ;; HUP) expected=129 ;; *) fail "unknown signal" ;; esac

mkfifo "$fifo"
# 256 small warm points (N = 16, 32, ..., 4096): the first finishes long before the last.
"$kvbench" sweep -n 16-4096+16 -d 64 --heads 4 -g 4 -r 20 -w 1 --cache-state warm -t 1 --yes \
  --progress jsonl --format csv -o "$out" >/dev/null 2>"$fifo" &
pid=$!
exec 3<"$fifo"
sent=0
# A generous overall timeout: the test waits for an event, never for a guessed duration.
deadline=$((SECONDS + 120))
while [ "$SECONDS" -lt "$deadline" ] && IFS= read -r -t 120 line <&3; do
  printf '%s\n' "$line" >>"$err"
  case $line in
    *'"event":"point_finished"'*)
      if [ "$signal" = INT2 ]; then kill -INT "$pid"; kill -INT "$pid"; else kill -"$signal" "$pid"; fi
      sent=1
      break
      ;;
  esac
done
if [ "$sent" -ne 1 ]; then kill -KILL "$pid" 2>/dev/null; fail "no point finished within 120 s"; fi
# The rest of stderr, until the sweep exits and closes it; a sweep that ignores the signal hangs here.
timeout 120 cat <&3 >>"$err"
exec 3<&-
# Wait for the sweep to exit, with a watchdog: `kill -0` cannot tell an exited, not yet reaped
# process from a running one, and a sanitizer build may still be checking for leaks here.
# Its output goes to /dev/null so that a leftover sleep holds no pipe of the test runner's.
(exec >/dev/null 2>&1; sleep 120; kill -KILL "$pid" && echo watchdog >"$err.watchdog") &
watchdog=$!
wait "$pid"
code=$?
pkill -P "$watchdog" 2>/dev/null
kill "$watchdog" 2>/dev/null
wait "$watchdog" 2>/dev/null
[ -f "$err.watchdog" ] && { rm -f "$err.watchdog"; fail "still running 120 s after SIG$signal"; }
rm -f "$fifo"

[ "$code" -eq "$expected" ] || fail "exit code $code, expected $expected"
[ -f "$out" ] || fail "no file written"
if [ "$signal" != INT2 ]; then  # killed, it says nothing and may leave its temporary
  grep -q "interrupted (SIG$signal) after [0-9]* of 256 points; .*$name.csv holds the [0-9]* finished: the same command with --resume measures the other [0-9]*$" "$err" \
    || fail "no message saying the sweep was interrupted and how to resume it"
  ls "$dir" | grep -q "$name.csv.tmp" && fail "temporary file left behind"
fi
head -1 "$out" | grep -q '^path,batch,seq,' || fail "file has no CSV header"

# index, cached median and uncached median (µs) of every point announced as finished.
sed -n 's/.*"event":"point_finished","index":\([0-9]*\),.*"cached":\([^,}]*\),"uncached":\([^,}]*\).*/\1 \2 \3/p' \
  "$err" >"$events"
n_finished=$(wc -l <"$events")
[ "$n_finished" -ge 1 ] || fail "no point_finished event could be read"
[ "$n_finished" -lt 256 ] || fail "all 256 points finished: the signal came too late to test anything"

# Every row belongs to a finished point (N = 16 (index + 1)), carries the median announced for it
# (the CSV prints µs with 3 decimals), and is whole: it ends with the timestamp, the last column.
awk -F, -v events="$events" '
  BEGIN {
    while ((getline line < events) > 0) {
      split(line, f, " "); finished[f[1]] = 1; median["cached", f[1]] = f[2]; median["uncached", f[1]] = f[3]
    }
  }
  NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; n_header = NF; next }
  {
    n_rows++
    k = $col["seq"] / 16 - 1
    path = $col["path"]
    if (!(k in finished)) { print "row for N=" $col["seq"] " whose point never finished"; bad = 1; next }
    if (path != "cached" && path != "uncached") { print "row " NR ": path " path; bad = 1; next }
    d = $col["latency_us_median"] - median[path, k]
    if (d < -0.002 || d > 0.002) { print "N=" $col["seq"] " " path ": median " $col["latency_us_median"] " in the file, " median[path, k] " announced"; bad = 1 }
    if (NF < n_header || $NF !~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T/) { print "row " NR " is cut"; bad = 1 }
    seen[path, k]++
  }
  END {
    for (k in finished) for (p = 1; p <= 2; p++) {
      path = p == 1 ? "cached" : "uncached"
      if (seen[path, k] != 1) { print "point " k " has " seen[path, k] + 0 " " path " rows, expected 1"; bad = 1 }
    }
    exit bad
  }' "$out" || fail "the file does not hold exactly the finished points"
echo "SIG$signal after $n_finished finished points: exit $code, $(($(wc -l <"$out") - 1)) rows, each as announced"
