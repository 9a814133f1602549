#!/usr/bin/env bash
# The results database end to end (docs/database.md): a sweep killed with SIGKILL in the middle of
# its run leaves a database that passes SQLite's integrity check and holds every point announced
# as finished, each whole with its samples; -o run.sqlite, --db and -f sql store the same run;
# $KVBENCH_DB is the default and --no-db turns it off; compare and history read runs from it.
# No sleeping: the kill follows the fifth "point_finished" event of --progress jsonl.
# Usage: cli_database.sh <kvbench> <output directory>
set -u
kvbench=$1
dir=$2/database
rm -rf "$dir" && mkdir -p "$dir"
err="$dir/err"
fail() { echo "FAIL: $*"; cat "$err" 2>/dev/null; exit 1; }
# SQL through Python's own sqlite3 module, not through kvbench: one row per line, fields by |.
sql() {
  /usr/bin/python3 -c 'import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchall()
print("\n".join("|".join(str(v) for v in row) for row in rows))' "$@"
}
unset KVBENCH_DB
tiny=(sweep -n 16,33 -d 64 --heads 4 -g 4,1 -r 3 -w 1 --cache-state warm -t 1 --no-roofline -q)

# 1. SIGKILL after the fifth finished point of a 256-point sweep.
db="$dir/killed.sqlite"
fifo="$dir/fifo"
mkfifo "$fifo"
"$kvbench" sweep -n 16-4096+16 -d 64 --heads 4 -g 4 -r 20 -w 1 --cache-state warm -t 1 --yes --no-roofline \
  --progress jsonl --db "$db" >/dev/null 2>"$fifo" &
pid=$!
exec 3<"$fifo"
announced=0
deadline=$((SECONDS + 120))
while [ "$SECONDS" -lt "$deadline" ] && IFS= read -r -t 120 line <&3; do
  printf '%s\n' "$line" >>"$err"
  case $line in
    *'"event":"point_finished"'*)
      announced=$((announced + 1))
      if [ "$announced" -ge 5 ]; then kill -KILL "$pid"; break; fi
      ;;
  esac
done
exec 3<&-
if [ "$announced" -lt 5 ]; then kill -KILL "$pid" 2>/dev/null; fail "5 points did not finish within 120 s"; fi
wait "$pid"
code=$?
rm -f "$fifo"
[ "$code" -eq 137 ] || fail "exit $code after SIGKILL, expected 137"

[ "$(sql "$db" 'PRAGMA integrity_check')" = ok ] || fail "integrity check: $(sql "$db" 'PRAGMA integrity_check')"
[ "$(sql "$db" 'SELECT count(*), status FROM runs')" = "1|running" ] || fail "runs: $(sql "$db" 'SELECT * FROM runs')"
# Every announced point is there with the medians it announced (index k is N = 16 (k + 1)).
sed -n 's/.*"event":"point_finished","index":\([0-9]*\),.*"cached":\([^,}]*\),"uncached":\([^,}]*\).*/\1 \2 \3/p' \
  "$err" >"$dir/events"
[ "$(wc -l <"$dir/events")" -eq "$announced" ] || fail "could not read the $announced events"
sql "$db" "SELECT seq, path, latency_us_median FROM points" >"$dir/stored"
while read -r index cached uncached; do
  seq=$((16 * (index + 1)))
  for path_median in "cached $cached" "uncached $uncached"; do
    set -- $path_median
    stored=$(awk -F'|' -v s="$seq" -v p="$1" '$1 == s && $2 == p { print $3 }' "$dir/stored")
    [ -n "$stored" ] || fail "announced point N=$seq has no $1 row in the database"
    awk -v a="$stored" -v b="$2" 'BEGIN { d = a - b; exit !(d > -0.002 && d < 0.002) }' ||
      fail "N=$seq $1: median $stored in the database, $2 announced"
  done
