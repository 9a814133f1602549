#!/usr/bin/env bash
# The CI benchmark gate (docs/compare.md#the-ci-gate): a short sweep and a few micro-benchmarks,
# compared with `kvbench compare` against the reference of this machine class in results/gate/.
# Gates only on what does not depend on the machine's speed: flops, bytes and kv_bytes exactly,
# and the cache's speedup and the GQA/MQA-vs-MHA ratios within a band. Prints every table.
#
#   scripts/bench-gate.sh                       run the benchmarks, then gate (what .ci/run does)
#   scripts/bench-gate.sh --refresh             run them and make them this class's reference
#   scripts/bench-gate.sh --check SWEEP [MICRO] gate existing results (kvbench sweep JSON, Google
#                                               Benchmark JSON) without running anything
# Exit status: 0 pass, 1 a gate failed, 2 usage. Environment:
#   KVBENCH_GATE_DIR   references (default results/gate); one folder per class,
#                      <maker>-<isa>-<cores>c-llc<MiB>mib (maker intel, amd or other from the
#                      CPU's model name; llc-unknown where the kernel lists no cache)
#   KVBENCH_GATE_BAND  the ratios' band in percent (default 25)
#   KVBENCH_CPU_LOCK   a flock file every build and timed run waits for, on a shared machine
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gate_dir="${KVBENCH_GATE_DIR:-$root/results/gate}"
band="${KVBENCH_GATE_BAND:-25}"

# The short sweep: MHA, GQA-4 and MQA, cached and uncached, at two contexts. One thread,
# interleaved rounds and a warm cache keep the ratios within about 15 % from run to run on a
# shared 2-core host (docs/compare.md#the-ci-gate); about 20 s there.
sweep_args=(sweep -n 256,1024 -d 1024 --heads 16 -g 16,4,1 -t 1 --reps 20 -w 2 --interleave
            --cache-state warm --no-roofline --format json)
# Micro-benchmarks with 10 repetitions each, enough for a U test (google/benchmark asks for 9).
micro_args=("--benchmark_filter=BM_AttendDecode/B:1/N:1024/.*/cold:0|BM_DecodeStep/B:1/N:512/"
            --benchmark_repetitions=10 --benchmark_format=json)

usage() {
  sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

mode=gate
case "${1:-}" in
  "") ;;
  --refresh) mode=refresh ;;
  --check) mode=check; [[ $# -ge 2 && $# -le 3 ]] || usage ;;
  -h|--help) usage ;;
  *) echo "bench-gate: unknown argument '$1'" >&2; usage ;;
esac

if [[ "$mode" == check ]]; then
  kvbench="${KVBENCH:-$root/build/kvbench}"
  sweep_json="$2"
  micro_json="${3:-}"
else
  KVBENCH_BUILD_TARGETS=(kvbench kvbench_bench)
  source "$root/scripts/setup.sh"
  kvbench="$KVBENCH_BUILD_DIR/kvbench"
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
  sweep_json="$out/sweep.json"
  micro_json="$out/micro.json"
  echo "bench-gate: kvbench ${sweep_args[*]}" >&2
  kvbench_locked "$kvbench" "${sweep_args[@]}" -o "$sweep_json" >/dev/null
  echo "bench-gate: kvbench_bench ${micro_args[*]}" >&2
  kvbench_locked "$KVBENCH_BUILD_DIR/bench/kvbench_bench" "${micro_args[@]}" --benchmark_out="$micro_json" >/dev/null
fi

# The machine class: the maker, the kernels' ISA path, the core count and the last-level cache,
# from the sweep's environment. The cache stands for the CPU generation where a virtual machine's
# model name does not tell it ("Intel(R) Xeon(R) Processor"): two such 2-core AVX-512 guests, with
# 105 and 480 MiB of L3, had cache speedups 25-29 % apart at N=256 with the same code.
field() { sed -n "s/^ *\"$1\": *\"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$sweep_json" | head -n 1; }
llc_bytes="$(field llc_bytes)"
if [[ "$llc_bytes" =~ ^[0-9]+$ && "$llc_bytes" -gt 0 ]]; then
  llc="llc$((llc_bytes / 1048576))mib"
