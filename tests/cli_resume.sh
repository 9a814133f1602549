#!/usr/bin/env bash
# --resume: a sweep stopped after some points, run again with the same -o, measures only the
# others; the file ends with every point exactly once, the first run's rows unchanged. Rows of
# another build or another repetition policy are not reused.
# Usage: cli_resume.sh <kvbench> <output directory>
set -u
kvbench=$1
dir=$2
out="$dir/resumed.csv"
err="$dir/resumed.err"
fifo="$dir/resumed.fifo"
rm -f "$out" "$out.before" "$err" "$fifo" "$out".tmp-* "$dir/resumed.json"
fail() { echo "FAIL: $*"; cat "$err" 2>/dev/null; exit 1; }
grid=(sweep -n 16-1024+16 -d 64 --heads 4 -g 4 -r 5 -w 1 --cache-state warm -t 1 --format csv -o "$out")
n_points=64

source "$(dirname "$0")/interrupt_on_event.sh"

# 1. Stop the sweep after its first finished point (the event, not a guessed delay).
interrupt_on_event point_finished "$fifo" "$err" /dev/null -- "$kvbench" "${grid[@]}" --progress jsonl
[ "$code" -eq 130 ] || fail "first run: exit $code, expected 130"
first_rows=$(($(wc -l <"$out") - 1))
[ "$first_rows" -ge 2 ] && [ "$first_rows" -lt $((2 * n_points)) ] || fail "first run wrote $first_rows rows"
# The measured columns of the first run (everything before the provenance: the timestamp changes).
cut -d, -f1-34 "$out" | tail -n +2 >"$dir/resumed.first"

# 2. Resume: only the other points are measured.
"$kvbench" "${grid[@]}" --resume >/dev/null 2>"$err" || fail "resume: exit $?"
grep -q -- "--resume: $((first_rows / 2)) of $n_points points already in" "$err" || fail "resume did not say what it kept"
rows=$(($(wc -l <"$out") - 1))
[ "$rows" -eq $((2 * n_points)) ] || fail "$rows rows after the resume, expected $((2 * n_points))"
dups=$(tail -n +2 "$out" | cut -d, -f1,3 | sort | uniq -d | wc -l)
[ "$dups" -eq 0 ] || fail "$dups (path, N) pairs appear twice"
while IFS= read -r kept; do
  grep -qxF -- "$kept" <(cut -d, -f1-34 "$out") || fail "a row of the first run changed: $kept"
done <"$dir/resumed.first"

# 3. Resuming a complete file measures nothing and keeps it.
"$kvbench" "${grid[@]}" --resume >/dev/null 2>"$err" || fail "second resume: exit $?"
grep -q "nothing left to measure" "$err" || fail "a complete file was measured again"
[ $(($(wc -l <"$out") - 1)) -eq $((2 * n_points)) ] || fail "the complete file changed size"

# 4. Rows of another repetition policy are neither reused nor silently replaced: the resume is
#    refused, naming both policies, and the file is left as it was; without --resume, the run
#    measures and writes its own points.
cp "$out" "$out.before"
"$kvbench" sweep -n 16,32 -d 64 --heads 4 -g 4 -r 6 -w 1 --cache-state warm -t 1 --format csv -o "$out" \
  --resume >/dev/null 2>"$err"
code=$?
[ "$code" -eq 2 ] || fail "resume with -r 6: exit $code, expected 2"
grep -q -- "--resume: 4 rows of .* measured these points otherwise (reps=5 warmup=1, this run reps=6 warmup=1)" "$err" \
  || fail "the refusal does not name the policies"
cmp -s "$out" "$out.before" || fail "a refused resume changed the file"
"$kvbench" sweep -n 16,32 -d 64 --heads 4 -g 4 -r 6 -w 1 --cache-state warm -t 1 --format csv -o "$out" \
  >/dev/null 2>"$err" || fail "run with -r 6: exit $?"
[ "$(grep -c ',reps=6 warmup=1,' "$out")" -eq 4 ] || fail "the two points were not measured with -r 6"
[ $(($(wc -l <"$out") - 1)) -eq 4 ] || fail "a run without --resume kept other rows"

# 5. Rows of another build are not reused, and the user is told.
sed -E -i '2,$s/,[0-9a-f]{7,}(-dirty)?,(Release|RelWithDebInfo|Debug|MinSizeRel),/,0000000,\2,/' "$out"
"$kvbench" sweep -n 16,32 -d 64 --heads 4 -g 4 -r 6 -w 1 --cache-state warm -t 1 --format csv -o "$out" \
  --resume >/dev/null 2>"$err" || fail "resume over another build: exit $?"
grep -q "not by this build" "$err" || fail "rows of another build were not reported"
grep -q -- "--resume: 0 of 2 points already in" "$err" || fail "rows of another build were reused"
[ $(($(wc -l <"$out") - 1)) -eq 4 ] || fail "rows of another build were kept"

