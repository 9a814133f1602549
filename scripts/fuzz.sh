#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ with clang (ASan + UBSan) into build-fuzz/ and runs
# each for a bounded time: scripts/fuzz.sh [seconds per harness, default 30]. New inputs go to
# build-fuzz/corpus/<harness>/ (fuzz/corpus/<harness>/ holds the committed seeds). A finding
# stops the script with the input that causes it, in build-fuzz/artifacts/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-30}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "kvbench: error: fuzz.sh: seconds '$seconds' must be a whole number of at least 1" >&2
  exit 2
fi

harnesses=(fuzz_value_list fuzz_roofline_reader)
KVBENCH_BUILD_DIR="$root/build-fuzz"
# clang for libFuzzer, libclang-rt-14-dev for its runtime, libomp-14-dev for OpenMP under clang.
KVBENCH_EXTRA_PACKAGES=(clang libclang-rt-14-dev libomp-14-dev)
# -O1 -g as in the sanitizer build. No -Werror: the project's warnings are GCC's to enforce
# (scripts/test.sh), and a clang-only warning must not stop the fuzzing.
KVBENCH_CMAKE_ARGS=(-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo
                    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" -DKVBENCH_FUZZ=ON -DKVBENCH_WERROR=OFF
                    -DKVBENCH_BUILD_TESTS=OFF -DKVBENCH_BUILD_BENCH=OFF)
KVBENCH_BUILD_TARGETS=("${harnesses[@]}")
source "$root/scripts/setup.sh"

export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
mkdir -p "$KVBENCH_BUILD_DIR/artifacts"
for harness in "${harnesses[@]}"; do
  name="${harness#fuzz_}"
  seeds="$root/fuzz/corpus/$name"
  corpus="$KVBENCH_BUILD_DIR/corpus/$name"
  mkdir -p "$corpus"
  dict=()
  if [[ -f "$root/fuzz/$name.dict" ]]; then dict=(-dict="$root/fuzz/$name.dict"); fi
  echo "kvbench: fuzzing $name for ${seconds} s" >&2
  if ! kvbench_locked "$KVBENCH_BUILD_DIR/fuzz/$harness" -max_total_time="$seconds" -timeout=10 -max_len=4096 \
      -print_final_stats=1 -artifact_prefix="$KVBENCH_BUILD_DIR/artifacts/$name-" "${dict[@]}" \
      "$corpus" "$seeds" 2>"$KVBENCH_BUILD_DIR/$name.log"; then
    cat "$KVBENCH_BUILD_DIR/$name.log" >&2
    echo "kvbench: error: $harness found a bug; reproduce it with" >&2
    echo "  $KVBENCH_BUILD_DIR/fuzz/$harness $KVBENCH_BUILD_DIR/artifacts/$name-*" >&2
    exit 1
  fi
  grep -E "^stat::(number_of_executed_units|new_units_added)|^Done" "$KVBENCH_BUILD_DIR/$name.log" >&2 || true
done
