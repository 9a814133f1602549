#!/usr/bin/env bash
# The files beside a run (--roofline, --hardware, --presets, --model-config) and the paths every
# reader opens (docs/cli.md, "Behaviour you can rely on"): a symlink loop, a special file, a byte-order mark, a
# peak or field out of range, two names one case apart. Each is refused with exit 2 and one line
# naming the file (and key or line), or read as documented.
# Usage: cli_side_files.sh <kvbench> <output directory>
set -u
kvbench=$1
dir=$2/side_files
source_dir=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$dir" && mkdir -p "$dir"
err="$dir/err"
fail() { echo "FAIL: $*"; cat "$err" 2>/dev/null; exit 1; }
unset KVBENCH_DB
run=(-t 1 -d 64 --heads 4 -g 4 -n 16 -r 2 -w 0 --cache-state warm --no-roofline -q)
"$kvbench" sweep "${run[@]}" -o "$dir/base.csv" --export json:"$dir/base.json" 2>"$err" || fail "base run: exit $?"

# Refused with exit 2, one line, and the expected words; a reader that blocks is stopped by the timeout.
refused() {
  local words=$1; shift
  timeout 60 "$kvbench" "$@" >/dev/null 2>"$err"
  local status=$?
  [ "$status" -eq 2 ] || fail "$* : exit $status, expected 2"
  [ "$(wc -l <"$err")" -eq 1 ] || fail "$* : more than one line"
  grep -q -- "$words" "$err" || fail "$* : no '$words' in: $(cat "$err")"
}

# Two links that lead to each other: named a symlink loop, by every reader.
ln -s loop2 "$dir/loop1" && ln -s loop1 "$dir/loop2"
ln -s loop2.csv "$dir/loop1.csv" && ln -s loop1.csv "$dir/loop2.csv"
loop="$dir/loop1"
refused "$loop: it is a symlink loop" compare "$dir/base.csv" "$loop"
refused "$loop: is a symlink loop" merge "$loop" -o "$dir/merged.json"
refused "-o $dir/loop1.csv: is a symlink loop" sweep "${run[@]}" -o "$dir/loop1.csv" --resume
refused "-o $dir/loop1.csv: is a symlink loop" sweep "${run[@]}" -o "$dir/loop1.csv"
refused "is a symlink loop" plan --model llama-3-8b --hardware h100-sxm --tpot 50ms --calibrate "$loop"
refused "'$loop': it is a symlink loop" sweep -n 16 --dry-run --roofline "$loop"
refused "--model-config $loop: is a symlink loop" memory --model-config "$loop" --params 1B
refused "--presets $loop: is a symlink loop" memory --presets "$loop" --model llama-3-8b
[ ! -e "$dir/merged.json" ] || fail "a refused merge wrote its output"
[ -L "$dir/loop1.csv" ] || fail "a refused --resume replaced its link"

# Databases and tiers: an empty file holds no run, a directory takes a database's name inside it,
# a missing tier path is missing.
refused "$loop: is a symlink loop" history --db "$loop"
: >"$dir/empty.sqlite"
refused "the file is empty, so it holds no kvbench run" history --db "$dir/empty.sqlite"
refused "the file is empty, so it holds no kvbench run" compare --db "$dir/empty.sqlite" run:1 run:2
[ ! -s "$dir/empty.sqlite" ] || fail "reading an empty database wrote into it"
refused "is a directory, not a file" history --db "$dir"
mkdir -p "$dir/d"
refused "e.g. $dir/d/runs.sqlite" sweep "${run[@]}" --db "$dir/d"
refused "--tier-path $dir/none: $dir/none: no such file" reload --model llama-3-8b --tier-path "$dir/none"
refused "is a symlink loop" reload --model llama-3-8b --tier-path "$loop"

# --hardware takes a word that is no profile for a file when anything is there, and says what it is.
plan=(plan --model llama-3-8b --tpot 50ms -n 8K --efficiency 0.8 --hardware)
mkfifo "$dir/fifo"
refused "--hardware $dir/fifo: is not a regular file" "${plan[@]}" "$dir/fifo"
refused "--hardware $dir: is a directory, not a file" "${plan[@]}" "$dir"
refused "--hardware /dev/null: is not a regular file" "${plan[@]}" /dev/null
refused "--hardware $loop: is a symlink loop" "${plan[@]}" "$loop"
refused "--hardware h100: unknown profile (did you mean" "${plan[@]}" h100

