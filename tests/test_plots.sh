#!/usr/bin/env bash
# The plotting scripts (kvbench_plot.py, reload_plot.py) on CSVs the real binary wrote: valid,
# non-empty images; every varying axis keyed, the others in the subtitle; figures the data
# cannot fill skipped with a message, and exit 2 when none is drawn; bad input refused in one
# line with exit 2 and nothing written; the documented commands run as written.
# Usage: test_plots.sh <kvbench> <plots/kvbench_plot.py> <output directory>
set -u
kvbench=$1
plot=(/usr/bin/python3 "$2")
dir="$3/plots"
rm -rf "$dir" && mkdir -p "$dir"
fail() { echo "FAIL: $*"; exit 1; }
tiny=(-d 64 --heads 4 -g 4,1 --cache-state warm)

# A PNG starts with its 8-byte signature; an SVG is XML with an <svg> element.
check_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "$1 is not a PNG";
              [ "$(stat -c %s "$1")" -gt 5000 ] || fail "$1 is too small to hold a figure"; }
check_svg() { grep -q "<svg" "$1" || fail "$1 is not an SVG"; [ "$(stat -c %s "$1")" -gt 5000 ] || fail "$1 is too small"; }

# Figures the file has no rows for: each skipped with the real reason, and when nothing at all
# is drawn, exit 2 and a last line saying so, with no -o folder left behind.
nothing_drawn() {  # nothing_drawn <what> <skip message> <command...>
  local what=$1 skipped=$2 out code
  shift 2
  out=$("$@" 2>&1)
  code=$?
  [ "$code" -eq 2 ] || fail "$what: exit $code, expected 2: $out"
  grep -q "$skipped" <<<"$out" || fail "$what: no reason given: $out"
  tail -1 <<<"$out" | grep -q "^kvbench_plot: error: no figure written: the file has no rows for" \
    || fail "$what: no final error line: $out"
  grep -Eq "Traceback|^wrote" <<<"$out" && fail "$what: $out"
  [ ! -e "$dir/refused" ] || fail "$what: the -o folder was created"
}
# Two thread counts: each must be a series of its own, not one zig-zag line.
"$kvbench" sweep -n 16,32,64 "${tiny[@]}" -t 1,2 -r 2 -w 1 --format csv -o "$dir/threads.csv" >/dev/null 2>&1 \
  || fail "kvbench sweep failed"
out=$("${plot[@]}" "$dir/threads.csv" 2>&1) || fail "plotting two thread counts failed: $out"
for figure in latency speedup flops kv roofline; do check_png "$dir/threads-$figure.png"; done
grep -q "threads-latency.png: 8 series: MHA cached T=1; MHA cached T=2; MHA uncached T=1" <<<"$out" \
  || fail "thread counts not keyed: $out"
grep -q "generation: skipped, not a \`kvbench generate\` CSV" <<<"$out" || fail "no message for the generation figure"
[ ! -e "$dir/threads-generation.png" ] || fail "a generation figure drawn from a sweep"

# A cached-only CSV: no speedup figure, a message instead, and the others still drawn (as SVG, into -o).
"$kvbench" sweep -n 16,32 "${tiny[@]}" -t 1 -r 2 -w 1 --paths cached --format csv -o "$dir/cached.csv" >/dev/null 2>&1 \
  || fail "kvbench sweep --paths cached failed"
out=$("${plot[@]}" "$dir/cached.csv" --format svg -o "$dir/svg" 2>&1) || fail "plotting a cached-only CSV failed: $out"
grep -q "speedup: skipped, the file has no uncached rows" <<<"$out" || fail "no message for the empty speedup: $out"
[ ! -e "$dir/svg/cached-speedup.svg" ] || fail "an empty speedup figure was written"
for figure in latency flops kv roofline; do check_svg "$dir/svg/cached-$figure.svg"; done
# Its figures say which configuration they show, as the tables' caption does, and none calls
# itself "cached vs uncached".
grep -q "every line: B=1 D=64 H=4 L=1, T=1, warm cache, cached path; kvbench" "$dir/svg/cached-latency.svg" \
  || fail "the subtitle does not give the configuration"
