#!/usr/bin/env bash
# Input files that are not what they claim (docs/cli.md, "Behaviour you can rely on"): a FIFO,
# a device or a directory, a report nested without end, a one-line JSON report, a report whose
# figures or header no kvbench wrote. Every reader answers with exit 2 and a line naming the
# file, at once: none blocks, reads without end, crashes or takes the file as data.
# Usage: cli_input_files.sh <kvbench> <output directory>
set -u
kvbench=$1
dir=$2/input_files
rm -rf "$dir" && mkdir -p "$dir"
err="$dir/err"
fail() { echo "FAIL: $*"; cat "$err" 2>/dev/null; exit 1; }
unset KVBENCH_DB
run=(-t 1 -d 64 --heads 4 -g 4 -n 16,32 -r 2 -w 0 --cache-state warm --no-roofline -q)
"$kvbench" sweep "${run[@]}" -o "$dir/base.json" 2>"$err" || fail "base run: exit $?"
"$kvbench" sweep "${run[@]}" -o "$dir/base.csv" 2>"$err" || fail "base csv run: exit $?"

# Refused with exit 2 and the expected words; a reader that blocks is stopped by the timeout (exit 124).
refused() {
  local words=$1; shift
  timeout 60 "$kvbench" "$@" >/dev/null 2>"$err"
  local status=$?
  [ "$status" -eq 2 ] || fail "$* : exit $status, expected 2"
  grep -q -- "$words" "$err" || fail "$* : no '$words' in: $(cat "$err")"
}

mkfifo "$dir/fifo"
for special in "$dir/fifo" /dev/zero "$dir"; do
  refused "$special" compare "$dir/base.json" "$special"
  refused "$special" merge "$dir/base.json" "$special" -o "$dir/merged.json"
  refused "$special" plan --model llama-3-8b --hardware h100-sxm --tpot 50ms --calibrate "$special"
  refused "$special" sweep -n 16 --dry-run --roofline "$special"
  refused "$special" memory --model-config "$special" --params 1B
  refused "$special" memory --presets "$special" --model llama-3-8b
  refused "$special" history --db "$special"
done
[ ! -e "$dir/merged.json" ] || fail "a refused merge wrote its output"

# A row nested 70,000 levels deep, where a reader that printed it back would run out of stack.
/usr/bin/python3 - "$dir" <<'PY' || fail "making the malformed files"
import csv, json, re, sys
d = sys.argv[1]
report = json.load(open(f"{d}/base.json"))
deep = json.dumps(report, indent=2).replace('"variant": ""', '"variant": ' + "[" * 70000 + "]" * 70000, 1)
open(f"{d}/deep.json", "w").write(deep)
open(f"{d}/compact.json", "w").write(json.dumps(report))  # a JSON report on one line
rows = list(csv.reader(open(f"{d}/base.csv")))
header = rows[0]
def write(name, rows):
    csv.writer(open(f"{d}/{name}", "w"), lineterminator="\n").writerows(rows)
write("no-seq.csv", [[c for i, c in enumerate(r) if header[i] != "seq"] for r in rows])
write("nan-speedup.csv", [header] + [[("nan" if header[i] == "speedup" and r[0] == "cached" else c) for i, c in enumerate(r)] for r in rows[1:]])
write("twice.csv", [header + ["seq"]] + [r + [r[header.index("seq")]] for r in rows[1:]])
write("wide.csv", [header + [f"x{i}" for i in range(2000)]] + [r + [""] * 2000 for r in rows[1:]])
write("schema-99.csv", [header] + [[("99" if header[i] == "schema_version" else c) for i, c in enumerate(r)] for r in rows[1:]])
write("no-latency.csv", [header] + [[("" if header[i] == "latency_us_median" else c) for i, c in enumerate(r)] for r in rows[1:]])
write("past-max.csv", [header] + [[(str(float(r[header.index("latency_us_max")]) * 1000) if header[i] == "latency_us_median" else c) for i, c in enumerate(r)] for r in rows[1:]])
faster = json.load(open(f"{d}/base.json"))
for row in faster["rows"]:
    for column in ("latency_us_median", "latency_us_min", "latency_us_max"):
        row[column] /= 1000  # a 1000x speed-up its own samples deny
open(f"{d}/not-its-samples.json", "w").write(json.dumps(faster, indent=2))
dup = json.dumps(report, indent=2).replace('"latency_us_median": ', '"latency_us_median": 99999, "latency_us_median": ', 1)
open(f"{d}/dup-key.json", "w").write(dup)
open(f"{d}/dup-config.json", "w").write('{"hidden_size": 64, "hidden_size": 128, "num_hidden_layers": 2, '
                                         '"num_attention_heads": 4, "vocab_size": 100}')