done <"$dir/events"
# Every point in it is whole: both paths, 20 samples each (saved before they are announced, so
# the database may hold a point or two more than were announced, never half of one).
n_points=$(sql "$db" "SELECT count(DISTINCT seq) FROM points")
[ "$n_points" -ge "$announced" ] && [ "$n_points" -lt 256 ] || fail "$n_points points stored, $announced announced"
broken=$(sql "$db" "SELECT seq FROM points GROUP BY seq HAVING count(*) != 2 OR sum(reps) != 40
                    UNION SELECT point_id FROM points WHERE (SELECT count(*) FROM samples s WHERE s.point_id = points.point_id) != 20")
[ -z "$broken" ] || fail "points cut short: $broken"
"$kvbench" history --db "$db" -n 16 >"$dir/history" 2>>"$err" || fail "history on the killed database: exit $?"
grep -q "cached B=1 N=16 D=64 H=4 G=4" "$dir/history" || fail "history does not list N=16: $(cat "$dir/history")"

# 2. -o run.sqlite, --db and --export sql: one run, stored alike; the script loads into SQLite.
"$kvbench" "${tiny[@]}" -o "$dir/o.sqlite" --db "$dir/db.sqlite" --export "sql:$dir/run.sql" 2>"$err" || fail "exit $?"
/usr/bin/python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).executescript(open(sys.argv[2]).read())' \
  "$dir/loaded.sqlite" "$dir/run.sql" || fail "the SQL script does not load"
query="SELECT run_key, status, path, seq, kv_heads, flops, latency_us_median, reps, (SELECT group_concat(ns) FROM samples
       WHERE samples.point_id = points.point_id) FROM points JOIN runs USING (run_id) ORDER BY row_index"
for other in db loaded; do
  [ "$(sql "$dir/o.sqlite" "$query")" = "$(sql "$dir/$other.sqlite" "$query")" ] || fail "-o and $other differ"
done
[ "$(sql "$dir/o.sqlite" 'SELECT count(*) FROM points')" -eq 8 ] || fail "-o run.sqlite holds $(sql "$dir/o.sqlite" 'SELECT count(*) FROM points') rows"
"$kvbench" "${tiny[@]}" -o "$dir/o.sqlite" 2>"$err" || fail "a second run into the same file: exit $?"
[ "$(sql "$dir/o.sqlite" 'SELECT count(*) FROM runs')" -eq 2 ] || fail "a second run did not add itself"

# 3. $KVBENCH_DB names the database every run adds itself to, generate's too; --no-db writes none.
default="$dir/default.sqlite"
KVBENCH_DB="$default" "$kvbench" "${tiny[@]}" 2>"$err" || fail "sweep with KVBENCH_DB: exit $?"
KVBENCH_DB="$default" "$kvbench" "${tiny[@]}" --no-db 2>"$err" || fail "sweep --no-db: exit $?"
KVBENCH_DB="$default" "$kvbench" generate -p 8 --new 3 -d 64 --heads 4 -g 4 -t 1 --cache-state warm -q 2>"$err" ||
  fail "generate with KVBENCH_DB: exit $?"
[ "$(sql "$default" 'SELECT group_concat(command) FROM runs')" = "sweep,generate" ] ||
  fail "runs in the default database: $(sql "$default" 'SELECT run_id, command FROM runs')"
[ "$(sql "$default" "SELECT count(*) FROM points JOIN runs USING (run_id) WHERE command = 'generate' AND phase IS NOT NULL")" -eq 8 ] ||
  fail "generate's rows lack their step columns"