grep -q "Latency of one decode step: the cached path" "$dir/svg/cached-latency.svg" || fail "the latency title"
grep -q "cached vs uncached" "$dir"/svg/cached-*.svg && fail "a cached-only figure says cached vs uncached"
grep -q "FLOPs of one step: O(D² + N·D) cached<" "$dir/svg/cached-flops.svg" || fail "the flops title names uncached"
grep -q "No artists" <<<"$out" && fail "matplotlib complained: $out"

# KV formats at one point: the Pareto figure; a CSV of one format says why it has none.
"$kvbench" sweep -n 32 -d 64 --heads 4 -g 2 --cache-state warm -t 1 -r 2 -w 0 --paths cached --kv-dtype f32,q8_0,q4_0 \
  --format csv -o "$dir/formats.csv" >/dev/null 2>&1 || fail "kvbench sweep --kv-dtype failed"
out=$("${plot[@]}" "$dir/formats.csv" --figures formats 2>&1) || fail "plotting kv formats failed: $out"
check_png "$dir/formats-formats.png"
grep -q "formats-formats.png: 3 series: f32 cached; q8_0 cached; q4_0 cached" <<<"$out" || fail "formats not keyed: $out"
grep -q "other point" <<<"$out" && fail "one point's formats said to leave others out: $out"
# A CSV saved with a byte-order mark plots as the same CSV without one, as kvbench reads it.
printf '\xef\xbb\xbf' | cat - "$dir/formats.csv" >"$dir/bom.csv"
out=$("${plot[@]}" "$dir/bom.csv" --figures formats 2>&1) || fail "a CSV with a byte-order mark was refused: $out"
check_png "$dir/bom-formats.png"
# Two points in several formats: one is drawn, and the other is said to be left out.
"$kvbench" sweep -n 32,64 -d 64 --heads 4 -g 2 --cache-state warm -t 1 -r 2 -w 0 --paths cached --kv-dtype f32,q8_0 \
  --format csv -o "$dir/formats2.csv" >/dev/null 2>&1 || fail "kvbench sweep of two points failed"
out=$("${plot[@]}" "$dir/formats2.csv" --figures formats 2>&1) || fail "plotting two points' formats failed: $out"
grep -q "formats: drawn at the point with the most formats; 1 other point measured in two or more is not" <<<"$out" ||
  fail "a point left out silently: $out"
nothing_drawn "formats of one format" "formats: skipped, no point was measured in two KV formats" \
  "${plot[@]}" "$dir/cached.csv" --figures formats -o "$dir/refused"

# Figures the file has no rows for: nothing drawn, exit 2.
nothing_drawn "-f generation of a sweep" "generation: skipped, not a \`kvbench generate\` CSV" \
  "${plot[@]}" "$dir/threads.csv" -f generation -o "$dir/refused"
"$kvbench" sweep -n 16,32 "${tiny[@]}" -t 1 -r 2 -w 1 --paths uncached --no-roofline --format csv \
  -o "$dir/uncached.csv" >/dev/null 2>&1 || fail "kvbench sweep --paths uncached failed"
nothing_drawn "-f speedup of uncached rows" "speedup: skipped, the file has no cached rows, only uncached ones" \
  "${plot[@]}" "$dir/uncached.csv" -f speedup -o "$dir/refused"
out=$("${plot[@]}" "$dir/uncached.csv" -f speedup,latency 2>&1) || fail "an uncached-only CSV failed: $out"
grep -q "no uncached rows" <<<"$out" && fail "an uncached-only CSV said it has no uncached rows: $out"
check_png "$dir/uncached-latency.png"

# A generation: the per-step figure.
"$kvbench" generate -p 8 --new 6 "${tiny[@]}" -t 1 --format csv -o "$dir/generate.csv" >/dev/null 2>&1 \
  || fail "kvbench generate failed"
