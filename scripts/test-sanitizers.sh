#!/usr/bin/env bash
# Builds kvbench with AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer into
# build-asan/ and runs the whole test suite (unit tests and CLI tests) on that build. Any
# report fails the test it happens in. Timings of this build mean nothing (kvbench says so).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

KVBENCH_BUILD_DIR="$root/build-asan"
# -O1 -g1: readable stacks at a fraction of -O3's compile time; no -DNDEBUG, so asserts run too.
# KVBENCH_SANITIZE_ARCH picks the kernels' instruction set (default: native); CI passes
# x86-64-v2, so the portable kernels run the whole suite there, under the sanitizers.
KVBENCH_CMAKE_ARGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"
                    "-DKVBENCH_ARCH=${KVBENCH_SANITIZE_ARCH:-native}"
                    -DKVBENCH_SANITIZE=ON -DKVBENCH_BUILD_BENCH=OFF)
KVBENCH_BUILD_TARGETS=(kvbench_tests kvbench)
source "$root/scripts/setup.sh"

# A report ends the process with a failing exit code, which fails its test. detect_leaks is
# LeakSanitizer. It needs no suppressions: libgomp's and OpenBLAS's thread pools stay
# reachable from their globals at exit, which LeakSanitizer does not count as leaks.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
kvbench_locked ctest --test-dir "$KVBENCH_BUILD_DIR" --output-on-failure -j "$(nproc)"
