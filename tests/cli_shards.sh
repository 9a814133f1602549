#!/usr/bin/env bash
# One grid over many machines (docs/sharding.md): four shard processes, merged, equal the
# one-process run in rows, counts and configuration; merge refuses shards of another build or
# other settings, and overlapping ones; databases merge run by run.
# Usage: cli_shards.sh <kvbench> <output directory>
set -u
kvbench=$1
dir=$2/shards
rm -rf "$dir" && mkdir -p "$dir"
err="$dir/err"
fail() { echo "FAIL: $*"; cat "$err" 2>/dev/null; exit 1; }
unset KVBENCH_DB
grid=(sweep -n 16,32,64,128 -d 64 --heads 4 -g 4,2,1 -r 3 -w 1 --cache-state warm -t 1 --no-roofline -q)

"$kvbench" "${grid[@]}" -o "$dir/one.json" 2>"$err" || fail "one process: exit $?"
for k in 1 2 3 4; do
  "$kvbench" "${grid[@]}" --shard "$k/4" -o "$dir/shard-$k.json" --db "$dir/shard-$k.sqlite" 2>"$err" || fail "shard $k/4: exit $?"
done
"$kvbench" merge "$dir"/shard-{1,2,3,4}.json -o "$dir/merged.json" 2>"$err" || fail "merge: exit $?"
"$kvbench" merge "$dir"/shard-{4,2,3,1}.json -o "$dir/merged.csv" 2>"$err" || fail "merge to csv: exit $?"
# The same rows in the same order, with the same counts and configuration, as the one process.
/usr/bin/python3 - "$dir" <<'PY' || fail "the merged report differs from the one-process run"
import csv, json, sys
d = sys.argv[1]
columns = ["path", "batch", "seq", "dim", "heads", "kv_heads", "head_dim", "layers", "threads", "kv_dtype",
           "flops", "bytes", "kv_bytes", "reps", "cache_state", "reps_policy", "seed", "warmup"]
one = json.load(open(f"{d}/one.json"))["rows"]
merged = json.load(open(f"{d}/merged.json"))["rows"]
shards = [json.load(open(f"{d}/shard-{k}.json")) for k in (1, 2, 3, 4)]
key = lambda row: tuple(str(row[c]) for c in columns)
assert len(one) == 24, len(one)
assert [key(r) for r in merged] == [key(r) for r in one], "merged json"
with open(f"{d}/merged.csv") as f:
    assert [key(r) for r in csv.DictReader(f)] == [key(r) for r in one], "merged csv"
sets = [{key(r) for r in s["rows"]} for s in shards]
assert all(s for s in sets), "an empty shard"
assert sum(len(s) for s in sets) == len(one) and set().union(*sets) == {key(r) for r in one}, "not a partition"
assert [s["environment"]["shard"] for s in shards] == ["1/4", "2/4", "3/4", "4/4"]
assert all(len(r["samples_ns"]) == 3 for r in merged)
# Each row as its shard wrote it (an empty text cell stays "", not null), and the CSV's cells
# printed as a sweep's CSV prints them (docs/csv.md#format), not at the JSON's full precision.
by_key = {key(r): r for r in merged}
for shard in shards:
    for row in shard["rows"]:
        got = by_key[key(row)]
        assert all(got[c] == v for c, v in row.items()), [(c, v, got[c]) for c, v in row.items() if got[c] != v]
def csv_text(column, value):
    if value is None: return ""
    return f"{value:.3f}" if column.startswith("latency_us") else f"{value:.6g}"
with open(f"{d}/merged.csv") as f:
    for row in csv.DictReader(f):
        for c in ("latency_us_median", "latency_us_min", "gflops", "gb_per_s", "speedup", "latency_cv_pct"):
            assert row[c] == csv_text(c, by_key[key(row)][c]), (c, row[c], by_key[key(row)][c])
PY
# Databases merge run by run: four runs, each with its shard and its rows.
"$kvbench" merge "$dir"/shard-{1,2,3,4}.sqlite -o "$dir/merged.sqlite" 2>"$err" || fail "merge databases: exit $?"
/usr/bin/python3 - "$dir/merged.sqlite" <<'PY' || fail "the merged database"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
assert [r[0] for r in db.execute("SELECT shard FROM runs ORDER BY run_id")] == ["1/4", "2/4", "3/4", "4/4"]
assert db.execute("SELECT count(*) FROM points").fetchone()[0] == 24
assert db.execute("SELECT count(*) FROM samples").fetchone()[0] == 72
PY
# Merging a database into itself again adds nothing.
"$kvbench" merge "$dir/shard-1.sqlite" -o "$dir/merged.sqlite" 2>"$dir/again" || fail "merge again: exit $?"
grep -q "already holds the run" "$dir/again" || fail "no word on a run already there: $(cat "$dir/again")"
grep -q "nothing added to .*merged.sqlite: it holds every run already" "$dir/again" && ! grep -q "^merged " "$dir/again" ||
  fail "a merge that added nothing said it merged: $(cat "$dir/again")"