# Valid side files to edit: one preset, one profile, one config.json, one roofline.
/usr/bin/python3 - "$source_dir" "$dir" <<'PY' || fail "making the side files"
import json, sys
src, d = sys.argv[1], sys.argv[2]
presets = json.load(open(f"{src}/data/models.json"))
presets["models"] = [m for m in presets["models"] if m["name"] == "llama-3-8b"]
json.dump(presets, open(f"{d}/presets.json", "w"), indent=1)
hardware = json.load(open(f"{src}/data/hardware.json"))
hardware["profiles"] = [p for p in hardware["profiles"] if p["name"] == "h100-sxm"]
json.dump(hardware, open(f"{d}/hardware.json", "w"), indent=1)
open(f"{d}/config.json", "w").write(open(f"{src}/tests/data/hf/llama-3-8b.json").read())
open(f"{d}/roofline.json", "w").write(open(f"{src}/tests/data/roofline-t1.json").read())
PY
# edit FILE KEY VALUE NEW: FILE with the first '"KEY": ...' set to VALUE, saved as NEW.
edit() {
  /usr/bin/python3 -c '
import re, sys
text = open(sys.argv[1]).read()
edited, n = re.subn(r"(\"%s\":\s*)[^,}\n]+" % re.escape(sys.argv[2]), lambda m: m.group(1) + sys.argv[3], text, count=1)
assert n == 1, sys.argv[2]
open(sys.argv[4], "w").write(edited)' "$@" || fail "editing $1"
}

# A number past a double (1e400) names the file and key, exit 2, in every JSON side file.
edit "$dir/hardware.json" bandwidth_gb_per_s 1e400 "$dir/hw-1e400.json"
refused "--hardware $dir/hw-1e400.json: the key \"bandwidth_gb_per_s\" holds 1e400, past" "${plan[@]}" "$dir/hw-1e400.json"
edit "$dir/presets.json" layers 1e400 "$dir/presets-1e400.json"
refused "presets-1e400.json: the key \"layers\" holds 1e400" memory --presets "$dir/presets-1e400.json" --model llama-3-8b
edit "$dir/config.json" hidden_size 1e400 "$dir/config-1e400.json"
refused "config-1e400.json: the key \"hidden_size\" holds 1e400" memory --model-config "$dir/config-1e400.json" --params 8B
edit "$dir/roofline.json" peak_gbps 1e400 "$dir/roofline-1e400.json"
refused "roofline-1e400.json' is corrupt: the key \"peak_gbps\" holds 1e400" sweep -n 16 --dry-run --roofline "$dir/roofline-1e400.json"

# A roofline's peaks within --hardware's bounds: 1e308 GB/s put every row at 0 %, 1e-300
# GFLOP/s estimated 10^300 hours.
edit "$dir/roofline.json" peak_gbps 1e308 "$dir/roofline-gbps.json"
refused "roofline-gbps.json' is corrupt: peak_gbps 1e+308 is out of range: it must be from 1e-06 to 1e+09 GB/s" \
  sweep -n 16 --dry-run --roofline "$dir/roofline-gbps.json"
edit "$dir/roofline.json" peak_gflops 1e-300 "$dir/roofline-gflops.json"
refused "peak_gflops 1e-300 is out of range: it must be from 0.001 to 1e+12 GFLOP/s" \
  sweep -n 16 --dry-run --roofline "$dir/roofline-gflops.json"
"$kvbench" sweep -n 16 --dry-run --roofline "$dir/roofline.json" >/dev/null 2>"$err" || fail "a valid roofline: exit $?"