write("text-flops.csv", [header] + [[("x" if header[i] == "flops" else c) for i, c in enumerate(r)] for r in rows[1:]])
def cell(name, column, value, row=None):  # `column` set to `value` on every row, or on row `row` (1-based)
    write(name, [header] + [[(value if header[i] == column and (row is None or n == row) else c) for i, c in enumerate(r)]
                            for n, r in enumerate(rows[1:], 1)])
cell("seq-0.csv", "seq", "0")
cell("kv-f99.csv", "kv_dtype", "f99")
cell("lukewarm.csv", "cache_state", "lukewarm")
cell("seq-abc.csv", "seq", "abc", 2)
cell("nan-speedup-1.csv", "speedup", "nan", 1)
cell("reps-0.csv", "reps", "0")
cell("min-above.csv", "latency_us_min", "1000", 1)
cell("threads-max.csv", "threads", "18446744073709551615", 1)
cell("prefix-max.csv", "shared_prefix", "18446744073709551615", 1)
cell("kv-above-bytes.csv", "kv_bytes", "999999999", 1)
cell("peak-gflops-huge.csv", "roofline_peak_gflops", "1e308", 1)
cell("nul-median.csv", "latency_us_median", "22." + chr(0) + "797", 1)
write("dup-row.csv", rows + [rows[1]])
write("header-only.csv", rows[:1])
lines = open(f"{d}/base.csv").read().split("\n")
open(f"{d}/open-quote.csv", "w").write("\n".join(lines[:2] + ['"' + lines[2]] + lines[3:]))  # a quote never closed
text_seq = json.loads(json.dumps(report)); text_seq["rows"][1]["seq"] = str(text_seq["rows"][1]["seq"])
open(f"{d}/text-seq.json", "w").write(json.dumps(text_seq, indent=2))  # kvbench writes "seq": 16
text_noisy = json.loads(json.dumps(report)); text_noisy["rows"][0]["noisy"] = "false"
open(f"{d}/text-noisy.json", "w").write(json.dumps(text_noisy, indent=2))
empty = dict(report); empty["rows"] = []
open(f"{d}/past-double.json", "w").write(  # a minimum of 1e400, which no double holds
    re.sub(r'"latency_us_min": [^,]*', '"latency_us_min": 1e400', json.dumps(report, indent=2), count=1))
open(f"{d}/gbench-past-double.json", "w").write(
    '{"context": {}, "benchmarks": [{"name": "BM_x", "run_type": "iteration", "real_time": 1e400, '
    '"cpu_time": 1, "time_unit": "ns", "iterations": 1}]}')
open(f"{d}/gbench-twice.json", "w").write(
    '{"context": {}, "benchmarks": [{"name": "BM_x", "name": "BM_y", "run_type": "iteration", "real_time": 1, '
    '"cpu_time": 1, "time_unit": "ns", "iterations": 1}]}')
