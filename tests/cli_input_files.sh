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
import csv, json, sys
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
write("huge-seq.csv", [header] + [[("18446744073709551615" if header[i] == "seq" else c) for i, c in enumerate(r)] for r in rows[1:]])
PY
refused "nested deeper" compare "$dir/base.json" "$dir/deep.json"
refused "nested deeper" merge "$dir/deep.json" -o "$dir/merged.json"
refused "nested deeper" plan --model llama-3-8b --hardware h100-sxm --tpot 50ms --calibrate "$dir/deep.json"
refused "no column seq" merge "$dir/no-seq.csv" -o "$dir/merged.csv"
refused "speedup 'nan' is not a finite number" compare --metric speedup "$dir/base.csv" "$dir/nan-speedup.csv"
refused "names column seq twice" compare "$dir/base.csv" "$dir/twice.csv"
refused "2068 columns" compare "$dir/base.csv" "$dir/wide.csv"
refused "schema_version 99" compare "$dir/base.csv" "$dir/schema-99.csv"
refused 'the key "latency_us_median" appears twice' compare "$dir/base.json" "$dir/dup-key.json"
refused 'the key "hidden_size" appears twice' memory --model-config "$dir/dup-config.json" --params 1B
refused "flops 'x' is not a whole number" compare "$dir/base.csv" "$dir/text-flops.csv"
refused "latency_us_median is empty" compare "$dir/base.csv" "$dir/no-latency.csv"
refused "lies outside its own min and max" compare "$dir/base.csv" "$dir/past-max.csv"
refused "is not the median of its samples_ns" compare "$dir/base.json" "$dir/not-its-samples.json"
cp "$dir/huge-seq.csv" "$dir/resume.csv"
refused "could pass what 64 bits hold" sweep "${run[@]}" -o "$dir/resume.csv" --resume
cmp -s "$dir/huge-seq.csv" "$dir/resume.csv" || fail "a refused --resume changed its file"

# A database whose latency is text, which SQLite reads as 0: no -100 % comparison.
"$kvbench" sweep "${run[@]}" --db "$dir/runs.sqlite" -o "$dir/run1.csv" 2>"$err" || fail "first database run: exit $?"
"$kvbench" sweep "${run[@]}" --db "$dir/runs.sqlite" -o "$dir/run2.csv" 2>"$err" || fail "second database run: exit $?"
/usr/bin/python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute(\"UPDATE points SET latency_us_median = 'abc' WHERE rowid = (SELECT max(rowid) FROM points)\")
db.commit()" "$dir/runs.sqlite" || fail "editing the database"
refused "latency_us_median '0' is not a positive time" compare --db "$dir/runs.sqlite" run:1 run:2

# A JSON report written on one line is a JSON report, every row of it merged.
"$kvbench" merge "$dir/compact.json" -o "$dir/compact-merged.csv" 2>"$err" || fail "merge of a one-line report: exit $?"
[ "$(($(wc -l <"$dir/compact-merged.csv") - 1))" -eq 4 ] || fail "a one-line report merged $(($(wc -l <"$dir/compact-merged.csv") - 1)) rows of 4"
echo "special files, a deep row and malformed reports refused at once; a one-line report merged whole"
