#!/bin/sh
# The planner's held-out check (docs/planning.md#held-out-check): measure some points of two
# models' attention stacks, calibrate kvbench plan on them, predict other points it was not
# calibrated on, measure those, and print predicted against measured with the median and worst
# error. It measures: run it alone on the machine, as any benchmark.
#
#   scripts/validate-plan.sh [OUT_DIR]        (default: validate-plan/, created)
set -eu
kvbench=${KVBENCH:-build/kvbench}
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

validate() {  # name, parameters, calibration -n, -b; held-out -n, -b
    name=$1 params=$2
    "$kvbench" sweep -q --model-config "$out/$name.json" --paths cached,uncached -n "$3" -b "$4" \
        -o "$out/$name-calibrate.csv"
    "$kvbench" sweep -q --model-config "$out/$name.json" --paths cached -n "$5" -b "$6" \
        -o "$out/$name-held-out.csv"
    # This machine as a profile: the peaks the calibration sweep used for its roofline.
    hardware=$(python3 -c '
import csv, sys
row = next(csv.DictReader(open(sys.argv[1])))
print("bw=%.3fGB/s,flops=%.3fG,mem=1TB" % (float(row["roofline_peak_gb_per_s"]), float(row["roofline_peak_gflops"])))
' "$out/$name-calibrate.csv")
    "$kvbench" plan -q --model-config "$out/$name.json" --params "$params" --hardware "$hardware" \
        --weight-dtype f32 --kv-dtype f32 --tpot 3600s --calibrate "$out/$name-calibrate.csv" \
        -n "$5" -b "$6" -f csv -o "$out/$name-predicted.csv"
}

# Calibrated at the ends of the batch range (B = 1 and 8) and at two contexts each, so that each
# batch's weight and cache streams can be told apart (docs/planning.md#efficiency); predicted at
# batches and contexts between and beyond them, none of which the calibration ran.
validate gpt2 28311552 128,1024 1,8 256,2048,4096 2,4
validate llama-3-8b-2l 436207616 128,1024 1,8 256,2048,4096 2,4

python3 - "$out" <<'PY'
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