open(f"{d}/no-rows.json", "w").write(json.dumps(empty, indent=2))
write("huge-seq.csv", [header] + [[("18446744073709551615" if header[i] == "seq" else c) for i, c in enumerate(r)] for r in rows[1:]])
PY
refused "nested deeper" compare "$dir/base.json" "$dir/deep.json"
refused "nested deeper" merge "$dir/deep.json" -o "$dir/merged.json"
refused "nested deeper" plan --model llama-3-8b --hardware h100-sxm --tpot 50ms --calibrate "$dir/deep.json"
refused "no column seq" merge "$dir/no-seq.csv" -o "$dir/merged.csv"
refused "column speedup: 'nan' is not a finite number" compare --metric speedup "$dir/base.csv" "$dir/nan-speedup.csv"
refused "names column seq twice" compare "$dir/base.csv" "$dir/twice.csv"
refused "2068 columns" compare "$dir/base.csv" "$dir/wide.csv"
refused "schema_version 99" compare "$dir/base.csv" "$dir/schema-99.csv"
refused 'the key "latency_us_median" appears twice' compare "$dir/base.json" "$dir/dup-key.json"
refused 'the key "hidden_size" appears twice' memory --model-config "$dir/dup-config.json" --params 1B
refused "column flops: 'x' is not a whole number" compare "$dir/base.csv" "$dir/text-flops.csv"
refused "column latency_us_median is missing or empty" compare "$dir/base.csv" "$dir/no-latency.csv"
refused "lies outside its own min and max" compare "$dir/base.csv" "$dir/past-max.csv"
refused "is not the median of its samples_ns" compare "$dir/base.json" "$dir/not-its-samples.json"
# One check of a row for compare, merge, --resume and --calibrate: the file and row named, exit 2, nothing written.
refused "seq-0.csv cannot be compared: row 1: column seq: '0' is not a whole number of at least 1" compare "$dir/base.csv" "$dir/seq-0.csv"
refused "row 1: column kv_dtype: 'f99' is not a KV type" compare "$dir/base.csv" "$dir/kv-f99.csv"
refused "row 1: column cache_state: 'lukewarm' is not warm or cold" compare "$dir/base.csv" "$dir/lukewarm.csv"
refused 'row 1: column latency_us_median: .22.\\x00797. is not a time' compare "$dir/base.csv" "$dir/nul-median.csv"
refused "row 1: column roofline_peak_gflops: '1e308' is not a peak from 0.001 to 1e+12 GFLOP/s" compare "$dir/base.csv" "$dir/peak-gflops-huge.csv"
refused "open-quote.csv cannot be compared: row 2: a quoted field is not closed" compare "$dir/base.csv" "$dir/open-quote.csv"
refused "seq-abc.csv is not a kvbench report: row 2: column seq: 'abc' is not a whole number" merge "$dir/base.csv" "$dir/seq-abc.csv" -o "$dir/merged.json"
refused "row 5 repeats row 1" merge "$dir/dup-row.csv" -o "$dir/merged.json"
refused 'text-seq.json cannot be compared: row 2: column seq: "16" is a JSON string, not a JSON number' compare "$dir/base.json" "$dir/text-seq.json"
refused 'text-seq.json is not a kvbench report: row 2: column seq: "16" is a JSON string' merge "$dir/text-seq.json" -o "$dir/merged.json"
refused 'row 2: column seq: "16" is a JSON string' plan --model llama-3-8b --hardware h100-sxm --tpot 50ms --calibrate "$dir/text-seq.json"
refused 'row 1: column noisy: "false" is a JSON string, not true or false' compare "$dir/base.json" "$dir/text-noisy.json"
# A number no double holds, in the project's words and naming the key, as merge says it.
refused 'past-double.json cannot be compared: the key "latency_us_min" holds 1e400, past the largest number a double holds' \
  compare "$dir/base.json" "$dir/past-double.json"
refused 'past-double.json is not a kvbench report: the key "latency_us_min" holds 1e400, past' merge "$dir/past-double.json" -o "$dir/merged.json"
refused 'gbench-past-double.json cannot be compared: the key "real_time" holds 1e400, past' \
  compare "$dir/gbench-past-double.json" "$dir/gbench-past-double.json"
refused 'gbench-twice.json cannot be compared: the key "name" appears twice' compare "$dir/gbench-twice.json" "$dir/gbench-twice.json"
refused "header-only.csv holds no rows" merge "$dir/base.csv" "$dir/header-only.csv" -o "$dir/merged.json"
refused "no-rows.json holds no rows" merge "$dir/no-rows.json" -o "$dir/merged.json"
refused "row 1: column kv_bytes: 999999999 is more than the step's bytes" plan --model llama-3-8b --hardware h100-sxm --tpot 50ms --calibrate "$dir/kv-above-bytes.csv"
refused "row 5 repeats row 1" plan --model llama-3-8b --hardware h100-sxm --tpot 50ms --calibrate "$dir/dup-row.csv"
[ ! -e "$dir/merged.json" ] || fail "a refused merge wrote its output"
timeout 60 "$kvbench" compare "$dir/base.json" "$dir/no-rows.json" >/dev/null 2>"$err"
[ $? -eq 3 ] && grep -q "no-rows.json holds no rows" "$err" || fail "compare of an empty report: $(cat "$err")"
for bad in nan-speedup-1 reps-0 min-above threads-max prefix-max dup-row; do
  cp "$dir/$bad.csv" "$dir/resume.csv"
  refused "resume.csv is not a kvbench report: row" sweep "${run[@]}" -o "$dir/resume.csv" --resume
  cmp -s "$dir/$bad.csv" "$dir/resume.csv" || fail "a refused --resume changed its file ($bad)"
done
cp "$dir/huge-seq.csv" "$dir/resume.csv"
refused "column seq: '18446744073709551615' is not a whole number of at most 2^30" sweep "${run[@]}" -o "$dir/resume.csv" --resume
cmp -s "$dir/huge-seq.csv" "$dir/resume.csv" || fail "a refused --resume changed its file"