# 4. compare and history read runs of the database: two runs of one commit, by id and by commit.
commit=$(sql "$dir/o.sqlite" 'SELECT git_commit FROM builds')
"$kvbench" compare --db "$dir/o.sqlite" run:1 run:2 --fail-on counts >"$dir/compare" 2>>"$err" || fail "compare run:1 run:2: exit $?"
grep -q "95 % interval" "$dir/compare" || fail "no interval: $(cat "$dir/compare")"
grep -q "8 rows:" "$dir/compare" || fail "not 8 rows compared: $(cat "$dir/compare")"
# Two selections that share a run are refused, whatever their words: each side takes a
# configuration's row from its latest run, so the shared run's rows would meet themselves.
"$kvbench" compare --db "$dir/o.sqlite" --base "commit:${commit:0:8}" --new "commit:${commit:0:8}" >"$dir/same.out" 2>"$dir/same"
[ $? -eq 2 ] && [ ! -s "$dir/same.out" ] && [ "$(wc -l <"$dir/same")" -eq 1 ] &&
  grep -q "kvbench: error: --base commit:${commit:0:8} and --new commit:${commit:0:8} share runs 1, 2: their rows" "$dir/same" ||
  fail "the same commit twice: $(cat "$dir/same")"
"$kvbench" compare --db "$dir/o.sqlite" "commit:${commit:0:8}" machine:m1 >/dev/null 2>"$dir/same"
[ $? -eq 2 ] && grep -q "share runs 1, 2" "$dir/same" || fail "a commit and a machine of the same runs: $(cat "$dir/same")"
"$kvbench" compare --db "$dir/o.sqlite" --base machine:m1 --new run:2 >/dev/null 2>"$dir/same"
[ $? -eq 2 ] && grep -q -- "--base machine:m1 and --new run:2 share run 2: its rows" "$dir/same" ||
  fail "a machine against its latest run: $(cat "$dir/same")"
"$kvbench" compare --db "$dir/o.sqlite" run:2 run:2 >/dev/null 2>"$dir/same"
[ $? -eq 2 ] && grep -q -- "--base run:2 and --new run:2 share run 2" "$dir/same" || fail "run:2 twice: $(cat "$dir/same")"
"$kvbench" compare --db "$dir/o.sqlite" run:1 run:9 >/dev/null 2>"$dir/nine"
[ $? -eq 2 ] && grep -q "run:9: no run of .* matches; 2 runs: run 1 (sweep" "$dir/nine" || fail "run:9: $(cat "$dir/nine")"
"$kvbench" history --db "$dir/o.sqlite" -g 1 --paths cached -f csv >"$dir/history.csv" 2>>"$err" || fail "history -f csv: exit $?"
[ "$(tail -n +2 "$dir/history.csv" | wc -l)" -eq 4 ] || fail "history: $(cat "$dir/history.csv")"
tail -n +2 "$dir/history.csv" | cut -d, -f1 | sort -u | tr '\n' ' ' | grep -q "^1 2 $" || fail "history runs: $(cat "$dir/history.csv")"
# history's JSON writes a configuration's numbers as numbers, as a sweep's JSON does.
"$kvbench" history --db "$dir/o.sqlite" -g 1 --paths cached -f json >"$dir/history.json" 2>>"$err" || fail "history -f json: exit $?"
/usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))[0]; assert r["batch"] == 1 and r["seq"] > 0 and r["kv_dtype"] == "f32", r' \
  "$dir/history.json" || fail "history -f json: $(head -c 400 "$dir/history.json")"
# A --machine that names no run is refused, as compare's selector is, with the machines there are.
# The name matches no CPU model: the runs carry this machine's model, and "epyc" matched an AMD EPYC.
"$kvbench" history --db "$dir/o.sqlite" --machine no-such-cpu >"$dir/history.none" 2>"$dir/history.err"
[ $? -eq 2 ] && [ ! -s "$dir/history.none" ] &&
  grep -q "^kvbench: error: --machine no-such-cpu: no sweep run matches; the database's sweeps have machines m1 (" "$dir/history.err" ||
  fail "history --machine no-such-cpu: $(cat "$dir/history.err")"
echo "SIGKILL after $announced announced points: integrity ok, $n_points whole points stored; -o, --db, sql, KVBENCH_DB, compare and history agree"