else
  llc="llc-unknown"
fi
# The maker, from the model name (as machine_class() in src/report/database.cpp): two makers'
# 2-core AVX-512 guests that list no cache would otherwise be one class.
case "$(sed -n 's/^ *"cpu_model": *"\(.*\)",\{0,1\}$/\1/p' "$sweep_json" | head -n 1)" in
  *Intel*) vendor=intel ;;
  *AMD*) vendor=amd ;;
  *) vendor=other ;;
esac
class="$vendor-$(field kernel_isa)-$(field n_cores)c-$llc"

if [[ "$mode" == refresh ]]; then
  mkdir -p "$gate_dir/$class"
  # The recorded command line names the temporary file: the reference names its own.
  sed "s|-o $sweep_json|-o sweep.json|" "$sweep_json" >"$gate_dir/$class/sweep.json"
  # Google Benchmark records its executable's absolute path; the repository keeps it relative.
  sed "s|\"executable\": \"$root/|\"executable\": \"|" "$micro_json" >"$gate_dir/$class/micro.json"
  echo "bench-gate: refreshed $gate_dir/$class (sweep.json, micro.json); commit them" >&2
  exit 0
fi

reference="$gate_dir/$class"
if [[ -f "$reference/sweep.json" ]]; then
  known=1
else
  # Another class's reference still has the same configurations, so its exact counts hold;
  # its timings and ratios say nothing about this CPU and are shown, never gated.
  known=0
  reference="$(find "$gate_dir" -mindepth 1 -maxdepth 1 -type d | sort | head -n 1)"
  if [[ -z "$reference" || ! -f "$reference/sweep.json" ]]; then
    echo "bench-gate: no reference in $gate_dir; make one with scripts/bench-gate.sh --refresh" >&2
    exit 1
  fi
  echo "bench-gate: no reference for machine class $class; checking exact counts against $(basename "$reference") only" >&2
fi

failed=()
run_compare() {
  local title="$1"
  shift
  echo
  echo "== $title"
  if ! "$kvbench" compare "$@"; then failed+=("$title"); fi
}

ratio_fail_on=slower
if ((known == 0)); then ratio_fail_on=counts; fi
run_compare "latency (shown; gates flops, bytes and kv_bytes exactly)" \
  "$reference/sweep.json" "$sweep_json" --metric latency --fail-on counts
run_compare "cache speedup, uncached / cached (band ${band} %)" \
  "$reference/sweep.json" "$sweep_json" --metric speedup --threshold "${band}%" --fail-on "$ratio_fail_on"
run_compare "GQA/MQA vs MHA, MHA time / grouped time (band ${band} %)" \
  "$reference/sweep.json" "$sweep_json" --metric mha_ratio --threshold "${band}%" --fail-on "$ratio_fail_on"
if [[ -n "$micro_json" && -f "$reference/micro.json" ]]; then
  # Absolute times of single kernels: shown with their U test, never gated; a benchmark renamed
  # or added since the reference is listed, not a failure.
  run_compare "micro-benchmarks (shown, not gated)" "$reference/micro.json" "$micro_json" --fail-on counts --allow-missing
fi

echo
if ((${#failed[@]} > 0)); then
  echo "bench-gate: FAIL (class $class vs $(basename "$reference")): $(IFS=';'; echo "${failed[*]}")" >&2
  echo "bench-gate: if the change is intended, refresh the reference: scripts/bench-gate.sh --refresh" >&2
  exit 1
fi
if ((known == 1)); then
  echo "bench-gate: PASS (class $class): counts exact, speedup and GQA/MQA ratios within ${band} %" >&2
else
  echo "bench-gate: PASS (class $class has no reference): counts exact" >&2
fi
