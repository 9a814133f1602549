#!/usr/bin/env bash
# Installs what kvbench needs from Debian packages (only what is missing), then builds it.
# Sourced by scripts/run.sh, test.sh, test-sanitizers.sh and fuzz.sh; safe to run again and again.
# What the sourcing script may set first:
#   KVBENCH_BUILD_DIR      build directory (default build/)
#   KVBENCH_CMAKE_ARGS     array of extra configure arguments (default: a Release build)
#   KVBENCH_BUILD_TARGETS  array of targets to build (default: all)
#   KVBENCH_EXTRA_PACKAGES array of Debian packages that build needs beyond the usual ones
#   KVBENCH_CPU_LOCK       a flock file that builds and timed runs wait for, on a shared machine
set -euo pipefail

KVBENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KVBENCH_BUILD_DIR="${KVBENCH_BUILD_DIR:-$KVBENCH_ROOT/build}"
if ! declare -p KVBENCH_CMAKE_ARGS >/dev/null 2>&1; then KVBENCH_CMAKE_ARGS=(-DCMAKE_BUILD_TYPE=Release); fi
if ! declare -p KVBENCH_BUILD_TARGETS >/dev/null 2>&1; then KVBENCH_BUILD_TARGETS=(); fi
if ! declare -p KVBENCH_EXTRA_PACKAGES >/dev/null 2>&1; then KVBENCH_EXTRA_PACKAGES=(); fi

# kvbench_locked and kvbench_install_packages.
source "$KVBENCH_ROOT/scripts/common.sh"

# libopenblas-openmp-dev, not libopenblas-dev: kvbench's threads and OpenBLAS's must be one
# OpenMP pool (see cmake/OpenBLASTarget.cmake and docs/measuring.md#threads).
# python3-matplotlib: plots/kvbench_plot.py, which the test suite runs.
# libboost-math-dev: the normal distribution behind kvbench compare's U test (header-only).
# libhwy-dev: bench/bench_highway.cpp, the Highway port measured against the hand-written kernels.
# libsqlite3-dev: the results database (--db, -o run.sqlite, history, merge; docs/database.md).
# yamllint, shellcheck: the test suite checks the sharding recipes of docs/recipes/ with them.
packages=(g++ cmake make git pkg-config libopenblas-openmp-dev libfmt-dev libcli11-dev doctest-dev
          nlohmann-json3-dev libbenchmark-dev libhwy-dev python3-matplotlib libboost-math-dev libsqlite3-dev
          yamllint shellcheck "${KVBENCH_EXTRA_PACKAGES[@]}")

kvbench_install_packages "${packages[@]}"

cmake -S "$KVBENCH_ROOT" -B "$KVBENCH_BUILD_DIR" "${KVBENCH_CMAKE_ARGS[@]}" >/dev/null
build_targets=()
if ((${#KVBENCH_BUILD_TARGETS[@]} > 0)); then build_targets=(--target "${KVBENCH_BUILD_TARGETS[@]}"); fi
# Build progress goes to stderr: stdout is kvbench's own output.
kvbench_locked cmake --build "$KVBENCH_BUILD_DIR" -j "$(nproc)" "${build_targets[@]}" >&2