out=$("${plot[@]}" "$dir/generate.csv" --figures generation,latency 2>&1) || fail "plotting a generation failed: $out"
check_png "$dir/generate-generation.png"
check_png "$dir/generate-latency.png"
[ ! -e "$dir/generate-flops.png" ] || fail "--figures did not restrict the figures"
# Its prefill rows alone: no decode step, so no empty step figures; the cache's size still drawn.
# (Only the phase column holds ",prefill,"; a quoted roofline_source may hold commas, so no awk -F,.)
grep -E '^path,|,prefill,' "$dir/generate.csv" >"$dir/prefill.csv"
[ "$(wc -l <"$dir/prefill.csv")" -eq 5 ] || fail "not four prefill rows: $(cat "$dir/prefill.csv")"
out=$("${plot[@]}" "$dir/prefill.csv" 2>&1) || fail "plotting prefill rows failed: $out"
for figure in latency speedup flops roofline generation; do
  grep -q "prefill.csv: $figure: skipped, the file holds a generation's prefill rows only" <<<"$out" \
    || fail "no reason for $figure: $out"
  [ ! -e "$dir/prefill-$figure.png" ] || fail "an empty $figure figure of prefill rows"
done
grep -q "No artists" <<<"$out" && fail "matplotlib complained: $out"
check_png "$dir/prefill-kv.png"
nothing_drawn "step figures of prefill rows" "latency: skipped" \
  "${plot[@]}" "$dir/prefill.csv" -f latency,flops -o "$dir/refused"

# A CSV without the contract columns: exit 2, one clear line, nothing written.
cut -d, -f1-10 "$dir/threads.csv" > "$dir/cut.csv"
out=$("${plot[@]}" "$dir/cut.csv" 2>&1)
code=$?
[ "$code" -eq 2 ] || fail "exit code $code on a CSV with missing columns, expected 2"
grep -q "kvbench_plot: error: .*cut.csv lacks the columns flops, bytes, kv_bytes" <<<"$out" || fail "unclear message: $out"
ls "$dir" | grep -q "^cut-" && fail "images written for a refused CSV"

# A history (kvbench history -f csv) of two runs in a results database: one figure, a line per
# point and machine over the runs.
rm -f "$dir/history.sqlite"
for run in 1 2; do
  "$kvbench" sweep -n 16,32 "${tiny[@]}" -t 1 -r 2 -w 1 --no-roofline -q --db "$dir/history.sqlite" >/dev/null 2>&1 \
    || fail "kvbench sweep --db (run $run) failed"
done
"$kvbench" history --db "$dir/history.sqlite" -g 1 -f csv -o "$dir/hist.csv" 2>/dev/null || fail "kvbench history failed"
out=$("${plot[@]}" "$dir/hist.csv" 2>&1) || fail "plotting a history failed: $out"
check_png "$dir/hist-history.png"
grep -q "hist-history.png: 4 series: cached B=1 N=16 D=64 H=4 G=1 (m1); cached B=1 N=32 D=64 H=4 G=1 (m1)" <<<"$out" \
  || fail "history series: $out"
[ ! -e "$dir/hist-latency.png" ] || fail "a sweep figure drawn from a history CSV"
# Its labels keep a commit's -dirty and write µs; colour and line style are the grouping's and
# the path's, as in every figure (MQA red, uncached dashed), not one colour per line.
awk -F, -v OFS=, 'NR > 1 { $3 = "0123456789abcdef-dirty" }; 1' "$dir/hist.csv" >"$dir/dirty-hist.csv"
out=$("${plot[@]}" "$dir/dirty-hist.csv" --format svg 2>&1) || fail "plotting a history as SVG failed: $out"
grep -q "0123456789ab-dirty" "$dir/dirty-hist-history.svg" || fail "the history's commit label lost -dirty"
grep -q "latency (µs)" "$dir/dirty-hist-history.svg" || fail "the history's unit is not µs"
grep -q "stroke: #d62728" "$dir/dirty-hist-history.svg" || fail "the history's MQA lines are not red"
grep -Eq "stroke: #(1f77b4|ff7f0e|2ca02c)" "$dir/dirty-hist-history.svg" \
  && fail "the history's lines are coloured one each"
