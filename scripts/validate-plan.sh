#!/bin/sh
# The planner's held-out check (docs/planning.md#held-out-check): measure two models' steps at a
# grid of batches and contexts in one interleaved sweep, calibrate kvbench plan on part of the
# grid, predict the rest, and print predicted against measured with the median and worst error.
# It measures: run it alone on the machine, as any benchmark.
#
#   scripts/validate-plan.sh [OUT_DIR]        (default: validate-plan/, created)
set -eu
kvbench=${KVBENCH:-build/kvbench}
python=${PYTHON:-python3}
out=${1:-validate-plan}
mkdir -p "$out"

# Two shapes whose sweeps run in seconds, with f32 weights and an f32 cache: GPT-2 (MHA, 12
# layers), whose MLP kvbench does not run, so the sweep measures its attention blocks and the plan
# gets their weights as its parameters, L·(2·D·H·dh + 2·D·G·dh); and Llama-3-8B cut to 2 full
# layers (GQA-8, SwiGLU MLP of 14336), the plan's parameters its attention and MLP weights,
# L·(2·D·H·dh + 2·D·G·dh + 3·D·F).
cat > "$out/llama-3-8b-2l.json" <<'JSON'
{"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 4096, "num_attention_heads": 32,
 "num_key_value_heads": 8, "intermediate_size": 14336, "hidden_act": "silu", "max_position_embeddings": 8192}
JSON
cp tests/data/hf/gpt2.json "$out/gpt2.json"

# Calibrated on the batches a plan walks, 1, 2, 4 and 8, at the shortest and the longest context,
# so that each batch's weight and cache streams can be told apart (docs/planning.md#efficiency);
# held out: the contexts between at every batch, and batches 3 and 6, which the plan interpolates.
calibration_seqs=128,4096
calibration_batches=1,2,4,8
all_seqs=128,256,1024,2048,4096
all_batches=1,2,3,4,6,8

validate() {  # name, parameters
    name=$1 params=$2
    # One sweep holds the calibration and the held-out points, measured in rounds: a change of
    # the host's speed during the run falls on both alike, where two sweeps one after the other
    # once saw the same points a third faster in the second.
    "$kvbench" sweep -q --model-config "$out/$name.json" --paths cached -n "$all_seqs" -b "$all_batches" \
        --interleave -o "$out/$name-grid.csv"
    "$kvbench" sweep -q --model-config "$out/$name.json" --paths uncached -n 128 -b 1 \
        -o "$out/$name-uncached.csv"
    "$python" - "$out" "$name" "$calibration_seqs" "$calibration_batches" <<'PY'
import csv, sys
out, name, seqs, batches = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4].split(",")
grid = list(csv.DictReader(open(f"{out}/{name}-grid.csv")))
uncached = list(csv.DictReader(open(f"{out}/{name}-uncached.csv")))
calibrating = [r for r in grid if r["seq"] in seqs and r["batch"] in batches]
held_out = [r for r in grid if r not in calibrating]
for rows, file in ((calibrating + uncached, "calibrate"), (held_out, "held-out")):
    with open(f"{out}/{name}-{file}.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(grid[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
PY
    # This machine as a profile: the peaks the sweep used for its roofline.
    hardware=$("$python" -c '
import csv, sys
row = next(csv.DictReader(open(sys.argv[1])))
print("bw=%.3fGB/s,flops=%.3fG,mem=1TB" % (float(row["roofline_peak_gb_per_s"]), float(row["roofline_peak_gflops"])))
' "$out/$name-grid.csv")
    "$kvbench" plan -q --model-config "$out/$name.json" --params "$params" --hardware "$hardware" \
        --weight-dtype f32 --kv-dtype f32 --tpot 3600s --calibrate "$out/$name-calibrate.csv" \
        -n "$all_seqs" -b "$all_batches" -f csv -o "$out/$name-predicted.csv"
}

validate gpt2 28311552
validate llama-3-8b-2l 436207616

"$python" - "$out" <<'PY'
import csv, statistics, sys
out = sys.argv[1]
errors = []
print(f"{'model':<15}{'N':>6}{'B':>4}{'predicted ms':>14}{'measured ms':>13}{'error %':>9}")
for name in ("gpt2", "llama-3-8b-2l"):
    predicted = {(r["seq"], r["batch"]): float(r["predicted_tpot_ms"])
                 for r in csv.DictReader(open(f"{out}/{name}-predicted.csv"))}
    for row in csv.DictReader(open(f"{out}/{name}-held-out.csv")):
        key = (row["seq"], row["batch"])
        measured = float(row["latency_us_median"]) / 1000
        error = 100 * (predicted[key] - measured) / measured
        errors.append(abs(error))
        print(f"{name:<15}{key[0]:>6}{key[1]:>4}{predicted[key]:>14.3f}{measured:>13.3f}{error:>+9.1f}")
print(f"{len(errors)} held-out points: median |error| {statistics.median(errors):.1f} %, worst {max(errors):.1f} %")
PY