# 6. JSON: read back with its samples, resumed with nothing to do.
json="$dir/resumed.json"
"$kvbench" sweep -n 16,33 -d 64 --heads 4 -g 4,1 -r 3 -w 1 --cache-state warm -t 1 --format json -o "$json" \
  >/dev/null 2>"$err" || fail "json run: exit $?"
cp "$json" "$json.before"
"$kvbench" sweep -n 16,33 -d 64 --heads 4 -g 4,1 -r 3 -w 1 --cache-state warm -t 1 --format json -o "$json" \
  --resume >/dev/null 2>"$err" || fail "json resume: exit $?"
grep -q "4 of 4 points already in" "$err" || fail "the json rows were not reused"
# Same rows and samples; only the environment's timestamp and command line (--resume) may differ.
run_only='"timestamp"|"command_line"'
diff <(grep -Ev "$run_only" "$json.before") <(grep -Ev "$run_only" "$json") >/dev/null ||
  fail "the resumed json changed: $(diff <(grep -Ev "$run_only" "$json.before") <(grep -Ev "$run_only" "$json") | head -5)"
# 7. A kept row keeps the provenance it was measured with, byte for byte, in every format; the
#    new rows carry the resume's (and a SQL script holds only them, as a database would).
small=(sweep -d 64 --heads 4 -g 4 -r 2 -w 0 --cache-state warm -t 1 --no-roofline -q)
for format in csv json jsonl; do
  kept="$dir/kept.$format"
  rm -f "$kept" "$kept.sql"
  "$kvbench" "${small[@]}" -n 16 -o "$kept" 2>"$err" || fail "$format: first run: exit $?"
  /usr/bin/python3 - "$kept" "$format" <<'PY' || fail "$format: stamping the first run's provenance"
import json, sys
path, fmt = sys.argv[1], sys.argv[2]
old = {"timestamp": "2020-01-02T03:04:05Z", "command_line": 'kvbench sweep -n 16 -o "first, run"', "shard": "1/1"}
if fmt == "csv":
    import csv
    rows = list(csv.reader(open(path)))
    for row in rows[1:]:
        for column, value in old.items(): row[rows[0].index(column)] = value
    csv.writer(open(path, "w"), lineterminator="\n").writerows(rows)
elif fmt == "json":
    report = json.load(open(path))
    report["environment"].update(old)
    open(path, "w").write(json.dumps(report, indent=2) + "\n")
else:  # edited in place, so that the rest of each line stays as kvbench wrote it
    import re
    text = open(path).read()
    for column, value in old.items():
        text = re.sub(r'"%s":"(?:[^"\\]|\\.)*"' % column, lambda m: '"%s":%s' % (column, json.dumps(value)), text)
    open(path, "w").write(text)
PY
  cp "$kept" "$kept.before"
  "$kvbench" "${small[@]}" -n 16,32 -o "$kept" --export "sql:$kept.sql" --resume 2>"$err" || fail "$format: resume: exit $?"
  /usr/bin/python3 - "$kept" "$kept.before" "$format" <<'PY' || fail "$format: provenance after the resume"
import json, sys
path, before, fmt = sys.argv[1:4]
old = {"timestamp": "2020-01-02T03:04:05Z", "command_line": 'kvbench sweep -n 16 -o "first, run"', "shard": "1/1"}
if fmt == "csv":
    import csv
    table = list(csv.reader(open(path)))
    rows = [dict(zip(table[0], r)) for r in table[1:]]
    # Byte for byte: every line of the first run is a line of the resumed file.
    new_lines = open(path).read().splitlines()
    for line in open(before).read().splitlines()[1:]:
        assert line in new_lines, f"a kept row changed: {line}"
elif fmt == "json":
    report = json.load(open(path))
    rows = [{**report["environment"], **row} for row in report["rows"]]  # a row's own fields first
else:
    rows = [json.loads(line) for line in open(path)]
    new_lines = open(path).read().splitlines()
    for line in open(before).read().splitlines():
        assert line in new_lines, f"a kept line changed: {line}"
assert len(rows) == 4, f"{len(rows)} rows"
for row in rows:
    mine = {column: row.get(column) for column in old}
    if int(row["seq"]) == 16:
        assert mine == old, f"a kept row says {mine}"
    else:
        assert mine["timestamp"] != old["timestamp"] and "--resume" in mine["command_line"], f"a new row says {mine}"
        assert mine["shard"] in ("", None), f"a new row says shard {mine['shard']}"
PY
  [ "$(grep -c "INSERT INTO points" "$kept.sql")" -eq 2 ] || fail "$format: the SQL script holds the kept rows"
done

echo "resumed after $((first_rows / 2)) of $n_points points: $rows rows, each point once"
