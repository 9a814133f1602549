#!/usr/bin/env bash
# The shared output options end to end: -o - (stdout holds only the CSV), --export twice,
# JSON Lines (one parsable line per point and path, on stdout and in the file), -q (nothing on
# stderr), -v (one line per point), and --resume over a schema 1 CSV and over a JSON Lines file.
# Usage: cli_outputs.sh <kvbench> <output directory>
set -u
kvbench=$1
dir=$2/outputs
rm -rf "$dir"
mkdir -p "$dir"
fail() { echo "FAIL: $*"; exit 1; }
# 2 contexts x 2 groupings = 4 points, 2 paths each.
grid=(sweep -n 16,33 -d 64 --heads 4 -g 4,1 -r 3 -w 1 --cache-state warm -t 1 --no-roofline)
n_rows=8

# -o -: stdout is the CSV alone, header and one record per row; the tables go to stderr.
"$kvbench" "${grid[@]}" -o - -f CSV >"$dir/stdout.csv" 2>"$dir/stderr" || fail "-o -: exit $?"
/usr/bin/python3 - "$dir/stdout.csv" "$n_rows" <<'PY' || fail "-o -: stdout is not the CSV alone"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == int(sys.argv[2]), len(rows)
assert all(r["path"] in ("cached", "uncached") and float(r["gb_per_s"]) > 0 for r in rows)
assert rows[0]["command_line"].startswith("kvbench sweep -n 16,33"), rows[0]["command_line"]
assert rows[0]["seed"] == "1" and rows[0]["warmup"] == "1" and rows[0]["schema_version"] == "2"
PY
grep -q "Latency" "$dir/stderr" || fail "-o -: the tables are not on stderr"
[ -e ./- ] && fail "-o - wrote a file named -"

# --export twice beside -o: three files, each whole; one message names them all, on stderr.
"$kvbench" "${grid[@]}" -o "$dir/a.csv" --export md:"$dir/a.md" --export json:"$dir/a.json" \
  >"$dir/stdout" 2>"$dir/stderr" || fail "--export: exit $?"
[ "$(($(wc -l <"$dir/a.csv") - 1))" -eq "$n_rows" ] || fail "--export: a.csv does not hold $n_rows rows"
grep -q "### Latency" "$dir/a.md" || fail "--export: a.md is not the markdown report"
/usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert len(r['rows'])==$n_rows" "$dir/a.json" ||
  fail "--export: a.json does not hold $n_rows rows"
grep -q "^wrote $n_rows rows to $dir/a.csv, $dir/a.md, $dir/a.json$" "$dir/stderr" || fail "--export: no wrote line on stderr"
grep -q "^wrote" "$dir/stdout" && fail "the wrote line is on stdout"

# JSON Lines to stdout and to a file: one parsable object per point and path.
"$kvbench" "${grid[@]}" -o - -f jsonl --export jsonl:"$dir/b.jsonl" >"$dir/stdout.jsonl" 2>"$dir/stderr" ||
  fail "jsonl: exit $?"
for file in "$dir/stdout.jsonl" "$dir/b.jsonl"; do
  [ "$(wc -l <"$file")" -eq "$n_rows" ] || fail "jsonl: $file has $(wc -l <"$file") lines, expected $n_rows"
  /usr/bin/python3 -c "
import json, sys
for line in open(sys.argv[1]):
    row = json.loads(line)
    assert row['schema_version'] == 2 and len(row['samples_ns']) == row['reps']" "$file" || fail "jsonl: $file has a line that does not parse"
done

# generate: one line per step and path, 2 groupings x 2 paths x 5 steps.
"$kvbench" generate -p 8 --new 4 -d 64 --heads 4 -g 4,1 -t 1 --cache-state warm -o - -f jsonl >"$dir/gen.jsonl" \
  2>/dev/null || fail "generate jsonl: exit $?"
[ "$(wc -l <"$dir/gen.jsonl")" -eq 20 ] || fail "generate jsonl: $(wc -l <"$dir/gen.jsonl") lines, expected 20"

# -q: the file and nothing else, even with noisy rows or warnings.
"$kvbench" "${grid[@]}" -q -o "$dir/q.csv" >"$dir/stdout" 2>"$dir/stderr" || fail "-q: exit $?"
[ -s "$dir/stdout" ] && fail "-q: stdout is not empty: $(head -3 "$dir/stdout")"
[ -s "$dir/stderr" ] && fail "-q: stderr is not empty: $(head -3 "$dir/stderr")"
[ "$(($(wc -l <"$dir/q.csv") - 1))" -eq "$n_rows" ] || fail "-q: q.csv does not hold $n_rows rows"

# -v: one line per point on stderr.
"$kvbench" "${grid[@]}" -v >/dev/null 2>"$dir/stderr" || fail "-v: exit $?"
[ "$(grep -c '^kvbench: point [1-4]/4 B=1 N=[0-9]* D=64 .*: cached .* median, 3 reps, CV' "$dir/stderr")" -eq 4 ] ||
  fail "-v: not one line per point: $(cat "$dir/stderr")"

# --resume over a schema 1 CSV (gbps, fractions, no reproducibility columns): every point is kept.
/usr/bin/python3 - "$dir/a.csv" "$dir/old.csv" <<'PY' || fail "could not make a schema 1 CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
new_only = {"seed", "warmup", "roofline_peak_gflops", "roofline_peak_gb_per_s", "roofline_source",
            "schema_version", "command_line"}
renamed = {"gb_per_s": "gbps", "latency_cv_pct": "latency_cv", "latency_mdape_pct": "latency_mdape"}
with open(sys.argv[2], "w", newline="") as out:
    names = [renamed.get(c, c) for c in rows[0] if c not in new_only]
    writer = csv.DictWriter(out, names, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        old = {renamed.get(c, c): v for c, v in r.items() if c not in new_only}
        for c in ("latency_cv", "latency_mdape"):
            old[c] = repr(float(old[c]) / 100)
        writer.writerow(old)
PY
"$kvbench" "${grid[@]}" -o "$dir/old.csv" --resume >/dev/null 2>"$dir/stderr" || fail "resume of a schema 1 csv: exit $?"
grep -q -- "--resume: 4 of 4 points already in" "$dir/stderr" || fail "a schema 1 csv was not resumed: $(cat "$dir/stderr")"
head -1 "$dir/old.csv" | grep -q ",gb_per_s," || fail "the resumed file was not rewritten in schema 2"

# --resume over a JSON Lines file cut after its first point: the others are measured and appended.
head -2 "$dir/b.jsonl" >"$dir/c.jsonl"
"$kvbench" "${grid[@]}" -o "$dir/c.jsonl" --resume >/dev/null 2>"$dir/stderr" || fail "resume of jsonl: exit $?"
grep -q -- "--resume: 1 of 4 points already in" "$dir/stderr" || fail "jsonl was not resumed: $(cat "$dir/stderr")"
[ "$(wc -l <"$dir/c.jsonl")" -eq "$n_rows" ] || fail "the resumed jsonl has $(wc -l <"$dir/c.jsonl") lines"
echo "outputs: -o -, --export, jsonl, -q, -v and resumes checked"