# A database whose latency is text, which SQLite reads as 0: no -100 % comparison.
"$kvbench" sweep "${run[@]}" --db "$dir/runs.sqlite" -o "$dir/run1.csv" 2>"$err" || fail "first database run: exit $?"
"$kvbench" sweep "${run[@]}" --db "$dir/runs.sqlite" -o "$dir/run2.csv" 2>"$err" || fail "second database run: exit $?"
# A database run without rows, and a database without runs, as an empty report: merge refuses them.
/usr/bin/python3 - "$dir" <<'PY' || fail "emptying databases"
import shutil, sqlite3, sys
d = sys.argv[1]
for name, where in (("empty-run", "WHERE run_id = 2"), ("no-runs", "")):
    shutil.copy(f"{d}/runs.sqlite", f"{d}/{name}.sqlite")
    db = sqlite3.connect(f"{d}/{name}.sqlite")
    db.execute(f"DELETE FROM samples WHERE point_id IN (SELECT point_id FROM points {where})")
    db.execute(f"DELETE FROM points {where}")
    if not where:
        db.execute("DELETE FROM runs")
    db.commit()
PY
refused "empty-run.sqlite run 2 holds no rows" merge "$dir/empty-run.sqlite" -o "$dir/merged.json"
refused "no-runs.sqlite holds no runs" merge "$dir/base.csv" "$dir/no-runs.sqlite" -o "$dir/merged.json"
[ ! -e "$dir/merged.json" ] || fail "a refused merge wrote its output"
/usr/bin/python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute(\"UPDATE points SET latency_us_median = 'abc' WHERE rowid = (SELECT max(rowid) FROM points)\")
db.commit()" "$dir/runs.sqlite" || fail "editing the database"
refused "column latency_us_median: 'abc' is not a time" compare --db "$dir/runs.sqlite" run:1 run:2
# A TEXT seq, which SQLite reads as 0: merge refuses it, naming the database's run and row.
/usr/bin/python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute(\"UPDATE points SET seq = 'abc' WHERE rowid = (SELECT min(rowid) FROM points)\")
db.commit()" "$dir/runs.sqlite" || fail "editing the database"
refused "runs.sqlite run 1: row 1: column seq: 'abc' is not a whole number" merge "$dir/runs.sqlite" -o "$dir/merged.json"
[ ! -e "$dir/merged.json" ] || fail "a refused merge wrote its output"

# A damaged database target is refused before the first point is measured, and left as it is.
/usr/bin/python3 - "$dir" <<'PY' || fail "damaging databases"
import shutil, sqlite3, sys
d = sys.argv[1]
for name in ("pages", "version"):
    shutil.copy(f"{d}/runs.sqlite", f"{d}/{name}.sqlite")
with open(f"{d}/pages.sqlite", "r+b") as f:  # the header stays valid, pages 2 to 5 are overwritten
    f.seek(4096); f.write(b"\xa5" * 4 * 4096)
db = sqlite3.connect(f"{d}/version.sqlite"); db.execute("PRAGMA user_version = -1"); db.commit(); db.close()
PY
ln -s loop-b.sqlite "$dir/loop-a.sqlite" && ln -s loop-a.sqlite "$dir/loop-b.sqlite"
for target in pages version loop-a; do
  [ -L "$dir/$target.sqlite" ] || cp "$dir/$target.sqlite" "$dir/$target.orig"
  words="is damaged"; [ "$target" = version ] && words="schema -1"; [ "$target" = loop-a ] && words="is a symlink loop"
  refused "$words" sweep "${run[@]}" --db "$dir/$target.sqlite"
  grep -q "^kvbench: error: --db" "$err" || fail "--db $target: refused after measuring? $(cat "$err")"
  [ -L "$dir/$target.sqlite" ] || cmp -s "$dir/$target.orig" "$dir/$target.sqlite" || fail "--db $target: the file changed"
done
refused "is damaged" merge "$dir/base.json" -o "$dir/pages.sqlite"
cmp -s "$dir/pages.orig" "$dir/pages.sqlite" || fail "merge -o a damaged database changed it"

# A JSON report written on one line is a JSON report, every row of it merged.
"$kvbench" merge "$dir/compact.json" -o "$dir/compact-merged.csv" 2>"$err" || fail "merge of a one-line report: exit $?"
[ "$(($(wc -l <"$dir/compact-merged.csv") - 1))" -eq 4 ] || fail "a one-line report merged $(($(wc -l <"$dir/compact-merged.csv") - 1)) rows of 4"
echo "special files, a deep row and malformed reports refused at once; a one-line report merged whole"