# A KEY=VALUE profile file's errors name the file and the line, and say the rule.
printf 'name = lab\nbw = 2TB/s\nbw = 3TB/s\n' >"$dir/bw-twice.txt"
refused "--hardware $dir/bw-twice.txt: line 3: bw is given twice (first on line 2)" "${plan[@]}" "$dir/bw-twice.txt"
printf 'name = lab\nmem = 64GB\n' >"$dir/no-bw.txt"
refused "--hardware $dir/no-bw.txt: no bw= line" "${plan[@]}" "$dir/no-bw.txt"
printf 'name = lab\nbw = 2TB/s\0\nmem = 64GB\n' >"$dir/nul.txt"
refused "--hardware $dir/nul.txt: line 2: holds a NUL byte" "${plan[@]}" "$dir/nul.txt"
printf 'name =\nbw = 2TB/s\n' >"$dir/no-name.txt"
refused "--hardware $dir/no-name.txt: line 1: name= is empty" "${plan[@]}" "$dir/no-name.txt"
printf 'name = lab\nbw = 2TB/s\nmem = 64GB\n' >"$dir/lab.txt"
"$kvbench" "${plan[@]}" "$dir/lab.txt" >/dev/null 2>"$err" || fail "a valid profile file: exit $?"
# --presets names itself whatever is wrong with its file.
: >"$dir/empty.json"
refused "--presets $dir/empty.json: not JSON" memory --presets "$dir/empty.json" --model llama-3-8b

# Two presets one case apart: --model reads names in any case, so the file is refused, naming both.
/usr/bin/python3 -c '
import json, sys
presets = json.load(open(sys.argv[1]))
twin = dict(presets["models"][0], name="LLAMA-3-8B")
presets["models"].append(twin)
json.dump(presets, open(sys.argv[2], "w"))' "$dir/presets.json" "$dir/presets-case.json" || fail "making presets-case.json"
refused "model 'LLAMA-3-8B': field 'name': differs from model 'llama-3-8b' only in case" \
  memory --presets "$dir/presets-case.json" --model llama-3-8b

# A field out of range is blamed, not --seq or a field read after it.
edit "$dir/presets.json" params 18446744073709551615 "$dir/presets-params.json"
refused "model 'llama-3-8b': field 'params': must be at most 1125899906842624" \
  memory --presets "$dir/presets-params.json" --model llama-3-8b
edit "$dir/presets.json" heads 18446744073709551615 "$dir/presets-heads.json"
refused "model 'llama-3-8b': field 'heads': must be at most 1073741824" \
  memory --presets "$dir/presets-heads.json" --model llama-3-8b
edit "$dir/config.json" hidden_size 1073741824 "$dir/config-wide.json"
refused "config-wide.json: hidden_size 1073741824, 32 heads of 33554432 and 32 layers: one token's FLOPs or bytes" \
  sweep --model-config "$dir/config-wide.json" -n 16 -t 1 --no-roofline --dry-run

# A UTF-8 byte-order mark (what editors on Windows write first) is skipped by every reader.
bom() { printf '\xef\xbb\xbf' | cat - "$1" >"$2"; }
accepted() {
  timeout 60 "$kvbench" "$@" >/dev/null 2>"$err" || fail "$* : exit $?, expected 0"
}
bom "$dir/base.csv" "$dir/bom.csv"
bom "$dir/base.json" "$dir/bom.json"
accepted compare "$dir/base.csv" "$dir/bom.csv"
accepted compare "$dir/base.json" "$dir/bom.json"
accepted merge "$dir/bom.csv" -o "$dir/bom-merged.json"
cp "$dir/bom.csv" "$dir/bom-resume.csv"
accepted sweep "${run[@]}" -o "$dir/bom-resume.csv" --resume
bom "$dir/lab.txt" "$dir/bom-lab.txt"
accepted "${plan[@]}" "$dir/bom-lab.txt"
bom "$dir/hardware.json" "$dir/bom-hardware.json"
accepted "${plan[@]}" "$dir/bom-hardware.json"
bom "$dir/presets.json" "$dir/bom-presets.json"
accepted memory --presets "$dir/bom-presets.json" --model llama-3-8b
bom "$dir/config.json" "$dir/bom-config.json"
accepted memory --model-config "$dir/bom-config.json" --params 8B
bom "$dir/roofline.json" "$dir/bom-roofline.json"
accepted sweep -n 16 --dry-run --roofline "$dir/bom-roofline.json"

echo "side files: symlink loops, special files, empty databases, numbers past a double, peaks out of range and unnamed profile-file errors refused; byte-order marks skipped"