grep -q "stroke-dasharray" "$dir/dirty-hist-history.svg" || fail "the history's uncached lines are not dashed"
head -1 "$dir/hist.csv" >"$dir/empty-hist.csv"
out=$("${plot[@]}" "$dir/empty-hist.csv" 2>&1)
[ $? -eq 2 ] && grep -q "no matching point" <<<"$out" || fail "an empty history: $out"
# A bad file leaves no output folder behind: every input is read before anything is created.
out=$("${plot[@]}" "$dir/cut.csv" -o "$dir/never" 2>&1)
[ $? -eq 2 ] || fail "a bad CSV with -o did not exit 2: $out"
[ ! -e "$dir/never" ] || fail "the output folder was created for a refused CSV"

# Bad input, from a CSV cell to an option: exit 2, one line saying what is wrong, no traceback,
# and nothing written, neither a figure beside the CSV nor the -o folder (every row is checked
# before the first figure is drawn).
bad="$dir/bad"
mkdir -p "$bad"
refused() {  # refused <what> <pattern the line matches> <command...>
  local what=$1 pattern=$2 out code
  shift 2
  out=$("$@" 2>&1)
  code=$?
  [ "$code" -eq 2 ] || fail "$what: exit $code, expected 2: $out"
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "$what: more than one line: $out"
  grep -q Traceback <<<"$out" && fail "$what: a traceback: $out"
  grep -Eq "^(kvbench_plot|reload_plot): error: .*$pattern" <<<"$out" || fail "$what: unclear message: $out"
  [ ! -e "$dir/refused" ] || fail "$what: the -o folder was created"
  for left in "$bad"/*; do
    case $left in *.csv | *.json) ;; *) fail "$what: $left was written beside the CSV" ;; esac
  done
}
# Column 11 is flops, 15 latency_us_median: the first ten hold no comma, so awk splits them right.
awk -F, -v OFS=, 'NR == 5 { $11 = "abc" } 1' "$dir/threads.csv" >"$bad/badnum.csv"
refused "flops=abc" "badnum.csv, line 5: flops is 'abc', not an integer" \
  "${plot[@]}" "$bad/badnum.csv" -o "$dir/refused"
refused "flops=abc, figures beside the CSV" "flops is 'abc'" "${plot[@]}" "$bad/badnum.csv"
awk -F, -v OFS=, 'NR == 3 { $15 = "" } 1' "$dir/threads.csv" >"$bad/emptylat.csv"
refused "an empty latency" "emptylat.csv, line 3: latency_us_median is empty" \
  "${plot[@]}" "$bad/emptylat.csv" -o "$dir/refused"
{ head -4 "$dir/threads.csv"; sed -n 5p "$dir/threads.csv" | cut -d, -f1-11 | head -c -3; } >"$bad/truncated.csv"
refused "a row cut short in flops" "truncated.csv, line 5: 11 fields where the header has [0-9]+: is the row cut" \
  "${plot[@]}" "$bad/truncated.csv" -o "$dir/refused"
head -c 4096 "$dir/threads-latency.png" >"$bad/image.csv"
refused "an image named .csv" "image.csv is not a readable CSV: it is not text" \
  "${plot[@]}" "$bad/image.csv" -o "$dir/refused"
touch "$dir/afile"
refused "-o naming an existing file" "-o .*afile is a file: -o names the folder" \
  "${plot[@]}" "$dir/threads.csv" -o "$dir/afile"
[ ! -s "$dir/afile" ] || fail "-o's file was written"
refused "-o x.png" "-o .*x.png: -o names a folder, not a figure" "${plot[@]}" "$dir/threads.csv" -o "$dir/x.png"
[ ! -e "$dir/x.png" ] || fail "a folder named x.png was created"
refused "--dpi 0" "argument --dpi: 0 is not above 0" "${plot[@]}" "$dir/threads.csv" --dpi 0 -o "$dir/refused"
refused "a negative peak" "argument --peak-gflops: -5 is not above 0" \
  "${plot[@]}" "$dir/threads.csv" --peak-gflops -5 --peak-gbps 10 -o "$dir/refused"
refused "a CSV as --roofline" "--roofline .*threads.csv: not a kvbench roofline JSON" \
  "${plot[@]}" "$dir/threads.csv" --roofline "$dir/threads.csv" -o "$dir/refused"
refused "a missing --roofline" "--roofline .*none.json: not a kvbench roofline JSON" \
  "${plot[@]}" "$dir/threads.csv" --roofline "$dir/none.json" -o "$dir/refused"
# A peak written as a string, which kvbench's --roofline refuses: refused the same way, not read as its text's number.
printf '{"schema_version": 1, "peak_gflops": 100, "peak_gbps": "20"}\n' >"$dir/text-peak.json"
refused "a peak written as a string" \
  '--roofline .*text-peak.json: the key "peak_gbps": "20" is a JSON string, not a JSON number as kvbench writes it' \
  "${plot[@]}" "$dir/threads.csv" --roofline "$dir/text-peak.json" -o "$dir/refused"
refused "an unknown figure" "--figures: unknown figure nonsense" "${plot[@]}" "$dir/threads.csv" --figures nonsense
awk -F, -v OFS=, 'NR > 1 { $11 = "-1" } 1' "$dir/threads.csv" >"$bad/negflops.csv"
refused "flops=-1" "negflops.csv, line 2: flops is -1, where a count is never negative" \
  "${plot[@]}" "$bad/negflops.csv" -o "$dir/refused"
median_column=$(head -1 "$dir/hist.csv" | tr , '\n' | grep -n '^median$' | cut -d: -f1)
awk -F, -v OFS=, -v c="$median_column" 'NR == 2 { $c = "0" } 1' "$dir/hist.csv" >"$bad/zero-median.csv"
refused "a history median of 0" "zero-median.csv, line 2: median is 0, where every metric history tracks is above 0" \
  "${plot[@]}" "$bad/zero-median.csv" -o "$dir/refused"
/usr/bin/python3 -c "import sys; open(sys.argv[1], 'w').write('[' * 100000 + ']' * 100000)" "$bad/deep.json"
refused "JSON nested 100,000 deep" "deep.json" "${plot[@]}" "$bad/deep.json" -o "$dir/refused"
mkfifo "$dir/fifo.csv"
refused "a FIFO" "fifo.csv: not a regular file" timeout 60 "${plot[@]}" "$dir/fifo.csv" -o "$dir/refused"
rm -f "$dir/fifo.csv"
# A good file before a bad one: the bad one still stops the run before any figure.
refused "a good file, then a bad one" "badnum.csv" "${plot[@]}" "$dir/threads.csv" "$bad/badnum.csv" -o "$dir/refused"

# --kv-dtype runs: the series keep the order given, the uncached one has no cache, and the kv
# figure's bytes per element are each type's (int8: one f32 scale per cached vector).
"$kvbench" sweep -n 16,32 -d 64 --heads 4 -g 4 --kv-dtype int8,f16 -t 1 -r 2 -w 1 --cache-state warm --no-roofline \
  --format csv -o "$dir/kv.csv" >/dev/null 2>&1 || fail "kvbench sweep --kv-dtype failed"
out=$("${plot[@]}" "$dir/kv.csv" --figures latency,kv --format svg -o "$dir/kv" 2>&1) || fail "plotting kv types failed: $out"
grep -q "kv-latency.svg: 3 series: MHA cached int8; MHA cached f16; MHA uncached no cache" <<<"$out" \
  || fail "kv types not in the order given: $out"
grep -q "2·L·B·N·G·dh·c bytes, c = 1 + 4/dh (int8), 2 (f16)" "$dir/kv/kv-kv.svg" || fail "the kv figure's bytes per element"
grep -q "every line: B=1 D=64 H=4 L=1 G=4 (MHA), T=1, warm cache; kvbench" "$dir/kv/kv-latency.svg" \
  || fail "the subtitle does not give the one grouping"
# Keys and values of their own types (q8_0 keys, q4_0 values): c is the mean of the two sizes.
"$kvbench" sweep -n 16,32 -d 64 --heads 2 -g 2 --kv-dtype q8_0/q4_0 --paths cached -t 1 -r 2 -w 1 --cache-state warm \
  --no-roofline --format csv -o "$dir/split.csv" >/dev/null 2>&1 || fail "kvbench sweep --kv-dtype q8_0/q4_0 failed"
out=$("${plot[@]}" "$dir/split.csv" --figures kv --format svg -o "$dir/kv" 2>&1) \
  || fail "plotting split types failed: $out"
grep -q "2·L·B·N·G·dh·c bytes, c = (34/32 + 18/32)/2 (q8_0/q4_0)" "$dir/kv/split-kv.svg" \
  || fail "the kv figure's bytes per element of q8_0 keys and q4_0 values"

# The script runs by itself, and an interpreter without matplotlib gets one line saying what to do.
[ -x "$2" ] || fail "$2 is not executable"
[ "$(head -1 "$2")" = "#!/usr/bin/env python3" ] || fail "$2 does not start with #!/usr/bin/env python3"
out=$(/usr/bin/python3 -S "$2" "$dir/threads.csv" -o "$dir/no-matplotlib" 2>&1)
code=$?
[ "$code" -eq 1 ] || fail "exit $code without matplotlib, expected 1: $out"
grep -q "^kvbench_plot: error: matplotlib is missing for /usr/bin/python3: install Debian's python3-matplotlib" <<<"$out" \
  || fail "unclear message without matplotlib: $out"
grep -q Traceback <<<"$out" && fail "a traceback without matplotlib: $out"
[ ! -e "$dir/no-matplotlib" ] || fail "an output folder created without matplotlib"

# Recompute or reload: its own script, on a tiny reload CSV; a sweep CSV refused with exit 2.
reload_plot=(/usr/bin/python3 "$(dirname "$2")/reload_plot.py")
"$kvbench" reload --model gpt2 -n 16,32 --kv-dtype f16,int8 --tier-bw 1GB/s --reps 1 -t 1 -q -f csv \
  -o "$dir/reload.csv" >/dev/null 2>&1 || fail "kvbench reload failed"
out=$("${reload_plot[@]}" "$dir/reload.csv" 2>&1) || fail "plotting a reload CSV failed: $out"
check_png "$dir/reload.png"
# The figure's second title line: how the prefills were measured, from the rows' shared columns.
setup=$(/usr/bin/python3 -c 'import csv, sys; sys.path.insert(0, sys.argv[1]); import reload_plot
print(reload_plot.measured_setup(list(csv.DictReader(open(sys.argv[2])))))' "$(dirname "$2")" "$dir/reload.csv")
[ "$setup" = "prefill measured on 1 thread, 1 layer timed, times the model's layers" ] \
  || fail "reload figure's setup line: '$setup'"
refused "a sweep CSV to reload_plot" "threads.csv is a kvbench sweep or generate CSV: draw it with plots/kvbench_plot" \
  "${reload_plot[@]}" "$dir/threads.csv" -o "$dir/refused"
refused "an image to reload_plot" "image.csv is not a readable CSV: it is not text" \
  "${reload_plot[@]}" "$bad/image.csv" -o "$dir/refused"
# Column 7 is prefill_ms; no column of a reload CSV holds a comma.
awk -F, -v OFS=, 'NR == 3 { $7 = "" } 1' "$dir/reload.csv" >"$bad/noprefill.csv"
refused "an empty prefill_ms" "noprefill.csv, line 3: prefill_ms is empty" \
  "${reload_plot[@]}" "$bad/noprefill.csv" -o "$dir/refused"
refused "reload_plot -o x.png" "-o .*x.png: -o names a folder, not a figure" \
  "${reload_plot[@]}" "$dir/reload.csv" -o "$dir/x.png"
refused "reload_plot, a bad option" "unrecognized arguments: --dpi" "${reload_plot[@]}" "$dir/reload.csv" --dpi 3
out=$(/usr/bin/python3 -S "$(dirname "$2")/reload_plot.py" "$dir/reload.csv" -o "$dir/no-matplotlib" 2>&1)
code=$?
[ "$code" -eq 1 ] || fail "reload_plot: exit $code without matplotlib, expected 1: $out"
grep -q "^reload_plot: error: matplotlib is missing" <<<"$out" \
  || fail "reload_plot: unclear message without matplotlib: $out"
[ ! -e "$dir/no-matplotlib" ] || fail "reload_plot: an output folder created without matplotlib"
# ... and kvbench_plot.py sends a reload CSV there, in one line.
cp "$dir/reload.csv" "$bad/reload.csv"
refused "a reload CSV" "reload.csv is a \`kvbench reload\` CSV: draw it with plots/reload_plot.py" \
  "${plot[@]}" "$bad/reload.csv"
rm "$bad/reload.csv"

# A JSON report: the plots read CSV, and the conversion the message gives works.
"$kvbench" sweep -n 16,32 "${tiny[@]}" -t 1 -r 2 -w 1 --no-roofline -q -o "$bad/report.json" >/dev/null 2>&1 \
  || fail "kvbench sweep -o report.json failed"
refused "a JSON report" "report.json is a kvbench JSON report; the plots read CSV: convert it with \
\`kvbench merge .*report.json -o .*report.csv\`, or .*--export csv:FILE" \
  "${plot[@]}" "$bad/report.json" -o "$dir/refused"
"$kvbench" merge "$bad/report.json" -o "$dir/report.csv" >/dev/null 2>&1 || fail "the suggested kvbench merge failed"
"${plot[@]}" "$dir/report.csv" -f latency >/dev/null 2>&1 || fail "the merged CSV does not plot"
rm "$bad/report.json"

# The documented commands, as written (from the source tree, their -o turned to a scratch
# folder): results/README.md's for the reference figures, and the scripts' own examples.
root=$(cd "$(dirname "$2")/.." && pwd)
documented=$(grep -h "^ *\(/usr/bin/python3 \)\?plots/[a-z_]*\.py results/" "$root/results/README.md" "$2" \
             "$(dirname "$2")/reload_plot.py")
[ "$(wc -l <<<"$documented")" -ge 4 ] || fail "the documented commands were not found: $documented"
while read -r command; do
  out=$(cd "$root" && eval "${command/-o */-o $dir/documented/}" 2>&1) || fail "documented, fails: $command: $out"
done <<<"$documented"
# ... and they draw every stored reference figure, under its name.
for stored in "$root"/plots/*.png; do
  [ -e "$dir/documented/$(basename "$stored")" ] || fail "no documented command draws $(basename "$stored")"
done

# --help: every figure -f takes, and the history's, has its line; every line keeps within 80
# columns, counted in characters (µ, ·), even on a wider terminal.
help=$(COLUMNS=200 "${plot[@]}" --help) || fail "--help failed"
for figure in latency speedup flops kv roofline generation formats history; do
  grep -Eq "^  $figure +[^ ]" <<<"$help" || fail "--help does not describe the $figure figure"
done
for script in "$2" "$(dirname "$2")/reload_plot.py"; do
  wide=$(COLUMNS=200 /usr/bin/python3 "$script" --help | /usr/bin/python3 -c '
import sys
print("\n".join(line for line in sys.stdin.read().splitlines() if len(line) > 80))')
  [ -z "$wide" ] || fail "$(basename "$script") --help is wider than 80 columns: $wide"
done
echo "plots ok"