# A CSV shard records no cores or caches: beside a JSON shard of the same machine it is not
# another machine class.
"$kvbench" "${grid[@]}" --shard 2/4 -o "$dir/shard-2.csv" 2>"$err" || fail "shard 2/4 as csv: exit $?"
"$kvbench" merge "$dir/shard-1.json" "$dir/shard-2.csv" -o "$dir/mixed.json" 2>"$dir/mixed" || fail "merge json and csv: exit $?"
! grep -q "machine classes" "$dir/mixed" || fail "one machine called two: $(cat "$dir/mixed")"

# Refused: another build, other settings, overlap, one shard twice; flagged: a shard missing,
# another machine class.
sed 's/"git_commit": "[^"]*"/"git_commit": "0000000deadbeef"/' "$dir/shard-2.json" >"$dir/other-build.json"
"$kvbench" merge "$dir/shard-1.json" "$dir/other-build.json" -o "$dir/x.json" 2>"$dir/refused"
[ $? -eq 2 ] && grep -q "come from different builds" "$dir/refused" || fail "another build: $(cat "$dir/refused")"
"$kvbench" "${grid[@]}" --shard 2/4 --seed 2 -o "$dir/other-seed.json" 2>"$err" || fail "shard with --seed 2: exit $?"
"$kvbench" merge "$dir/shard-1.json" "$dir/other-seed.json" -o "$dir/x.json" 2>"$dir/refused"
[ $? -eq 2 ] && grep -q "different settings: .*seed '2'" "$dir/refused" || fail "other settings: $(cat "$dir/refused")"
"$kvbench" merge "$dir/one.json" "$dir/shard-3.json" -o "$dir/x.json" 2>"$dir/refused"
[ $? -eq 2 ] && grep -q "both hold the row path=" "$dir/refused" || fail "overlap: $(cat "$dir/refused")"
"$kvbench" merge "$dir/shard-3.json" "$dir/shard-3.json" -o "$dir/x.json" 2>"$dir/refused"
[ $? -eq 2 ] && grep -q "are both shard 3/4" "$dir/refused" || fail "a shard twice: $(cat "$dir/refused")"
[ ! -e "$dir/x.json" ] || fail "a refused merge wrote its output"
sed 's/"cpu_model": "[^"]*"/"cpu_model": "Imaginary CPU 9000"/' "$dir/shard-2.json" >"$dir/other-machine.json"
"$kvbench" merge "$dir/shard-1.json" "$dir/other-machine.json" -o "$dir/partial.json" 2>"$dir/flagged" || fail "exit $?"
grep -q "warning: shards 3/4, 4/4 missing" "$dir/flagged" || fail "missing shards not said: $(cat "$dir/flagged")"
grep -q "warning: the shards ran on 2 machine classes: .*Imaginary CPU 9000" "$dir/flagged" || fail "$(cat "$dir/flagged")"
# The merged JSON keeps the other machine on that shard's rows, and compare reads it back.
"$kvbench" compare "$dir/partial.json" "$dir/partial.json" >/dev/null 2>"$err" || fail "compare the merged report: exit $?"
# A JSON Lines shard whose last line a killed sweep cut (no closing brace, no line break): merged
# without that row, as --resume drops it, and said on stderr naming the shard.
for k in 1 2; do
  "$kvbench" merge "$dir/shard-$k.json" -o "$dir/shard-$k.jsonl" 2>"$err" || fail "shard $k to jsonl: exit $?"
done
head -c -40 "$dir/shard-2.jsonl" >"$dir/shard-2-cut.jsonl"
"$kvbench" merge "$dir/shard-1.jsonl" "$dir/shard-2.jsonl" -o "$dir/whole.csv" 2>"$dir/flagged" || fail "exit $?"
grep -q "cut short" "$dir/flagged" && fail "a whole JSON Lines shard said cut: $(cat "$dir/flagged")"
"$kvbench" merge "$dir/shard-1.jsonl" "$dir/shard-2-cut.jsonl" -o "$dir/cut.csv" 2>"$dir/flagged" \
  || fail "merge with a cut shard: exit $?: $(cat "$dir/flagged")"
grep -q "warning: .*shard-2-cut.jsonl: its last line (line $(wc -l <"$dir/shard-2.jsonl")) is cut short, with no line \
break (a sweep stopped while writing it): the row it held is missing from the merged report; finish the shard with \
sweep ... --resume" "$dir/flagged" || fail "a cut last line not said: $(cat "$dir/flagged")"
/usr/bin/python3 - "$dir" <<'PY' || fail "the merge of a cut shard does not hold the other rows"
import csv, json, sys
d = sys.argv[1]
key = lambda row: (row["path"], str(row["seq"]), str(row["kv_heads"]))
lines = lambda name: [json.loads(line) for line in open(f"{d}/{name}")]
expected = sorted(key(r) for r in lines("shard-1.jsonl") + lines("shard-2.jsonl")[:-1])
assert sorted(key(r) for r in csv.DictReader(open(f"{d}/cut.csv"))) == expected
PY
echo "4 shards of 12 points merged into the 24 rows of the one-process run; refusals and warnings as documented"
